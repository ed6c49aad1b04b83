"""HiPhO end to end: the real release generated and judged by the official protocol, against a
local fake server with a fixed latency, through the real stage scripts as DVC runs them.

fetch and render run first (untimed); then generate (one request per problem) and judge (the
rules, then every marking criterion and every answer slot the rules missed, to an LLM judge)
each run as `python stages/<stage>.py ...` with a fresh, empty request cache. Each stage is timed
from its start to its exit and compared with the ideal, requests / concurrency x latency. CPU
time is the stage process's and its worker children's (RUSAGE_CHILDREN deltas); peak RSS is the
largest of that process tree (wait4).

The fake model answers like a good, imperfect model: the gold answers in the format the prompt
asks for (numbers in scientific notation), and wrong ones for about one problem in five, so the
rule checks do real work in sympy. With --restate it also restates the symbolic gold answers of
half the problems in an equivalent form, which sympy must then prove (several times the rules'
CPU). The fake judge is the server's default (agreeable) one.

    python bench/hipho_end_to_end.py [--exams IPhO_2025,F=MA_2024] [--restate] [--latency 0.5] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from olympiad_eval.benchmarks.hipho.scoring import reference_answer
from olympiad_eval.cli.fake_server import JUDGE_MARKER, FakeOpenAI, default_responder
from olympiad_eval.core.layout import Layout
from olympiad_eval.core.records import Problem, Prompt, read_jsonl
from olympiad_eval.scoring.expressions import to_number

ROOT = Path(__file__).resolve().parents[1]
RELEASE = ROOT.parent / "shared" / "data" / "hipho"
TARGET_RATIO, TARGET_CPU = 1.10, 0.02  # wall / ideal; CPU seconds per request


# ---------------------------------------------------------------- the fake model


def wrong(problem_id: str) -> bool:
    """About one problem in five is answered wrongly, the same ones on every run."""
    return hashlib.sha256(problem_id.encode()).digest()[0] < 52


def restated(problem_id: str) -> bool:
    """Half the problems, with --restate."""
    return hashlib.sha256(problem_id.encode()).digest()[1] % 2 == 0


def answer(gold: str, is_wrong: bool, restate: bool) -> str:
    """One slot's box: the gold, an equivalent form of it, or a plausible wrong value."""
    if not gold:
        return "See the derivation above."
    if re.fullmatch(r"[A-E]", gold):
        return "ABCDE"[("ABCDE".index(gold) + 1) % 5] if is_wrong else gold
    number = to_number(gold)
    if number is not None:
        return scientific(number * 1.5 if is_wrong else number)
    name, equals, value = gold.rpartition("=")
    if is_wrong:
        return f"{name}{equals} 2\\left({value.strip()}\\right)"
    return f"{name}{equals} 2 \\cdot \\frac{{{value.strip()}}}{{2}}" if restate else gold


def scientific(value: float) -> str:
    mantissa, exponent = f"{value:.6e}".split("e")
    return f"{float(mantissa):g} \\times 10^{{{int(exponent)}}}"


def response(problem: Problem, restate: bool) -> str:
    is_wrong, restate = wrong(problem.id), restate and restated(problem.id)
    boxes = ", ".join(f"\\boxed{{{answer(reference_answer(slot), is_wrong, restate)}}}" for slot in problem.answers)
    think = "<think>\nStep 1: set up the equations of motion. Step 2: solve them.\n</think>"
    return f"{think}\n<answer>\n[{boxes}]\n</answer>"


def prompt_text(messages: list) -> str:
    """The text of a prompt, its figures left out: what identifies the problem it asks."""
    return "\n".join(
        part if isinstance(part, str) else part["text"]
        for message in messages
        for part in ([message["content"]] if isinstance(message["content"], str) else message["content"])
        if isinstance(part, str) or part.get("type") == "text"
    )


def responder(suite_dir: Path, restate: bool):
    """Judge requests get the default judge's reply; a problem's prompt gets its answer. Cheap, as
    the server's latency starts after it: the figures' base64 is never serialised again."""
    problems = {p.id: p for p in read_jsonl(suite_dir / "problems.jsonl", Problem)}
    answers = {
        prompt_text(p.messages): response(problems[p.id], restate)
        for p in read_jsonl(suite_dir / "prompts.jsonl", Prompt)
    }

    def reply(body: dict) -> str:
        text = prompt_text(body["messages"])
        return default_responder(body) if JUDGE_MARKER in text else answers[text]

    return reply


# ---------------------------------------------------------------- stages


def release(exams: list[str] | None, folder: Path) -> Path:
    """The release, or a copy of it that holds only the chosen exams."""
    if not exams:
        return RELEASE
    subset = folder / "release" / "data"
    subset.mkdir(parents=True)
    # copied, not linked: the fetch stage refuses a link that leads out of its release
    shutil.copytree(RELEASE / "data" / "image_question", subset / "image_question")
    for exam in exams:
        source = RELEASE / "data" / f"{exam}.json"
        if not source.is_file():
            sys.exit(f"no exam {exam} in {RELEASE / 'data'}")
        shutil.copy2(source, subset / source.name)
    return subset.parent


def hipho_plan(folder: Path, source: Path, judge: str, suite: str = "hipho") -> Path:
    """A plan of one suite of benchmark `hipho`, its release read from `source`: the stages find
    where a cell's files go (its family) in the plan."""
    plan = folder / "params.yaml"
    plan.write_text(
        yaml.safe_dump(
            {
                "models": ["gpt-4o"],
                "judges": [judge],
                "pipelines": {"hipho": {"benchmarks": {"hipho": str(source)}, "suites": {suite: "hipho"}}},
            }
        ),
        encoding="utf-8",
    )
    return plan


