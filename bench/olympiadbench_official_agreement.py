"""`olympiadbench.official` against OlympiadBench's own `AutoScoringJudge`, pair by pair.

The official scorer (`eval/auto_scoring_judge.py` of github OpenBMB/OlympiadBench, commit 61bf12a,
MIT) is never part of this repository: pass its file with `--judge` (fetched into /tmp, for
instance). It runs with sympy 1.12 and antlr 4.11, as our protocol's own checks do: by default in
the protocol's pinned environment (`olympiadbench.official.ENVIRONMENT`, built on first use), or
in an interpreter given by `--python`:

    python bench/olympiadbench_official_agreement.py --judge /tmp/ob/eval/auto_scoring_judge.py \\
        [--release ../shared/data/olympiadbench] [--workers 2] [--per-class 80] [--show 5]

There a small driver (written to a temporary file) runs `AutoScoringJudge().judge(answer, gold,
precision)` on every pair, in the order and with the tolerance `inference/judge.py` uses, each
within `--timeout` seconds of CPU time (a check past it is recorded as such). Our side runs the same
pairs as the judge stage does: `official.check` run by a `CheckPool` (its CPU budget).

The pairs, all built from the release's auto-scorable problems (6,197 in the first release):
- `reference`: every problem's gold written as a model would, "So the final answer is
  \\boxed{...}." or "所以最终答案是\\boxed{...}。" (its `$` dropped), read back by `extract_answer`;
- an adversarial set written here (`adversarial`, deterministic): numbers perturbed inside and
  outside the tolerance, several answers reversed, percentages, intervals with other brackets,
  equations rearranged (sides swapped, scaled), units appended, a gold in the last line's `$...$`
  instead of a box, garbage, Chinese text around the answer, and a hostile power (a tower
  against the gold; a tower times a symbolic gold is left out: the official judge then computes
  the tower as a Python integer, one C call that no limit interrupts, and never returns, where our
  check ends at the pool's CPU budget: `tests/benchmarks/test_olympiadbench_official.py` shows it);
- one class per reading of sympy 1.12's LaTeX parser that decides verdicts
  (`olympiadbench_parser_classes.py`: a unicode minus, log bases, a subscript after a superscript,
  function application, grouped digits, e and E, `x` as times, unbraced exponents and fraction
  arguments, dots, differentials, primes, unknown commands, subscript names, where the parser
  stops, float pi, colons), each written from the parser's behaviour.

Printed: per set and class, n, agreeing verdicts and agree %; the reference answers the official
judge rejects (golds of the release it cannot match even with themselves); each disagreement class
(pairs' set, ours, official) with its count and first examples. `--save` keeps every verdict.
"""

from __future__ import annotations

import argparse
import collections
import functools
import json
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import olympiadbench_parser_classes as parser_classes  # bench/ is on the path
from agreement import agreement, allow_skip, skipped

from olympiad_eval.benchmarks.olympiadbench import official, official_judge
from olympiad_eval.scoring.pool import CheckPool

RELEASE = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "olympiadbench"

# Run with the official judge's interpreter: reads [{"answer", "gold", "precision"}] from a JSON
# file, writes one verdict per line: true, false, or "timeout" / "error: ..." (what escaped judge).
DRIVER = r"""
import importlib.util, io, json, signal, sys, contextlib
spec = importlib.util.spec_from_file_location("auto_scoring_judge", sys.argv[1])
module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)
judge = module.AutoScoringJudge()
timeout = float(sys.argv[4])
class Overran(BaseException): pass
def alarm(*_): raise Overran()
signal.signal(signal.SIGPROF, alarm)
pairs = json.load(open(sys.argv[2], encoding="utf-8"))
with open(sys.argv[3], "w", encoding="utf-8") as out:
    for pair in pairs:
        precision = pair["precision"]
        signal.setitimer(signal.ITIMER_PROF, timeout)  # CPU time, as our checks' budget: no load decides
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # its can_compute_power prints
                verdict = bool(judge.judge(pair["answer"], pair["gold"], precision))
        except Overran:
            verdict = "timeout"
        except Exception as error:
            verdict = f"error: {type(error).__name__}"
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
        out.write(json.dumps(verdict) + "\n"); out.flush()
"""


def load(release: Path) -> list[dict]:
    problems = []
    for path in sorted((release / "data").glob("*.json")):
        problems += [row for row in json.loads(path.read_text(encoding="utf-8")) if row.get("support_auto_scoring")]
    return problems


def language(problem: dict) -> str:
    return "zh" if problem["classification"].startswith(("Chinese", "Gaokao")) else "en"


