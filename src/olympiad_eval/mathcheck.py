"""Rule-based equivalence of a predicted answer with a gold answer.

Parsing uses `latex2sympy2_extended` with case-sensitive symbols (`Mg` is not `mg`). sympy can
hang on hostile input (`9^{9^9}`), so `CheckPool` runs every check in warm worker processes with
a hard timeout and replaces a worker that overruns it.
"""

from __future__ import annotations

import multiprocessing
import re
from dataclasses import dataclass

from olympiad_eval.answers import boxed

_UNWRAP = [
    (re.compile(r"\\(?:left|right|displaystyle|limits)"), ""),
    (re.compile(r"\\[,;:! ]|~"), " "),
    (re.compile(r"\\dfrac|\\tfrac"), r"\\frac"),
]
_UNIT_TEXT = r"[A-Za-z°Ω/\s\^\-\d\\·.*]"
_TRAILING_UNIT = re.compile(rf"\s*\\(?:text|mathrm|rm)\s*\{{(?:{_UNIT_TEXT}|\{{{_UNIT_TEXT}*\}})*\}}\s*$")
_WRAPPED = re.compile(r"^\\(?:text|mathrm|textbf|mathbf)\s*\{([^{}]*)\}$")
# an accepted range, possibly labelled: "[5.21, 5.28]", "[0.94, 0.96] for $R_1$"
_RANGE = re.compile(r"^\[\s*([^,\[\]]+?)\s*,\s*([^,\[\]]+?)\s*\](?:\s+for\b.*)?$")
# "3.0 m/s", "2.5 \\times 10^{3} kg": a number, then a space and a unit made of letters only
_NUMBER_THEN_UNIT = re.compile(
    r"^([-+]?\d[\d.]*(?:\s*(?:\\times|\\cdot|×)\s*10\^\{?[-+]?\d+\}?)?(?:[eE][-+]?\d+)?)"
    r"\s+(?:\\(?:text|mathrm)\{[^{}]*\}|[A-Za-zΩμ°][A-Za-zΩμ°/·^\-\d\s]*)$"
)


CHOICE_LETTERS = ("A", "B", "C", "D", "E")


@dataclass(frozen=True)
class Verdict:
    """`correct` is None when the check could not finish (timeout or a crash), with the reason."""

    correct: bool | None
    reason: str = ""


def clean(answer: str, unit: str | None = None) -> str:
    """Strip what is presentation, not value: boxes, dollars, spacing macros, a trailing unit."""
    text = answer.strip()
    boxes = boxed(text)
    if boxes and text.startswith("\\boxed"):
        text = boxes[0]
    text = text.replace("$", "")
    for pattern, replacement in _UNWRAP:
        text = pattern.sub(replacement, text)
    text = " ".join(text.split())
    if unit:
        text = _strip_suffix(text, unit)
    wrapped = _WRAPPED.match(text)
    if wrapped:  # `\text{B}` is the answer B, not a unit
        return wrapped.group(1).strip()
    return _TRAILING_UNIT.sub("", text).strip().rstrip(".").strip()


def _strip_suffix(text: str, unit: str) -> str:
    unit = clean(unit)
    for form in (unit, f"\\text{{{unit}}}", f"\\mathrm{{{unit}}}"):
        if form and text.endswith(form) and len(text) > len(form):
            return text[: -len(form)].strip()
    return text


def _rhs(text: str) -> str:
    """`\\beta = 2` answers `2`: keep what follows the last `=`."""
    return text.rsplit("=", 1)[1].strip() if "=" in text else text


def parse_latex(text: str):
    from latex2sympy2_extended.latex2sympy2 import ConversionConfig, latex2sympy

    return latex2sympy(text, conversion_config=ConversionConfig(lowercase_symbols=False))


def to_number(text: str) -> float | None:
    """A plain number, scientific notation or a closed-form constant; None if symbolic."""
    compact = text.replace(" ", "").replace("{,}", "")
    try:
        return float(compact)
    except ValueError:
        pass
    with_unit = _NUMBER_THEN_UNIT.match(text.strip())
    if with_unit:
        text = with_unit.group(1)
    try:
        expression = parse_latex(text)
    except Exception:
        return None
    if getattr(expression, "free_symbols", {1}):
        return None
    try:
        value = complex(expression.evalf())
    except (TypeError, ValueError):
        return None
    return value.real if abs(value.imag) < 1e-12 else None


