"""Rule-based equivalence of a predicted answer with a gold answer, written for physics answers.

`equivalent(gold, pred, rel_tol, unit, options)` applies these rules in order; answers split into
parts (several answers, interval ends, the sides of an equation) compare part by part with the same
rules. `options` (an `Options`) switches on the rules that only some protocols allow (marked
*option* below); all are off by default.

1. Presentation is not value. Boxes, `$`, spacing macros, `\\left`/`\\right`, `\\dfrac` and unicode
   (`×`, `·`, `−`, `°`, `π`, `μ`, `ε`, `φ`, superscript digits) are normalised; texts equal up to
   spacing match. A letter's variant form is the letter: `\\varepsilon` is `\\epsilon`, `\\varphi` is
   `\\phi`, `\\vartheta` is `\\theta`. A value in a lone pair of braces (`{4}`, not the set `\\{4\\}`)
   is that value.
2. Units are stripped, never compared or converted. A trailing `\\text{..}`/`\\mathrm{..}` goes from
   any answer; a bare unit (`3.0 m/s`, `280 MeV`, `9.8 m s^{-2}`) only after a number and a space, and
   only when every word is a known unit, so `v_0 t` keeps its `t` and `2x` is not 2. `%` is dropped
   (`60%` answers `60`). *Option* `percent`: an answer ending in `%` may also be read as a number,
   the percentage over 100 (`60%` answers `0.6`, and `60\\%` of a gold answers a prediction `0.6`),
   for protocols whose gold fractions may be answered in percent; not where `unit` is `%` (the gold
   is then in percent itself).
3. Multiple choice: a lone letter A-E, in any case, optionally in parentheses.
4. An accepted range `[a, b]`, labelled or not ("[0.94, 0.96] for $R_1$"), accepts a number in it,
   ends included.
5. Several answers in one box (`a, b`) compare in order when both have the same number of parts;
   in any order (each gold part answered by a different part) when the gold is written as a set
   (`\\{a, b\\}`, answered by `b, a` or `\\{b, a\\}`), or under *option* `unordered`, for problems
   whose answers may come in any order. Only the top level is unordered: `(1, 2)` inside stays a pair.
6. Intervals and tuples compare as such: same brackets, same number of entries, entries equal.
7. Relations. `name = value` is answered by its value (`\\beta = 2` matches `2`, and the other way
   round) when that name is a quantity, not the left side of an equation (`x - y = 0` is not
   answered by `0`). Two equations match when their right sides match and their left sides are
   equal or both bare names (a name is a label: `v = ...` and `v_1 = ...` state the same value), or
   else when they have the same solution set: `lhs - rhs` of one is a nonzero constant multiple of
   the other's (`y = 2x + 1`, `y = 1 + 2x` and `2x - y + 1 = 0` all match), or, solved for the
   gold's unknown (its left side, when that is a symbol or a power of one, and both equations are
   polynomials of degree 2 at most in it), they have the same positive roots (`v^2 = 2gh` and
   `v = \\sqrt{2gh}`; `E = mc^2` and `m = E/c^2`). Inequalities compare as `lhs - rhs` too, with a
   positive multiple and the same strictness (`a > b` matches `b < a`). `\\approx`, `\\simeq`
   count as `=`, and `x \\in (0, 1]` as `x = (0, 1]`.
8. Numbers (decimals, fractions, `3\\times10^{8}`, `3 \\cdot 10^8`, `3e8`, `3E+08`, `3×10⁸`, `1{,}000`,
   closed forms such as `\\sqrt{2}`) match within `rel_tol` of the gold value (1e-9 at least).
   Angles: `30^\\circ`, `30°`, `30 degrees` are all 30 degrees, and a trigonometric function of a
   number of degrees takes it in degrees (`\\sin 60^\\circ`, `\\cos(30^{\\circ})`, `\\tan 45°` are
   `\\frac{\\sqrt{3}}{2}`, `\\frac{\\sqrt{3}}{2}`, 1). Otherwise a degree mark converts to radians
   (and `\\text{rad}` to degrees) only when the gold states its unit, in its text or in `unit`: then
   the prediction is converted to the gold's unit, and a prediction without a unit may be in either
   (`\\pi/6` answers `30^\\circ`). A gold without a unit (`\\pi/6`) cannot tell an angle from a number,
   so there a degree mark is only presentation (`30^\\circ` answers `30`, not `\\pi/6`).
9. Expressions are parsed with case-sensitive symbols (`Mg` is not `mg`) that are all positive, as
   physical quantities are (so `\\sqrt{x/B^2}` is `\\sqrt{x}/B`), and compared at random positive
   points: exactly, or within `rel_tol` when the gold has decimal coefficients. Derivatives and
   unknown functions (`\\frac{dp}{dz}`, `E(t)`) count as variables of their own there;
   `sympy.simplify` decides only what cannot be evaluated at all.

A protocol's options reach the checks in two ways: a judge config switches them on for a whole
benchmark kind (`check_options` in conf/judge/*.yaml, read by the judge stage into the cell's
`CheckPool(options=...)`, applied to every check of the cell), and a benchmark may switch one on
for a single check by giving its job a fifth element, `(gold, pred, rel_tol, unit,
Options(unordered=True))` (e.g. for a problem that says its answers may come in any order); the
two add up. A benchmark whose protocol compares otherwise sends a check of its own, `(function,
*args)`: a module-level function giving a `Verdict` (MATH-Vision's evalscope protocol reads and
compares a free-form answer with Math-Verify so), run by the same workers under the same timeout.

sympy can hang on hostile input (`9^{9^9}`), so `CheckPool` runs every check in warm worker
processes with a hard timeout, counted from when a warm worker takes the check, and replaces a
worker that overruns it (workers fork from a server that has imported sympy once). Answers longer
than `MAX_CHARS` are not compared at all (False unless identical) and brackets nested deeper than
`MAX_DEPTH` are not parsed, so such input costs milliseconds rather than a worker.
"""

