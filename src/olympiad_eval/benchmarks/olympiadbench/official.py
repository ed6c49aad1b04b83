"""OlympiadBench's official automatic scorer, reimplemented: the verdicts of github OpenBMB/OlympiadBench
(commit 61bf12a, MIT) `eval/auto_scoring_judge.py` (`AutoScoringJudge.judge`, the same code as
`inference/code/math_judger.py`'s `MathJudger.judge`) as `inference/judge.py` calls it, without
sympy's antlr 4.11 LaTeX parser. A helper of the `olympiadbench` plugin, not a benchmark itself.

Entry points:

- `extract_answer(response, language) -> str`: the final answer of a response (`inference/judge.py`
  `extract_answer`): the text after the LAST "So the final answer is " (en) or "所以最终答案是" (zh)
  up to the end of that line (`re.findall('...(.*)')`: no DOTALL), stripped; with no such phrase,
  the whole response (the judge then looks for boxes in it). A deepseek-math model's own phrases
  ("The answer is: ", "## 解题答案") are not read: the official code keys them on a model name.
- `precision(error, final_answers, answer_type) -> float | list[float]`: the tolerance judge.py
  passes: none (the default 1e-8) for a `Tuple` answer type or an empty `error` (None or "");
  `error` with a comma, one float per comma-separated piece, an empty piece 1e-8 (",1e-2");
  else `float(error)` ("0" is an exact match). Tolerances are ABSOLUTE, not relative.
- `gold_answer(final_answers) -> str`: the gold text the official code compares with: `final_answer[0]`
  only. Several answers of one problem are already joined in that one string ("$12 , 16$",
  "$x_0=2.27$ , $\\eta(2.27)=0.457$"); the ten problems of the first release whose list has a
  second entry hold an alternative form there, which the official scorer never accepts.
- `check(gold, answer, precision) -> ProtocolCheck`: one check of its own (`scoring.pool.CheckPool`
  runs it in its warm workers within the judge's CPU budget) giving a `scoring.checks.Verdict` with
  the official verdict for an extracted answer.
- `judge(expression1, expression2, precision) -> bool`: the official `judge` itself, arguments in
  its order (expression1 is what it treats as the ground truth), for the examples file and the bench.

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
5. `expression_equal`: each side's text after its first "=" (up to a second one); both parsed;
   structurally equal is True; else pi is replaced by `math.pi`; a side with symbols against one
   without is False; two numbers are equal within `precision * 1.01` (False when either is a power
   whose exponent exceeds 1000: `can_compute_power`, which looks at the top-level power only);
   two expressions with symbols are equal when `simplify(a - b)` evaluates below 1e-3 in absolute
   value (a result still holding symbols cannot be compared: False).
6. `equation_equal`: each text must hold exactly one "="; `simplify(lhs - rhs)` of each; equal
   when either quotient simplifies to a nonzero integer (`x^2 = 1 - y^2` is `x^2 + y^2 = 1`,
   `2x = 2` is `x = 1`; `x = 2` is not `x = 1`).
7. `interval_equal`: the same text; or the same number of `\\cup` pieces, each with the same first
   and last character and its ends (split at every comma, compared pairwise by `zip`, so a
   missing end is not noticed) equal by `expression_equal`.

How `inference/judge.py` (and evalscope, which copies it) calls it, reproduced by `check`: the
model's answer goes FIRST, in the ground-truth slot, and `final_answer[0]` second. So the
percentage readings scale the answer, not the gold (`0.6` answers a gold `60`, and `60` a gold
`0.6`, but the tolerance is measured on the other side), and per-answer tolerances follow the
positions of the model's answers. The official examples file, run by `auto_scoring_judge.py`'s
own `__main__`, passes the gold first: `judge(GT, answer, precision)` reproduces those.

What the official accuracy counts (`inference/calculate_accuracy.py`, for the plugin's tables):
theorem-proving files are skipped; a response that is empty, "<Inappropriate content in response>",
"<No response>", or holds both "code:" and "message:" (an API error's text) is left out of the
denominator, not scored 0. The first `inference/judge.py` (commit e8b1452) took the language from
the problem's `classification` containing "Chinese" (so Gaokao problems were read with the English
phrase, that is from their boxes) and gave `Need_human_evaluate` answers no tolerance, like
`Tuple`; the current one (003c841, copied by evalscope) keys the language on the file name ("zh")
and only `Tuple` goes without: this module follows the current one.

Where this module differs on purpose:

- Parsing. The official code calls sympy's `parse_latex` (antlr 4.11); this project pins antlr
  4.9.3 (hydra) and parses with `latex2sympy2_extended` (its own grammar), adjusted towards
  sympy's reading (`_parse`, `_as_sympy_tokens`), since what decides a verdict is how each parser
  reads the same text:
  case is kept; juxtaposition always multiplies (latex2sympy2_extended reads an integer before a
  positive rational as a mixed number whatever its config says: `2(1)` would be 3; here, as in
  sympy, `2\\frac{1}{2}` is 1); pi, e, E and I are plain symbols, as sympy's lexer makes them
  (`e^{2}` holds a symbol, so no number equals it; `1e5` is 1*e*5; pi is replaced by its value);
  `\\ln` keeps Euler's number; a command sympy's grammar does not know is a symbol (`\\text{m}`
  is text times m, `\\vec{v}` vec times v, `\\odot`, `\\gamma` symbols), and a command alone in a
  subscript names the symbol (`n_{\\gamma}(\\nu)`, which latex2sympy2_extended refuses); a lone
  digit is a fraction's argument (`\\frac32`); a braced whole is a group (`{a_5}`, a set to
  latex2sympy2_extended); a list, set or tuple is no value (sympy's parser refuses `(1,2)`). And
  sympy's parser has no end-of-input anchor: it reads the leading expression and stops before a
  token that cannot continue it (`3x)` is 3x, `1, 2` is 1, `x}.` is x, `\\vec{E}_{A}` is vec*E,
  and before an unbraced `\\sqrt 2`, with the operator before it): where latex2sympy2_extended fails
  before such a token, the text before it is read.
  sympy's lexer refuses a dot after a whole number (`2.`) and `\\langle`: such text has no value.
  What still reads differently (`bench/olympiadbench_official_agreement.py` counts it: 12 of
  22,686 pairs, 0.05%, all in its adversarial set; every gold of the release reads alike):
  sympy stops before other tokens too (`2^(x+1)` is 2), drops a subscript after a superscript
  (`v^2_0` is v^2, so `v^2_0` and `v_0^2` differ there), reads `d\\sqrt x` as a differential,
  applies a subscripted letter before parentheses as a function (`a_{1}(x+1)`), which ours
  multiplies; and sympy 1.14 (this project's) simplifies a few quotients to an integer that
  sympy 1.12 leaves as they are. Both sides of a comparison are read by the same parser, so
  these matter only where a gold and an answer write one thing in two such ways.
- Safety. No `eval` anywhere (the official code has none either: Python `float()` and sympy's
  parser read the text); sympy runs only in the check workers, so a hostile answer
  (`10^{10^{10^{10}}}` against a symbolic gold) ends at the pool's CPU budget as an undecided check
  (not matched, on record) where the official process would hang.
- An error the official `judge` lets escape (the tolerance list shorter than the answers) is
  False here, as evalscope scores it; the official `inference/judge.py` would stop.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence

from olympiad_eval.scoring.checks import ProtocolCheck, Verdict
from olympiad_eval.scoring.normalise import MAX_DEPTH

DEFAULT_PRECISION = 1e-8  # the official default tolerance (absolute)
MARKERS = {"en": re.compile("So the final answer is (.*)"), "zh": re.compile("所以最终答案是(.*)")}

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


# ------------------------------------------------------------------------------ what the plugin calls


def extract_answer(response: str, language: str = "en") -> str:
    """The official final-answer extraction (inference/judge.py), `language` "en" or "zh"."""
    matches = MARKERS["zh" if language == "zh" else "en"].findall(response)
    return matches[-1].strip() if matches else response


def precision(error, final_answers: Sequence[str] = (), answer_type: str = "") -> float | list[float]:
    """The official tolerance of a problem from its `error` field (see the module docstring);
    raises ValueError naming the value when a piece is not a number."""
    if "Tuple" in (answer_type or "") or not error:
        return DEFAULT_PRECISION
    try:
        if "," in error:
            return [float(piece) if piece else DEFAULT_PRECISION for piece in error.split(",")]
        return float(error)
    except ValueError:
        raise ValueError(
            f"error {error!r} is not a tolerance (numbers separated by commas)"
            f"{' for ' + repr(final_answers[0]) if final_answers else ''}"
        ) from None


def gold_answer(final_answers: Sequence[str]) -> str:
    """The gold text the official scorer compares with: the first final answer."""
    return final_answers[0] if final_answers else ""


def check(gold: str | Sequence[str], answer: str, precision) -> ProtocolCheck:
    """One check for `scoring.pool.CheckPool`: the official verdict of an extracted `answer`; `gold`
    the gold text, or a problem's final answers (their first, as officially)."""
    if not isinstance(gold, str):
        gold = gold_answer(gold)
    tolerance = (
        tuple(precision) if isinstance(precision, (list, tuple)) else precision
    )  # hashable: checks run once each
    return ProtocolCheck(official_verdict, (gold, answer, tolerance))


