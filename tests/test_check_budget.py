"""A rule check is bounded by the CPU time it spends, never by wall time: the same judge cell gives
byte-identical judgments on an idle machine and on one whose cores other processes keep busy, with
checks close to the budget on both sides of it. Through the real judge stage, with a benchmark of
this module's own (`kind: tests.test_check_budget`) whose checks need a known amount of CPU time."""

from __future__ import annotations

import subprocess
import sys
import time

from olympiad_eval.benchmarks.base import Score
from olympiad_eval.core.records import (
    AnswerSlot,
    Generation,
    Problem,
    SuiteInfo,
    write_jsonl,
    write_suite_info,
)
from olympiad_eval.scoring.checks import Equivalence, ProtocolCheck, Verdict
from olympiad_eval.scoring.pool import over_budget
from olympiad_eval.stages.judge import judge
from tests.benchmarks.toy_plugin import Toy
from tests.support import compose_stage

BUDGET = 0.5  # CPU seconds per check


def spin(cpu_seconds: float) -> Verdict:
    """A check that needs `cpu_seconds` of CPU time (a fixed amount of work, however long it waits)."""
    end = time.process_time() + cpu_seconds
    while time.process_time() < end:
        pass
    return Verdict(True)


class Spinning(Toy):
    """The toy benchmark whose gold, where it is a number, is the CPU time its check needs."""

    def rule_checks(self, problem, response, scoring):
        gold = problem.answers[0].value
        if gold.replace(".", "", 1).isdigit():
            return [ProtocolCheck(spin, (float(gold),))]
        return [Equivalence(gold, response)]

    def rule_score(self, problem, response, scoring, verdicts):
        undecided = tuple(verdict.reason for verdict in verdicts if verdict.correct is None)
        right = float(all(verdict.correct for verdict in verdicts))
        return Score(score=right, points=right, undecided=undecided)


BENCHMARK = Spinning()

PROBLEMS = {  # id: (gold, response)
    "under": ("0.35", "x"),  # 70% of the budget: decided, however slowly it gets the CPU
    "near": ("0.45", "x"),
    "over": ("0.8", "x"),  # past the budget: undecided, however fast the machine is idle
    "tower": ("9^{9^{9^{9}}}", "x"),  # sympy would expand it for ever
    "plain": ("x + 1", "1 + x"),
}


def judged_cell(folder) -> bytes:
    suite = folder / "suite"
    problems = [
        Problem(id=pid, benchmark="b", language="en", question="q", answers=(AnswerSlot(gold),))
        for pid, (gold, _) in PROBLEMS.items()
    ]
    write_jsonl(suite / "problems.jsonl", problems)
    info = SuiteInfo("s", "b", "tests.test_check_budget", "en", {}, {"protocol": "official", "rel_tol": 0.0})
    write_suite_info(suite / "suite.json", info)
    generations = [
        Generation(id=pid, suite="s", model="m", sample=0, response=response, request_hash=pid)
        for pid, (_, response) in PROBLEMS.items()
    ]
    write_jsonl(folder / "generations.jsonl", generations)
    overrides = ["judge=rule", "cell.suite=s", "cell.model=m", f"judge.check_cpu_seconds={BUDGET}", "judge.workers=2"]
    cfg = compose_stage("judge", overrides).judge
    out = folder / "judgments.jsonl"
    judge(suite, folder / "generations.jsonl", "rule", cfg, out, folder / "cache.sqlite")
    return out.read_bytes()


def test_judgments_are_the_same_idle_and_on_a_busy_machine(tmp_path):
    idle = judged_cell(tmp_path / "idle")
    busy_loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        busy = judged_cell(tmp_path / "busy")
    finally:
        for loop in busy_loops:
            loop.kill()
            loop.wait()
    assert busy == idle
    text = idle.decode()
    assert text.count(over_budget(BUDGET)) == 2, text  # "over" and "tower": undecided, with the same reason
    for decided in ("under", "near", "plain"):
        line = next(line for line in text.splitlines() if f'"id":"{decided}"' in line)
        assert '"undecided"' not in line and '"score":1.0' in line, line
