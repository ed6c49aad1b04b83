"""HiPhO's answer level by rules: the final boxes of a response against each slot's gold."""

from __future__ import annotations

import re
from fractions import Fraction

from olympiad_eval.benchmarks.base import Score
from olympiad_eval.benchmarks.hipho import evalscope, vlmevalkit
from olympiad_eval.core.records import (
    AnswerSlot,
    Problem,
    exact,
)
from olympiad_eval.scoring import answers
from olympiad_eval.scoring.answers import outer_boxes
from olympiad_eval.scoring.checks import Check, Equivalence
from olympiad_eval.scoring.evalscope import completion

# The one reading of a slot's gold answer that the answer judge, `reference` and the rule check share.
# The release wraps it as `\boxed{$...$}`, and also: a box without `$`, text inside the box around the
# math (`\boxed{[6.32, 6.34] for $v_{r,1}$}`), a `$` the box leaves outside
# (`\boxed{$\gamma = \sqrt{...}}$`), a box that is never closed (`\boxed{$\omega^2 = ...$`), a box inside
# `$...$`, text outside the box, and no box at all; "" is an open-ended slot (judges only).


# An accepted range `[a, b]`, labelled or not (`[0.94, 0.96] for R_1`), as mathcheck's rule 4 reads it.
_ACCEPTED_RANGE = re.compile(r"\[\s*([^,\[\]]+?)\s*,\s*([^,\[\]]+?)\s*\](?:\s+for\b.*)?", re.S)


def gold_text(slot: AnswerSlot) -> str:
    """The official answer as written, without its box: what our answer judge is shown. Several
    boxes are one answer, joined by commas; an
    unclosed box runs to the end; text outside the box is not the answer. A `$` that the box cut
    from its pair is dropped, so that the math reads whole."""
    text = slot.value.strip()
    boxes = [box.inside for box in outer_boxes(text)]  # a box never closed runs to the end
    inside = ", ".join(boxes) if boxes else text
    if inside.count("$") % 2:
        inside = inside.replace("$", "")
    return inside.strip()


def gold_value(slot: AnswerSlot) -> str:
    """The gold answer that rules compare with: the official text without `$`. A range stays a
    range: rules and judges accept any value inside it."""
    return " ".join(gold_text(slot).replace("$", "").split())


def accepted_range(slot: AnswerSlot) -> tuple[float, float] | None:
    """The bounds of a slot whose gold is an accepted range, else None."""
    bounds = _ACCEPTED_RANGE.fullmatch(gold_value(slot))
    if not bounds:
        return None
    from olympiad_eval.scoring.expressions import to_number  # sympy's import only where a range needs it

    low, high = (to_number(side) for side in bounds.groups())
    return (min(low, high), max(low, high)) if low is not None and high is not None else None


def reference_answer(slot: AnswerSlot) -> str:
    """What the `reference` model answers for a slot: the gold value; for a range, its midpoint."""
    bounds = accepted_range(slot)
    if bounds is None:
        return gold_value(slot)
    middle = (bounds[0] + bounds[1]) / 2
    return f"{middle:.6g}" if bounds[0] <= float(f"{middle:.6g}") <= bounds[1] else repr(middle)


def rule_checks(problem: Problem, response: str, scoring) -> list[Check]:
    """Each slot's answer against its gold, where both are given (evalscope's protocol checks with
    Math-Verify instead, as evalscope does: `hipho.evalscope`; VLMEvalKit's with its own rules:
    `hipho.vlmevalkit`)."""
    if scoring.protocol == "vlmevalkit":
        return vlmevalkit.rule_checks(problem, response, scoring)
    if scoring.protocol == "evalscope":
        return []
    return [
        Equivalence(gold_value(slot), given, scoring.rel_tol, slot.unit)
        for slot, given in zip(problem.answers, _extracted(problem, response, scoring))
        if _checked(slot, given)
    ]


def rule_score(problem: Problem, response: str, scoring, verdicts: list) -> Score:
    """Answer level: the boxes of the `<answer>` block line up with the answer slots in order; with
    fewer boxes than slots, they fill the slots the protocol's own code fills (`aligned`).
    VLMEvalKit's protocol reads and checks them its own way (`hipho.vlmevalkit`)."""
    if scoring.protocol == "vlmevalkit":
        return vlmevalkit.rule_score(problem, response, scoring, verdicts)
    gradable = [slot for slot in problem.answers if gold_value(slot)]  # "" is open-ended: judges only
    extracted = _extracted(problem, response, scoring)
    checked = scoring.protocol != "evalscope"
    verdict_of = iter(verdicts)
    slots, earned, undecided = [], Fraction(0), []
    for index, (slot, given) in enumerate(zip(problem.answers, extracted)):
        verdict = next(verdict_of) if checked and _checked(slot, given) else None
        correct = bool(verdict and verdict.correct)
        if verdict is not None and verdict.correct is None:
            undecided.append(f"slot {index + 1}: {verdict.reason}")
        earned += exact(slot.points) if correct else 0
        slots.append({"expected": gold_value(slot), "given": given, "correct": correct, "points": slot.points})
    total = problem.exact_points
    open_ended = [str(index + 1) for index, slot in enumerate(problem.answers) if not gold_value(slot)]
    return Score(
        rules_cannot_decide=(
            f"answer slot {', '.join(open_ended)} of {len(problem.answers)} is open-ended (no official answer to "
            "compare with): only an LLM judge of the marking decides it"
            if open_ended and checked
            else ""
        ),
        score=float(earned / total) if total else 0.0,
        points=float(earned),
        extracted=tuple(extracted),
        slots=tuple(slots),
        detail=f"answer level: {float(earned):g} of {problem.points:g} points"
        + (
            f" ({len(problem.answers) - len(gradable)} open-ended slots need an LLM judge)"
            if len(gradable) < len(problem.answers)
            else ""
        ),
        undecided=tuple(undecided),
    )


def _extracted(problem: Problem, response: str, scoring) -> list[str]:
    slots = len(problem.answers)
    return aligned(final_boxes(response, slots, scoring.protocol), slots, scoring.protocol)


def _checked(slot: AnswerSlot, given: str) -> bool:
    return bool(gold_value(slot) and given)


def final_boxes(response: str, slots: int, protocol_name: str) -> list[str]:
    """The last boxes, one per slot at most: those of the `<answer>` block when it has any, else of
    the whole response (ours: a box after `</answer>` or in the think block is not the answer;
    VLMEvalKit reads the whole response, `hipho.vlmevalkit`); evalscope reads the whole response
    without its first think block."""
    if protocol_name == "evalscope":
        boxes = evalscope.boxed_answers(completion(response))
        return boxes[-slots:] if slots else boxes
    return answers.boxed_answers(response, slots)


def aligned(boxes: list[str], slots: int, protocol_name: str) -> list[str]:
    """One answer per slot. With fewer boxes than slots, ours gives them to the last slots, as
    VLMEvalKit's HiPhO verifier does (`get_answer_str` pads in front of the last boxes); evalscope
    to the first. The slots left over are answered by "" (nothing to check)."""
    missing = [""] * (slots - len(boxes))
    return boxes + missing if protocol_name == "evalscope" else missing + boxes
