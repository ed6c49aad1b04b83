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
compares a free-form answer with Math-Verify so), run by the same workers within the same CPU budget.

sympy can hang on hostile input (`9^{9^9}`), so `CheckPool` runs every check in warm worker
processes within a CPU budget (never wall time), counted from when a warm worker takes the check, and
replaces a worker that overruns it (workers fork from a server that has imported sympy once). Answers longer
than `MAX_CHARS` are not compared at all (False unless identical) and brackets nested deeper than
`MAX_DEPTH` are not parsed, so such input costs milliseconds rather than a worker.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

from olympiad_eval.scoring.checks import Options
from olympiad_eval.scoring.expressions import (
    EXACT,
    constant_ratio,
    is_scalar,
    numbers_close,
    roots_of,
    sympy_form,
    to_number,
    values_match,
)
from olympiad_eval.scoring.normalise import (
    NUMBER_THEN_UNIT,
    bracket_depths,
    cleaned,
    split_angle,
    squeeze,
    unbrace,
    unit_angle,
)

CHOICE_LETTERS = ("A", "B", "C", "D", "E")
MAX_CHARS = 3000  # real answers are a few hundred characters; antlr and sympy crawl on more
MAX_UNORDERED = 12  # answers in any order cost a check per pair: more parts than this compare in order

# ---------------------------------------------------------------- structure: parts, brackets, relations

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


def _split_top(text: str, pattern: re.Pattern) -> tuple[list[str], list[str]]:
    """Pieces of `text` between top-level matches of `pattern`, and the matches."""
    depths = bracket_depths(text)
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
    if 0 in bracket_depths(text)[1:]:  # the first bracket closes before the end: `(a)(b)`
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
    (gold_text, gold_percent), (pred_text, pred_percent) = cleaned(gold, unit), cleaned(pred, unit)
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
    gold, pred = unbrace(gold), unbrace(pred)
    if squeeze(gold) == squeeze(pred):
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
    same_name = squeeze(gold_rel.lhs) == squeeze(pred_rel.lhs)
    both_names = bool(_NAME.fullmatch(gold_rel.lhs) and _NAME.fullmatch(pred_rel.lhs))
    if gold_rel.kind == "=" and (same_name or both_names) and _same(gold_rel.rhs, pred_rel.rhs, context):
        return True
    return _proportional(gold_rel, pred_rel) or (gold_rel.kind == "=" and _same_roots(gold_rel, pred_rel))


def _is_quantity(text: str) -> bool:
    """A left side that names what is asked (`W`, `T_2 / T_1`, `\\frac{dp}{dz}`), not the left side
    of an equation (`2x - y + 1`, `m\\ddot{x} + kx`): no sum or difference at the top level."""
    return not _split_top(text.lstrip("+- "), re.compile(r"(?<![\^_{eE])[-+]"))[1]


def _value(text: str) -> float | None:
    return to_number(split_angle(text)[0])


def _by_number(gold: str, pred: str, context: _Context) -> bool | None:
    (gold_text, gold_angle), (pred_text, pred_angle) = split_angle(gold), split_angle(pred)
    gold_value, pred_value = to_number(gold_text), to_number(pred_text)
    if gold_value is None or pred_value is None:
        return None
    gold_angle = gold_angle or unit_angle(context.unit)
    readings = _readings(pred_value, pred_angle, gold_angle)
    if any(numbers_close(gold_value, reading, context.rel_tol) for reading in readings):
        return True
    # "2 m g" read as 2 metre-grams differs from "3 m g", but may still be the product 2mg: let the
    # parser see both texts whole when a bare unit was stripped, unless both carry the same one (then
    # as products too they differ by their numbers alone, and sympy would only take milliseconds to agree)
    gold_unit, pred_unit = NUMBER_THEN_UNIT.fullmatch(gold_text), NUMBER_THEN_UNIT.fullmatch(pred_text)
    if gold_unit and pred_unit and squeeze(gold_unit.group("unit")) == squeeze(pred_unit.group("unit")):
        return False
    return None if gold_unit or pred_unit else False


def _by_expression(gold: str, pred: str, context: _Context) -> bool:
    left, right = sympy_form(gold), sympy_form(pred)
    if left is None or right is None:
        return False
    return values_match(left, right, _tolerance(gold, context))


def _tolerance(gold: str, context: _Context) -> float:
    """A symbolic gold with decimal coefficients (`0.39 \\frac{1}{b}`) is itself rounded."""
    return max(context.rel_tol, EXACT) if re.search(r"\d\.\d", gold) else EXACT


def _readings(value: float, pred_angle: str | None, gold_angle: str | None) -> list[float]:
    """The prediction in the gold's angle unit; a bare prediction may be in either unit."""
    to_gold = math.pi / 180 if gold_angle == "rad" else 180 / math.pi
    if gold_angle is None or pred_angle == gold_angle:
        return [value]
    if pred_angle is None:
        return [value, value * to_gold]
    return [value * to_gold]


def _proportional(gold: _Relation, pred: _Relation) -> bool:
    """Same solution set: gold's lhs - rhs is a nonzero constant times pred's (positive for
    inequalities). Exactly: a tolerance would let `x = 30` and `x = 50` pass as near-proportional."""
    sides = [sympy_form(side) for side in (gold.lhs, gold.rhs, pred.lhs, pred.rhs)]
    if any(side is None or not is_scalar(side) for side in sides):
        return False
    ratio = constant_ratio(sides[0] - sides[1], sides[2] - sides[3], EXACT)
    if ratio is None or ratio == 0:
        return False
    return gold.kind == "=" or ratio.real > 0


def _same_roots(gold: _Relation, pred: _Relation) -> bool:
    """`v^2 = 2gh` and `v = \\sqrt{2gh}`, `E = mc^2` and `m = E/c^2`: solved for the gold's unknown
    (its left side, a symbol or a power of one), both give the same positive roots. Only for
    polynomials of degree 2 at most in the unknown, where `solve` is quick."""
    import sympy

    sides = [sympy_form(side) for side in (gold.lhs, gold.rhs, pred.lhs, pred.rhs)]
    if any(side is None or not is_scalar(side) for side in sides):
        return False
    unknown = sides[0].base if isinstance(sides[0], sympy.Pow) and sides[0].exp.is_number else sides[0]
    if not isinstance(unknown, sympy.Symbol):
        return False
    pred_roots = roots_of(sides[2] - sides[3], unknown)  # first: most predictions lack the unknown
    gold_roots = roots_of(sides[0] - sides[1], unknown) if pred_roots else None
    if not gold_roots or len(gold_roots) != len(pred_roots):
        return False
    return all(any(values_match(g, p, EXACT) for p in pred_roots) for g in gold_roots)
