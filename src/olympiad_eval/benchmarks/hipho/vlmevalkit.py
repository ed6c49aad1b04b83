"""HiPhO scored as the authors' VLMEvalKit code scores it (`protocol: vlmevalkit`), bugs included.

The code that made HiPhO's leaderboard numbers: open-compass/VLMEvalKit at commit
e8e78f05f3080fe28154f2130321f17951c3be94 (its HiPhO scoring unchanged since 3dcd3f0, 2025-12-15),
`vlmeval/dataset/hipho.py` (`HiPhODataset.evaluate`: the step level and the exam totals) and
`vlmeval/dataset/utils/hipho_verifier.py` (`answer_tag_reward_fn_for_r1`, `grade`: the answer
level). This module is written from their behaviour, not copied from them; what is taken verbatim
is what must be for the same numbers: the judge prompts (conf/prompt/hipho_vlmevalkit_*_judge.yaml)
and the verifier's list of unit words (`UNIT_WORDS`, data). `bench/vlmevalkit_agreement.py` runs
VLMEvalKit's own files on the same responses against the same fake judge and checks that every
problem, exam total and medal agrees. Line numbers below are `hipho.py:N` and `verifier:N` at the
pinned commit.

What VLMEvalKit does, and so this protocol, where our default (`olympiad_eval`) does otherwise:

The response
- The prediction is read back from VLMEvalKit's prediction file, an .xlsx by default: a response
  longer than 32,767 characters keeps only its first 32,767 (`scoring.prediction_chars`; the final
  boxes of a long response are lost), and a cell that reads back as missing (a response that is
  `N/A`, `null`, `nan`, ...) is the text `nan`; then it is stripped (hipho.py:440).

The answer level (`answer_tag_reward_fn_for_r1`, verifier:1280-1322)
- Boxes: the last N `\\boxed` of the WHOLE response for N answer slots, searched from the end
  (`<think>`, after `</answer>`, anywhere); `\\fbox` only where no `\\boxed` is left before the cut
  (verifier:1226-1260). Fewer boxes than slots: the missing ones are padded with "" in FRONT (the
  last k boxes answer the last k slots).
- A box that does not start with the seven characters `\\boxed{` (`\\boxed {x}`, `\\fbox{x}`) reads
  as None (verifier:1125-1132). With no slot answered at all (every slot "" or None) the answer
  level is 0, no judge asked; otherwise a None slot raises in `grade` (verifier:1156): the problem
  is dropped (below). `\\boxed{{4}}` reads as `{4}`.
- Golds: a slot's official answer is the content of its last balanced box, else its whole text
  (verifier:1289); a box never closed (CPhO_2025_7_6's `\\boxed{$\\omega^2 = ...$`) reads as None in
  `grade` (verifier:1148) and raises as soon as the response answers any slot: dropped.
- `grade` (verifier:1134-1219), in order, for every slot (padded ones too):
  1. mathd: both through `_strip_string` (Hendrycks' MATH normalisation, case kept; `X = v` read as
     `v` when X has at most 2 characters; unit words deleted, below); equal texts are correct.
  2. The split: `pred.split("=")[-1]`, `gold.split("=")[-1]`, enabled when the split pred differs
     from the mathd-normalised pred or the split gold from the gold: almost always. The left side
     of an `=` is then ignored (`\\alpha = 2` answers `$\\beta = 2$`).
  3. sympy, on (pred, gold), then on the split texts: `sympy_normalize_answer` (pylatexenc turns
     LaTeX into text, unit words deleted, then LOWER-CASED: `mg` = `Mg`, `b` = `B`), tuples
     compared element-wise (an accepted range `[a, b]` is a pair that no number equals), letters as
     choices, π tried as math.pi, 3.14 and 180 (`handle_pi` `eval`s the text: here a safe
     evaluator of Python's arithmetic, `_python_value`), then `are_equal_under_sympy` (verifier:681):
     the LOOSE NUMERIC STEP: both numbers rounded to the fewer "needed" decimals, equal within
     0.202 % (gold 10 accepts 13 and 14.9, gold 0.3 accepts 0.34, gold 49.98 accepts 50.18), else
     their 3-significant-figure mantissas rounded the same way with the same exponent; then
     `sympy.simplify` of texts with at most 2 distinct letters.
  4. Math-Verify, on both: NEVER TRUE. VLMEvalKit scores in worker threads, where Math-Verify's
     signal-based timeouts raise (caught: False), so its interval check never fires either. It is
     not called here.
  5. The LLM answer judge (`use_xverify` is always on): asked about (pred, gold), then, when the
     judge said no and the split is enabled, about the split texts, often the same prompt again.
     Correct only when the reply, stripped, is exactly `Correct` or `[Correct]` (`[Correct].`,
     `**[Correct]**` are wrong). The judge is asked about padded "" slots too, and against an empty
     gold (`''` vs `''` is correct by mathd, free points). A failed request: wrong.
  Unit words (verifier:72-209; their plurals too; deleted wherever they stand alone, as unescaped
  regular expressions, twice, unless that empties the text): single letters among them (`A`, `C`,
  `F`, `H`, `J`, `K`, `N`, `T`, `V`, `W`, `o`) eat multiple-choice letters (`(A)` is not `A`, but
  `(B)` is `B`), and `km` is not among them (`21.9 km` is not `21.9` by rules).
- Points: Σ slot score x slot points as floats (a points/slots mismatch cannot occur in our
  releases: the loader refuses it), rounded to 2 decimals.

The step level (`_evaluate_fine_grained`, hipho.py:480-576)
- The criterion judge (conf/prompt/hipho_vlmevalkit_criterion_judge.yaml) sees the question alone
  (no context, constants sheet or figure) and the whole response; the constraint paragraph states
  the problem's points as Python prints their float sum (`0.30000000000000004`) and the attempt.
- The award is the last `\\boxed{}` number of the reply (`float`, else its last number), else the
  reply's last number, else 0, rounded to 2 decimals (binary rounding: 0.125 gives 0.12);
  `\\boxed{1/2}` gives 2, a bare `-1` gives 1, `\\boxed{-0.5}` gives -0.5; no per-criterion cap.
- One scheme: every criterion asked (attempt 1); when the awards add up to more than the problem's
  points (as floats: three full awards of 0.1 overflow 0.3 by one ulp), every criterion is asked
  again with the retry notice, up to attempt 4, then the awards are rescaled to the points. Several
  schemes: each criterion asked once, an overflowing scheme rescaled at once; the best scheme is the
  first strictly greater than 0 and the others (all 0: 0).
- A criterion whose judge request fails: `round(None, 2)` raises (hipho.py:527; its retry branch
  is dead code): the problem is dropped. (VLMEvalKit asks a problem's criteria one after another
  and so never asks those after the failed one; ours asks them at once: the judge is asked more,
  the score is the same.)

The problem and the exam
- A problem scores max(step level, answer level) (hipho.py:461), uncapped. The step level is scored
  first: a problem with a marking scheme has its answers asked of the judge only once its criteria
  are (every attempt), and never where the step level raised.
- A problem whose scoring raises is DROPPED: left out of the exam's total AND its maximum
  (hipho.py:396-403), so the rate goes up. Here it is a judge error whose detail says so; the
  tables count it, `exam_scores` keeps the release's full marks, and `scored_score_rate` is
  VLMEvalKit's rate (the exam's points over those of the problems scored).
- Exam totals: a cumulative sum rounded to 2 decimals after each addition; the maximum, the sum of
  the scored problems' points rounded once (hipho.py:388-426). The per-problem scores here are
  already rounded to 2 decimals, so the exact sum the tables take is VLMEvalKit's total.

Not reproduced (each changes no number of a run that finishes): VLMEvalKit's `hello` probe, which
on failure silently drops every problem with a marking scheme (ours stops the stage); its
`_save_results` crash after a dropped problem (after the score file was written); a hang (sympy
without a timeout in its threads; a huge power in `eval`): ours stops the check at the judge's
`check_cpu_seconds`, an undecided check, then asks the judge; an empty response and a failed
generation, which VLMEvalKit scores as the texts `nan` and `Failed to obtain answer via API.` and
ours never scores. A rules-only judge scores the answer level by VLMEvalKit's rules (VLMEvalKit
without a judge drops every problem with a marking scheme, no number anyone publishes).
"""