from __future__ import annotations

import cmath
import collections
import functools
import math
import multiprocessing
import os
import random
import re
import signal
import time
from dataclasses import dataclass, fields, replace
from multiprocessing.connection import wait

from olympiad_eval.scoring.answers import boxed

CHOICE_LETTERS = ("A", "B", "C", "D", "E")
MAX_CHARS = 3000  # real answers are a few hundred characters; antlr and sympy crawl on more
MAX_DEPTH = 20  # brackets nested deeper than this are not parsed (real answers: 5 at most)
MAX_UNORDERED = 12  # answers in any order cost a check per pair: more parts than this compare in order
_SAMPLE_POINTS = 5
_EXACT = 1e-9  # "exact" for floating-point evaluation
START_TIMEOUT = 600.0  # seconds for the check workers to start: generous, a loaded machine is slow


@dataclass(frozen=True)
class Verdict:
    """`correct` is None when the check could not finish (timeout or a crash), with the reason;
    `answer`: what a benchmark's own check read as the answer, where it reads one itself."""

    correct: bool | None
    reason: str = ""
    answer: str = ""


@dataclass(frozen=True)
class Options:
    """The rules that only some protocols allow (rules 2 and 5 of the module docstring), all off
    by default. Options add up: `a | b` has every rule that `a` or `b` switches on."""

    percent: bool = False  # an answer ending in `%` may also read as the percentage over 100
    unordered: bool = False  # several answers may come in any order

    def __or__(self, other: Options) -> Options:
        return Options(**{f.name: getattr(self, f.name) or getattr(other, f.name) for f in fields(self)})

    @classmethod
    def from_mapping(cls, mapping) -> Options:
        """`{percent: true}` (a suite's `scoring.check_options`); raises ValueError naming
        an unknown option or a value that is not a boolean."""
        known = {f.name for f in fields(cls)}
        for name, value in dict(mapping or {}).items():
            if name not in known:
                raise ValueError(f"unknown check option '{name}'; known: {', '.join(sorted(known))}")
            if not isinstance(value, bool):
                raise ValueError(f"check option '{name}' must be true or false, got {value!r}")
        return cls(**dict(mapping or {}))


# ---------------------------------------------------------------- presentation

_UNICODE = {
    "×": r" \times ",
    "·": r" \cdot ",
    "⋅": r" \cdot ",
    "−": "-",
    "–": "-",
    "°": r"^{\circ}",
    "π": r"\pi ",
    "μ": r"\mu ",
    "µ": r"\mu ",
    "Ω": r"\Omega ",
    "θ": r"\theta ",
    "λ": r"\lambda ",
    "ω": r"\omega ",
    "α": r"\alpha ",
    "β": r"\beta ",
    "γ": r"\gamma ",
    "Δ": r"\Delta ",
    "ρ": r"\rho ",
    "≤": r" \leq ",
    "≥": r" \geq ",
    "≈": r" \approx ",
    "∞": r"\infty ",
    "ε": r"\epsilon ",
    "ϵ": r"\epsilon ",
    "φ": r"\phi ",
    "ϕ": r"\phi ",
    "ϑ": r"\theta ",
}
_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻", "0123456789+-")
_SUPERSCRIPTS = re.compile("[⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻]+")
_UNWRAP = [
    (re.compile(r"\\(?:left|right|displaystyle|limits)(?![A-Za-z])"), ""),
    (re.compile(r"(?<!\\)\\[,;:! ]|~"), " "),  # `\, ` but not the row break `\\ `
    (re.compile(r"\\dfrac|\\tfrac"), r"\\frac"),
    # one letter, two glyphs: the parser would make `\varepsilon_0` and `\epsilon_0` two symbols
    (re.compile(r"\\var(epsilon|phi|theta)(?![A-Za-z])"), r"\\\1"),
]
_END = r"(?=\s*(?:$|[,;)\]]))"  # the end of an answer or of one of its parts
_DEGREE = r"^{\circ}"
_ANGLE_MARKS = [
    # `^\circ C` is a temperature: a unit like any other, not an angle
    (
        re.compile(r"\^\s*\{?\s*\\circ\s*\}?\s*(?:\\(?:text|mathrm)\s*\{\s*([CF])\s*\}|([CF])(?![A-Za-z]))"),
        r" \\mathrm{deg\1\2}",
    ),
    (re.compile(r"\^\s*\{?\s*\\circ\s*\}?|\^?\\(?:degree|textdegree)(?![A-Za-z])"), r"^{\\circ}"),
    (
        re.compile(
            rf"\s*(?:\\(?:text|mathrm)\s*\{{\s*(?:degrees?|deg)\s*\}}|\{{\s*degrees?\s*\}}|\s(?:degrees?|deg))"
            rf"{_END}"
        ),
        r"^{\\circ}",
    ),
    (
        re.compile(rf"\s*(?:\\(?:text|mathrm)\s*\{{\s*(?:rad|radians?)\s*\}}|\s(?:rad|radians?)){_END}"),
        r" \\mathrm{rad}",
    ),
]
_NUMERAL = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)"
# `\sin 60^{\circ}`, `\cos(30^{\circ})`, `\tan{45^{\circ}}`, `\sin^2 30^{\circ}`: the parser drops the
# degree mark (sin(60) in radians), so the argument is written in radians first
_TRIG_OF_DEGREES = re.compile(
    r"(?P<function>\\(?:sin|cos|tan|cot|sec|csc)(?![A-Za-z])(?:\s*\^\s*(?:\{[^{}]*\}|\d))?)\s*"
    rf"(?:\(\s*(?P<paren>{_NUMERAL})\s*\^\{{\\circ\}}\s*\)|\{{\s*(?P<brace>{_NUMERAL})\s*\^\{{\\circ\}}\s*\}}"
    rf"|(?P<bare>{_NUMERAL})\s*\^\{{\\circ\}})"
)
_UNIT_TEXT = r"[A-Za-z°Ω/\s\^\-\d\\·.*]"
# a trailing `\text{m/s}`-like unit, but not a subscript (`S_\mathrm{b}`) nor radians (an angle unit)
_TRAILING_UNIT = re.compile(
    rf"(?<![_^\s])\s*(?:\\mu\s*)?\\(?:text|mathrm|rm)\s*\{{(?!\s*rad\s*\}})(?:{_UNIT_TEXT}|\{{{_UNIT_TEXT}*\}})*\}}"
    r"(?:\s*\^\s*\{?-?\d+\}?)?\s*$"
)
_PERCENT = re.compile(r"\s*\\?%$")
_WRAPPED = re.compile(r"^\\(?:text|mathrm|textbf|mathbf)\s*\{([^{}]*)\}$")


