"""OlympiadBench's official automatic scorer: the verdicts of github OpenBMB/OlympiadBench (commit
61bf12a, MIT) `eval/auto_scoring_judge.py` (`AutoScoringJudge.judge`, the same code as
`inference/code/math_judger.py`'s `MathJudger.judge`), run with the packages the official code runs
with: sympy 1.12 and its LaTeX parser on the antlr 4.11 runtime.

This module runs only in the protocol's own environment (`official.ENVIRONMENT`: a pinned venv with
those packages, built once; `scoring.environments`), never in the project's own interpreter, whose
antlr 4.9.3 (hydra's) cannot load sympy 1.12's parser. It imports nothing of the project: the check
workers there load it by its file. Where the official code calls `parse_latex`, so does this module,
so every reading of that parser (what a token is, where it stops, how it names symbols, what it
leaves unevaluated) is the official one by construction; `bench/olympiadbench_official_agreement.py`
and tests/benchmarks/test_olympiadbench_official.py show it, class by class.

What the official `judge(expression1, expression2, precision)` does, step by step (quirks included):

1. Preprocess both texts: the contents of every `\\boxed{` (brace-matched; unbalanced braces make
   the verdict False) joined by "," each; with no box, every `$...$` of the text's last line,
   joined so; with neither, the whole text. Then, if "\\in " occurs, the piece after the first
   one (`split("\\in ")[1]`); the special-symbol map, in its order (`\\left`, `\\right` -> "",
   "∶" -> ":", "，" -> ",", "$" -> "", `\\approx`, `\\simeq`, `\\sim` -> "=", `^\\prime`,
   `^{\\prime}` -> "'", `^\\circ`, "%" -> ""); strip the characters "\\n$,.:;^_=+`!@#$%^&*~，。" from
   both ends; `\\mathrm{x}`/`\\mathbf{x}` (an optional "~" first) -> x. Equal texts are True.
2. Remove CJK characters (U+4E00-U+9FFF); split each at the commas outside round and square
   brackets (braces do not count: `\\{1,2\\}` splits); each piece with `\\pm` becomes two pieces
   (`+`, `-`). Different numbers of pieces are False. A single tolerance is repeated for every
   piece of expression1; a list is used as it is (a list shorter than the pieces raises, which
   evalscope scores False; so does this module).
3. The pairing loop: cycling through expression1's pieces, each must equal some remaining piece of
   expression2 (the first that does is taken: greedy, not a matching), under the tolerance at its
   index; matched pieces and that tolerance leave their lists by value (`list.remove`: with two
   equal pieces or tolerances the lists can shift out of step, reproduced).
4. Two pieces are equal when: the same non-empty text; or both look like intervals (start with
   "(" or "[", end with ")" or "]") and `interval_equal` holds (an error there is False at
   once); or `numerical_equal`: Python `float()` reads both (so "1e5", " 7 ", "inf"), and
   expression2 is within `precision * 1.01` of expression1, expression1 / 100 or expression1 * 100
   (the percentage readings); or `expression_equal`, unless both contain "="; or `equation_equal`.
5. `expression_equal`: each side's text after its first "=" (up to a second one); both parsed
   (`sympify(parse_latex(text))`); structurally equal is True; else pi is replaced by `math.pi`; a
   side with symbols against one without is False; two numbers are equal within `precision * 1.01`
   (False when either is a power whose exponent exceeds 1000: `can_compute_power`, which looks at
   the top-level power only); two expressions with symbols are equal when `simplify(a - b)`
   evaluates below 1e-3 in absolute value (a result still holding symbols cannot be compared: False).
6. `equation_equal`: each text must hold exactly one "="; `simplify(lhs - rhs)` of each; equal
   when either quotient simplifies to a nonzero integer (`x^2 = 1 - y^2` is `x^2 + y^2 = 1`,
   `2x = 2` is `x = 1`; `x = 2` is not `x = 1`).
7. `interval_equal`: the same text; or the same number of `\\cup` pieces, each with the same first
   and last character and its ends (split at every comma, compared pairwise by `zip`, so a
   missing end is not noticed) equal by `expression_equal`.

Where this module differs on purpose: an error the official `judge` lets escape (the tolerance list
shorter than the answers) is False here, as evalscope scores it (the official `inference/judge.py`
would stop); brackets nested deeper than `MAX_DEPTH` are not parsed (antlr's time grows with the
square of the depth), and the check workers' CPU budget ends what the official process would run for
ever (`10^{10^{10^{10}}} x` against `x`): an undecided check, on record. No `eval` anywhere, as in the
official code: Python's `float()` and sympy's parser read the text.
"""

from __future__ import annotations

import math
import re

