"""PhysElite's rules: the final answer line against the reference answer."""

from __future__ import annotations

from olympiad_eval.benchmarks.base import Score
from olympiad_eval.core.records import Problem
from olympiad_eval.scoring import answers
from olympiad_eval.scoring.checks import Check, Equivalence

NO_REFERENCE = (
    "the release gives no reference answer: only the LLM judges can take it from the reference solution (paper, F.3)"
)


def rule_checks(problem: Problem, response: str, scoring) -> list[Check]:
    gold, given = problem.answers[0].value, answers.final_answer_line(response) or ""
    return [Equivalence(gold, given, scoring.rel_tol)] if gold.strip() and given else []


def rule_score(problem: Problem, response: str, scoring, verdicts: list) -> Score:
    """The "FINAL ANSWER:" line against the reference answer."""
    gold = problem.answers[0].value
    given = answers.final_answer_line(response) or ""
    if not gold.strip():
        return Score(score=0.0, points=0.0, extracted=(given,), verdict="undecided", unscorable=NO_REFERENCE)
    correct = bool(verdicts and verdicts[0].correct)
    return Score(
        score=1.0 if correct else 0.0,
        points=1.0 if correct else 0.0,
        extracted=(given,),
        slots=({"expected": gold, "given": given, "correct": correct, "points": 1.0},),
        verdict="correct" if correct else "incorrect",
        undecided=tuple(v.reason for v in verdicts if v.correct is None),
    )
