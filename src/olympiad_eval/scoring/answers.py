"""Final-answer extraction from model responses."""

from __future__ import annotations

import re

_BOX = re.compile(r"\\(?:boxed|fbox)\s*\{")
_ANSWER_BLOCK = re.compile(r"<answer>(.*?)(?:</answer>|$)", re.S | re.I)
_FINAL_ANSWER = re.compile(r"FINAL ANSWER\s*[:：]\s*(.*)", re.I)


def boxed(text: str) -> list[str]:
    """Contents of every `\\boxed{...}` in order, with nested braces matched."""
    found = []
    for match in _BOX.finditer(text):
        depth, start = 1, match.end()
        for index in range(start, len(text)):
            depth += {"{": 1, "}": -1}.get(text[index], 0)
            if depth == 0:
                found.append(text[start:index].strip())
                break
    return found


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