PHRASES = {"en": "So the final answer is ", "zh": "所以最终答案是"}  # the official prompts' closing phrases


def boxed(text: str, lang: str = "en") -> str:
    return f"{PHRASES[lang]}\\boxed{{{text}}}" + ("。" if lang == "zh" else ".")


def bare(gold: str) -> str:
    return gold.replace("$", "").strip()


def pair(kind: str, problem: dict, response: str) -> dict:
    answer = official.extract_answer(response, language(problem))
    tolerance = official.precision(problem["error"], problem["final_answer"], problem["answer_type"])
    return {
        "set": kind,
        "id": problem["id"],
        "answer": answer,
        "gold": official.gold_answer(problem["final_answer"]),
        "precision": tolerance,
    }


_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")


def _add_pair(pairs: list[dict], problem: dict, kind: str, response: str) -> None:
    pairs.append(pair(kind, problem, response))


def adversarial(problems: list[dict]) -> list[dict]:
    """Pairs written by code from the golds (deterministic)."""
    rng = random.Random(17)
    pairs = []
    for problem in problems:
        gold = bare(official.gold_answer(problem["final_answer"]))
        tolerance = official.precision(problem["error"], problem["final_answer"], problem["answer_type"])
        single = tolerance if isinstance(tolerance, float) else None
        lang = language(problem)
        add = functools.partial(_add_pair, pairs, problem)
        if _NUMBER.match(gold):
            value = float(gold)
            step = single if single else 1e-8
            add("number inside tolerance", boxed(repr(value + 0.9 * step), lang))
            add("number outside tolerance", boxed(repr(value + 1.5 * step + 1e-12), lang))
            add("percentage", boxed(f"{value * 100:g}\\%", lang))
            add("number with unit", boxed(f"{gold}", lang) + " m")
            add("unit inside box", boxed(f"{gold} \\text{{ m}}", lang))
            add("last line dollars", f"The result is\n$x = {gold}$")
        pieces = official_judge.split_by_comma(gold)
        if len(pieces) > 1:
            add("answers reversed", boxed(", ".join(reversed(pieces)), lang))
            add("answers dropped", boxed(pieces[0], lang))
        if official_judge.is_interval(gold) and "," in gold:
            other = {"(": "[", "[": "("}[gold[0]] + gold[1:]
            add("interval other bracket", boxed(other, lang))
        if gold.count("=") == 1 and "," not in gold:
            lhs, rhs = gold.split("=")
            add("equation sides swapped", boxed(f"{rhs.strip()} = {lhs.strip()}", lang))
            add("equation scaled", boxed(f"2({lhs.strip()}) = 2({rhs.strip()})", lang))
            add("equation right side", boxed(rhs.strip(), lang))
        if language(problem) == "zh":
            add("chinese around", f"解：……\n所以最终答案是\\boxed{{{gold}}}。答：{gold}米")
        draw = rng.random()
        if draw < 0.05:
            add("garbage", boxed(rng.choice(["", "?", "\\frac{1}{", "x)", "}}{", "N/A", "\\sqrt{-1}"]), lang))
        if draw < 0.01:  # a tower times a symbolic gold is left out: it hangs the official judge in
            add("hostile power", boxed("10^{10^{10^{10}}}", lang))  # one C call no alarm can stop
    return pairs


def cpu_seconds() -> float:
    """The CPU time of this process and of its children that have ended."""
    usages = (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN))
    return sum(usage.ru_utime + usage.ru_stime for usage in usages)


def timed(run, *args) -> tuple[list, float, float]:
    """What `run` returns, its wall time, and the CPU time of the processes it ran (all reaped)."""
    start, used = time.perf_counter(), cpu_seconds()
    result = run(*args)
    return result, time.perf_counter() - start, cpu_seconds() - used


