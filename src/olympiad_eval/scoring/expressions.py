"""The sympy side of the rule chain (`mathcheck`): LaTeX parsed with case-sensitive positive
symbols, and two expressions compared at random positive points (rule 9 of `mathcheck`)."""

from __future__ import annotations

import cmath
import functools
import math
import random
import re

from olympiad_eval.scoring.normalise import MAX_DEPTH, NUMBER_THEN_UNIT, PERCENT, bracket_depths

# ---------------------------------------------------------------- sympy


@functools.lru_cache(maxsize=2048)
def sympy_form(text: str):
    """The sympy form with every symbol positive, or None where the parser gives up or the
    expression has no value (see `_undefined`)."""
    import sympy
    from latex2sympy2_extended.latex2sympy2 import ConversionConfig, latex2sympy

    if max(bracket_depths(text), default=0) > MAX_DEPTH:  # antlr slows down with the square of the depth
        return None
    try:
        expression = latex2sympy(as_variables(text), conversion_config=ConversionConfig(lowercase_symbols=False))
    except Exception:  # the parser raises anything from antlr errors to RecursionError
        return None
    if isinstance(expression, sympy.MatrixBase):
        expression = sympy.ImmutableMatrix(expression)  # a mutable Matrix is no sympy Basic
    if not isinstance(expression, sympy.Basic) or _undefined(expression):
        return None
    expression = _as_functions(expression)
    symbols = {s: sympy.Symbol(s.name, positive=True) for s in expression.free_symbols if isinstance(s, sympy.Symbol)}
    return expression.xreplace(symbols) if symbols else expression


# The names latex2sympy2_extended does not read as variables, though physics answers use them as
# such: `\gamma` and `\Gamma` are its gamma function applied to whatever follows (`\gamma-2` is
# Γ(-2), undefined; `\gamma+1` is Γ(1) = 1) or, before a letter, Euler's constant (and with a
# subscript they do not parse); a lone `I` is the imaginary unit, its subscripts and exponents
# dropped (`I_0` and `I_1` are both i, `I^{2}` is i). Each collapses different answers into one
# value, so that `k·f` or `f + c` could equal `f`. They are renamed to plain symbols before parsing,
# the same on both sides of a comparison; an argument of an accent or a text command (`\dot{I}`,
# `\mathrm{...}`) is one opaque name to the parser already, and stays as written.
_MISREAD = re.compile(r"\\(gamma|Gamma)(?![A-Za-z])|[γΓ]|(?<![A-Za-z\\])I(?![A-Za-z])")
_GAMMA, _CAPITAL_GAMMA = r"\mathrm{gammaVariable}", r"\mathrm{GammaVariable}"
_AS_VARIABLE = {"gamma": _GAMMA, "γ": _GAMMA, "Gamma": _CAPITAL_GAMMA, "Γ": _CAPITAL_GAMMA, "I": r"\mathrm{I}"}
# latex2sympy2_extended's accent and text commands: the parser reads `\cmd{...}` as one name
_OPAQUE = re.compile(
    r"\\(?:dot|ddot|hat|bar|overline|vec|overrightarrow|tilde|widetilde|check|breve|acute|grave|boldsymbol|bm"
    r"|math(?:rm|bf|it|cal|bb|sf|tt|frak)|text(?:bf|it|rm)?|mbox)\s*\{[^{}]*\}"
)


def as_variables(text: str) -> str:
    """`text` with the names the parser misreads (`_MISREAD`) renamed to plain variables, outside
    the arguments of accent and text commands."""
    if not _MISREAD.search(text):
        return text
    kept = [match.span() for match in _OPAQUE.finditer(text)]

    def renamed(match: re.Match) -> str:
        if any(start <= match.start() < end for start, end in kept):
            return match.group()
        return _AS_VARIABLE[match.group(1) or match.group()]

    return _MISREAD.sub(renamed, text)


def _undefined(expression) -> bool:
    """An expression with an undefined part (`nan`, complex infinity, as from Γ(-2)) has no value:
    sympy absorbs any factor, sign or term into it (`2·nan` is `nan`), so it would equal every
    multiple and shift of itself."""
    import sympy

    return expression.has(sympy.S.NaN, sympy.S.ComplexInfinity)


def _as_functions(expression):
    """`\\frac{dp}{dz}` parses as the derivative of a symbol p, which sympy makes 0 (so every
    derivative would equal every other): differentiate a function p(z) instead."""
    import sympy

    derivatives = {
        d: sympy.Derivative(sympy.Function(d.expr.name)(*d.variables), *d.variable_count)
        for d in expression.atoms(sympy.Derivative)
        if isinstance(d.expr, sympy.Symbol)
    }
    return expression.xreplace(derivatives) if derivatives else expression