from __future__ import annotations

import ast
import functools
import math
import re
from decimal import Decimal, localcontext

from olympiad_eval.benchmarks.base import JudgeTask, Score
from olympiad_eval.benchmarks.judging import Fence, harness_prompt
from olympiad_eval.core.records import InputError, Problem
from olympiad_eval.core.templates import fill
from olympiad_eval.scoring.checks import ProtocolCheck, Verdict
from olympiad_eval.scoring.hendrycks import fix_fracs, fix_sqrt, fractions, is_float, leading_zeros

PROMPTS = {"criterion": "hipho_vlmevalkit_criterion_judge", "answer": "hipho_vlmevalkit_answer_judge"}
ATTEMPTS = 4  # hipho.py:497: max_retries = 3, so attempts 1 to 4
XLSX_CHARS = 32767  # xlsxwriter's longest string: what VLMEvalKit's default prediction file keeps
# What pandas' read_excel reads back as missing (its default na_values): the prediction is then NaN,
# scored as the text "nan".
READ_AS_MISSING = frozenset(
    {"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>", "N/A"}
    | {"NA", "NULL", "NaN", "None", "n/a", "nan", "null"}
)
DROPPED = "VLMEvalKit drops this problem (left out of the exam's total and maximum)"


# ---------------------------------------------------------------- the response and its boxes


def prediction(response: str, scoring) -> str:
    """The response as VLMEvalKit scores it: cut where its prediction file cuts, read back, stripped."""
    limit = scoring.get("prediction_chars", XLSX_CHARS)
    text = response if limit is None else response[:limit]
    return "nan" if text in READ_AS_MISSING else text.strip()


def _box_at(text: str, start: int) -> int | None:
    """Where the box starting at `start` closes: the `}` that brings the brace count back to 0
    (counted from its first `{`), or None."""
    depth = 0
    for index in range(start, len(text)):
        if text[index] == "{":
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                return index
    return None


def last_boxes(text: str, count: int) -> list[str]:
    """The last `count` boxes of the text, in order, as written (`\\boxed{..}` or `\\fbox{..}`):
    searched from the end, `\\fbox` only where no `\\boxed` is left; an unclosed box is skipped
    (verifier:1222-1266, `last_n_boxed_strings`)."""
    found, rest = [], text
    while rest and len(found) < count:
        start = rest.rfind("\\boxed")
        if start < 0:
            start = rest.rfind("\\fbox")
        if start < 0:
            break
        end = _box_at(rest, start)
        if end is not None:
            found.append(rest[start : end + 1])
        rest = rest[:start]
    return found[::-1]


def unboxed(box: str | None) -> str | None:
    """The content of `\\boxed{...}`; None for anything else, `\\boxed {x}` and `\\fbox{x}` included
    (verifier:1125, `remove_boxed`)."""
    if box is None or not box.startswith("\\boxed{") or not box.endswith("}"):
        return None
    return box[len("\\boxed{") : -1]


def slot_answers(text: str, count: int) -> list[str | None]:
    """One answer per slot: the last boxes, padded with "" in front (verifier:1269, `get_answer_str`)."""
    answers = [unboxed(box) for box in last_boxes(text, count)]
    return [""] * (count - len(answers)) + answers


def official_answer(value: str) -> str | None:
    """A slot's gold as `grade` compares with it: its last box's content, else its whole text; a
    box never closed reads as None (verifier:1289 then 1148)."""
    [gold] = [unboxed(box) for box in last_boxes(value, 1)] or [value]
    if gold is None:
        return None
    if "\\boxed" in gold:
        [box] = last_boxes(gold, 1) or [None]
        return unboxed(box)
    return gold


# ---------------------------------------------------------------- mathd (verifier:212-466)

