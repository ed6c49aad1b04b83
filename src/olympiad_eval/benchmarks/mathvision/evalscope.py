"""MATH-Vision scored as evalscope 1.14.1 scores it (`protocol: evalscope`), for numbers published with it.

What evalscope's `math_vision` benchmark does (evalscope/benchmarks/math_vision/math_vision_adapter.py,
`MathVisionAdapter`), and what this module reproduces, quirks included:

- What it grades is the response without its first `<think>...</think>` block, which evalscope's
  message model moves into a reasoning part (`scoring.evalscope.completion`).
- Multiple choice (`extract_answer`, `match_score`): the letters `parse_answers`
  (evalscope/utils/multi_choices.py) reads, sorted and joined, must equal the gold letter. It reads
  the LAST "ANSWER:" marker (any case, `**` bold around it allowed) that a label follows: after
  `$`, `\\(`, `\\boxed{`, `\\text{`... a bracketed label (`(B)`, `[B]`, `（B）`, `【B】`) or a plain
  one; of that, the leading run of words that are labels (a word of several labels, `AB`, counts;
  "and"/"or" between two labels are stepped over), and that run must be exactly one allowed letter
  ("ANSWER: B, not C" reads B; "ANSWER: A and B" or "ANSWER: AB" reads nothing, with no fallback).
  Without any labelled marker: the last capital letter of the whole response, when it is an
  allowed letter, else nothing. So a trailing "ANSWER: D" beats an earlier `\\boxed{A}`,
  `\\boxed{A}` alone reads A, "答案：B" reads B (its last capital), "answer: b" reads nothing, and
  the option's text in place of its letter is wrong. No Math-Verify here.
- Free form: the answer is Math-Verify's display of the whole response (`extract_answer`,
  evalscope/metrics/math/parser.py: `_parse(response, 'output')`: its LaTeX, then plain-expression
  extraction, the first match; a lone percentage keeps its `%`); then `compare_answers(answer,
  gold)` with the metric's defaults (`acc` with `numeric: True`): both parsed as fragments, any
  parsed gold equal to any parsed answer by Math-Verify's strict `verify` (6-digit float rounding,
  no tolerance of its own). A gold Math-Verify cannot parse, or an error of either call, leaves
  the response out of evalscope's mean (`ScoreStatus.EXCLUDED`): here the rules cannot score it
  (a judge error of the rule judge), and the tables' evalscope accuracy leaves it out too.

Each free-form response is one check (`free_form_check`), run by `scoring.pool.CheckPool` in its
warm workers within the judge's `check_cpu_seconds`, never in the stage. One difference is kept on
purpose: evalscope waits 30 s per call and then excludes the response, where a check past
`check_cpu_seconds` (10 s of CPU) is not matched and on record, as under every protocol. Where this project's
antlr 4.9.3 parser fails on percentages, evalscope's 4.13.2 does not: `_percent_atoms` bridges it.
"""

from __future__ import annotations

import contextlib
import re
import string

from olympiad_eval.core.records import InputError
from olympiad_eval.scoring.checks import Verdict
from olympiad_eval.scoring.evalscope import verify

# evalscope/utils/multi_choices.py, verbatim: the marker, a bracketed label, the math typesetting
# before a label, a plain label, a label's words (`_ANSWER_MARKER_RE`, `_BRACKETED_LABEL_RE`,
# `_LATEX_LABEL_PREFIX_RE`, `_PLAIN_LABEL_RE`, `_LABEL_TOKEN_RE`).
_MARKER = re.compile(r"(?i)ANSWER\s*:\s*\**\s*")
_BRACKETED = re.compile(r"[\(\[（【]\s*([A-Za-z\d](?:\s*[,，/、]\s*[A-Za-z\d])*)\s*[\)\]）】]")
_TYPESETTING = re.compile(r"(?:(?:\$+|\\\(|\\(?:boxed|fbox|text|textbf|mathbf|mathrm)\s*\{)\s*)*")
_PLAIN = re.compile(r"([A-Za-z\d][A-Za-z\d ,，/、]*)")
_WORD = re.compile(r"[A-Za-z\d]+")
_CONNECTORS = {"and", "or"}  # stepped over between two labels only

# evalscope/metrics/math/parser.py: a complete number in E notation (lowercase e would parse as
# Euler's number), and a display that Math-Verify wrote in lowercase E notation.
_SCIENTIFIC = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[eE][+-]?[0-9]+")
_SCIENTIFIC_LOWER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)e[+-]?[0-9]+")
EXCLUDED = "evalscope excludes the response"


# ---------------------------------------------------------------- multiple choice


def choice(text: str, options: int) -> str:
    """The letter evalscope reads from `text` (the completion) for a question with `options`
    options, or "" (`''.join(sorted(parse_answers(...)))`, single answer)."""
    allowed = set(string.ascii_uppercase[:options])  # evalscope's `answer_character`, 26 at most here
    label = _last_label(text, allowed)
    if label is None:
        return _last_capital(text, allowed)
    label = label.strip().rstrip(".")
    return label if label in allowed else ""


def _last_capital(text: str, allowed: set[str]) -> str:
    """The fallback: the last upper-case character of the text, when it is an allowed letter."""
    for char in reversed(text):
        if char.isupper():
            return char if char in allowed else ""
    return ""


