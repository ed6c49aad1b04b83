"""OlympiadBench's official automatic scorer: what the `olympiadbench` plugin calls of it in this
interpreter (the answer a response gives, the tolerance, the gold), and the check that runs the
official judge (`official_judge`, with its step-by-step description) in the protocol's own pinned
environment (`ENVIRONMENT`: sympy 1.12 with antlr 4.11, as github OpenBMB/OlympiadBench scores; this
project's own interpreter keeps sympy 1.14 and antlr 4.9.3, which hydra needs). So the verdicts are
the official code's, parser and `simplify` included, by construction, not by emulation.

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
- `check(gold, answer, precision) -> ProtocolCheck`: one check of the official verdict of an
  extracted answer, run by `scoring.pool.CheckPool` in workers of `ENVIRONMENT` within the judge's
  CPU budget.

How `inference/judge.py` (and evalscope, which copies it) calls the judge, reproduced by `check`: the
model's answer goes FIRST, in the ground-truth slot, and `final_answer[0]` second. So the percentage
readings scale the answer, not the gold (`0.6` answers a gold `60`, and `60` a gold `0.6`, but the
tolerance is measured on the other side), and per-answer tolerances follow the positions of the
model's answers. The official examples file, run by `auto_scoring_judge.py`'s own `__main__`, passes
the gold first: `official_judge.judge(GT, answer, precision)` reproduces those.

What the official accuracy counts (`inference/calculate_accuracy.py`, for the plugin's tables):
theorem-proving files are skipped; a response that is empty, "<Inappropriate content in response>",
"<No response>", or holds both "code:" and "message:" (an API error's text) is left out of the
denominator, not scored 0. The first `inference/judge.py` (commit e8b1452) took the language from
the problem's `classification` containing "Chinese" (so Gaokao problems were read with the English
phrase, that is from their boxes) and gave `Need_human_evaluate` answers no tolerance, like
`Tuple`; the current one (003c841, copied by evalscope) keys the language on the file name ("zh")
and only `Tuple` goes without: this module follows the current one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from olympiad_eval.benchmarks.olympiadbench import official_judge
from olympiad_eval.benchmarks.olympiadbench.official_judge import DEFAULT_PRECISION
from olympiad_eval.scoring.checks import ProtocolCheck
from olympiad_eval.scoring.environments import Environment

MARKERS = {"en": re.compile("So the final answer is (.*)"), "zh": re.compile("所以最终答案是(.*)")}
HERE = Path(__file__).parent
ENVIRONMENT = Environment("olympiadbench-official", HERE / "official_requirements.txt", HERE / "official_judge.py")


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
    tolerance = tuple(precision) if isinstance(precision, (list, tuple)) else precision  # hashable: checked once
    return ProtocolCheck(official_judge.official_verdict, (gold, answer, tolerance), ENVIRONMENT)