def official_verdict(gold: str, answer: str, precision) -> Verdict:
    """The verdict as inference/judge.py asks for it: the answer in the ground-truth slot."""
    return Verdict(judge(answer, gold, precision), "", answer)


# ------------------------------------------------------------------------------ the official judge


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


# ------------------------------------------------------------------------------ parsing


def _parse(text: str):
    """The sympy form of `text`, read as close to sympy's `parse_latex` as latex2sympy2_extended
    lets us (see the module docstring); raises ValueError where it gives no plain value."""
    import sympy

    if _depth(text) > MAX_DEPTH:  # antlr slows down with the square of the depth
        raise ValueError("nested too deep")
    if _REFUSED.search(text):  # sympy's lexer has no token for `2.` (a dot after a number) nor `\\langle`
        raise ValueError(f"not read by sympy's parser: {text[:80]!r}")
    expression = _leading_expression(_as_sympy_tokens(text))
    if not isinstance(expression, (sympy.Expr, sympy.core.relational.Relational)) or isinstance(
        expression, (sympy.Tuple, sympy.MatrixBase)
    ):
        raise ValueError(f"no value: {text[:80]!r}")  # sympy's parser reads no list, set or tuple
    return _as_sympy_parser(expression)


def _as_sympy_tokens(text: str) -> str:
    """The text rewritten so that latex2sympy2_extended reads it as sympy's parser does."""
    text = _unbraced(_before_bare_root(_braced_fraction_digits(text.strip())))
    text = _COMMAND_SUBSCRIPT.sub(r"_{\1\2}", text)
    # e, E and I are symbols to sympy; to latex2sympy2_extended Euler's number, a letter it refuses
    # before a subscript (`E_{p}`), the imaginary unit; so also `1e5` is 1*e*5, as in sympy
    text = _LETTERS.sub(r"\\mathit{\1}", text.replace("_e", "_{e}").replace("_E", "_{E}").replace("_I", "_{I}"))
    return _COMMAND.sub(_as_symbol_command, text)