# verifier:72-209, the base list; each is also taken with an `s` after it. Data, verbatim.
UNIT_WORDS = (
    'east', 'degree', 'mph', 'kmph', 'ft', 'm sqaure', ' m east', 'sq m', 'deg', 'mile', 'q .', 'monkey', 'prime',
    'ratio', 'profit of rs', 'rd', 'o', 'p . m', 'lb', 'tile', 'per', 'lt', 'gain', 'ab', 'way', 'west',
    'no change', 'men', 'soldier', 'pie', 'bc', 'excess', 'st', 'inches', 'noon', 'percent', 'by', 'gal', 'kmh',
    'acre', 'rise', 'a . m', 'th', 'π r 2', 'sq', 'mark', 'toy', 'coin', 'sq . m', 'gallon', '° f', 'profit',
    'minw', 'yr', 'women', 'feet', 'am', 'pm', 'hr', 'cu cm', 'square', 'v â € ™', 'are', 'rupee', 'rounds',
    'cubic', 'cc', 'mtr', 'ohm', 'number', 'kmph', 'day', 'hour', 'minute', 'min', 'second', 'man', 'woman', 'sec',
    'cube', 'mt', 'sq inch', 'mp', '∏ cm ³', 'hectare', 'more', 'sec', 'unit', 'cu . m', 'cm 2', 'rs .', 'rs',
    'kg', 'month', 'cm', 'mm', 'apple', 'liter', 'loss', 'yard', 'pure', 'year', 'increase', 'decrease', 'less',
    'Surface', 'litre', 'pi sq m', 's .', 'metre', 'meter', 'inch', 'kilogram', 'second', 'ampere', 'A', 'K',
    'mol', 'cd', 'N', 'J', 'W', 'Pa', 'Hz', 'C', 'V', 'Ω', 'F', 'T', 'H', 'eV', 'kW·h', 'atm', 'bar', '°C',
)  # fmt: skip
# A word standing alone (after the start or a non-word character, before the end or one), the
# word itself a regular expression as VLMEvalKit writes it (`q .` matches `q x`).
_UNIT_PATTERNS = tuple(
    re.compile(r"(^|\W)" + word + r"($|\W)") for word in (*UNIT_WORDS, *(w + "s" for w in UNIT_WORDS))
)


def without_unit_words(text: str) -> str:
    """Every unit word deleted, in the list's order, twice over; a deletion that would leave
    nothing is not made."""
    for _ in range(2):
        for pattern in _UNIT_PATTERNS:
            deleted = pattern.sub(r"\1\2", text)
            if deleted != "":
                text = deleted
    return text


class _Unchanged(Exception):
    """Where `_strip_string` raises, and mathd keeps its input as it is."""


def _strip_string(text: str) -> str:
    """Hendrycks' MATH normalisation as VLMEvalKit's verifier has it (verifier:212-378)."""
    text = text.replace("\n", "").replace("\\!", "").replace("\\\\", "\\")
    text = re.sub(r"\\begin\{array\}\{.*?\}", r"\\begin{pmatrix}", text)
    text = re.sub(r"\\end\{array\}", r"\\end{pmatrix}", text)
    text = text.replace("bmatrix", "pmatrix").replace("tfrac", "frac").replace("dfrac", "frac")
    text = text.replace("\\neq", "\\ne").replace("\\leq", "\\le").replace("\\geq", "\\ge")
    text = text.replace("\\left", "").replace("\\right", "")
    trimmed = re.sub(r"\\text{.*?}$", "", text).strip()  # a trailing \text{...}: a unit
    if trimmed != "" and trimmed != text:
        text = trimmed
    text = without_unit_words(text)
    text = text.replace("^{\\circ}", "").replace("^\\circ", "").replace("\\$", "")
    if "\\text{ " in text:  # the right-hand unit: VLMEvalKit asserts there is exactly one
        pieces = text.split("\\text{ ")
        if len(pieces) != 2:
            raise _Unchanged
        text = pieces[0]
    text = text.replace("\\%", "")
    text = leading_zeros(text)
    if not text:
        return text
    if text[0] == "{" and text[-1] == "}":
        text = text[1:-1]
    sides = text.split("=")
    if len(sides) == 2 and len(sides[0]) <= 2:  # `k = 5`: the value
        text = sides[1]
    try:
        text = fix_sqrt(text, strict=True).replace(" ", "")
        text = fix_fracs(text, strict=True)
    except IndexError:
        raise _Unchanged from None
    return fractions(text)


_TEXT = re.compile(r"^\\text\{(?P<text>.+?)\}$")


def mathd_normalized(answer: str | None) -> str | None:
    """verifier:455-466: a whole `\\text{...}` unwrapped, then `_strip_string`; where that raises,
    the text as it was."""
    if answer is None:
        return None
    answer = answer.strip()
    wrapped = _TEXT.search(answer)
    if wrapped is not None:
        answer = wrapped.group("text").strip()
    try:
        return _strip_string(answer)
    except _Unchanged:
        return answer


# ---------------------------------------------------------------- sympy (verifier:469-836)


@functools.cache
def _latex_to_text():
    try:
        from pylatexenc.latex2text import LatexNodes2Text
    except ImportError:
        raise InputError(
            "HiPhO's vlmevalkit protocol reads LaTeX with pylatexenc 2.10, as VLMEvalKit does: "
            "pip install 'olympiad-eval[vlmevalkit]'"
        ) from None
    return LatexNodes2Text()


def _latex_text(text: str) -> str:
    """verifier:438-452, `_parse_latex`: LaTeX to text by pylatexenc, its symbols spelt out."""
    text = text.replace("\\tfrac", "\\frac").replace("\\dfrac", "\\frac").replace("\\frac", " \\frac")
    text = _latex_to_text().latex_to_text(text)
    for symbol, spelt in (("√", "sqrt"), ("π", "pi"), ("∞", "inf"), ("∪", "U"), ("·", "*"), ("×", "*")):
        text = text.replace(symbol, spelt)
    return text.strip()


def _is_integer(value) -> bool:
    try:
        return abs(value - int(round(value))) <= 1e-7
    except Exception:  # inf, nan, or what is not a number: VLMEvalKit catches everything here
        return False


_THOUSANDS = re.compile(r"(\d)(,)(\d\d\d)($|\D)")


def _without_thousands_commas(text: str) -> str:
    while True:
        joined = _THOUSANDS.sub(r"\1\3\4", text)
        if joined == text:
            return joined
        text = joined


