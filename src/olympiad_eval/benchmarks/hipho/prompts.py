"""HiPhO's prompts: the fields of its templates, its figures, and the reference answer."""

from __future__ import annotations

import re

from olympiad_eval.benchmarks.hipho.scoring import reference_answer
from olympiad_eval.core.records import (
    Figure,
    Problem,
)


def template_fields(problem: Problem, suite) -> tuple[str, dict]:
    language = suite.get("prompt_language") or problem.language
    fields = {
        "information": problem.information or "None.",
        "context": problem.context,
        "question": problem.question,
        "problem": problem.question,  # the name VLMEvalKit's wording gives it
    }
    return language, fields


_FIGURE_MARKER = re.compile(r"\[figure(\d+)\]")


def figures(problem: Problem, suite) -> dict[int, Figure]:
    """The figures sent with the prompt, by their own number. The release numbers a paper's figures
    across the whole problem and lists a record only the ones it needs, in their numbers' order, so
    the k-th figure listed is the k-th number its text cites (IPhO_2025_1_C_4 lists two figures and
    cites [figure2] and [figure3]); its image names number them within a part, not in the paper
    (`IPhO_2025_2_b_1.png` is Fig. 3). Where the text cites another count of numbers than it lists
    figures, the N-th figure listed is number N."""
    if suite.figures == "none":
        return {}
    cited = sorted(
        {int(number) for text in (problem.context, problem.question) for number in _FIGURE_MARKER.findall(text)}
    )
    numbers = cited if len(cited) == len(problem.figures) else range(1, len(problem.figures) + 1)
    return dict(zip(numbers, problem.figures))


def reference(problem: Problem, suite) -> str:
    boxes = ", ".join(f"\\boxed{{{reference_answer(slot)}}}" for slot in problem.answers)
    return f"<think>\nReference solution.\n</think>\n<answer>\n[{boxes}]\n</answer>"
