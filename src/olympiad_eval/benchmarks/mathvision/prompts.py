"""MATH-Vision's prompts: the fields of its templates, its figures, and the reference answer."""

from __future__ import annotations

from olympiad_eval.benchmarks.mathvision.config import LETTERS
from olympiad_eval.core.records import Problem


def template_fields(problem: Problem, suite) -> tuple[str, dict]:
    """`choices` as evalscope lists them ("A) ..."); `options` as MATH-V's own script does
    ("(A) ...", one per line, and nothing when the options are only the letters)."""
    choices = "\n".join(f"{letter}) {text}" for letter, text in zip(LETTERS, problem.choices))
    letters_only = "".join(problem.choices) == LETTERS[: len(problem.choices)]
    options = "" if letters_only else "".join(f"({letter}) {text}\n" for letter, text in zip(LETTERS, problem.choices))
    key = "multiple_choice" if problem.choices else "free_form"
    return key, {"question": problem.question, "choices": choices, "options": options}


def figures(problem: Problem, suite) -> list:
    return list(problem.figures) if suite.figures != "none" else []


def reference(problem: Problem, suite) -> str:
    """The gold answer boxed (MATH-V's prompt), and for multiple choice also on an "ANSWER:" line
    (evalscope's prompt): one reference serves both suites."""
    gold = problem.answers[0].value
    return (
        f"The answer is \\boxed{{{gold}}}.\nANSWER: {gold}" if problem.choices else f"The answer is \\boxed{{{gold}}}."
    )