def parse_latex(text: str):
    """The sympy form of `text` (symbols case-sensitive and positive); raises if it does not parse."""
    expression = sympy_form(text)
    if expression is None:
        raise ValueError(f"not parseable: {text[:80]!r}")
    return expression


def values_match(left, right, tolerance: float) -> bool:
    import sympy

    if left == right:
        return True
    left, right = _explicit_matrix(left), _explicit_matrix(right)
    if isinstance(left, sympy.MatrixBase) and isinstance(right, sympy.MatrixBase):
        return left.shape == right.shape and all(values_match(a, b, tolerance) for a, b in zip(left, right))
    if is_scalar(left) and is_scalar(right):
        sampled = _sampled_match(left, right, tolerance)
        return sampled if sampled is not None else _simplifies_to_zero(left - right)
    if isinstance(left, sympy.FiniteSet) and isinstance(right, sympy.FiniteSet) and len(left) == len(right):
        unmatched = list(right)  # `\pm 90` is the set {-90, 90}: match elements in any order
        for element in left:
            found = next((i for i, other in enumerate(unmatched) if values_match(element, other, tolerance)), None)
            if found is None:
                return False
            unmatched.pop(found)
        return True
    return False


def roots_of(expression, unknown) -> list | None:
    import sympy

    try:
        if not expression.has(unknown) or not expression.is_polynomial(unknown):
            return None
        if sympy.degree(expression, unknown) > 2:
            return None
        # the unknown is positive: negative roots drop out; the roots are compared at points, unsimplified
        return sympy.solve(expression, unknown, simplify=False)
    except Exception:  # sympy raises a zoo of errors on odd input; "no roots" is the answer
        return None


def constant_ratio(left, right, tolerance: float) -> complex | None:
    values = _sampled_values(left, right)
    if values is not None:
        ratios = [a / b for a, b in values if b != 0]
        if len(ratios) == len(values) and all(_close(ratios[0], r, tolerance) for r in ratios):
            return ratios[0]
        return None
    ratio = _simplify(left / right)
    return complex(ratio) if ratio is not None and ratio.is_number and ratio.is_finite else None


def _sampled_match(left, right, tolerance: float) -> bool | None:
    """Equal at every sample point (within `tolerance` of the gold); None if they cannot be evaluated."""
    values = _sampled_values(left, right)
    if values is None:
        return None
    return all(_close(gold, pred, tolerance) for gold, pred in values)


def _sampled_values(left, right) -> list[tuple[complex, complex]] | None:
    """Both expressions at a few random positive points (one if they have no symbols); None when
    they cannot be evaluated there."""
    import sympy

    left, right = _opaque(left, right)
    symbols = sorted(left.free_symbols | right.free_symbols, key=str)
    rng = random.Random(len(symbols))  # deterministic: the same verdict on every run
    values = []
    for _ in range(_SAMPLE_POINTS if symbols else 1):
        point = {s: sympy.Rational(rng.randint(110, 290), 100) for s in symbols}
        pair = (_at(left, point), _at(right, point))
        if None in pair:
            return None
        values.append(pair)
    return values


def _opaque(left, right):
    """Derivatives, integrals and unknown functions (`\\frac{dp}{dz}`, `E(t)`) have no value at a
    point: give each distinct one a variable of its own. Sound for equality (what is equal for all
    values of those variables is equal), though `(2p)'` and `2p'` then differ."""
    import sympy
    from sympy.core.function import AppliedUndef

    kinds = (sympy.Derivative, sympy.Integral, sympy.Subs, AppliedUndef)
    atoms = sorted(left.atoms(*kinds) | right.atoms(*kinds), key=str)
    if not atoms:
        return left, right
    variables = {atom: sympy.Symbol(f"_opaque{i}", positive=True) for i, atom in enumerate(atoms)}
    return left.xreplace(variables), right.xreplace(variables)


def _at(expression, point: dict) -> complex | None:
    """The value at `point` to 30 digits; an exact 0 where what evalf gives is only the residue of a
    cancellation (`sin²x + cos²x - 1`): tiny at 30 digits, and far tinier at 60. A value that is
    really small (`10^{-30} x`) stays what it is at both precisions, so it is compared as a value,
    relative to the gold like any other: an absolute floor would make every multiple of it equal."""
    try:
        value = complex(expression.evalf(30, subs=point))
        if cmath.isfinite(value) and 0 < abs(value) < _TINY:
            closer = complex(expression.evalf(60, subs=point))
            value = 0j if abs(closer) < abs(value) * 1e-10 else value
    except Exception:  # sympy raises anything from TypeError to RecursionError on odd input
        return None
    return value if cmath.isfinite(value) else None  # an overflow is no evidence either way


