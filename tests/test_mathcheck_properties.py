"""Properties of the whole rule chain (`mathcheck.equivalent`) on random expressions built from the
symbols, functions and constants that official answers use (HiPhO's golds: `m`, `v_{0}`,
`\\gamma`, `I`, `k_{B}`, `\\hbar`, `\\sqrt{}`, `\\sin`, `e^{}`, `\\pi`, `6.63\\times10^{-34}`, ...):

- a different answer is never the same one: `k·f` (k != 1), `-f` and `f + c` (c != 0) never equal
  `f` (f not identically zero; every f here is a sum of products of non-vanishing parts);
- the same answer written otherwise always is: `f` expanded, its terms and factors reordered, its
  fractions as `\\dfrac`, its products with `\\cdot`.

Hypothesis draws the expressions from a fixed seed (`derandomize`) and a bounded number of examples,
so that the test is deterministic and takes seconds. The first property found the class of bugs
behind `u^{\\gamma-2}` = `-u^{\\gamma-2}` (`scoring.expressions.as_variables`, `_undefined`, `_at`).
"""

from __future__ import annotations

import cmath
import os
from dataclasses import dataclass

import pytest

hypothesis = pytest.importorskip("hypothesis")  # the `test` extra installs it
import sympy  # noqa: E402
from hypothesis import HealthCheck, assume, given, settings, strategies as st  # noqa: E402

from olympiad_eval.scoring.expressions import sympy_form, to_number  # noqa: E402
from olympiad_eval.scoring.mathcheck import equivalent  # noqa: E402

# What HiPhO's golds are made of (tests/test_mathcheck_properties.py's docstring): names as they
# write them, including the ones the parser once misread (`\gamma`, `\Gamma`, `I`, `e`).
SYMBOLS = (
    "m", "g", "L", "R", "r", "T", "t", "x", "z", "a", "b", "n", "k", "q", "h", "c", "e", "B", "E", "I", "M", "N",
    "S", "v_{0}", "k_{B}", "m_{e}", "I_{0}", r"\hbar", r"\omega", r"\rho", r"\tau", r"\alpha", r"\gamma", r"\Gamma",
    r"\varepsilon_{0}", r"\mu_{0}", r"\theta", r"\lambda", r"\Phi", r"\Omega", r"\ell", r"\delta", r"\sigma",
    r"\eta", r"\phi", r"\xi", r"\dot{x}", r"\omega_{0}", r"\gamma_{0}",
)  # fmt: skip
NUMBERS = ("2", "3", "4", "5", "7", "1.5", "0.3", r"\frac{1}{2}", r"\frac{3}{4}", r"\sqrt{2}", r"\pi")
SCIENTIFIC = (("6.63", "-34"), ("1.6", "-19"), ("3", "8"), ("9.1", "-31"))
EXPONENTS = ("2", "3", "-1", "-2", r"\frac{1}{2}", r"-\frac{3}{2}", r"\gamma-2", r"\gamma", "n")
FUNCTIONS = (r"\sin", r"\cos", r"\exp", r"\ln")


@dataclass(frozen=True)
class Node:
    """An expression tree: `kind` is sym, num, sci, sum, prod, frac, pow, sqrt or func."""

    kind: str
    parts: tuple = ()
    text: str = ""  # a leaf's LaTeX, a power's exponent, a function's name


@dataclass(frozen=True)
class Style:
    """How a tree is written: `\\dfrac` or `\\frac`, products with `\\cdot` or side by side, terms
    and factors in their order or reversed."""

    dfrac: bool = False
    cdot: bool = False
    reverse: bool = False


def leaves():
    return st.one_of(
        st.sampled_from(SYMBOLS).map(lambda s: Node("sym", text=s)),
        st.sampled_from(NUMBERS).map(lambda s: Node("num", text=s)),
    )