def _text_is_integer(text: str) -> bool:
    try:
        return _is_integer(float(_without_thousands_commas(text)))
    except Exception:  # not a number
        return False


def sympy_normalized(expr: str | None) -> str | None:
    """verifier:469-528, `sympy_normalize_answer`."""
    if expr is None:
        return None
    wrapped = _TEXT.search(expr)
    if wrapped is not None:
        expr = wrapped.group("text")
    expr = expr.replace("\\%", "%").replace("\\$", "$").replace("$", "").replace("%", "")
    expr = expr.replace(" or ", " , ").replace(" and ", " , ")
    expr = expr.replace("million", "*10^6").replace("billion", "*10^9").replace("trillion", "*10^12")
    expr = without_unit_words(expr)
    expr = re.sub(r"\^ *\\circ", "", expr)
    if expr and expr[0] == "{" and expr[-1] == "}":
        expr = expr[1:-1]
    expr = re.sub(",\\\\! *", "", expr)
    if is_float(expr) and _is_integer(float(expr)):
        expr = str(int(round(float(expr))))
    if "\\" in expr:
        try:
            expr = _latex_text(expr)
        except InputError:
            raise
        except Exception:  # VLMEvalKit keeps the text where pylatexenc fails
            pass
    expr = re.sub("- *", "-", expr)
    expr = re.sub("([0-9]) +([0-9])", "\\1+\\2", expr)  # a mixed number `7 3/4` as 7+3/4
    expr = expr.replace(" ", "").replace("{", "").replace("}", "").lower()
    if _text_is_integer(expr):
        expr = str(int(float(expr.replace(",", ""))))
    return expr


def _split_tuple(expr: str) -> list[str]:
    """verifier:601-617: a bracketed list's elements (no bracket inside), else the text."""
    expr = _without_thousands_commas(expr)
    if not expr:
        return []
    if len(expr) > 2 and expr[0] in "()[]" and expr[-1] in "()[]" and not any(c in expr[1:-1] for c in "()[]"):
        return [element.strip() for element in expr[1:-1].split(",")]
    return [expr]


def _is_fraction(text: str) -> bool:
    return bool(re.search(r"^-?[0-9]+.?/0*[1-9][0-9]*.?$", text))


def _choice_matches(pred: str, gold: str) -> bool:
    """verifier:531-544, `judge_MC`."""
    if pred == gold:
        return True
    if pred.startswith("[") and pred.endswith("]"):
        pred = pred.strip("[]")
    if not pred:
        return False
    if "A" <= pred[0] <= "Z" and len(pred) > 1 and pred[1] in ".:":
        return pred[0] == gold
    return f"'{gold}'" in pred


_TRUE, _FALSE = ("TRUE", "YES", "T", "Y"), ("FALSE", "NO", "F", "N")


def _truth_matches(pred: str, gold: str) -> bool:
    """verifier:547-581, `judge_TF`."""
    if any("\u4e00" <= char <= "\u9fff" for char in pred):
        pred = (
            "TRUE" if pred in ("是", "对", "正确", "能") else "FALSE" if pred in ("否", "错", "错误", "不能") else pred
        )
    else:
        pred = pred.upper()
    gold = gold.upper()
    if gold not in _TRUE + _FALSE or pred not in _TRUE + _FALSE:
        return False
    return (gold in _TRUE) == (pred in _TRUE)


def _sympy_parse(text):
    """verifier:620-630: Python syntax with `^` as power, implicit multiplication, unevaluated."""
    from sympy.parsing import sympy_parser

    return sympy_parser.parse_expr(
        text.replace("^", "**"),
        transformations=sympy_parser.standard_transformations + (sympy_parser.implicit_multiplication_application,),
        evaluate=False,
    )


def _evaluable(text) -> bool:
    """verifier:633-653, `should_allow_eval`: at most two distinct letters (`sqrt`, `frac` aside),
    no `^{`, `^(`, `^2^` or two-digit exponent."""
    if len({char for char in text.replace("sqrt", "").replace("frac", "") if char.isalpha()}) > 2:
        return False
    if "^{" in text or "^(" in text:
        return False
    return not (re.search(r"\^[0-9]+\^", text) or re.search(r"\^[0-9][0-9]+", text))


def _decimals(value, tolerance: float = 1e-6) -> int:
    """verifier:704-723, `count_decimal_places`: the decimals written, up to the first that brings
    `round(value, k)` within 1e-6 of the value."""
    with localcontext() as context:
        context.prec = 20
        written = format(Decimal(str(value)).normalize(), "f")
        if "." not in written:
            return 0
        decimals = written.split(".")[1]
        for count in range(1, len(decimals) + 1):
            if abs(value - round(value, count)) <= tolerance:
                return count
        return len(decimals)


def _scientific(number: float) -> str:
    mantissa, exponent = f"{number:.2e}".split("e")
    return f"{mantissa}*10**{int(exponent)}"


def _is_scientific(expression) -> bool:
    from sympy import Mul, Pow

    return isinstance(expression, Mul) and isinstance(expression.args[1], Pow) and expression.args[1].args[0] == 10


def _mantissas_match(pred, gold, precision: float) -> bool:
    """Two `m * 10**e`: the same exponent, mantissas within `precision` once both are rounded to
    the fewer decimals."""
    from sympy import N

    mantissa_pred, exponent_pred = N(pred.args[0]), N(pred.args[1].args[1])
    mantissa_gold, exponent_gold = N(gold.args[0]), N(gold.args[1].args[1])
    decimals = min(_decimals(mantissa_gold), _decimals(mantissa_pred))
    mantissa_pred, mantissa_gold = round(mantissa_pred, decimals), round(mantissa_gold, decimals)
    return bool(exponent_pred == exponent_gold and abs(mantissa_pred - mantissa_gold) <= precision * 1.01)