def run_official(python: str, judge: Path, pairs: list[dict], timeout: float) -> list:
    with tempfile.TemporaryDirectory() as folder:
        driver, source, out = (Path(folder) / name for name in ("driver.py", "pairs.json", "verdicts.jsonl"))
        driver.write_text(DRIVER, encoding="utf-8")
        source.write_text(json.dumps(pairs), encoding="utf-8")
        subprocess.run(
            [python, str(driver), str(judge), str(source), str(out), str(timeout)],
            check=True,
            stderr=subprocess.DEVNULL,
        )
        return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def run_ours(pairs: list[dict], timeout: float, workers: int) -> list:
    with CheckPool(workers=workers, cpu_seconds=timeout) as pool:
        verdicts = pool.check_many([official.check(p["gold"], p["answer"], p["precision"]) for p in pairs])
    return [verdict.correct if verdict.correct is not None else "timeout" for verdict in verdicts]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--judge", type=Path, required=True, help="the official eval/auto_scoring_judge.py")
    parser.add_argument(
        "--python", help="an interpreter with sympy 1.12, antlr 4.11 (default: the official protocol's environment's)"
    )
    parser.add_argument("--release", type=Path, default=RELEASE, help="the OlympiadBench release (data/*.json)")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds per check, both sides")
    parser.add_argument("--workers", type=int, default=1, help="our check workers")
    parser.add_argument("--show", type=int, default=5, help="examples printed per disagreement class")
    parser.add_argument("--limit", type=int, default=0, help="only the first N problems (0: all)")
    parser.add_argument("--per-class", type=int, default=80, help="pairs per class of the parser's readings")
    parser.add_argument("--save", type=Path, help="write every pair with both verdicts to this JSON file")
    allow_skip(parser)
    args = parser.parse_args()

    if not args.judge.is_file():
        skipped(
            f"no official judge at {args.judge} (eval/auto_scoring_judge.py of OpenBMB/OlympiadBench)", args.allow_skip
        )
    if not list((args.release / "data").glob("*.json")):
        skipped(f"no OlympiadBench release at {args.release} (data/*.json)", args.allow_skip)
    problems = load(args.release)[: args.limit or None]
    pairs = [pair("reference", p, boxed(bare(official.gold_answer(p["final_answer"])), language(p))) for p in problems]
    pairs += adversarial(problems) + parser_classes.build(problems, args.per_class)
    python = args.python or str(official.ENVIRONMENT.python())
    (theirs, official_wall, official_cpu), (ours, our_wall, our_cpu) = (
        timed(run_official, python, args.judge, pairs, args.timeout),
        timed(run_ours, pairs, args.timeout, args.workers),
    )
    print(
        f"{len(problems)} auto-scorable problems, {len(pairs)} pairs; official {official_wall:.0f} s "
        f"({official_cpu:.0f} s of CPU), ours {our_wall:.0f} s ({our_cpu:.0f} s of CPU, {args.workers} workers)"
    )
    if args.save:
        args.save.write_text(
            json.dumps(
                [{**item, "ours": mine, "official": their} for item, mine, their in zip(pairs, ours, theirs)],
                ensure_ascii=False,
                indent=0,
            ),
            encoding="utf-8",
        )
    if not pairs:
        skipped("no auto-scorable problem to build pairs from", args.allow_skip)
    report(pairs, ours, theirs, args.show)
    agreed = sum(mine == their for mine, their in zip(ours, theirs))
    print(agreement(agreed, len(pairs), "pairs"))
    return 0 if agreed == len(pairs) else 1


def report(pairs: list[dict], ours: list, theirs: list, show: int) -> None:
    by_set = collections.defaultdict(lambda: [0, 0])
    classes = collections.defaultdict(list)
    for item, mine, their in zip(pairs, ours, theirs):
        kind = item["set"] if item["set"] in ("reference", *parser_classes.CLASSES) else "adversarial"
        by_set[kind][0] += 1
        by_set[kind][1] += mine == their
        if mine != their:
            classes[(item["set"], str(mine), str(their))].append(item)
    print(f"{'set':24} {'n':>6} {'agree':>6} {'agree %':>8}")
    for kind, (total, agree) in sorted(by_set.items(), key=lambda kv: (kv[0] != "reference", kv[0] != "adversarial")):
        print(f"{kind:24} {total:6d} {agree:6d} {100 * agree / total:8.2f}")
    total, agree = sum(t for t, _ in by_set.values()), sum(a for _, a in by_set.values())
    print(f"{'all':24} {total:6d} {agree:6d} {100 * agree / total:8.2f}")
    rejected = [item for item, their in zip(pairs, theirs) if item["set"] == "reference" and their is not True]
    print(f"\nreference answers the official judge rejects (release quirks): {len(rejected)}")
    for item in rejected:
        print(f"      id {item['id']}: answer {item['answer']!r} gold {item['gold']!r}")
    print("\ndisagreements (pairs' set, ours, official):")
    for (kind, mine, their), items in sorted(classes.items(), key=lambda kv: -len(kv[1])):
        print(f"  {kind}: ours {mine}, official {their}: {len(items)}")
        for item in items[:show]:
            print(
                f"      id {item['id']}: answer {item['answer']!r} gold {item['gold']!r} precision {item['precision']}"
            )


if __name__ == "__main__":
    sys.exit(main())