@st.composite
def expressions(draw, depth: int = 3) -> Node:
    if depth == 0 or draw(st.integers(0, 4)) == 0:
        return draw(leaves())
    kind = draw(st.sampled_from(("sum", "prod", "prod", "frac", "pow", "sqrt", "func")))
    inner = expressions(depth - 1)
    if kind in ("sum", "prod"):
        return Node(kind, tuple(draw(st.lists(inner, min_size=2, max_size=3))))
    if kind == "frac":
        return Node("frac", (draw(inner), draw(inner)))
    if kind == "pow":
        return Node("pow", (draw(inner),), draw(st.sampled_from(EXPONENTS)))
    if kind == "sqrt":
        return Node("sqrt", (draw(inner),))
    return Node("func", (draw(inner),), draw(st.sampled_from(FUNCTIONS)))


@st.composite
def answers(draw) -> Node:
    """A gold answer: an expression, sometimes with a physical constant in scientific notation as
    a factor (one at most: a sum of such products would put a shift `c` within the checker's
    relative tolerance of 1e-9)."""
    tree = draw(expressions())
    if draw(st.booleans()):
        mantissa, exponent = draw(st.sampled_from(SCIENTIFIC))
        tree = Node("prod", (Node("sci", text=f"{mantissa}\\times10^{{{exponent}}}"), tree))
    return tree


def latex(node: Node, style: Style = Style()) -> str:
    kind, parts = node.kind, node.parts
    if kind in ("sym", "num", "sci"):
        return node.text
    ordered = tuple(reversed(parts)) if style.reverse else parts
    if kind == "sum":
        return " + ".join(latex(part, style) for part in ordered)
    if kind == "prod":
        factors = [_factor(part, style) for part in ordered]
        return factors[0] + "".join(
            (r" \cdot " if style.cdot or _needs_cdot(before, factor) else " ") + factor
            for before, factor in zip(factors, factors[1:])
        )
    if kind == "frac":
        return rf"\{'dfrac' if style.dfrac else 'frac'}{{{latex(parts[0], style)}}}{{{latex(parts[1], style)}}}"
    if kind == "pow":
        return f"{_atom(parts[0], style)}^{{{node.text}}}"
    if kind == "sqrt":
        return rf"\sqrt{{{latex(parts[0], style)}}}"
    return rf"{node.text}\left({latex(parts[0], style)}\right)"


def _atom(node: Node, style: Style) -> str:
    """A power's base: a name as it is, anything else in brackets."""
    return node.text if node.kind == "sym" else rf"\left({latex(node, style)}\right)"


def _needs_cdot(before: str, factor: str) -> bool:
    """Side by side, `2 3` would read as 23 and `2 \\frac{1}{2}` as the mixed number 2½."""
    return factor[0].isdigit() or (before[-1].isdigit() and factor.startswith(("\\frac", "\\dfrac")))


def _factor(node: Node, style: Style) -> str:
    """A factor of a product, sums bracketed."""
    if node.kind == "sum":
        return rf"\left({latex(node, style)}\right)"
    return latex(node, style)


def expanded(node: Node) -> Node:
    """A product with a sum among its factors, multiplied out (`a(b + c)` as `ab + ac`)."""
    if node.kind != "prod":
        return node
    for index, part in enumerate(node.parts):
        if part.kind == "sum":
            others = node.parts[:index] + node.parts[index + 1 :]
            return Node("sum", tuple(Node("prod", (*others, term)) for term in part.parts))
    return node


def _value(text: str, scale: str | None = None) -> complex | None:
    """The answer at a point of the range the checker samples (divided by its physical constant,
    if any), or None where it does not parse or has no value."""
    form = sympy_form(text)
    if form is None:
        return None
    point = {symbol: sympy.Rational(17, 10) for symbol in form.free_symbols}
    try:
        value = complex(form.evalf(30, subs=point)) / (1 if scale is None else to_number(scale))
    except (TypeError, ValueError):  # a matrix, a relation: not an expression of these
        return None
    return value if cmath.isfinite(value) else None


def _has_value(text: str, scale: str | None = None) -> bool:
    """The answer parses, is not identically zero (`\\sin(\\pi)`), and is of a size that the
    checker's relative tolerance (1e-9) tells from itself plus a constant: `e^{25} + 1` is
    `e^{25}` within it."""
    value = _value(text, scale)
    return value is not None and 1e-6 < abs(value) < 1e6