def _braced_fraction_digits(text: str) -> str:
    """`\\frac32`, `\\frac{\\pi} 6`: sympy's grammar takes a lone digit as a fraction's argument,
    latex2sympy2_extended only a braced one."""
    out, index = [], 0
    for match in _FRACTION.finditer(text):
        if match.start() < index:
            continue
        out.append(text[index : match.end()])
        index = match.end()
        for _ in range(2):
            rest = len(text) - len(text[index:].lstrip())
            if rest < len(text) and text[rest] == "{":
                end = _group_end(text, rest)
                if end is None:
                    break
                out.append(text[index:end])
                index = end
            elif rest < len(text) and text[rest].isdigit():
                out.append(f"{{{text[rest]}}}")
                index = rest + 1
            else:
                break
    return "".join(out) + text[index:]


def _group_end(text: str, start: int) -> int | None:
    depth = 0
    for index in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[index], 0)
        if depth == 0:
            return index + 1
    return None


def _before_bare_root(text: str) -> str:
    """sympy's grammar wants `\\sqrt{...}`: before an unbraced `\\sqrt 2` its parser stops, with the
    operator before it (`x+\\sqrt 2` is x, `2\\sqrt 2x` is 2)."""
    bare = _BARE_ROOT.search(text)
    return text[: bare.start()].rstrip() if bare and bare.start() > 0 else text


def _unbraced(text: str) -> str:
    """`{a_5}` is a_5 to sympy, a set to latex2sympy2_extended."""
    while text.startswith("{") and _group_end(text, 0) == len(text):
        text = text[1:-1].strip()
    return text


def _leading_expression(text: str, retries: int = 3):
    """sympy's parser has no end-of-input anchor: it reads the leading expression and stops before
    a token that cannot continue it (`3x)` is 3x, `1, 2` is 1, `x}.` is x). latex2sympy2_extended
    refuses the whole text; where it stopped before such a token, the text before it is read."""
    try:
        return _converter().parse(text)
    except Exception as error:  # the parser raises a bare Exception with the column marked
        column = _error_column(error)
        if retries == 0 or not column or not text[:column].strip() or not text[column:].startswith(_STOPS):
            raise
        return _leading_expression(text[:column].rstrip(), retries - 1)


