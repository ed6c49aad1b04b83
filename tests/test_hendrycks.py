"""MATH's LaTeX repairs as VLMEvalKit's (strict) and MATH-V's scorers each copied them, and their test of a number."""

import pytest

from olympiad_eval.scoring.hendrycks import fix_a_slash_b, fix_fracs, fix_sqrt, fractions, is_float, leading_zeros


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize(
    ("text", "fixed"),
    [
        ("\\sqrt3", "\\sqrt{3}"),
        ("2\\sqrt3+\\sqrt{5}", "2\\sqrt{3}+\\sqrt{5}"),
        ("\\sqrt23", "\\sqrt{2}3"),  # one character only
        ("x", "x"),
    ],
)
def test_a_bare_square_root_takes_the_next_character(text, fixed, strict):
    assert fix_sqrt(text, strict=strict) == fixed


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize(
    ("text", "fixed"),
    [
        ("\\frac12", "\\frac{1}{2}"),
        ("\\frac1{b}", "\\frac{1}{b}"),
        ("\\frac{a}{b}+\\frac34x", "\\frac{a}{b}+\\frac{3}{4}x"),
        ("\\frac1", "\\frac1"),  # fewer than two characters: the whole text as it was
        ("1+\\frac{1}{2}\\frac3", "1+\\frac{1}{2}\\frac3"),
    ],
)
def test_a_bare_fraction_takes_the_next_two_characters(text, fixed, strict):
    assert fix_fracs(text, strict=strict) == fixed


@pytest.mark.parametrize("fix", [fix_sqrt, fix_fracs])
def test_a_command_that_ends_the_text_raises_only_when_strict(fix):
    command = "\\sqrt" if fix is fix_sqrt else "\\frac"
    with pytest.raises(IndexError):
        fix("1+" + command, strict=True)  # VLMEvalKit's caller keeps the text as it was
    assert fix("1+" + command, strict=False) == "1+" + command


@pytest.mark.parametrize(
    ("text", "fixed"),
    [("3/4", "\\frac{3}{4}"), ("-3/4", "\\frac{-3}{4}"), ("03/4", "03/4"), ("3/x", "3/x"), ("1/2/3", "1/2/3")],
)
def test_only_two_integers_written_exactly_so_become_a_fraction(text, fixed):
    assert fix_a_slash_b(text) == fixed


@pytest.mark.parametrize(
    ("text", "fixed"),
    [(".5", "0.5"), ("x = .5", "x = 0.5"), ("\\frac{.5}{2}", "\\frac{0.5}{2}"), ("", ""), ("1.5", "1.5")],
)
def test_a_decimal_without_its_zero_gets_one(text, fixed):
    assert leading_zeros(text) == fixed


@pytest.mark.parametrize(
    ("text", "fixed"), [("0.5", "\\frac{1}{2}"), ("2/4", "\\frac{2}{4}"), ("0.50", "0.50"), ("x", "x")]
)
def test_a_half_and_a_ratio_of_integers_become_fractions(text, fixed):
    assert fractions(text) == fixed


@pytest.mark.parametrize(
    ("text", "number"),
    [("12", True), (" 12\n", True), ("1_000", True), ("nan", True), ("1e3", True)]
    + [("1,000", False), ("\\frac{1}{2}", False), ("", False)],
)
def test_a_number_is_what_float_accepts(text, number):
    assert is_float(text) is number