def _last_label(text: str, allowed: set[str]) -> str | None:
    """The labels after the last marker that some label follows (earlier markers may hold an echoed
    `[LETTER]` or a choice revised later); None when no marker has one."""
    for marker in reversed(list(_MARKER.finditer(text))):
        tail = text[marker.end() :]
        tail = tail[_TYPESETTING.match(tail).end() :]
        for pattern in (_BRACKETED, _PLAIN):
            found = pattern.match(tail)
            if found is None:
                continue
            labels = _leading_labels(found.group(1), allowed)
            if labels:
                return labels
    return None


def _is_label(word: str, allowed: set[str]) -> bool:
    return word in allowed or set(word) <= allowed


def _leading_labels(capture: str, allowed: set[str]) -> str:
    """The part of `capture` up to its last word of a run of labels ("B, not C" -> "B"; "A or B"
    -> "A or B", a connector between two labels; "The answer" -> "")."""
    words = list(_WORD.finditer(capture))
    end = 0
    for index, word in enumerate(words):
        if _is_label(word.group(0), allowed):
            end = word.end()
            continue
        between_labels = end > 0 and index + 1 < len(words) and _is_label(words[index + 1].group(0), allowed)
        if between_labels and word.group(0).lower() in _CONNECTORS:
            continue
        break
    return capture[:end]


# ---------------------------------------------------------------- free form (Math-Verify)


def parse(text: str, mode: str) -> tuple[list, str]:
    """Math-Verify's objects for `text` and its display of them, with evalscope's settings
    (parser.py `_parse`): `fragment` wraps a bare answer in `$...$`, `output` reads a whole response."""
    from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse as math_verify_parse

    text = text.strip()
    if not text:
        return [], ""
    original, scientific = text, _SCIENTIFIC.fullmatch(text)
    if scientific:
        text = f"${text.replace('e', 'E')}$"
    if mode == "fragment" and not text.startswith(("$", r"\(", r"\[", r"\boxed", r"\fbox")):
        text = f"${text}$"
    settings = dict(fallback_mode="first_match", extraction_mode="first_match", parsing_timeout=None)
    with _percent_atoms():
        result = math_verify_parse(
            text, extraction_config=[LatexExtractionConfig(boxed_match_priority=0), ExprExtractionConfig()], **settings
        )
        objects = [item for item in result if not isinstance(item, str)]
        display = next((item for item in result if isinstance(item, str)), "")
        if objects and _SCIENTIFIC_LOWER.fullmatch(display):
            canonical = math_verify_parse(
                f"${display.replace('e', 'E')}$", extraction_config=[LatexExtractionConfig()], **settings
            )
            objects = [item for item in canonical if not isinstance(item, str)]
    if scientific:
        display = original
    if len(objects) == 1 and "%" not in display:
        from math_verify.grader import get_pct_val

        if get_pct_val(objects[0]) is not None:  # the expression fallback drops a percent sign: shown again
            display += "%"
    return objects, display


@contextlib.contextmanager
def _percent_atoms():
    """latex2sympy2_extended 1.11.0's parser built for antlr 4.9.3 (the runtime hydra lets this
    project install; evalscope runs 4.13.2) lacks the `FUNC_GAMMA` atom that its converter asks
    about before a percentage, so `60\\%` fails to parse here where evalscope reads 60/100 (and
    matches a gold 60). While evalscope's parsing runs, such atoms answer "no gamma", as the 4.13.2
    parser's do (the grammars are otherwise the same); other parsing (`mathcheck`) is left as it is."""
    from latex2sympy2_extended.antlr_parser import PSParser

    atom = PSParser.AtomContext
    if hasattr(atom, "FUNC_GAMMA"):
        yield
        return
    atom.FUNC_GAMMA = lambda self: None
    try:
        yield
    finally:
        del atom.FUNC_GAMMA


def require_math_verify() -> None:
    """Refuse to score free form without Math-Verify, rather than read every answer as an error."""
    import importlib.util

    if importlib.util.find_spec("math_verify") is None:
        raise InputError(
            "MATH-Vision's evalscope protocol reads and compares free-form answers with Math-Verify, "
            "as evalscope does: pip install 'olympiad-eval[evalscope]'"
        )


def free_form_check(completion: str, gold: str) -> Verdict:
    """One free-form response (its completion) against the gold, as evalscope scores it: the
    verdict, with the answer it read (`Verdict.answer`); undecided, with why, where evalscope
    excludes the response (a gold Math-Verify cannot parse, an error)."""
    try:
        answer = parse(completion, "output")[1]
    except Exception as error:  # evalscope: MathEvaluationError in extract_answer, the sample excluded
        return Verdict(None, f"{EXCLUDED}: Math-Verify failed on the response: {type(error).__name__}: {error}")
    try:
        predictions = parse(answer, "fragment")[0]
        golds = parse(gold, "fragment")[0] if gold.strip() else []
        if not golds:
            return Verdict(None, f"{EXCLUDED}: Math-Verify cannot parse the gold answer {gold!r}", answer)
        correct = bool(predictions) and any(verify(g, p) for g in golds for p in predictions)
    except Exception as error:  # evalscope: MathEvaluationError in compare_answers, the sample excluded
        return Verdict(
            None,
            f"{EXCLUDED}: Math-Verify failed on {answer!r} against {gold!r}: {type(error).__name__}: {error}",
            answer,
        )
    return Verdict(correct, "", answer)