def clean(answer: str, unit: str | None = None) -> str:
    """Strip what is presentation, not value: boxes, dollars, spacing macros, a trailing unit."""
    return _cleaned(answer, unit)[0]


def _cleaned(answer: str, unit: str | None) -> tuple[str, bool]:
    """`clean`'s text, and whether it ended in a `%` (dropped from the text)."""
    text = _normalise(answer)
    if unit:
        text = _strip_suffix(text, unit)
    wrapped = _WRAPPED.match(text)
    if wrapped:  # `\text{B}` is the answer B, not a unit
        return wrapped.group(1).strip(), False
    text = _TRAILING_UNIT.sub("", text).strip()
    in_percent = bool(unit) and bool(_PERCENT.fullmatch(_normalise(unit)))  # then `%` is the slot's unit
    percent = bool(_PERCENT.search(text)) and not in_percent
    return _PERCENT.sub("", text).strip().rstrip(".").strip(), percent


def _normalise(answer: str) -> str:
    text = answer.strip()
    boxes = boxed(text)
    if boxes and text.startswith("\\boxed"):
        text = boxes[0]
    text = text.replace("$", "")
    text = _SUPERSCRIPTS.sub(lambda m: "^{" + m.group().translate(_SUPERSCRIPT) + "}", text)
    for character, replacement in _UNICODE.items():
        text = text.replace(character, replacement)
    for pattern, replacement in _UNWRAP + _ANGLE_MARKS:
        text = pattern.sub(replacement, text)
    text = _TRIG_OF_DEGREES.sub(_in_radians, text)
    return " ".join(text.split())


def _in_radians(match: re.Match) -> str:
    degrees = match["paren"] or match["brace"] or match["bare"]
    return f"{match['function']}(\\frac{{{degrees} \\pi}}{{180}})"


def _unbrace(text: str) -> str:
    """`{4}` is 4: a lone pair of braces around the whole answer is grouping, not value."""
    for _ in range(MAX_DEPTH):  # deeper is not parsed anyway: a bound on hostile `{{{...}}}`
        if not (len(text) > 1 and text[0] == "{" and text[-1] == "}" and 0 not in _depths(text)[1:]):
            break
        text = text[1:-1].strip()
    return text


def _strip_suffix(text: str, unit: str) -> str:
    unit = clean(unit)
    for form in (unit, f"\\text{{{unit}}}", f"\\mathrm{{{unit}}}"):
        if form and text.endswith(form) and len(text) > len(form):
            return text[: -len(form)].strip()
    return text


def _squeeze(text: str) -> str:
    """Spacing is insignificant in LaTeX."""
    return re.sub(r"\s+", "", text)


# ---------------------------------------------------------------- numbers and units

_DECIMAL = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_THOUSANDS = re.compile(r"[-+]?\d{1,3}(?:(?:,|\{,\}|\s)\d{3})+(?:\.\d+)?")
_SCIENTIFIC = re.compile(
    r"(?:(?P<mantissa>[-+]?(?:\d+\.?\d*|\.\d+))\s*(?:\\times|\\cdot|\*)\s*)?"
    r"(?P<sign>[-+])?10\s*\^\s*(?:\{\s*(?P<braced>[-+]?\d+(?:\.\d+)?)\s*\}|(?P<bare>[-+]?\d+))"
)
_PREFIX = r"(?:da|[YZEPTGMkhdcmunpfa]|\\mu\s*)"
_BASE = (
    r"(?:eV/c(?:\^\{?2\}?)?|mol|cd|Hz|Pa|Wb|eV|rad|sr|bar|atm|min|hr|yrs?|years?|days?|ly|pc|au|AU|Da|erg|dyn"
    r"|cal|Torr|torr|mmHg|psi|\\Omega|Ω|[mgsAKNJWCVFSTHLh])"
)
_UNIT_NAMES = (
    r"(?:met(?:er|re)s?|seconds?|(?:kilo)?grams?|newtons?|joules?|watts?|volts?|amperes?|amps?"
    r"|kelvins?|hertz|pascals?|ohms?|coulombs?|teslas?|farads?|hours?|minutes?"
    r"|inch(?:es)?|feet|foot|ft|miles?|lbs?|units?"
    r"|[MRL]_\{?\\odot\}?)"
)
_UNIT_WORD = rf"(?:{_PREFIX}?{_BASE}|{_UNIT_NAMES})(?![A-Za-z])"
_UNIT_GROUP = r"\\(?:text|mathrm|rm|textrm)\s*\{(?:[^{}]|\{[^{}]*\})*\}"
_UNIT_POWER = r"(?:\s*\^\s*(?:\{\s*[-+]?\d+(?:\.\d+)?\s*\}|[-+]?\d))?"
_UNIT_TOKEN = rf"(?:(?:\\mu\s*)?{_UNIT_GROUP}|{_UNIT_WORD}){_UNIT_POWER}"
# "3.0 m/s", "2.5 \times 10^{3} kg", "9.8 m s^{-2}": a head, a space, then nothing but unit words
_NUMBER_THEN_UNIT = re.compile(rf"(?P<head>.*?\S)\s+(?P<unit>{_UNIT_TOKEN}(?:\s*(?:/|\\cdot|\*)?\s*{_UNIT_TOKEN})*)\s*")