DEFAULT_PRECISION = 1e-8  # the official default tolerance (absolute)
MAX_DEPTH = 20  # brackets nested deeper than this are not parsed (as the project's rules: scoring.normalise)

# auto_scoring_judge.py's special-symbol map, in its order (the order matters: `\simeq` before `\sim`)
SPECIAL_SYMBOLS = (
    ("\\left", ""),
    ("\\right", ""),
    ("∶", ":"),
    ("，", ","),
    ("$", ""),
    ("\\approx", "="),
    ("\\simeq", "="),
    ("\\sim", "="),
    ("^\\prime", "'"),
    ("^{\\prime}", "'"),
    ("^\\circ", ""),
    ("%", ""),
)
STRIPPED = "\n$,.:;^_=+`!@#$%^&*~，。"
_ROMAN_BOLD = re.compile(r"\\(?:mathrm|mathbf)\{~?([^}]*)\}")
_CJK = re.compile(r"[\u4e00-\u9fff]+")
_DOLLARS = re.compile(r"\$(.*?)\$")
MAX_EXPONENT = 1000  # can_compute_power's threshold


def official_verdict(gold: str, answer: str, precision) -> tuple[bool, str, str]:
    """(correct, why not decided, the answer read) as inference/judge.py asks for it: the answer in
    the ground-truth slot; a check worker makes it a `Verdict`."""
    return judge(answer, gold, precision), "", answer


def warm_up() -> None:
    """sympy, the parser's tables and `simplify` loaded before the worker's first check."""
    judge("\\frac{x^2}{2}", "x \\cdot \\frac{x}{2}")


def judge(expression1: str, expression2: str, precision=DEFAULT_PRECISION) -> bool:
    """The official `AutoScoringJudge.judge` (expression1 taken as the ground truth)."""
    precisions = list(precision) if isinstance(precision, (list, tuple)) else [precision]
    try:
        expression1, expression2 = preprocess(expression1), preprocess(expression2)
    except ValueError:  # unbalanced braces in a box
        return False
    if expression1 == expression2:
        return True
    pieces1 = _plus_minus(split_by_comma(_CJK.sub("", expression1)))
    pieces2 = _plus_minus(split_by_comma(_CJK.sub("", expression2)))
    if len(precisions) <= 1:
        precisions = precisions * len(pieces1)
    if len(pieces1) != len(pieces2):
        return False
    try:
        return _paired(pieces1, pieces2, precisions)
    except IndexError:  # a tolerance list shorter than the pieces: the official judge raises
        return False


def _paired(pieces1: list[str], pieces2: list[str], precisions: list[float]) -> bool:
    """The official pairing loop, list.remove by value included."""
    index = -1
    while pieces1:
        index = (index + 1) % len(pieces1)
        item1, tolerance = pieces1[index], precisions[index]
        for item2 in pieces2:
            if is_equal(item1, item2, tolerance):
                pieces1.remove(item1)
                pieces2.remove(item2)
                precisions.remove(tolerance)
                break
        else:
            return False
    return True


def preprocess(text: str) -> str:
    """Boxes (or the last line's `$...$`), then the special-symbol replacement."""
    return _replace_symbols(_boxed_contents(text))


def _boxed_contents(text: str) -> str:
    results = ""
    for match in re.finditer(r"\\boxed{", text):
        end, depth = match.end(), 1
        while depth > 0 and end < len(text):
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            end += 1
        if depth:
            raise ValueError("Mismatched braces in LaTeX string.")
        results += text[match.end() : end - 1] + ","
    if results:
        return results
    last_line = text.strip().split("\n")[-1]
    answers = _DOLLARS.findall(last_line)
    return "".join(answer + "," for answer in answers) if answers else text


def _replace_symbols(text: str) -> str:
    if "\\in " in text:
        text = text.split("\\in ")[1]
    for symbol, replacement in SPECIAL_SYMBOLS:
        text = text.replace(symbol, replacement)
    return _ROMAN_BOLD.sub(r"\1", text.strip(STRIPPED))


def split_by_comma(text: str) -> list[str]:
    """Pieces at the commas outside round and square brackets (official `split_by_comma`)."""
    depth, pieces, start = 0, [], 0
    for index, char in enumerate(text):
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "," and depth == 0:
            pieces.append(text[start:index].strip())
            start = index + 1
    if start < len(text):
        pieces.append(text[start:].strip())
    return pieces


def _plus_minus(pieces: list[str]) -> list[str]:
    out = []
    for piece in pieces:
        out.extend([piece.replace("\\pm", "+"), piece.replace("\\pm", "-")] if "\\pm" in piece else [piece])
    return out


