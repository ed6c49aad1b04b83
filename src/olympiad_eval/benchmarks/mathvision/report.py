"""MATH-Vision's view in the report: the choices of a multiple-choice problem."""

from __future__ import annotations

from olympiad_eval.benchmarks.base import ReportSection, ReportTable
from olympiad_eval.core.records import Problem


def report_sections(problem: Problem, judgment) -> list[ReportSection]:
    """A multiple-choice problem's options, with the gold one and the one the response chose."""
    if not problem.choices:
        return []
    gold = problem.answers[0].value.strip() if problem.answers else ""
    chosen = {str(e).strip() for e in judgment.extracted}
    letters = [chr(ord("A") + index) for index in range(len(problem.choices))]
    rows = tuple(
        (letter, choice, letter == gold or choice.strip() == gold, letter in chosen or choice.strip() in chosen)
        for letter, choice in zip(letters, problem.choices)
    )
    return [
        ReportSection(
            "choices",
            "Choices",
            (("level", "–" if problem.level is None else str(problem.level)), ("subject", problem.subject or "–")),
            (ReportTable("choices", ("option", "text", "gold", "chosen"), rows, math=("text",)),),
        )
    ]
