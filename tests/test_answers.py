"""answers: final-answer extraction from model responses."""

from __future__ import annotations

import pytest

from olympiad_eval.scoring.answers import answer_block, boxed, boxed_answers, final_answer_line


@pytest.mark.parametrize(
    "text, expected",
    [
        ("no box here", []),
        (r"so \boxed{42}.", ["42"]),
        (r"\boxed{\frac{a}{b}}", [r"\frac{a}{b}"]),
        (r"\boxed{\sqrt{2 g h (1 - \mu \cot\theta)}}", [r"\sqrt{2 g h (1 - \mu \cot\theta)}"]),
        (r"\boxed{ 3 } and \fbox{4} and \boxed {5}", ["3", "4", "5"]),
        (r"\boxed{$v = \sqrt{2gh}$}", [r"$v = \sqrt{2gh}$"]),
        (r"\boxed{1} then \boxed{unclosed {x}", ["1"]),  # an unclosed box yields nothing
        (r"\boxed{\boxed{7}}", [r"\boxed{7}", "7"]),  # outer, then inner, in order of opening
    ],
)
def test_boxed_matches_nested_braces(text, expected):
    assert boxed(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("<think>x</think><answer>[\\boxed{1}]</answer>", "[\\boxed{1}]"),
        ("<answer>first</answer> text <answer>second</answer>", "second"),
        ("<ANSWER>upper</Answer>", "upper"),
        ("<answer>\nruns to the end", "\nruns to the end"),
        ("no block", None),
    ],
)
def test_answer_block_is_the_last_block(text, expected):
    assert answer_block(text) == expected


@pytest.mark.parametrize(
    "text, slots, expected",
    [
        # the boxes of the <answer> block win over boxes in the reasoning
        ("<think>\\boxed{9}</think><answer>[\\boxed{1}, \\boxed{2}]</answer>", 2, ["1", "2"]),
        # more boxes than slots: the last N
        ("<answer>[\\boxed{0}, \\boxed{1}, \\boxed{2}, \\boxed{3}]</answer>", 2, ["2", "3"]),
        # an answer block without boxes: fall back to the last boxes of the whole text
        ("\\boxed{7} \\boxed{8} <answer>8</answer>", 1, ["8"]),
        # no answer block at all
        ("first \\boxed{a} then \\boxed{b} and \\boxed{c}", 2, ["b", "c"]),
        # fewer boxes than slots: what there is
        ("<answer>[\\boxed{5}]</answer>", 3, ["5"]),
        # an unclosed block still counts
        ("\\boxed{0} <answer>[\\boxed{4}, \\boxed{6}", 2, ["4", "6"]),
        # slots=0: every box
        ("\\boxed{1}\\boxed{2}", 0, ["1", "2"]),
        ("nothing boxed", 1, []),
    ],
)
def test_boxed_answers(text, slots, expected):
    assert boxed_answers(text, slots) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("derivation\nFINAL ANSWER: 24 m\n", "24 m"),
        ("Final Answer:   r = \\frac{1}{B}  \nmore text", "r = \\frac{1}{B}"),
        ("FINAL ANSWER: 1\nwait\nFINAL ANSWER: 2", "2"),
        ("最终 FINAL ANSWER：280 MeV", "280 MeV"),  # full-width colon
        ("The final answer is 24 m", None),
    ],
)
def test_final_answer_line(text, expected):
    assert final_answer_line(text) == expected
