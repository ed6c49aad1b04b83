"""Final-answer extraction from model responses."""

from __future__ import annotations

import re

_BOX = re.compile(r"\\(?:boxed|fbox)\s*\{")
_ANSWER_BLOCK = re.compile(r"<answer>(.*?)(?:</answer>|$)", re.S | re.I)
_FINAL_ANSWER = re.compile(r"FINAL ANSWER\s*[:：]\s*(.*)", re.I)
_ANSWER_LINE = re.compile(r"^\s*\**ANSWER\**\s*[:：]\s*\(?([A-E])\)?\b", re.I | re.M)
_ANSWER_IS = re.compile(r"answer is\s*[:：]?\s*(.+)", re.I)
_LONE_LETTER = re.compile(r"(?<![A-Za-z\\])\(?([A-E])\)?(?![A-Za-z])")


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


def choice_letter(text: str, letters: str = "ABCDE") -> str | None:
    """The last multiple-choice letter stated: "ANSWER: X", a boxed letter or "the answer is X";
    failing those, a lone letter at the very end."""
    candidates = [(m.start(), m.group(1)) for m in _ANSWER_LINE.finditer(text)]
    candidates += [(m.start(), m.group(1).strip()) for m in _ANSWER_IS.finditer(text)]
    candidates += [(m.start(), box) for m, box in zip(_BOX.finditer(text), boxed(text))]
    for _, candidate in sorted(candidates, reverse=True):
        letter = candidate.strip("() $.").upper()
        if len(letter) == 1 and letter in letters:
            return letter
    lone = [m for m in _LONE_LETTER.findall(text.strip()[-20:]) if m in letters]
    return lone[-1] if lone else None


def free_form(text: str) -> str | None:
    """A free-form final answer: the last box, else "the answer is ...", else the last line."""
    boxes = boxed(text)
    if boxes:
        return boxes[-1]
    said = _ANSWER_IS.findall(text)
    if said:
        return said[-1].strip().rstrip(".")
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else None