_TINY = 1e-20  # below this at 30 digits, a value may be the residue of a cancellation


def _close(gold: complex, pred: complex, tolerance: float) -> bool:
    """Relative to the gold (a gold of 0 is matched by 0 alone: `_at` turned residues into 0)."""
    return abs(pred - gold) <= tolerance * abs(gold)


def _simplifies_to_zero(difference) -> bool:
    simplified = _simplify(difference)
    return simplified is not None and simplified == 0


def _simplify(expression):
    import sympy

    try:
        return sympy.simplify(expression)
    except Exception:  # sympy raises a zoo of errors on odd input; "not shown equal" is the answer
        return None


def _explicit_matrix(value):
    """`\\frac{1}{2}\\begin{pmatrix}..\\end{pmatrix}` parses as an unevaluated product: evaluate it."""
    import sympy

    if isinstance(value, sympy.MatrixExpr):
        try:
            return sympy.ImmutableMatrix(value.doit())
        except Exception:  # a symbolic matrix (no explicit entries) stays as it is
            return value
    return value


def is_scalar(value) -> bool:
    """A scalar expression: matrix products and the like have no value at a point."""
    import sympy

    return isinstance(value, sympy.Expr) and not isinstance(value, sympy.MatrixExpr)


_DECIMAL = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


_THOUSANDS = re.compile(r"[-+]?\d{1,3}(?:(?:,|\{,\}|\s)\d{3})+(?:\.\d+)?")


_SCIENTIFIC = re.compile(
    r"(?:(?P<mantissa>[-+]?(?:\d+\.?\d*|\.\d+))\s*(?:\\times|\\cdot|\*)\s*)?"
    r"(?P<sign>[-+])?10\s*\^\s*(?:\{\s*(?P<braced>[-+]?\d+(?:\.\d+)?)\s*\}|(?P<bare>[-+]?\d+))"
)


def to_number(text: str) -> float | None:
    """A plain number, scientific notation or a closed-form constant, with an optional unit after
    a space ("24 m"); None if symbolic, or not finite."""
    text = PERCENT.sub("", text.strip())
    value = _literal(text)
    if value is not None:
        return value
    with_unit = NUMBER_THEN_UNIT.fullmatch(text)
    if with_unit:  # only a number may carry a bare unit: in "v_0 t" the t is a variable
        value = to_number(with_unit.group("head"))
        if value is not None:
            return value
    return _evaluate(text)


def _literal(text: str) -> float | None:
    """Numbers that need no parser: "2.5", "-1.6e-19", "1{,}000", "3 \\times 10^{8}", "10^{-10.5}"."""
    text = re.sub(r"^([-+])\s+", r"\1", text)
    if _THOUSANDS.fullmatch(text):
        text = re.sub(r",|\{,\}|\s", "", text)
    if _DECIMAL.fullmatch(text):
        return _finite(float(text))
    scientific = _SCIENTIFIC.fullmatch(text)
    if not scientific:
        return None
    mantissa = float(scientific["mantissa"] or "1") * (-1 if scientific["sign"] == "-" else 1)
    try:
        return _finite(mantissa * 10.0 ** float(scientific["braced"] or scientific["bare"]))
    except OverflowError:
        return None


def _evaluate(text: str) -> float | None:
    expression = sympy_form(text)
    if expression is None or getattr(expression, "free_symbols", {1}):
        return None
    try:
        value = complex(expression.evalf())
    except Exception:  # sympy raises anything from TypeError to RecursionError on odd input
        return None
    # real when the imaginary part is rounding noise relative to the value, never in absolute terms:
    # `10^{-34} i` is not the real number 0 (nor would every multiple of it be)
    return _finite(value.real) if abs(value.imag) <= 1e-12 * abs(value) else None


def _finite(value: float) -> float | None:
    """inf and nan are not answers (and `inf <= tol * inf` would call them equal)."""
    return value if math.isfinite(value) else None


def numbers_close(gold: float, pred: float, rel_tol: float) -> bool:
    """Within `rel_tol` of the gold value (not of the larger of the two, as math.isclose does).
    A relative tolerance around a gold 0 is 0: only rounding noise (1e-9) passes, not 0.0001."""
    if not gold:
        return abs(pred) <= EXACT
    return abs(pred - gold) <= max(rel_tol, EXACT) * abs(gold)


EXACT = 1e-9  # "exact" for floating-point evaluation


_SAMPLE_POINTS = 5