def equal_under_sympy(gold, pred, precision: float = 2e-3) -> bool:
    """verifier:681-778, `are_equal_under_sympy`: the loose numeric step, then sympy."""
    import sympy
    from sympy import N

    try:
        if pred == gold:
            return True
        pred_value, gold_value = float(pred), float(gold)
        decimals = min(_decimals(gold_value), _decimals(pred_value))
        pred_value, gold_value = round(pred_value, decimals), round(gold_value, decimals)
        if abs((pred_value - gold_value) / gold_value) <= precision * 1.01:
            return True
        scientific_pred = _sympy_parse(_scientific(float(pred)))
        scientific_gold = _sympy_parse(_scientific(float(gold)))
        if (
            _is_scientific(scientific_pred)
            and _is_scientific(scientific_gold)
            and _mantissas_match(scientific_pred, scientific_gold, precision)
        ):
            return True
    except Exception:  # VLMEvalKit: not numbers, a gold rounded to 0 (ZeroDivisionError), ...
        pass
    try:
        if _evaluable(gold) and _evaluable(pred):
            expression_gold, expression_pred = _sympy_parse(gold), _sympy_parse(pred)
            relative = (expression_gold - expression_pred) / (expression_gold if expression_gold != 0 else 1)
            if abs(N(sympy.simplify(relative))) <= precision * 1.01:
                return True
            if _is_scientific(expression_pred) != _is_scientific(expression_gold):
                if _is_scientific(expression_pred):
                    expression_gold = _sympy_parse(_scientific(float(gold)))
                else:
                    expression_pred = _sympy_parse(_scientific(float(pred)))
            if _is_scientific(expression_pred) and _is_scientific(expression_gold):
                if _mantissas_match(expression_pred, expression_gold, precision):
                    return True
            elif N(expression_pred) == N(expression_gold):
                return True
    except Exception:  # VLMEvalKit catches everything sympy raises here
        pass
    return False


# `handle_pi` (verifier:656-678) evaluates the text with Python's `eval`, in the verifier module's
# namespace. Here a small evaluator of the same Python expressions does it: numbers, arithmetic,
# comparisons, tuples and lists, and calls of the pure built-ins; a name VLMEvalKit's `eval` would
# find in its module (`math`, `sympy`, ...) or an attribute is taken as not evaluable (the text stays).
_BINARY = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
    ast.Pow: lambda a, b: a**b,
    ast.BitXor: lambda a, b: a ^ b,
    ast.BitOr: lambda a, b: a | b,
    ast.BitAnd: lambda a, b: a & b,
    ast.LShift: lambda a, b: a << b,
    ast.RShift: lambda a, b: a >> b,
}
_UNARY = {ast.UAdd: lambda a: +a, ast.USub: lambda a: -a, ast.Invert: lambda a: ~a, ast.Not: lambda a: not a}
_COMPARE = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
}
_BUILTINS = {f.__name__: f for f in (abs, min, max, round, pow, int, float, complex, divmod, sum, len, bool)}


class _NotEvaluable(Exception):
    pass


def _evaluated(node):
    if isinstance(node, ast.Expression):
        return _evaluated(node.body)
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_evaluated(node.left), _evaluated(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluated(node.operand))
    if isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
        left = _evaluated(node.left)
        for op, comparator in zip(node.ops, node.comparators):
            right = _evaluated(comparator)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.BoolOp):
        value = _evaluated(node.values[0])
        for other in node.values[1:]:
            if (not value) if isinstance(node.op, ast.And) else value:
                return value
            value = _evaluated(other)
        return value
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        items = [_evaluated(element) for element in node.elts]
        return {ast.Tuple: tuple, ast.List: list, ast.Set: set}[type(node)](items)
    if isinstance(node, ast.Subscript):
        return _evaluated(node.value)[_evaluated(node.slice)]
    if isinstance(node, ast.Slice):
        return slice(*(None if part is None else _evaluated(part) for part in (node.lower, node.upper, node.step)))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _BUILTINS:
        if node.keywords:
            raise _NotEvaluable
        return _BUILTINS[node.func.id](*(_evaluated(argument) for argument in node.args))
    raise _NotEvaluable


def _python_value(text: str):
    """What Python's `eval(text)` gives for an arithmetic expression; the text itself where it is
    not one or raises (VLMEvalKit: `except: pass`)."""
    try:
        return _evaluated(ast.parse(text, mode="eval"))
    except Exception:  # a syntax error, a name, ZeroDivisionError, ...: the text stays
        return text


def _with_pi(text, pi) -> object:
    """verifier:656-678: every `pi` as `*<pi>` after a digit, else `1*<pi>`, then evaluated."""
    if not isinstance(text, str) or "pi" not in text:
        return text
    at = text.find("pi")
    while at != -1:
        text = text[:at] + (f"*{pi}" if at > 0 and text[at - 1].isdigit() else f"1*{pi}") + text[at + 2 :]
        at = text.find("pi", at + 1)
    return _python_value(text)


def sympy_grade(given: str | None, gold: str | None) -> bool:
    """verifier:781-836, `grade_answer_sympy`."""
    gold_normalized, given_normalized = sympy_normalized(gold), sympy_normalized(given)
    if gold_normalized is None:
        return False
    if gold_normalized == given_normalized:
        return True
    if not given_normalized:
        return False
    gold_elements, given_elements = _split_tuple(gold_normalized), _split_tuple(given_normalized)
    if len(gold_elements) > 1 and (
        gold_normalized[0] != given_normalized[0] or gold_normalized[-1] != given_normalized[-1]
    ):
        return False
    if len(gold_elements) != len(given_elements):
        return False
    correct = False
    for gold_element, given_element in zip(gold_elements, given_elements):
        if _is_fraction(gold_element) and _is_fraction(given_element):
            correct = gold_element == given_element  # unreduced fractions are not simplified
        else:
            correct = _choice_matches(given_element, gold_element) or _truth_matches(given_element, gold_element)
            if not correct and ("pi" in given_element or "pi" in gold_element):
                correct = any(
                    equal_under_sympy(_with_pi(gold_element, pi), _with_pi(given_element, pi))
                    for pi in (math.pi, 3.14, 180)
                )
            elif not correct:
                correct = equal_under_sympy(gold_element, given_element)
        if not correct:
            break
    return bool(correct)


# ---------------------------------------------------------------- one slot's rules


