"""OlympiadBench's scoring by rules: the official automatic scorer (`official`) or our physics rules
(`rules`) on the answer it extracts."""

from __future__ import annotations

import re

from olympiad_eval.benchmarks.base import Score
from olympiad_eval.benchmarks.olympiadbench import official
from olympiad_eval.benchmarks.olympiadbench.loading import auto_scored
from olympiad_eval.core.records import Problem
from olympiad_eval.scoring.answers import boxes
from olympiad_eval.scoring.checks import Check, Equivalence

_MATH = re.compile(r"\$([^$]*)\$")


_BETWEEN_ANSWERS = re.compile(r"[\s\u3000,，、]*")


def gold_text(problem: Problem) -> str:
    """The official gold answer (`final_answer[0]`, as the official judge reads it) without its `$`;
    several answers, each in its own `$...$` with only spaces or commas between them, joined by
    commas, as the prompt asks for multiple answers."""
    gold = problem.answers[0].value.strip()
    pieces = _MATH.findall(gold)
    if len(pieces) > 1 and all(_BETWEEN_ANSWERS.fullmatch(rest) for rest in _MATH.split(gold)[::2]):
        return ", ".join(piece.strip() for piece in pieces)
    return gold.replace("$", "").strip()


NOT_AUTO = (
    "the official protocol leaves this problem to human evaluation (theorem proving, or not "
    "support_auto_scoring) and no judge protocol is configured for it"
)


def extracted(problem: Problem, response: str) -> str:
    return official.extract_answer(response, problem.language)


def rule_checks(problem: Problem, response: str, scoring) -> list[Check]:
    """One check per response: the official judge of the extracted answer against the gold, with
    the problem's tolerance; under `rules`, our physics rules on the same answer."""
    if not auto_scored(problem):
        return []
    answer = extracted(problem, response)
    if scoring.protocol == "rules":
        return [Equivalence(gold_text(problem), _boxed(answer), scoring.rel_tol, problem.answers[0].unit)]
    attributes = problem.attributes
    tolerance = official.precision(attributes["error"], attributes["final_answers"], attributes["answer_type"])
    return [official.check(attributes["final_answers"], answer, tolerance)]


_BOXED = re.compile(r"\\boxed\s*\{")


def _boxed(text: str) -> str:
    """The contents of the `\\boxed` boxes in `text`, joined by commas (the text itself without a box).
    A box never closed loses its last character: what v1 of `rules` reads (kept: a change would be a
    new version)."""
    found = [box.inside if box.closed else box.inside[:-1] for box in boxes(text, _BOXED)]
    return ", ".join(found) if found else text.replace("$", "").strip().rstrip(".。")


def rule_score(problem: Problem, response: str, scoring, verdicts: list) -> Score:
    if not auto_scored(problem):
        return Score(score=0.0, points=0.0, unscorable=NOT_AUTO)
    verdict = verdicts[0]
    given = verdict.answer or extracted(problem, response)
    correct = bool(verdict.correct)
    return Score(
        score=1.0 if correct else 0.0,
        points=1.0 if correct else 0.0,
        extracted=(given,),
        slots=({"expected": problem.answers[0].value, "given": given, "correct": correct, "points": 1.0},),
        verdict="correct" if correct else "incorrect",
        undecided=(verdict.reason,) if verdict.correct is None else (),
    )