def numbers_close(gold: float, pred: float, rel_tol: float) -> bool:
    """Within `rel_tol` of the gold value (not of the larger of the two, as math.isclose does)."""
    tolerance = max(rel_tol, 1e-9)
    return abs(pred - gold) <= tolerance * abs(gold) if gold else abs(pred) <= tolerance


def equivalent(gold: str, pred: str, rel_tol: float = 0.0, unit: str | None = None) -> bool:
    """True when `pred` states the same answer as `gold` (runs in the calling process)."""
    gold_text, pred_text = clean(gold, unit), clean(pred, unit)
    if not pred_text:
        return False
    if gold_text == pred_text:
        return True
    if gold_text in CHOICE_LETTERS and len(pred_text.strip("()")) == 1:
        return pred_text.strip("()").upper() == gold_text  # a multiple-choice letter
    accepted = _RANGE.match(gold_text)
    if accepted:
        low, high = (to_number(side) for side in accepted.groups())
        value = to_number(_rhs(pred_text))
        if None not in (low, high, value):
            return min(low, high) <= value <= max(low, high)
    if "=" not in gold_text:
        pred_text = _rhs(pred_text)
    gold_value, pred_value = to_number(_rhs(gold_text)), to_number(_rhs(pred_text))
    if gold_value is not None and pred_value is not None:
        return numbers_close(gold_value, pred_value, rel_tol)
    return _symbolic_equal(gold_text, pred_text)


def _symbolic_equal(gold: str, pred: str) -> bool:
    import sympy

    try:
        left, right = parse_latex(gold), parse_latex(pred)
    except Exception:
        return False
    if isinstance(left, sympy.Equality) and isinstance(right, sympy.Equality):
        return sympy.simplify((left.lhs - left.rhs) - (right.lhs - right.rhs)) == 0 or sympy.simplify(
            (left.lhs - left.rhs) + (right.lhs - right.rhs)) == 0
    if isinstance(left, sympy.Equality):
        left = left.rhs
    if isinstance(right, sympy.Equality):
        right = right.rhs
    try:
        return sympy.simplify(left - right) == 0
    except (TypeError, AttributeError):
        return left == right


def _check(job: tuple[str, str, float, str | None]) -> bool:
    return equivalent(*job)


class CheckPool:
    """Warm worker processes that run checks with a hard per-check timeout."""

    def __init__(self, workers: int = 2, timeout: float = 10.0):
        self.workers, self.timeout = max(1, workers), timeout
        self._pool = None

    def __enter__(self) -> "CheckPool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
            self._pool = None

    def _ensure(self):
        if self._pool is None:
            self._pool = multiprocessing.get_context("spawn").Pool(self.workers)
        return self._pool

    def check_many(self, jobs: list[tuple[str, str, float, str | None]]) -> list[Verdict]:
        """Verdicts in the order of `jobs`; an overrunning check is recorded, never awaited."""
        verdicts: list[Verdict | None] = [None] * len(jobs)
        pending = list(range(len(jobs)))
        while pending:
            pool = self._ensure()
            futures = {index: pool.apply_async(_check, (jobs[index],)) for index in pending}
            pending = []
            for index, future in futures.items():
                if pending:  # the pool was replaced: resubmit what had not finished
                    if future.ready():
                        verdicts[index] = _collect(future)
                    else:
                        pending.append(index)
                    continue
                try:
                    verdicts[index] = Verdict(bool(future.get(self.timeout)))
                except multiprocessing.TimeoutError:
                    verdicts[index] = Verdict(None, f"check timed out after {self.timeout:g} s")
                    self.close()
                    pending.append(-1)
                except Exception as error:  # a crash in sympy is a failed check, not a stage crash
                    verdicts[index] = Verdict(None, f"check failed: {type(error).__name__}: {error}")
            pending = [index for index in pending if index >= 0]
        return [v for v in verdicts if v is not None]


def _collect(future) -> Verdict:
    try:
        return Verdict(bool(future.get(0)))
    except Exception as error:
        return Verdict(None, f"check failed: {type(error).__name__}: {error}")