def to_number(text: str) -> float | None:
    """A plain number, scientific notation or a closed-form constant, with an optional unit after
    a space ("24 m"); None if symbolic, or not finite."""
    text = _PERCENT.sub("", text.strip())
    value = _literal(text)
    if value is not None:
        return value
    with_unit = _NUMBER_THEN_UNIT.fullmatch(text)
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
    expression = _parse(text)
    if expression is None or getattr(expression, "free_symbols", {1}):
        return None
    try:
        value = complex(expression.evalf())
    except Exception:  # sympy raises anything from TypeError to RecursionError on odd input
        return None
    return _finite(value.real) if abs(value.imag) < 1e-12 else None


def _finite(value: float) -> float | None:
    """inf and nan are not answers (and `inf <= tol * inf` would call them equal)."""
    return value if math.isfinite(value) else None


def numbers_close(gold: float, pred: float, rel_tol: float) -> bool:
    """Within `rel_tol` of the gold value (not of the larger of the two, as math.isclose does).
    A relative tolerance around a gold 0 is 0: only rounding noise (1e-9) passes, not 0.0001."""
    if not gold:
        return abs(pred) <= _EXACT
    return abs(pred - gold) <= max(rel_tol, _EXACT) * abs(gold)


def _angle(text: str) -> tuple[str, str | None]:
    """("30", "deg") for `30^{\\circ}`, ("1.2", "rad") for `1.2 \\mathrm{rad}`, else (text, None)."""
    if text.endswith(_DEGREE) and len(text) > len(_DEGREE):
        return text[: -len(_DEGREE)].strip(), "deg"
    if text.endswith(r"\mathrm{rad}") and len(text) > len(r"\mathrm{rad}"):
        return text[: -len(r"\mathrm{rad}")].strip(), "rad"
    return text, None


def _unit_angle(unit: str | None) -> str | None:
    """The angle unit a slot's `unit` states, if it is one."""
    if not unit:
        return None
    return _angle(_normalise("1 " + unit))[1]


def _readings(value: float, pred_angle: str | None, gold_angle: str | None) -> list[float]:
    """The prediction in the gold's angle unit; a bare prediction may be in either unit."""
    to_gold = math.pi / 180 if gold_angle == "rad" else 180 / math.pi
    if gold_angle is None or pred_angle == gold_angle:
        return [value]
    if pred_angle is None:
        return [value, value * to_gold]
    return [value * to_gold]


# ---------------------------------------------------------------- structure: parts, brackets, relations

_OPENING, _CLOSING = "([{", ")]}"
# an accepted range, possibly labelled: "[5.21, 5.28]", "[0.94, 0.96] for $R_1$"
_RANGE = re.compile(r"^\[\s*([^,\[\]]+?)\s*,\s*([^,\[\]]+?)\s*\](?:\s+for\b.*)?$")
_RELATION = re.compile(r"\\(?:leq?|geq?|lt|gt|approx|simeq|in)(?![A-Za-z])|<=|>=|=|<|>")
_RELATION_KIND = {
    "=": "=",
    r"\approx": "=",
    r"\simeq": "=",
    r"\in": "=",
    "<": "<",
    r"\lt": "<",
    r"\le": "<=",
    r"\leq": "<=",
    "<=": "<=",
    ">": ">",
    r"\gt": ">",
    r"\ge": ">=",
    r"\geq": ">=",
    ">=": ">=",
}
# a bare name: a letter or Greek letter, maybe accented, with sub/superscripts and arguments: `v_{0}`,
# `\dot{\rho}_0`, `\vec{B}_{i,\text{eff}}`, `x(t)`, `\Delta \omega`, `f^{\star}`
_NAME = re.compile(
    r"(?:\\Delta\s*)?(?:\\(?:vec|hat|bar|dot|ddot|tilde|overline|mathbf|boldsymbol|mathrm|mathit)\s*\{?\s*)*"
    r"(?:\\[A-Za-z]+|[A-Za-z])\s*\}?"
    r"(?:\s*(?:[_^]\s*(?:\{(?:[^{}]|\{[^{}]*\})*\}|\\?[A-Za-z0-9*]+)|'|\\prime))*\s*(?:\([^()]*\))?"
)


def _depths(text: str) -> list[int]:
    """The bracket depth before each character (any opening bracket closes with any closing one,
    so that `(0, 1]` balances)."""
    depths, depth = [], 0
    for character in text:
        depths.append(depth)
        depth += (character in _OPENING) - (character in _CLOSING)
    return depths


def _split_top(text: str, pattern: re.Pattern) -> tuple[list[str], list[str]]:
    """Pieces of `text` between top-level matches of `pattern`, and the matches."""
    depths = _depths(text)
    pieces, separators, start = [], [], 0
    for match in pattern.finditer(text):
        if depths[match.start()] == 0:
            pieces.append(text[start : match.start()].strip())
            separators.append(match.group())
            start = match.end()
    pieces.append(text[start:].strip())
    return pieces, separators