def split_of(given: str, gold: str) -> tuple[bool, str, str]:
    """verifier:1156-1158: (whether the split is enabled, the texts after the last `=`). It compares
    the raw split answer with the mathd-normalised answer, so it is enabled almost always."""
    split_given, split_gold = given.split("=")[-1], gold.split("=")[-1]
    return (split_given != mathd_normalized(given) or split_gold != gold), split_given, split_gold


def rules_match(given: str, gold: str) -> Verdict:
    """One slot by VLMEvalKit's rules (verifier:1150-1170): mathd, then sympy on the texts, then
    sympy on the split texts. (Math-Verify, next in `grade`, is never true where VLMEvalKit runs it.)
    A check of its own, run by the check workers within the judge's `check_cpu_seconds`."""
    if mathd_normalized(given) == mathd_normalized(gold):
        return Verdict(True, answer="mathd")
    if sympy_grade(given, gold):
        return Verdict(True, answer="sympy")
    enabled, split_given, split_gold = split_of(given, gold)
    if enabled and sympy_grade(split_given, split_gold):
        return Verdict(True, answer="sympy (split)")
    return Verdict(False)


def crash(answers: list[str | None], golds: list[str | None]) -> str:
    """Why VLMEvalKit's answer level raises on this response ("" where it does not): a slot read as
    None, or a gold box never closed, as soon as any slot is answered (verifier:1292-1300)."""
    if not any(answers):
        return ""
    for index, (given, gold) in enumerate(zip(answers, golds)):
        if given is None:
            return f"slot {index + 1}'s box is not `\\boxed{{...}}` (`\\boxed {{`, `\\fbox`): its answer check raises"
        if gold is None:
            return f"slot {index + 1}'s official answer has a box never closed: its answer check raises"
    return ""


def rule_checks(problem: Problem, response: str, scoring) -> list:
    answers, golds = _slots(problem, response, scoring)
    if crash(answers, golds) or not any(answers):
        return []
    return [ProtocolCheck(rules_match, (given, gold)) for given, gold in zip(answers, golds)]


def _slots(problem: Problem, response: str, scoring) -> tuple[list[str | None], list[str | None]]:
    answers = slot_answers(prediction(response, scoring), len(problem.answers)) if problem.answers else []
    return answers, [official_answer(slot.value) for slot in problem.answers]


def rule_score(problem: Problem, response: str, scoring, verdicts: list) -> Score:
    """The answer level by VLMEvalKit's rules alone, and what its judge is to be asked: each slot
    with its answer, gold, whether rules matched it and its split texts. Where VLMEvalKit's answer
    check raises, the problem cannot be scored (`unscorable`): it is dropped."""
    answers, golds = _slots(problem, response, scoring)
    failure = crash(answers, golds)
    answered = any(answers) and not failure
    verdict_of = iter(verdicts)
    slots, undecided = [], []
    for index, (slot, given, gold) in enumerate(zip(problem.answers, answers, golds)):
        verdict = next(verdict_of) if answered else None
        if verdict is not None and verdict.correct is None:
            undecided.append(f"slot {index + 1}: {verdict.reason}")
        split = split_of(given, gold) if answered else (False, "", "")
        slots.append(
            {
                "expected": gold,
                "given": given,
                "correct": bool(verdict and verdict.correct),
                "points": slot.points,
                "matched_by": verdict.answer if verdict is not None and verdict.correct else "",
                "split": list(split[1:]) if split[0] else None,
            }
        )
    level = _answer_points(problem, [slot["correct"] for slot in slots]) if answered else 0.0
    return Score(
        score=level / problem.points if problem.points else 0.0,
        points=level,
        extracted=tuple(given or "" for given in answers),
        slots=tuple(slots),
        detail=f"vlmevalkit protocol, answer level by its rules: {level:g} of {problem.points:g} points"
        + ("" if any(answers) else " (no slot answered: no judge asked)"),
        undecided=tuple(undecided),
        unscorable=f"{DROPPED}: {failure}" if failure else "",
    )


def _answer_points(problem: Problem, correct: list[bool]) -> float:
    """verifier:1310-1320 and hipho.py:590: Σ slot score x slot points, as floats, rounded."""
    return round(sum([right * slot.points for right, slot in zip(correct, problem.answers)]), 2)


# ---------------------------------------------------------------- the judges' questions


def _prompt(scoring, key: str):
    return harness_prompt(scoring, key, PROMPTS, "HiPhO's vlmevalkit protocol asks with VLMEvalKit", "hipho_vlmevalkit")


def _ask(fence: Fence, template: str, fields: dict) -> tuple[dict, ...]:
    """VLMEvalKit's prompt as one user message, no figure; where VLMEvalKit sends it alone, the
    model's text in it is fenced and the fence's system message comes first (the words around it are
    VLMEvalKit's own: bench/vlmevalkit_agreement.py compares them with the fence taken out)."""
    return fence.guard, {"role": "user", "content": [{"type": "text", "text": fence.fill(template, fields)}]}


def parse_award(text: str) -> dict | None:
    """hipho.py:796-835, `_extract_score_from_response`, on the stripped reply. None (asked again,
    then a failed task: the problem dropped) for a reply VLMEvalKit takes as a failed request."""
    reply = (text or "").strip()
    if not reply or "Failed to obtain answer via API" in reply:
        return None
    return {"awarded": award_of(reply), "reply": reply[:1000]}


def award_of(reply: str) -> float:
    for pattern in (r"\\boxed\{([^}]+)\}", r"boxed\{([^}]+)\}"):
        for content in reversed(re.findall(pattern, reply, re.IGNORECASE)):
            content = content.strip()
            if not content:
                continue
            try:
                return round(float(content), 2)
            except ValueError:
                numbers = re.findall(r"\d+\.?\d*", content)
                if numbers:
                    return round(float(numbers[-1]), 2)
    numbers = re.findall(r"[0-9]*\.?[0-9]+", reply)
    return round(float(numbers[-1]), 2) if numbers else 0.0


def parse_verdict(text: str) -> dict | None:
    """verifier:1069-1075: correct only when the reply, stripped, is exactly `Correct` or `[Correct]`."""
    reply = text or ""
    if not reply.strip():
        return None  # VLMEvalKit's client asks again on an empty reply, then fails: wrong
    return {"correct": reply.strip() in ("Correct", "[Correct]"), "reply": reply[:200]}


