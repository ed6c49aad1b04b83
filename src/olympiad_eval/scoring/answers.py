"""Final-answer extraction from model responses."""

from __future__ import annotations

import re
from dataclasses import dataclass

BOX = re.compile(r"\\(?:boxed|fbox)\s*\{")  # `\boxed{` or `\fbox{`
_ANSWER_BLOCK = re.compile(r"<answer>(.*?)(?:</answer>|$)", re.S | re.I)
_FINAL_ANSWER = re.compile(r"FINAL ANSWER\s*[:：]\s*(.*)", re.I)


@dataclass(frozen=True)
class Box:
    """One box of a text: where it starts, what its braces hold (nested braces matched) and where it
    ends; a box never closed holds the rest of the text and ends with it."""

    start: int
    inside: str
    end: int
    closed: bool


def boxes(text: str, opener: re.Pattern = BOX) -> list[Box]:
    """Every box that `opener` (a pattern ending at the box's opening brace) finds, in order, boxes
    inside boxes too. The one brace matcher of the project: each reading of boxes is a filter of it."""
    found = []
    for match in opener.finditer(text):
        depth, index = 1, match.end()
        while index < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[index], 0)
            index += 1
        closed = depth == 0
        found.append(Box(match.start(), text[match.end() : index - 1 if closed else index], index, closed))
    return found


def outer_boxes(text: str, opener: re.Pattern = BOX) -> list[Box]:
    """The boxes not inside another box."""
    kept: list[Box] = []
    for box in boxes(text, opener):
        if not kept or box.start >= kept[-1].end:
            kept.append(box)
    return kept


def boxed(text: str) -> list[str]:
    """Contents of every closed `\\boxed{...}` (or `\\fbox{...}`) in order, stripped."""
    return [box.inside.strip() for box in boxes(text) if box.closed]


def answer_block(text: str) -> str | None:
    """The last `<answer>...</answer>` block (an unclosed one runs to the end)."""
    blocks = _ANSWER_BLOCK.findall(text)
    return blocks[-1] if blocks else None


def boxed_answers(text: str, slots: int) -> list[str]:
    """The answers for `slots` answer slots: the boxes of the answer block, else the last boxes."""
    block = answer_block(text)
    boxes = boxed(block) if block is not None else []
    if not boxes:
        boxes = boxed(text)
    return boxes[-slots:] if slots else boxes


def final_answer_line(text: str) -> str | None:
    """What follows the last "FINAL ANSWER:" (up to the end of that line)."""
    matches = _FINAL_ANSWER.findall(text)
    return matches[-1].strip() if matches else None