def _parts(text: str) -> list[str]:
    return _split_top(text, re.compile(r",|\\cup(?![A-Za-z])"))[0]


def _bracketed(text: str) -> tuple[str, list[str], str] | None:
    """`(0, 1]` is ("(", ["0", "1"], "]"): an interval or a tuple with at least two entries."""
    if len(text) < 2 or text[0] not in "([" or text[-1] not in ")]":
        return None
    if 0 in _depths(text)[1:]:  # the first bracket closes before the end: `(a)(b)`
        return None
    entries = _parts(text[1:-1])
    return (text[0], entries, text[-1]) if len(entries) >= 2 else None


@dataclass(frozen=True)
class _Relation:
    lhs: str
    kind: str  # "=", "<", "<=" (">" and ">=" are turned round)
    rhs: str
    values: tuple[str, ...] = ()  # every side after the first of `v = \sqrt{2gh} \approx 4.4`


def _relation(text: str) -> _Relation | None:
    """`a = b`, `a = b = c` (first and last sides), `a < b`; None for none or a chain of inequalities."""
    sides, operators = _split_top(text, _RELATION)
    if not operators:
        return None
    kinds = {_RELATION_KIND[operator] for operator in operators}
    if kinds == {"="}:
        return _Relation(sides[0], "=", sides[-1], tuple(sides[1:]))
    if len(operators) > 1:
        return None
    kind = kinds.pop()
    if kind.startswith(">"):
        return _Relation(sides[1], kind.replace(">", "<"), sides[0])
    return _Relation(sides[0], kind, sides[1])


# ---------------------------------------------------------------- equivalence


@dataclass(frozen=True)
class _Context:
    rel_tol: float
    unit: str | None
    unordered: bool = False


def equivalent(
    gold: str, pred: str, rel_tol: float = 0.0, unit: str | None = None, options: Options | None = None
) -> bool:
    """True when `pred` states the same answer as `gold` (runs in the calling process)."""
    if pred.strip() and gold.strip() == pred.strip():
        return True
    if len(gold) > MAX_CHARS or len(pred) > MAX_CHARS:
        return False  # not an answer anyone would state; never worth a parser's time
    options = options or Options()
    (gold_text, gold_percent), (pred_text, pred_percent) = _cleaned(gold, unit), _cleaned(pred, unit)
    if not pred_text:
        return False
    context = _Context(rel_tol, unit, options.unordered)
    if _same(gold_text, pred_text, context):
        return True
    if not (options.percent and (gold_percent or pred_percent)):
        return False
    # the other reading of `%`: a number, the percentage over 100 (`60%` answers 0.6)
    gold_value = _hundredth(gold_text) if gold_percent else gold_text
    pred_value = _hundredth(pred_text) if pred_percent else pred_text
    return None not in (gold_value, pred_value) and _same(gold_value, pred_value, context)


def _hundredth(text: str) -> str | None:
    """A percentage as the number it stands for (`60` -> `0.6`); None if it is not a number."""
    value = to_number(text)
    return None if value is None else repr(value / 100)


def _same(gold: str, pred: str, context: _Context) -> bool:
    """The rules in order; each returns None where it does not apply."""
    gold, pred = _unbrace(gold), _unbrace(pred)
    if _squeeze(gold) == _squeeze(pred):
        return True
    if not pred:
        return False
    for rule in (_by_choice, _by_range, _by_set, _by_parts, _by_brackets, _by_relation, _by_number):
        verdict = rule(gold, pred, context)
        if verdict is not None:
            return verdict
    return _by_expression(gold, pred, context)


def _by_choice(gold: str, pred: str, context: _Context) -> bool | None:
    letter = pred.strip("()")
    if gold in CHOICE_LETTERS and len(letter) == 1:
        return letter.upper() == gold
    return None


def _by_range(gold: str, pred: str, context: _Context) -> bool | None:
    accepted = _RANGE.match(gold)
    if not accepted:
        return None
    low, high = (to_number(side) for side in accepted.groups())
    relation = _relation(pred)
    value = _value(relation.rhs if relation else pred)
    if None in (low, high, value):
        return None  # `[0, 1]` against `(0, 1]` is an interval question
    return min(low, high) <= value <= max(low, high)


_SET = re.compile(r"^\\\{(?P<items>.*)\\\}$", re.S)


def _set_items(text: str) -> list[str] | None:
    """The elements of a set written `\\{a, b\\}` (one set, not `\\{a\\} \\cup \\{b\\}`), else None."""
    written = _SET.match(text)
    if not written or "\\}" in written["items"] or "\\{" in written["items"]:
        return None
    items = [item for item in _parts(written["items"]) if item]
    return items or None  # the empty set `\\{\\}` is a value of its own (`\\emptyset`): the parser's


def _by_set(gold: str, pred: str, context: _Context) -> bool | None:
    """Answers in any order: a gold written as a set, or several answers under option `unordered`."""
    gold_items = _set_items(gold)
    if gold_items is None:
        gold_items = _parts(gold) if context.unordered else []
        if len(gold_items) < 2:
            return None
    pred_items = _set_items(pred)
    pred_items = _parts(pred) if pred_items is None else pred_items
    if len(gold_items) != len(pred_items):
        return False
    inner = replace(context, unordered=False)  # `\{(1, 2), (3, 4)\}`: the pairs stay ordered
    if len(gold_items) > MAX_UNORDERED:
        return all(_same(g, p, inner) for g, p in zip(gold_items, pred_items))
    answers = [[j for j, p in enumerate(pred_items) if _same(g, p, inner)] for g in gold_items]
    return _all_matched(answers)