_QUIET = {
    "database": None,
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.filter_too_much],
}
# The test command's: the same examples on every run (`derandomize`), few enough to take seconds.
settings.register_profile("mathcheck", max_examples=30, derandomize=True, **_QUIET)
# A longer search with fresh examples, run by hand: OLYMPIAD_EVAL_PROPERTIES=explore python -m pytest <this file>
settings.register_profile("explore", max_examples=1000, derandomize=False, **_QUIET)
PROPERTY = settings.get_profile(os.environ.get("OLYMPIAD_EVAL_PROPERTIES", "mathcheck"))
FACTORS = ("2", "3", "-1", "-2", r"\frac{1}{2}", r"\pi", r"\sqrt{2}", "1.5", "10")
SHIFTS = ("1", "2", "-1", r"\frac{1}{2}", r"\pi", "0.5")


def _scale(tree: Node) -> str | None:
    """The physical constant an answer carries as a factor, if any: a shift is drawn at its scale."""
    if tree.kind == "prod" and tree.parts[0].kind == "sci":
        return tree.parts[0].text
    return None


@PROPERTY
@given(answers(), st.sampled_from(FACTORS), st.booleans())
def test_a_multiple_of_an_answer_is_another_answer(tree, factor, cdot):
    gold = latex(tree)
    assume(_has_value(gold, _scale(tree)))
    joined = r" \cdot " if cdot else " "
    assert not equivalent(gold, rf"{factor}{joined}\left({gold}\right)"), (gold, factor)


@PROPERTY
@given(answers())
def test_the_opposite_of_an_answer_is_another_answer(tree):
    gold = latex(tree)
    assume(_has_value(gold, _scale(tree)))
    assert not equivalent(gold, rf"-\left({gold}\right)"), gold
    assert not equivalent(gold, f"-{gold}" if tree.kind not in ("sum",) else rf"-\left({gold}\right)"), gold


@PROPERTY
@given(answers(), st.sampled_from(SHIFTS))
def test_an_answer_shifted_by_a_constant_is_another_answer(tree, shift):
    gold, scale = latex(tree), _scale(tree)
    assume(_has_value(gold, scale))
    constant = shift if scale is None else rf"{shift} \cdot {scale}"
    assert not equivalent(gold, f"{gold} + {constant}"), (gold, constant)


@PROPERTY
@given(answers(), st.booleans(), st.booleans(), st.booleans(), st.booleans())
def test_an_answer_written_otherwise_is_the_same_answer(tree, expand, dfrac, cdot, reverse):
    gold = latex(tree)
    assume(_has_value(gold, _scale(tree)))
    written = latex(expanded(tree) if expand else tree, Style(dfrac=dfrac, cdot=cdot, reverse=reverse))
    assert equivalent(gold, written), (gold, written)


@pytest.mark.parametrize(
    "gold, other",
    [
        (r"u^{\gamma-2}", r"-u^{\gamma-2}"),  # IPhO_2024_3_B_4: Γ(-2) made both sides undefined
        (r"u^{\gamma-2}", r"2u^{\gamma-2}"),
        (r"1", r"\gamma+1"),  # Γ(1) = 1
        (r"(\gamma-1) m c^2", r"2(\gamma-1) m c^2"),
        (r"I_0 R", r"I_1 R"),  # the imaginary unit, its subscripts dropped
        (r"I^{2} R", r"I R"),
        (r"10^{-30} x", r"-10^{-30} x"),  # an absolute floor of 1e-25 took tiny values for zero
        (r"6.63\times10^{-34} \nu", r"1.3\times10^{-33} \nu"),
    ],
)
def test_the_cases_that_showed_the_bug(gold, other):
    assert not equivalent(gold, other)


@pytest.mark.parametrize(
    "gold, same",
    [
        (r"u^{\gamma-2}", r"u^{-2+\gamma}"),
        (r"\gamma m c^2", r"m c^{2} \gamma"),
        (r"I^{2} R", r"R I^2"),
        (r"\frac{\gamma}{\gamma - 1}", r"\dfrac{\gamma}{-1+\gamma}"),
        (r"\sin^2 x + \cos^2 x", "1"),  # a cancellation's residue is still zero
        (r"10^{-30} x", r"x \cdot 10^{-30}"),
    ],
)
def test_the_same_answers_stay_the_same(gold, same):
    assert equivalent(gold, same)