def _criteria(problem: Problem) -> list[list[str]]:
    """Each scheme's criteria as VLMEvalKit reads them (hipho.py:773-794): stripped, empty ones left out."""
    return [[c.text.strip() for c in scheme if c.text.strip()] for scheme in problem.marking]


def _most(problem: Problem) -> float:
    """The problem's points as VLMEvalKit adds them: a float sum, in order (hipho.py:447)."""
    return sum(slot.points for slot in problem.answers)


def _criterion_key(scheme: int, criterion: int, attempt: int) -> str:
    return f"criterion {scheme}.{criterion}" + (f" attempt {attempt}" if attempt > 1 else "")


def _criterion_tasks(problem: Problem, response: str, scoring, attempt: int) -> list[JudgeTask]:
    """Every criterion of every scheme at this attempt (only a lone scheme is asked past attempt 1)."""
    prompt = _prompt(scoring, "criterion")
    most = _most(problem)
    constraint = fill(str(prompt.constraint), {"max_total": str(most), "attempt": str(attempt)}) if most > 0 else ""
    retry = str(prompt.retry) if attempt > 1 else ""
    common = {"question": problem.question, "response": prediction(response, scoring)}
    fence = Fence.around(response)
    return [
        JudgeTask(
            _criterion_key(s, c, attempt),
            _ask(fence, str(prompt.text), {**common, "criterion": text, "constraint": constraint, "retry": retry}),
            parse_award,
        )
        for s, scheme in enumerate(_criteria(problem))
        for c, text in enumerate(scheme)
    ]


def judge_tasks(problem: Problem, response: str, scoring) -> list[JudgeTask]:
    """The step level's first round: every criterion of every scheme, attempt 1."""
    return _criterion_tasks(problem, response, scoring, 1)


def _slot_task(problem: Problem, scoring, fence: Fence, key: str, given: str, gold: str) -> JudgeTask:
    fields = {"question": problem.question, "given": given, "reference": gold}
    return JudgeTask(key, _ask(fence, str(_prompt(scoring, "answer").text), fields), parse_verdict)


def _first_asks(problem: Problem, response: str, rules, scoring) -> list[JudgeTask]:
    """The answer judge's first ask about every slot the rules did not match (padded "" slots too),
    where VLMEvalKit's answer check runs at all (a slot answered, nothing that raises)."""
    if not isinstance(rules, Score) or not any(rules.extracted):
        return []
    return [
        _slot_task(problem, scoring, Fence.around(response), f"slot {index}", slot["given"], slot["expected"])
        for index, slot in enumerate(rules.slots)
        if not slot["correct"]
    ]


def judge_tasks_after_rules(problem: Problem, response: str, rules, scoring) -> list[JudgeTask]:
    """The answer judge's first asks, at once for a problem without a marking scheme. With one,
    VLMEvalKit scores the step level first (hipho.py:454-461): a criterion request that fails drops
    the problem before any answer is asked, so they wait for the step level (`judge_tasks_next`)."""
    return [] if problem.marking else _first_asks(problem, response, rules, scoring)


def _step_level_done(problem: Problem, replies: dict) -> bool:
    """Whether VLMEvalKit's step level has its result from these replies (not dropped, no attempt
    left to ask)."""
    try:
        step_level(problem, replies)
    except _Dropped:
        return False
    return True


def judge_tasks_next(problem: Problem, response: str, rules, replies: dict, scoring) -> list[JudgeTask]:
    """The later rounds of one judge: the next attempt of a lone scheme whose awards overflowed; the
    first asks of a problem with a marking scheme once its step level is done (never where it
    raised); the split ask of a slot the judge said no to (when the split is enabled)."""
    tasks = []
    if problem.marking and not any(key.startswith("slot ") for key in replies) and _step_level_done(problem, replies):
        tasks += _first_asks(problem, response, rules, scoring)
    if isinstance(rules, Score) and any(rules.extracted):
        for index, slot in enumerate(rules.slots):
            first, key = replies.get(f"slot {index}"), f"slot {index} split"
            if first is None or key in replies or slot["split"] is None or _said_correct(first):
                continue
            tasks.append(_slot_task(problem, scoring, Fence.around(response), key, *slot["split"]))
    if len(problem.marking) == 1 and _asks_again(problem, replies):
        tasks += _criterion_tasks(problem, response, scoring, _attempts_asked(problem, replies) + 1)
    return tasks


def _asks_again(problem: Problem, replies: dict) -> bool:
    """Whether VLMEvalKit asks a lone scheme's criteria once more (not where it has raised)."""
    attempt = _attempts_asked(problem, replies)
    try:
        return 0 < attempt < ATTEMPTS and _single_scheme(problem, replies, attempt) is None
    except _Dropped:
        return False


def judge_tasks_after_rules_at_most(problem: Problem, response: str, scoring) -> list[JudgeTask]:
    """Every slot asked twice (its split too), as if no rule matched and the judge said no to each,
    and a lone scheme's attempts 2 to 4, as if every attempt overflowed."""
    fence = Fence.around(response)
    slots = [
        task
        for index, slot in enumerate(problem.answers)
        for task in (
            _slot_task(problem, scoring, fence, f"slot {index}", slot.value, official_answer(slot.value) or ""),
            _slot_task(problem, scoring, fence, f"slot {index} split", slot.value.split("=")[-1], slot.value),
        )
    ]
    return slots + _later_attempts(problem, response, scoring)


def judge_tasks_next_at_most(problem: Problem, response: str, rules, scoring) -> list[JudgeTask]:
    """The split asks the rules leave possible, the first asks of a problem with a marking scheme
    (asked after its step level), and a lone scheme's attempts 2 to 4."""
    splits = []
    if isinstance(rules, Score) and any(rules.extracted):
        splits = [
            _slot_task(problem, scoring, Fence.around(response), f"slot {index} split", *slot["split"])
            for index, slot in enumerate(rules.slots)
            if not slot["correct"] and slot["split"] is not None
        ]
    first = _first_asks(problem, response, rules, scoring) if problem.marking else []
    return first + splits + _later_attempts(problem, response, scoring)