def _all_matched(answers: list[list[int]]) -> bool:
    """Can each gold part have a prediction part of its own among those that answer it (a perfect
    matching, by augmenting paths: a greedy choice could take the part another gold needs)?"""
    owner: dict[int, int] = {}

    def assign(gold: int, seen: set[int]) -> bool:
        for pred in answers[gold]:
            if pred not in seen:
                seen.add(pred)
                if pred not in owner or assign(owner[pred], seen):
                    owner[pred] = gold
                    return True
        return False

    return all(assign(gold, set()) for gold in range(len(answers)))


def _by_parts(gold: str, pred: str, context: _Context) -> bool | None:
    gold_parts, pred_parts = _parts(gold), _parts(pred)
    if len(gold_parts) < 2 or len(gold_parts) != len(pred_parts):
        return None
    return all(_same(g, p, context) for g, p in zip(gold_parts, pred_parts))


def _by_brackets(gold: str, pred: str, context: _Context) -> bool | None:
    gold_seq, pred_seq = _bracketed(gold), _bracketed(pred)
    if gold_seq is None or pred_seq is None:
        return None
    (gold_open, gold_entries, gold_close), (pred_open, pred_entries, pred_close) = gold_seq, pred_seq
    if (gold_open, gold_close, len(gold_entries)) != (pred_open, pred_close, len(pred_entries)):
        return False  # `(0, 1]` is not `[0, 1]`
    return all(_same(g, p, context) for g, p in zip(gold_entries, pred_entries))


def _by_relation(gold: str, pred: str, context: _Context) -> bool | None:
    gold_rel, pred_rel = _relation(gold), _relation(pred)
    if gold_rel is None and pred_rel is None:
        return None
    if pred_rel is None:  # `W = 275` is answered by `275`; `x - y = 0` is not answered by `0`
        return gold_rel.kind == "=" and _is_quantity(gold_rel.lhs) and _same(gold_rel.rhs, pred, context)
    if gold_rel is None:  # `2` is answered by `\beta = 2`, and by `\beta = \sqrt{4} = 2`
        return (
            pred_rel.kind == "="
            and _is_quantity(pred_rel.lhs)
            and any(_same(gold, value, context) for value in pred_rel.values)
        )
    if gold_rel.kind != pred_rel.kind:
        return False
    same_name = _squeeze(gold_rel.lhs) == _squeeze(pred_rel.lhs)
    both_names = bool(_NAME.fullmatch(gold_rel.lhs) and _NAME.fullmatch(pred_rel.lhs))
    if gold_rel.kind == "=" and (same_name or both_names) and _same(gold_rel.rhs, pred_rel.rhs, context):
        return True
    return _proportional(gold_rel, pred_rel) or (gold_rel.kind == "=" and _same_roots(gold_rel, pred_rel))


def _is_quantity(text: str) -> bool:
    """A left side that names what is asked (`W`, `T_2 / T_1`, `\\frac{dp}{dz}`), not the left side
    of an equation (`2x - y + 1`, `m\\ddot{x} + kx`): no sum or difference at the top level."""
    return not _split_top(text.lstrip("+- "), re.compile(r"(?<![\^_{eE])[-+]"))[1]


def _value(text: str) -> float | None:
    return to_number(_angle(text)[0])


def _by_number(gold: str, pred: str, context: _Context) -> bool | None:
    (gold_text, gold_angle), (pred_text, pred_angle) = _angle(gold), _angle(pred)
    gold_value, pred_value = to_number(gold_text), to_number(pred_text)
    if gold_value is None or pred_value is None:
        return None
    gold_angle = gold_angle or _unit_angle(context.unit)
    readings = _readings(pred_value, pred_angle, gold_angle)
    if any(numbers_close(gold_value, reading, context.rel_tol) for reading in readings):
        return True
    # "2 m g" read as 2 metre-grams differs from "3 m g", but may still be the product 2mg: let the
    # parser see both texts whole when a bare unit was stripped, unless both carry the same one (then
    # as products too they differ by their numbers alone, and sympy would only take milliseconds to agree)
    gold_unit, pred_unit = _NUMBER_THEN_UNIT.fullmatch(gold_text), _NUMBER_THEN_UNIT.fullmatch(pred_text)
    if gold_unit and pred_unit and _squeeze(gold_unit.group("unit")) == _squeeze(pred_unit.group("unit")):
        return False
    return None if gold_unit or pred_unit else False


def _by_expression(gold: str, pred: str, context: _Context) -> bool:
    left, right = _parse(gold), _parse(pred)
    if left is None or right is None:
        return False
    return _values_match(left, right, _tolerance(gold, context))


def _tolerance(gold: str, context: _Context) -> float:
    """A symbolic gold with decimal coefficients (`0.39 \\frac{1}{b}`) is itself rounded."""
    return max(context.rel_tol, _EXACT) if re.search(r"\d\.\d", gold) else _EXACT


# ---------------------------------------------------------------- sympy


@functools.lru_cache(maxsize=2048)
def _parse(text: str):
    """The sympy form with every symbol positive, or None where the parser gives up."""
    import sympy
    from latex2sympy2_extended.latex2sympy2 import ConversionConfig, latex2sympy

    if max(_depths(text), default=0) > MAX_DEPTH:  # antlr slows down with the square of the depth
        return None
    try:
        expression = latex2sympy(text, conversion_config=ConversionConfig(lowercase_symbols=False))
    except Exception:  # the parser raises anything from antlr errors to RecursionError
        return None
    if isinstance(expression, sympy.MatrixBase):
        expression = sympy.ImmutableMatrix(expression)  # a mutable Matrix is no sympy Basic
    if not isinstance(expression, sympy.Basic):
        return None
    expression = _as_functions(expression)
    symbols = {s: sympy.Symbol(s.name, positive=True) for s in expression.free_symbols if isinstance(s, sympy.Symbol)}
    return expression.xreplace(symbols) if symbols else expression


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
    expression = _parse(text)
    if expression is None:
        raise ValueError(f"not parseable: {text[:80]!r}")
    return expression


