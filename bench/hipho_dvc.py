"""HiPhO end to end as a user runs it: `dvc repro` of a plan of the HiPhO release alone, one model and
its official LLM judge, both on a local fake server with a fixed latency; the time split between the
requests, each stage and DVC itself.

    python bench/hipho_dvc.py [--latency 0.5] [--concurrency 16] [--tree DIR] [--keep DIR] [--problems 403]

A fresh git copy of the tree (its stages importing its own `src`) gets the release where the README
puts one (data/releases/hipho, a copy of ../shared/data/hipho), a model and a judge config pointed at
the server, and a plan of the suite `hipho` with them. `--problems N` grows the release to N problems
(the whole release has 403; ../shared/data holds 235 of them) with copies of its exams under other
names (`<exam>_copy<k>`, each problem's id and question marked as the copy's, its figures shared), so
that the fixed costs weigh as they do on the whole release. The fake model answers as
bench/hipho_end_to_end.py's does (about one problem in five wrong); the fake judge is the server's
agreeable default. The `python` DVC runs is bench/scale.py's shim, which logs each stage's wall time.

Printed: the ideal (requests / concurrency x latency, generation's and judging's added, as if one
ran after the other), the run's wall time and its ratio to the ideal; then where the rest went:
DVC's own time (the run's wall time beyond its stages'), each stage's time, and for the stages that
send requests the time before their first request and after their last reply.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scale  # the shim-timed copy of a tree
from hipho_end_to_end import RELEASE, responder

from olympiad_eval.cli.fake_server import JUDGE_MARKER, FakeOpenAI
from olympiad_eval.testing import clone

ROOT = Path(__file__).resolve().parents[1]
TARGET = 1.10


def grown(release: Path, problems: int) -> int:
    """Copies of the release's exams (the largest first, in turn) until it holds `problems`; the count."""
    data = release / "data"
    exams = sorted(data.glob("*.json"), key=lambda path: -len(json.loads(path.read_text(encoding="utf-8"))))
    count = sum(len(json.loads(path.read_text(encoding="utf-8"))) - 1 for path in exams)  # element 0: its sheet
    copy = 0
    while count < problems:
        copy += 1
        for path in exams:
            if count >= problems:
                break
            sheet, *items = json.loads(path.read_text(encoding="utf-8"))
            name = f"{path.stem}_copy{copy}"
            # its own text too: an identical prompt would be one request, sent once for both
            items = [
                {**item, "id": f"copy{copy}_{item['id']}", "source": name, "question": f"({name}) {item['question']}"}
                for item in items
            ]
            (data / f"{name}.json").write_text(json.dumps([sheet, *items], ensure_ascii=False), encoding="utf-8")
            count += len(items)
    return count


def configure(repo: scale.Repo, base_url: str, concurrency: int, problems: int | None = None) -> None:
    """The release in data/releases/hipho (grown to `problems`), a model and an LLM judge of the
    official protocol on the server, and a plan of HiPhO alone."""
    shutil.copytree(RELEASE, repo.path / "data/releases/hipho")
    if problems:
        grown(repo.path / "data/releases/hipho", problems)
    endpoint = {"base_url": base_url, "api_key_env": None, "concurrency": concurrency, "probe": False}
    repo.write("conf/model/fake.yaml", yaml.safe_dump({"provider": "openai", "model": "fake-model", **endpoint}))
    judge = {"defaults": ["llm_base", "_self_"], "judges": {"fake": {"model": "fake-judge", **endpoint}}}
    repo.write("conf/judge/fakejudge.yaml", yaml.safe_dump(judge, sort_keys=False))
    plan = yaml.safe_load((repo.path / "params.yaml").read_text(encoding="utf-8"))
    for part in plan["pipelines"].values():
        part["benchmarks"], part["suites"] = {}, {}
    plan["pipelines"]["hipho"] = {"benchmarks": {"hipho": "data/releases/hipho"}, "suites": {"hipho": "hipho"}}
    plan |= {"models": ["fake"], "judges": ["fakejudge"]}
    repo.write("params.yaml", yaml.safe_dump(plan, sort_keys=False))
    config = repo.path / "conf/benchmark/hipho.yaml"
    text = config.read_text(encoding="utf-8")
    if "data/releases/hipho" not in text:
        sys.exit(f"{config} does not read the release from data/releases/hipho: name the folder here")


def render_first(repo: scale.Repo) -> Path:
    """The suite rendered in a throwaway copy, for the fake model to know each prompt's answer."""
    scratch = repo.path.parent / "scratch"
    shutil.copytree(repo.path, scratch)
    first = scale.Repo(scratch)
    first.dvc("repro", "pipelines/hipho/render/dvc.yaml")
    # where the tree renders a suite (under its benchmark since the stage per model: suites/hipho/hipho)
    [folder] = {path.parent for path in (scratch / "outputs" / "suites").rglob("prompts.jsonl")}
    return folder


def measure(tree: Path, folder: Path, latency: float, concurrency: int, problems: int | None = None) -> dict:
    repo = scale.Repo(clone(folder / "repo", tree))
    with FakeOpenAI(latency=latency) as server:
        configure(repo, server.base_url, concurrency, problems)
        server.responder = responder(render_first(repo), restate=False)
        before = len(repo.stages())
        start, clock = time.perf_counter(), time.time()  # the server's clock; the shim's
        repo.dvc("repro")
        wall = time.perf_counter() - start
        judged = server.count(lambda body: JUDGE_MARKER in str(body["messages"]))
        generated = server.count() - judged
        first, last = server.first_received, server.last_answered
    stages = repo.stages()[before:]
    return {
        "tree": str(tree),
        "wall": wall,
        "start": clock,
        "generation_requests": generated,
        "judge_requests": judged,
        "ideal": (generated + judged) / concurrency * latency,
        "stages": stages,
        "first_request": first - start,
        "last_reply": last - start,
    }


def report(result: dict, latency: float, concurrency: int) -> None:
    stages, wall, ideal = result["stages"], result["wall"], result["ideal"]
    print(
        f"{result['tree']}: HiPhO, {result['generation_requests']} generation and {result['judge_requests']} judge "
        f"requests at concurrency {concurrency}, latency {latency} s"
    )
    print(f"ideal {ideal:.1f} s; dvc repro {wall:.1f} s: {wall / ideal:.3f} of the ideal (target <= {TARGET})")
    in_stages = sum(stage["wall"] for stage in stages)
    own = wall - in_stages
    print(f"  DVC's own: {own:.1f} s over {len(stages)} stages ({own / len(stages):.2f} s each)")
    first, last = result["first_request"], result["last_reply"]
    print(f"  requests: the first {first:.1f} s into the run, the last reply {last:.1f} s")
    for stage in stages:
        begun = stage["start"] - result["start"]
        print(f"  {stage['stage']:<28} {stage['wall']:6.2f} s (from {begun:6.1f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", type=Path, default=ROOT, help="the working tree to copy (default: this one)")
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    parser.add_argument("--problems", type=int, help="grow the release to this many problems (the whole release: 403)")
    args = parser.parse_args()
    if not (RELEASE / "data").is_dir():
        print(f"skipped: the HiPhO release is not at {RELEASE}")
        return
    folder = args.keep or Path(tempfile.mkdtemp(prefix="hipho-dvc-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        measured = measure(args.tree.resolve(), folder, args.latency, args.concurrency, args.problems)
        report(measured, args.latency, args.concurrency)
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