def _error_column(error: Exception) -> int | None:
    """Where latex2sympy2_extended's message marks the failure (its last line, `~~~^`)."""
    last = str(error).splitlines()[-1] if str(error) else ""
    return len(last) - 1 if re.fullmatch(r"~*\^", last) else None


_STOPS = (")", "]", "}", ",", ".", ";", "_", "\\}")  # tokens before which sympy's parser stops cleanly
_FRACTION = re.compile(r"\\[dt]?frac(?![A-Za-z])")
_REFUSED = re.compile(r"\d\.(?!\d)|\\[lr]angle(?![A-Za-z])")
_BARE_ROOT = re.compile(r"[-+]?\s*\\sqrt(?![A-Za-z])(?!\s*[\[{])")
_LETTERS = re.compile(r"(?<![A-Za-z\\_])(?<!_\{)([eEI])(?![A-Za-z])")  # not a subscript's letter (`m_e`)


# Commands sympy's LaTeX grammar gives a meaning (functions, operators, spacing), and Greek letters
# (a symbol in both parsers; not `\gamma`, `\Gamma`, the gamma function to latex2sympy2_extended).
# Any other command is a symbol to sympy's lexer (`\vec{v}` is vec*v, `\text{m}` text*m, `\odot`
# odot): such a command is given to latex2sympy2_extended as `\mathit{...}`.
_KEPT_COMMANDS = frozenset(
    """
    frac dfrac tfrac binom dbinom tbinom sqrt int sum prod lim log ln lg exp sin cos tan cot sec csc
    arcsin arccos arctan arccot arcsec arccsc sinh cosh tanh coth sech csch times cdot div infty
    left right mathit overline lfloor rfloor lceil rceil to leq geq le ge neq ne lt gt quad qquad
    alpha beta delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi
    omicron pi rho varrho sigma varsigma tau upsilon phi varphi chi psi omega Delta Theta
    Lambda Xi Pi Sigma Upsilon Phi Psi Omega hbar
""".split()
)
_COMMAND = re.compile(r"\\([A-Za-z]+)")
# A command alone in a subscript: sympy names the symbol by its letters (`n_{\gamma}` is n_{gamma},
# also before parentheses, a function), where latex2sympy2_extended fails on `n_{\gamma}(\nu)`.
_COMMAND_SUBSCRIPT = re.compile(r"_(?:\{\s*\\([A-Za-z]+)\s*\}|\\([A-Za-z]+))")


def _as_symbol_command(match: re.Match) -> str:
    name = match.group(1)
    return match.group(0) if name in _KEPT_COMMANDS else f"\\mathit{{{name}}}"


@functools.cache
def _converter():
    """latex2sympy2_extended's converter where juxtaposition always multiplies, as in sympy's
    parser: its own reads an integer before a positive rational as a mixed number whatever its
    config says (`2(1)` would be 3, `2 \\frac{1}{2}` 5/2)."""
    import sympy
    from latex2sympy2_extended.latex2sympy2 import ConversionConfig, _Latex2Sympy

    class SympyLike(_Latex2Sympy):
        def convert_postfix_list(self, arr, i=0):
            factors = [self.convert_postfix(item) for item in arr[i:]]
            if all(isinstance(factor, (sympy.Expr, sympy.MatrixBase)) for factor in factors):
                product = factors[-1]
                for factor in reversed(factors[:-1]):
                    matrices = factor.is_Matrix or product.is_Matrix
                    product = (self.mat_mul_flat if matrices else self.mul_flat)(factor, product)
                return product
            return super().convert_postfix_list(arr, i)  # a derivative's `d/dx`: the converter's own reading

    config = ConversionConfig(
        interpret_as_mixed_fractions=False,
        interpret_simple_eq_as_assignment=False,
        interpret_contains_as_eq=False,
        lowercase_symbols=False,
    )
    return SympyLike(None, None, False, config=config)


def _as_sympy_parser(expression):
    """pi is a symbol, as sympy's `parse_latex` makes it (`expression_equal` replaces it by its value)."""
    import sympy

    return expression.xreplace({sympy.pi: sympy.Symbol("pi")})


def _depth(text: str) -> int:
    depth = deepest = 0
    for char in text:
        depth += 1 if char in "([{" else -1 if char in ")]}" else 0
        deepest = max(deepest, depth)
    return deepest