def _values_match(left, right, tolerance: float) -> bool:
    import sympy

    if left == right:
        return True
    left, right = _explicit_matrix(left), _explicit_matrix(right)
    if isinstance(left, sympy.MatrixBase) and isinstance(right, sympy.MatrixBase):
        return left.shape == right.shape and all(_values_match(a, b, tolerance) for a, b in zip(left, right))
    if _is_expr(left) and _is_expr(right):
        sampled = _sampled_match(left, right, tolerance)
        return sampled if sampled is not None else _simplifies_to_zero(left - right)
    if isinstance(left, sympy.FiniteSet) and isinstance(right, sympy.FiniteSet) and len(left) == len(right):
        unmatched = list(right)  # `\pm 90` is the set {-90, 90}: match elements in any order
        for element in left:
            found = next((i for i, other in enumerate(unmatched) if _values_match(element, other, tolerance)), None)
            if found is None:
                return False
            unmatched.pop(found)
        return True
    return False


def _proportional(gold: _Relation, pred: _Relation) -> bool:
    """Same solution set: gold's lhs - rhs is a nonzero constant times pred's (positive for
    inequalities). Exactly: a tolerance would let `x = 30` and `x = 50` pass as near-proportional."""
    sides = [_parse(side) for side in (gold.lhs, gold.rhs, pred.lhs, pred.rhs)]
    if any(side is None or not _is_expr(side) for side in sides):
        return False
    ratio = _constant_ratio(sides[0] - sides[1], sides[2] - sides[3], _EXACT)
    if ratio is None or ratio == 0:
        return False
    return gold.kind == "=" or ratio.real > 0


def _same_roots(gold: _Relation, pred: _Relation) -> bool:
    """`v^2 = 2gh` and `v = \\sqrt{2gh}`, `E = mc^2` and `m = E/c^2`: solved for the gold's unknown
    (its left side, a symbol or a power of one), both give the same positive roots. Only for
    polynomials of degree 2 at most in the unknown, where `solve` is quick."""
    import sympy

    sides = [_parse(side) for side in (gold.lhs, gold.rhs, pred.lhs, pred.rhs)]
    if any(side is None or not _is_expr(side) for side in sides):
        return False
    unknown = sides[0].base if isinstance(sides[0], sympy.Pow) and sides[0].exp.is_number else sides[0]
    if not isinstance(unknown, sympy.Symbol):
        return False
    pred_roots = _roots(sides[2] - sides[3], unknown)  # first: most predictions lack the unknown
    gold_roots = _roots(sides[0] - sides[1], unknown) if pred_roots else None
    if not gold_roots or len(gold_roots) != len(pred_roots):
        return False
    return all(any(_values_match(g, p, _EXACT) for p in pred_roots) for g in gold_roots)


def _roots(expression, unknown) -> list | None:
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


def _constant_ratio(left, right, tolerance: float) -> complex | None:
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
    try:
        value = complex(expression.evalf(30, subs=point))
    except Exception:  # sympy raises anything from TypeError to RecursionError on odd input
        return None
    return value if cmath.isfinite(value) else None  # an overflow is no evidence either way


def _close(gold: complex, pred: complex, tolerance: float) -> bool:
    """Relative to the gold; values below 1e-25 at 30 digits are rounding noise around zero."""
    return abs(pred - gold) <= tolerance * abs(gold) or max(abs(gold), abs(pred)) < 1e-25


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


def _is_expr(value) -> bool:
    """A scalar expression: matrix products and the like have no value at a point."""
    import sympy

    return isinstance(value, sympy.Expr) and not isinstance(value, sympy.MatrixExpr)


# ---------------------------------------------------------------- worker pool


def _yield_cpu(pid: int) -> None:
    """Checks are batch work; the caller may be sending requests meanwhile, and a request
    delayed behind a check costs the whole cell's wall time. Workers give way to it."""
    if hasattr(os, "setpriority"):
        os.setpriority(os.PRIO_PROCESS, pid, max(10, os.getpriority(os.PRIO_PROCESS, pid)))


def _check(job: tuple, options: Options = Options()) -> Verdict:
    """`job` is (gold, pred, rel_tol, unit) or (gold, pred, rel_tol, unit, Options) for a check
    with options of its own, added to the cell's; or a benchmark's own check, (function, *args):
    a module-level function (workers receive it by name) that gives a `Verdict` or a bool."""
    if callable(job[0]):
        function, *args = job
        verdict = function(*args)
        return verdict if isinstance(verdict, Verdict) else Verdict(bool(verdict))
    gold, pred, rel_tol, unit, *own = job
    return Verdict(bool(equivalent(gold, pred, rel_tol, unit, options | own[0] if own else options)))


# A check that loads everything a check needs (sympy, the LaTeX parser) and runs each rule once.
_WARM_UP = (r"\frac{x^2}{2}", r"x \cdot \frac{x}{2}", 0.0, None)


