"""OlympiadBench's full shared release (the first release, 8,952 problems) through the real stage
scripts as DVC runs them: fetch, render, generate (the `reference` model: the gold answers as the
prompt asks for them) and judge (the rule judge, the official automatic scorer), each timed from its
process's start to its exit, with its peak RSS (its process tree, wait4) and CPU (with its check
workers).

Two suites: `olympiadbench` as configured (the problems the official scorer scores, without those
whose figure the release lacks), and the same with `figure_status: null` (every auto-scorable
problem). The reference's accuracy is printed with them: below 100% only by the release's malformed
golds (`RELEASE_QUIRKS` in tests/benchmarks/test_olympiadbench.py).

    python bench/olympiadbench_release.py [--keep]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

import yaml

from olympiad_eval.core.layout import Layout
from olympiad_eval.core.records import Judgment, Problem, read_jsonl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from hipho_end_to_end import run_stage  # noqa: E402  a stage run as DVC runs it: wall, CPU, peak RSS

RELEASE = ROOT.parent / "shared" / "data" / "olympiadbench"


def plan(folder: Path) -> Path:
    """A plan of suite `olympiadbench` of benchmark `olympiadbench`, read from the shared release."""
    path = folder / "params.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "models": ["reference"],
                "judges": ["rule"],
                "pipelines": {
                    "olympiadbench": {
                        "benchmarks": {"olympiadbench": str(RELEASE)},
                        "suites": {"olympiadbench": "olympiadbench"},
                    }
                },
            }
        ),
        encoding="utf-8",
    )
    return path


def row(stage: str, problems: int, measured: dict) -> str:
    return (
        f"| {stage} | {problems:,} | {measured['wall']:.2f} s | {measured['cpu']:.2f} s | {measured['rss_mb']:.0f} MB |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (outputs, logs)")
    args = parser.parse_args()
    if not (RELEASE / "data").is_dir():
        print(f"skipped: the OlympiadBench release is not at {RELEASE}")
        return
    folder = Path(tempfile.mkdtemp(prefix="olympiadbench-release-"))
    layout = Layout(folder / "outputs")
    common = [
        f"paths.outputs={folder / 'outputs'}",
        f"paths.request_cache={folder / 'cache.sqlite'}",
        f"paths.plan={plan(folder)}",
    ]
    fetched = run_stage(
        "fetch", ["benchmark=olympiadbench", f"benchmark.source.path={RELEASE}", *common], folder / "fetch.log"
    )
    released = read_jsonl(layout.problem_records("olympiadbench"), Problem)
    print("| stage | problems | wall | CPU | peak RSS |\n|---|---|---|---|---|")
    print(row("fetch", len(released), fetched))
    for label, overrides in (("as configured", []), ("figure_status: null", ["suite.figure_status=null"])):
        cell = ["cell.suite=olympiadbench", *common]
        rendered = run_stage(
            "render",
            ["suite=olympiadbench", "cell.benchmark=olympiadbench", *overrides, *common],
            folder / "render.log",
        )
        asked = len(read_jsonl(layout.suite("olympiadbench", "olympiadbench") / "problems.jsonl", Problem))
        generated = run_stage("generate", ["model=reference", *cell], folder / "generate.log")
        judged = run_stage("judge", ["judge=rule", "cell.model=reference", *cell], folder / "judge.log")
        judgments = read_jsonl(layout.judgments("olympiadbench", "olympiadbench", "reference", "rule"), Judgment)
        right = sum(j.score or 0 for j in judgments)
        print(row(f"render ({label})", asked, rendered))
        print(row(f"generate, reference ({label})", asked, generated))
        print(row(f"judge, rule ({label}): reference {100 * right / len(judgments):.2f}% right", asked, judged))
    selection = json.loads(
        (layout.suite("olympiadbench", "olympiadbench") / "suite.json").read_text(encoding="utf-8")
    ).get("selection")
    print(f"\nlast suite's selection: {selection}")
    if args.keep:
        print(f"outputs and logs: {folder}")
    else:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