def run_stage(script: str, overrides: list[str], log: Path) -> dict:
    """Run a stage as DVC does; its wall time, CPU time (with its workers) and peak RSS."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with log.open("w") as sink:
        process = subprocess.Popen(
            [sys.executable, f"stages/{script}.py", *overrides], cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT
        )
        _, status, usage = os.wait4(process.pid, 0)  # usage: the stage's process tree alone (peak RSS)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    process.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait for it again
    if process.returncode:
        sys.exit(f"stages/{script}.py failed ({process.returncode}):\n{log.read_text()[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "rss_mb": usage.ru_maxrss / 1024, "start": start, "end": start + wall}


def measured(server: FakeOpenAI, script: str, overrides: list[str], log: Path) -> dict:
    """A stage against the server, with how long it took to send its first request (startup) and
    to exit after its last reply (finish)."""
    server.peak_in_flight, server.first_received, server.last_answered = 0, None, None
    before = server.count()
    result = run_stage(script, overrides, log)
    return {
        **result,
        "requests": server.count() - before,
        "peak": server.peak_in_flight,
        "startup": server.first_received - result["start"],
        "finish": result["end"] - server.last_answered,
    }


# ---------------------------------------------------------------- report


def row(label: str, r: dict, ideal: float) -> str:
    per_request = r["cpu"] / r["requests"] if r["requests"] else 0.0
    return (
        f"{label:<10}{r['requests']:>9}{r['wall']:>9.2f}{ideal:>9.2f}{r['wall'] / ideal:>8.3f}"
        f"{r.get('peak', ''):>6}{r['cpu']:>8.2f}{per_request:>11.4f}{r['rss_mb']:>9.1f}"
    )


def report(stages: dict, concurrency: int, latency: float, problems: int) -> None:
    ideal = {name: r["requests"] / concurrency * latency for name, r in stages.items()}
    total = {
        "requests": sum(r["requests"] for r in stages.values()),
        "wall": sum(r["wall"] for r in stages.values()),
        "cpu": sum(r["cpu"] for r in stages.values()),
        "rss_mb": max(r["rss_mb"] for r in stages.values()),
    }
    ideal_total = sum(ideal.values())
    print(
        f"HiPhO, {problems} problems; concurrency {concurrency}, latency {latency} s; "
        f"ideal = requests / concurrency x latency"
    )
    print(
        f"{'stage':<10}{'requests':>9}{'wall s':>9}{'ideal s':>9}{'ratio':>8}{'peak':>6}{'CPU s':>8}"
        f"{'CPU s/req':>11}{'RSS MB':>9}"
    )
    for name, r in stages.items():
        print(row(name, r, ideal[name]))
    print(row("total", total, ideal_total))
    print(
        "outside the requests: "
        + "; ".join(
            f"{name} {r['startup']:.2f} s to its first request, {r['finish']:.2f} s from its last reply to its exit"
            for name, r in stages.items()
        )
    )
    per_request = total["cpu"] / total["requests"]
    print(
        f"total wall / ideal: {total['wall'] / ideal_total:.3f} (target <= {TARGET_RATIO}); "
        f"CPU s/request: {per_request:.4f} (target <= {TARGET_CPU}); "
        f"judge peak in flight: {stages['judge']['peak']} (target {concurrency})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--exams", help="comma-separated exam names (e.g. IPhO_2025,F=MA_2024); all by default")
    parser.add_argument("--restate", action="store_true", help="restate right symbolic answers (see above)")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (outputs, logs)")
    args = parser.parse_args()
    if not (RELEASE / "data").is_dir():
        print(f"skipped: the HiPhO release is not at {RELEASE}")
        return
    folder = Path(tempfile.mkdtemp(prefix="hipho-e2e-"))
    source = release(args.exams.split(",") if args.exams else None, folder)
    common = [
        f"paths.outputs={folder / 'outputs'}",
        f"paths.request_cache={folder / 'cache.sqlite'}",
        f"paths.plan={hipho_plan(folder, source, 'gpt-4o')}",
    ]
    run_stage("fetch", ["benchmark=hipho", f"benchmark.source.path={source}", *common], folder / "fetch.log")
    run_stage("render", ["suite=hipho", "cell.benchmark=hipho", *common], folder / "render.log")
    suite_dir = Layout(folder / "outputs").suite("hipho", "hipho")
    with FakeOpenAI(responder(suite_dir, args.restate), latency=args.latency) as server:
        endpoint = [f"base_url={server.base_url}", "api_key_env=null", f"concurrency={args.concurrency}"]
        stages = {
            "generate": measured(
                server,
                "generate",
                ["model=gpt-4o", "cell.suite=hipho", *(f"model.{o}" for o in endpoint), *common],
                folder / "generate.log",
            ),
            "judge": measured(
                server,
                "judge",
                [
                    "judge=gpt-4o",
                    "cell.suite=hipho",
                    "cell.model=gpt-4o",
                    *(f"judge.judges.gpt-4o.{o}" for o in endpoint),
                    *common,
                ],
                folder / "judge.log",
            ),
        }
    report(stages, args.concurrency, args.latency, len(read_jsonl(suite_dir / "problems.jsonl", Problem)))
    if args.keep:
        print(f"outputs and logs: {folder}")
    else:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