def _serve(connection) -> None:
    """A worker: warm up, say so ("" when ready, else why not), then check each job it is sent."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the caller's to handle: it stops the workers
    try:
        _check(_WARM_UP)
    except Exception as error:  # the pool reports it and stops
        connection.send(f"{type(error).__name__}: {error}")
        return
    connection.send("")
    while True:
        try:
            job, options = connection.recv()
        except EOFError:  # the pool closed
            return
        try:
            verdict = _check(job, options)
        except Exception as error:  # a crash in sympy is a failed check, not a stage crash
            verdict = Verdict(None, f"check failed: {type(error).__name__}: {error}")
        connection.send(verdict)


# What a worker imports before its first check: about a second of CPU in every spawned process.
# Math-Verify (evalscope's protocols) where it is installed: the fork server skips what is missing.
_PRELOADED = ["olympiad_eval.scoring.mathcheck", "sympy", "latex2sympy2_extended.latex2sympy2", "math_verify"]


@functools.cache
def _start_method():
    """Workers fork from Python's fork server, which has imported sympy and the LaTeX parser once:
    a worker (the first ones, and each that replaces one that overran) then starts in milliseconds
    instead of importing them again. Forking from the server, not from the stage, is safe while
    the stage runs threads (its event loop). Where there is no fork server, each worker is spawned."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(_PRELOADED)
    return context


class _Worker:
    """One worker process and the pipe to it."""

    def __init__(self):
        context = _start_method()
        self.connection, theirs = context.Pipe()
        self.process = context.Process(target=_serve, args=(theirs,), daemon=True)
        self.process.start()
        theirs.close()
        _yield_cpu(self.process.pid)  # now: a spawned worker's start (Python, sympy) is CPU work too

    def stop(self) -> None:
        self.process.kill()
        self.process.join()
        self.connection.close()


class CheckPool:
    """Warm worker processes that run checks with a hard per-check timeout; `options` are the
    rules the cell's protocol switches on, applied to every check.

    A check's clock starts when a warm worker takes it: a worker is sent checks only once it has
    imported sympy and the LaTeX parser and run a check of its own (`_serve`), so the timeout
    measures the check alone, never a worker's start-up (seconds, more on a busy machine where
    the reniced workers wait for a core) nor its wait for a free worker. A check that overruns
    costs only its own worker, which is replaced while the others go on."""

    def __init__(
        self,
        workers: int = 2,
        timeout: float = 10.0,
        options: Options = Options(),
        start_timeout: float = START_TIMEOUT,
    ):
        self.workers, self.timeout, self.options = max(1, workers), timeout, options
        self.start_timeout = start_timeout
        self._warm: list[_Worker] = []  # idle and ready for a check
        self._starting: dict[_Worker, float] = {}  # started, not yet warm: each by its deadline

    def __enter__(self) -> CheckPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        for worker in [*self._warm, *self._starting]:
            worker.stop()
        self._warm, self._starting = [], {}

    def _start_one(self) -> None:
        self._starting[_Worker()] = time.monotonic() + self.start_timeout

    def _warmed(self, worker: _Worker) -> None:
        """A starting worker has said whether it is warm."""
        del self._starting[worker]
        try:
            failure = worker.connection.recv()
        except EOFError:
            failure = f"its process ended (exit code {worker.process.exitcode})"
        if failure:
            worker.stop()
            self.close()
            raise RuntimeError(f"a check worker could not start: {failure}")
        self._warm.append(worker)

    def _late_starts(self) -> None:
        if any(deadline < time.monotonic() for deadline in self._starting.values()):
            self.close()
            raise RuntimeError(f"the check workers did not start within {self.start_timeout:g} s")

    def start(self) -> None:
        """Start the workers and wait until every one is warm."""
        while len(self._warm) + len(self._starting) < self.workers:
            self._start_one()
        while self._starting:
            wait([worker.connection for worker in self._starting], timeout=_until(min(self._starting.values())))
            for worker in list(self._starting):
                if worker.connection.poll():
                    self._warmed(worker)
            self._late_starts()

    def check_many(self, jobs: list[tuple], progress=None) -> list[Verdict]:
        """Verdicts in the order of `jobs`; an overrunning check is recorded, never awaited.
        Submit many jobs at once: the workers then never wait for the caller. `progress` (a tqdm
        bar) counts the checks as they finish."""
        verdicts: list[Verdict | None] = [None] * len(jobs)
        waiting = collections.deque(range(len(jobs)))
        busy: dict[_Worker, tuple[int, float]] = {}  # each busy worker's check and its deadline
        if jobs:
            self.start()

        def settle(index: int, verdict: Verdict) -> None:
            verdicts[index] = verdict
            if progress is not None:
                progress.update(1)

        try:
            while waiting or busy:
                while waiting and self._warm:
                    worker, index = self._warm.pop(), waiting.popleft()
                    try:
                        worker.connection.send((jobs[index], self.options))
                    except OSError:  # the worker died while idle: its replacement takes the check
                        waiting.appendleft(index)
                        self._replace(worker)
                        continue
                    busy[worker] = (index, time.monotonic() + self.timeout)
                deadlines = [deadline for _, deadline in busy.values()] + list(self._starting.values())
                wait([worker.connection for worker in [*busy, *self._starting]], timeout=_until(min(deadlines)))
                for worker in list(self._starting):
                    if worker.connection.poll():
                        self._warmed(worker)
                self._late_starts()
                for worker, (index, deadline) in list(busy.items()):
                    if worker.connection.poll():
                        del busy[worker]
                        try:
                            settle(index, worker.connection.recv())
                            self._warm.append(worker)
                        except EOFError:  # the process died in the check (out of memory, a crash in C)
                            settle(
                                index,
                                Verdict(None, f"check failed: its worker ended (exit code {worker.process.exitcode})"),
                            )
                            self._replace(worker)
                    elif time.monotonic() >= deadline:
                        del busy[worker]
                        settle(index, Verdict(None, f"check timed out after {self.timeout:g} s"))
                        self._replace(worker)
        except BaseException:
            for worker in busy:  # mid-check: their replies would answer the next batch's checks
                worker.stop()
            raise
        return [v for v in verdicts if v is not None]

    def _replace(self, worker: _Worker) -> None:
        worker.stop()
        self._start_one()


def _until(deadline: float) -> float:
    return max(0.0, deadline - time.monotonic())