def _later_attempts(problem: Problem, response: str, scoring) -> list[JudgeTask]:
    if len(problem.marking) != 1:
        return []
    return [
        task for attempt in range(2, ATTEMPTS + 1) for task in _criterion_tasks(problem, response, scoring, attempt)
    ]


def _said_correct(reply) -> bool:
    return isinstance(reply, dict) and bool(reply.get("correct"))


# ---------------------------------------------------------------- the step level from the awards


class _Dropped(Exception):
    """VLMEvalKit's scoring of the problem raises: it leaves the problem out."""


def _award(replies: dict, key: str) -> tuple[float, str]:
    """(the award, the reply); a task without a reply is VLMEvalKit's failed request: `round(None)` raises."""
    reply = replies.get(key)
    if not isinstance(reply, dict):
        raise _Dropped(f"the criterion judge gave no award for '{key}' ({reply}): `round(None, 2)` raises")
    return reply["awarded"], reply.get("reply", "")


def _attempts_asked(problem: Problem, replies: dict) -> int:
    """How many attempts of the lone scheme have all their replies."""
    [criteria] = _criteria(problem)
    attempt = 0
    while attempt < ATTEMPTS and all(_criterion_key(0, c, attempt + 1) in replies for c in range(len(criteria))):
        attempt += 1
    return attempt


def _single_scheme(problem: Problem, replies: dict, attempts: int) -> tuple[float, list] | None:
    """hipho.py:494-574 over the attempts answered so far: (step level, awards shown), or None
    while VLMEvalKit would ask another attempt. Raises `_Dropped` where it raises."""
    [criteria] = _criteria(problem)
    most = _most(problem)
    for attempt in range(1, attempts + 1):
        scores, shown, failed = [], [], 0
        for c in range(len(criteria)):
            score, reply = _award(replies, _criterion_key(0, c, attempt))
            if "API_FAILED" in reply or "EMPTY_RESPONSE" in reply:  # its failure markers, in a reply
                failed += 1
                scores.append(0)
                shown.append({"criterion": c, "score": None, "attempt": attempt, "status": "API_FAILED"})
            else:
                scores.append(score)
            shown.append({"criterion": c, "score": round(score, 2), "attempt": attempt, "status": "SUCCESS"})
        if failed and attempt < ATTEMPTS:
            continue
        # hipho.py:535: the scores paired with entries that may be shifted by a failure's extra entry
        total = sum([s for s, entry in zip(scores, shown) if entry.get("status") == "SUCCESS"])
        if failed == len(criteria):
            return 0.0, []
        if total <= most or most == 0:
            return round(total, 2), shown
        if attempt < ATTEMPTS:
            continue
        factor = most / total
        scaled = [score * factor for score in scores]
        for index, score in enumerate(scaled):
            shown[index] = {**shown[index], "score": round(score, 2), "rescaled_by": round(factor, 3)}
        return round(sum(scaled), 2), shown
    return None if attempts < ATTEMPTS else (0.0, [])


def _several_schemes(problem: Problem, replies: dict) -> tuple[float, list]:
    """hipho.py:715-771: each scheme once, an overflowing one rescaled to the points; the first
    scheme strictly above the best so far (from 0) wins."""
    most = _most(problem)
    best, best_shown = 0.0, []
    for s, criteria in enumerate(_criteria(problem)):
        scores, shown = [], []
        for c in range(len(criteria)):
            score, _ = _award(replies, _criterion_key(s, c, 1))
            scores.append(score)
            shown.append({"criterion": c, "score": round(score, 2), "scheme": s})
        total = sum(scores)
        if total > most and most > 0:
            factor, total = most / total, most
            shown = [{**entry, "score": round(entry["score"] * factor, 2)} for entry in shown]
        total = round(total, 2)
        if total > best:
            best, best_shown = total, shown
    return round(best, 2), best_shown


def step_level(problem: Problem, replies: dict) -> tuple[float, list]:
    """(the step level, the awards as VLMEvalKit shows them) from one judge's replies."""
    if not problem.marking:
        return 0.0, []
    if len(problem.marking) > 1:
        return _several_schemes(problem, replies)
    result = _single_scheme(problem, replies, _attempts_asked(problem, replies))
    if result is None:  # cannot happen once the judge stage has asked every round
        raise _Dropped("the criterion judge's attempts are incomplete")
    return result


def answer_level(problem: Problem, rules: Score, replies: dict) -> tuple[float, list[bool]]:
    """Each slot right by the rules, or by the judge's first or split ask; a failed ask is wrong."""
    if not any(rules.extracted):
        return 0.0, [False] * len(problem.answers)
    right = [
        slot["correct"]
        or _said_correct(replies.get(f"slot {index}"))
        or _said_correct(replies.get(f"slot {index} split"))
        for index, slot in enumerate(rules.slots)
    ]
    return _answer_points(problem, right), right


def combine(problem: Problem, rules, replies: dict, scoring) -> Score | str:
    """max(step level, answer level) of each judge (their mean with several), VLMEvalKit's floats;
    or why VLMEvalKit drops the problem."""
    if not isinstance(rules, Score):
        return rules  # the answer check raises: dropped (`rule_score` says why)
    finals, steps, answers, details, slots = [], [], [], [], list(rules.slots)
    for name, judged in replies.items():
        try:
            step, shown = step_level(problem, judged)
        except _Dropped as error:
            return f"{DROPPED}: judge {name}: {error}"
        answer, right = answer_level(problem, rules, judged)
        finals.append(max(step, answer))
        steps.append(step)
        answers.append(answer)
        details.append({"judge": name, **judged, "step_awards": shown})
        slots = [{**slot, "correct": correct} for slot, correct in zip(slots, right)] if len(replies) == 1 else slots
    final = sum(finals) / len(finals)
    return Score(
        score=final / problem.points if problem.points else 0.0,
        points=final,
        parts={"answer_points": sum(answers) / len(answers), "step_points": sum(steps) / len(steps)},
        extracted=rules.extracted,
        slots=tuple(slots),
        details=tuple(details),
        detail=f"vlmevalkit protocol, {len(finals)} judge(s): max(step level, answer level), as VLMEvalKit adds them",
    )