def is_interval(text: str) -> bool:
    return text.startswith(("(", "[")) and text.endswith((")", "]"))


def is_equal(expression1: str, expression2: str, tolerance: float) -> bool:
    """The official `is_equal`: text, interval, number, expression, equation, in that order."""
    if expression1 == expression2 and expression1 != "" and expression2 != "":
        return True
    if is_interval(expression1) and is_interval(expression2):
        try:
            if interval_equal(expression1, expression2, tolerance):
                return True
        except Exception:  # the official code gives up on an interval that fails to compare
            return False
    for test in (numerical_equal, _expression_not_two_equations, equation_equal):
        try:
            if test(expression1, expression2, tolerance):
                return True
        except Exception:  # as officially: a step that fails is no evidence either way
            pass
    return False


def numerical_equal(expression1: str, expression2: str, tolerance: float) -> bool:
    """Both read by Python's `float` (never `eval`); the percentage readings of expression1."""
    reference, prediction = float(expression1), float(expression2)
    return any(abs(item - prediction) <= tolerance * 1.01 for item in (reference / 100, reference, reference * 100))


def _expression_not_two_equations(expression1: str, expression2: str, tolerance: float) -> bool:
    return expression_equal(expression1, expression2, tolerance) and not ("=" in expression1 and "=" in expression2)


def _right_side(text: str) -> str:
    return (text.split("=")[1] if "=" in text else text).strip()


def expression_equal(expression1: str, expression2: str, tolerance: float) -> bool:
    """The official `expression_equal` (raises where the official one raises: a parse failure)."""
    import sympy

    first, second = _parse(_right_side(expression1)), _parse(_right_side(expression2))
    if first == second:
        return True
    pi = sympy.Symbol("pi")
    first, second = first.subs(pi, math.pi), second.subs(pi, math.pi)
    first_symbolic, second_symbolic = first.has(sympy.Symbol), second.has(sympy.Symbol)
    if first_symbolic != second_symbolic:
        return False
    if not first_symbolic:
        try:
            if not (can_compute_power(first) and can_compute_power(second)):
                return False
            return bool(abs(first.evalf() - second.evalf()) <= tolerance * 1.01)
        except Exception:  # officially: numbers that cannot be compared are not equal
            return False
    try:
        return bool(abs(sympy.simplify(first - second).evalf()) < 1e-3)
    except Exception:  # a difference that keeps its symbols cannot be compared with 1e-3
        return False


def equation_equal(expression1: str, expression2: str, tolerance: float = DEFAULT_PRECISION) -> bool:
    """The official `equation_equal`: lhs - rhs of one is a nonzero integer multiple of the other's."""
    import sympy

    def standard_form(text: str):
        lhs, rhs = text.split("=")  # exactly one "=", else ValueError, as officially
        equation = sympy.Eq(_parse(lhs), _parse(rhs))
        return sympy.simplify(equation.lhs - equation.rhs)

    first, second = standard_form(expression1), standard_form(expression2)
    ratio, inverse = sympy.simplify(first / second), sympy.simplify(second / first)
    return bool((ratio.is_Integer and ratio != 0) or (inverse.is_Integer and inverse != 0))


def interval_equal(expression1: str, expression2: str, tolerance: float) -> bool:
    """The official `interval_equal` (unions by `\\cup`; ends split at every comma)."""
    if expression1 == expression2:
        return True
    unions1, unions2 = expression1.split("\\cup"), expression2.split("\\cup")
    if len(unions1) != len(unions2):
        return False
    for first, second in zip(unions1, unions2):
        if first[0] != second[0] or first[-1] != second[-1]:
            return False
        for end1, end2 in zip(first.strip("[]()").split(","), second.strip("[]()").split(",")):
            if not expression_equal(end1, end2, tolerance):
                return False
    return True


def can_compute_power(expression) -> bool:
    """The official guard: a top-level power of numbers with an exponent above 1000 is refused."""
    import sympy

    if not isinstance(expression, sympy.Pow):
        return True
    base, exponent = expression.as_base_exp()
    if base.is_number and exponent.is_number:
        return not abs(exponent.evalf()) > MAX_EXPONENT
    return False


def _parse(text: str):
    """The official reading of `text`: sympy 1.12's `parse_latex`, then `sympify` (`math_judger.py`)."""
    from sympy import sympify
    from sympy.parsing.latex import parse_latex

    if _depth(text) > MAX_DEPTH:
        raise ValueError("nested too deep")
    return sympify(parse_latex(text))


def _depth(text: str) -> int:
    depth = deepest = 0
    for char in text:
        depth += 1 if char in "([{" else -1 if char in ")]}" else 0
        deepest = max(deepest, depth)
    return deepest
