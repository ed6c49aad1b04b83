"""MATH-Vision's scoring by rules: the official MATH-V scorer (`official`) or evalscope's (`evalscope`)."""

from __future__ import annotations

from olympiad_eval.benchmarks.base import Score
from olympiad_eval.benchmarks.mathvision import evalscope
from olympiad_eval.core.records import Problem
from olympiad_eval.scoring.checks import Check, ProtocolCheck
from olympiad_eval.scoring.evalscope import completion


def rule_checks(problem: Problem, response: str, scoring) -> list[Check]:
    """The official scorer and evalscope's multiple choice decide in this process (`rule_score`);
    evalscope's free form is one check of its own (Math-Verify, in the check workers)."""
    if scoring.protocol == "official" or problem.choices:
        return []
    evalscope.require_math_verify()
    return [ProtocolCheck(evalscope.free_form_check, (completion(response), problem.answers[0].value))]


def rule_score(problem: Problem, response: str, scoring, verdicts: list) -> Score:
    """By the official MATH-V scorer (the default), or as evalscope 1.14.1 scores (a suite's
    `scoring.protocol: evalscope`; see `mathvision.evalscope`): a response evalscope leaves out of
    its mean is one the rules cannot score; a check that could not finish is not matched (undecided)."""
    gold = problem.answers[0].value
    if scoring.protocol == "official":
        # imported here: sympy and the LaTeX parser take 0.35 s, which every stage that only reads
        # this benchmark's tables or pages (its aggregate, the report) would pay at its start
        from olympiad_eval.benchmarks.mathvision import official

        given, correct = official.verdict(response, gold, problem.choices)
        return _score(problem, given, correct, ())
    if problem.choices:
        given = evalscope.choice(completion(response), len(problem.choices))
        return _score(problem, given, bool(given) and given == gold.strip(), ())
    verdict = verdicts[0]
    if verdict.correct is None and verdict.reason.startswith(evalscope.EXCLUDED):
        return Score(score=0.0, points=0.0, extracted=(verdict.answer,), unscorable=verdict.reason)
    # a check that overran the judge's `check_cpu_seconds` (evalscope waits 30 s, then excludes) is not matched
    return _score(problem, verdict.answer, bool(verdict.correct), (verdict.reason,) if verdict.correct is None else ())


def _score(problem: Problem, given: str, correct: bool, undecided: tuple) -> Score:
    return Score(
        score=1.0 if correct else 0.0,
        points=1.0 if correct else 0.0,
        extracted=(given,),
        slots=({"expected": problem.answers[0].value, "given": given, "correct": correct, "points": 1.0},),
        undecided=undecided,
    )
