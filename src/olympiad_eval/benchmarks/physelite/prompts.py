"""PhysElite's prompts: the fields of its templates (with the optional hint), its figures, and the reference answer."""

from __future__ import annotations

import re

from olympiad_eval.core.records import Figure, Problem
from olympiad_eval.scoring.expressions import numbers_close, to_number


def template_fields(problem: Problem, suite) -> tuple[str, dict]:
    text = hint(problem, suite)
    label = suite.hint.label
    return "default", {"problem": problem.question + (f"\n\n{label}\n{text}" if text else "")}


# A number the text states as a result: right after "=", "≈", "\approx" or "\simeq".
_STATED_NUMBER = re.compile(
    r"(?:=|≈|\\approx|\\simeq)\s*\{?\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:\s*\\times\s*10\^\{?[-+]?\d+\}?)?)"
)


_SPACING = re.compile(r"\s+|\$|\\[,;:! ]")


_PART_LABEL = re.compile(r"^\s*(?:\(\d+(?:\.\d+)*\)|\d+(?:\.\d+)*[.)]\s)\s*")  # "(1.1) ", "2. "


def hint(problem: Problem, suite) -> str:
    """The textual solution hint of a hint suite (paper, Table 4), never the answer.

    The reference solution is cut into steps at `hint.step_separator` (a regex; line breaks by
    default). `first_step` hints with the first step, `without_result` with every step but the
    last (the concluding result). Steps are then dropped from the end while the hint still states
    the final answer (`states_answer`): a hint may lead to the result, never give it. "" when
    nothing is left, or for mode `none`."""
    config = suite.hint
    if config.mode == "none":
        return ""
    steps = [step.strip() for step in re.split(config.step_separator, problem.solution) if step.strip()]
    steps = steps[:1] if config.mode == "first_step" else steps[:-1]
    tolerance = float(config.answer_tolerance)
    while steps and states_answer("\n".join(steps), problem.answers[0].value, tolerance):
        steps.pop()
    return "\n".join(steps)


def states_answer(text: str, answer: str, rel_tol: float = 0.05) -> bool:
    """Whether `text` states the final `answer` or one of its parts (split at ";", each without its
    label "(1)"). A numerical
    part is stated when a number the text gives as a result ("= 279.7", "\\approx 280") lies
    within `rel_tol` of it (a bare "2" in "\\frac{1}{2}" is no result); any other part when its
    text, or for "r = ..." its right-hand side, appears in the text, spacing and `$` aside. An
    empty answer is never stated."""
    squeeze = lambda part: _SPACING.sub("", part)  # noqa: E731
    body = squeeze(text)
    stated = [value for match in _STATED_NUMBER.finditer(text) if (value := to_number(match.group(1))) is not None]
    for part in filter(str.strip, re.split(r"[;；]", answer)):
        part = _PART_LABEL.sub("", part)
        value = to_number(part.strip())
        if value is not None:
            if any(numbers_close(value, number, rel_tol) for number in stated):
                return True
        elif any(form in body for form in {squeeze(part), squeeze(part.split("=")[-1])} - {""}):
            return True
    return False


def figures(problem: Problem, suite) -> list[Figure]:
    wanted = {"none": (), "schematic": ("schematic",), "schematic+process": ("schematic", "process")}
    roles = wanted[suite.figures]
    return [figure for figure in problem.figures if figure.role in roles]


def reference(problem: Problem, suite) -> str:
    """The gold answer as the prompt asks for it; with no reference answer, the reference solution
    (whose result the judges then extract, as the paper's F.3 says)."""
    if not problem.answers[0].value.strip():
        return f"Reference derivation.\n{problem.solution}"
    return f"Reference derivation.\nFINAL ANSWER: {problem.answers[0].value}"


def judge_reference(problem: Problem) -> str:
    return problem.answers[0].value
