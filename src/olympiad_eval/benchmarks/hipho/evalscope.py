"""HiPhO scored as evalscope 1.14.1 scores it (`protocol: evalscope`), for numbers published with it.

What evalscope's `hipho` benchmark does (evalscope/benchmarks/hipho/hipho_adapter.py, `HiPhOAdapter`;
helpers in evalscope/benchmarks/hipho/utils.py), and what this module copies:

- What evalscope grades is the response's text without its first `<think>...</think>` block, which
  its message model moves into a separate reasoning part (evalscope/api/messages/utils.py
  `parse_content_with_reasoning`, applied by `ChatMessageAssistant.extract_reasoning`): `completion`.
- One regime per problem, never both. A problem with a marking scheme is graded at the step level
  only; one without, at the answer level only (`_build_cases`). No max(answer, step).
- Step level (`_build_step_cases`, `_reduce_step`): one judge request per criterion of every scheme,
  with evalscope's prompt (`STEP_JUDGE_PROMPT`: question, the completion, the criterion; no
  context, constants sheet or figures) and a JSON reply `{"awarded": x}`, 0 <= x <= the criterion's
  points (a pydantic bound, so an award out of range is an invalid reply, never capped). A
  criterion's points are the LARGEST number its text states after "award", "给", "得" or "扣"
  (`criterion_points`); a criterion where none is found counts 0 and is not judged. That regex
  misses "Award a total of X pt" (the words between "award" and the number): such a criterion is
  worth the largest of its partial awards instead, or 0. We copy the bug here; the official
  protocol parses the total. Per scheme awarded / attainable (the sum of the parsed points); the
  problem's score is the best ratio.
- Answer level (`_build_answer_cases`, `_reduce_answer`): the boxes of the whole completion in order
  (`extract_boxed_answers`), the last n for n slots, filling the FIRST slots when fewer; the gold is
  a slot's last boxed payload (`strip_boxed`). Each slot is checked by `compare_answers`
  (evalscope/metrics/math/parser.py: Math-Verify 0.9.0, strict, 6-digit float rounding; an accepted
  range is an interval, which no number equals), and a non-empty answer the rule did not match is
  asked of the judge (`ANSWER_JUDGE_PROMPT`, JSON `{"correct": true|false}`). Score: the fraction of
  slots right, unweighted by their points. A gold Math-Verify cannot parse (`InvalidMathReference`),
  or a comparison that fails or takes over 30 s (`MathEvaluationError`; each comparison runs in a
  forked child with that deadline) makes the whole problem unscorable: evalscope leaves it out of
  the mean.
- A judge reply that breaks the JSON contract leaves the problem out of the mean (no score); with
  several judges the mean of their ratios.
- Metric: `acc`, the mean of these per-problem ratios per exam (subset).

The answer level's boxes are read by `hipho.score` (`final_boxes`), which under this protocol uses
`boxed_answers(completion(response))` from here: evalscope's extraction.
"""

from __future__ import annotations

import functools
import re

from olympiad_eval.benchmarks.base import JudgeTask, Score
from olympiad_eval.benchmarks.judging import Fence, failed_tasks, harness_prompt
from olympiad_eval.core.records import InputError, Problem
from olympiad_eval.scoring.evalscope import completion, verify
from olympiad_eval.scoring.pool import ended_by_cpu_limit, limit_cpu

# evalscope/benchmarks/hipho/utils.py `_CRITERION_POINTS_RE`, verbatim (the "a total of" bug included).
_CRITERION_POINTS = re.compile(r"(?:award|給|给|得|扣)\s*\$?\s*([0-9]*\.?[0-9]+)\s*\$?\s*(?:pts?|points?|分)", re.I)
# evalscope/api/messages/utils.py `parse_content_with_reasoning`: the first think block, anywhere.
_SCIENTIFIC = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[eE][+-]?[0-9]+")
_SCIENTIFIC_LOWER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)e[+-]?[0-9]+")
PROMPTS = {"criterion": "hipho_evalscope_step_judge", "answer": "hipho_evalscope_answer_judge"}


class Unscorable(Exception):
    """evalscope leaves the problem out of its mean (a gold Math-Verify cannot parse, a comparison
    that fails or misses the deadline)."""


# ---------------------------------------------------------------- evalscope's parsing


def criterion_points(text: str) -> float:
    """The largest points the criterion states after award/给/得/扣, else 0 (evalscope's
    `criterion_points`). "Award a total of 1.0 pt: award 0.4 pt if ..." gives 0.4: evalscope's bug."""
    return max((float(value) for value in _CRITERION_POINTS.findall(text)), default=0.0)


def boxed_answers(text: str) -> list[str]:
    """Every top-level `\\boxed{}`/`\\fbox{}` payload in order; an unclosed box ends the list
    (evalscope/metrics/math/parser.py `_boxed_parts`)."""
    from latex2sympy2_extended.math_normalization import extract_boxed_content

    parts, end = [], 0
    for match in re.finditer(r"\\(?:boxed|fbox)\s*\{", text):
        if match.start() < end:
            continue
        depth = 1
        for index in range(match.end(), len(text)):
            depth += {"{": 1, "}": -1}.get(text[index], 0)
            if depth == 0:
                parts.append(extract_boxed_content(text[match.start() : index + 1], mode="all"))
                end = index + 1
                break
        else:
            break
    return parts


def gold(value: str) -> str:
    """A slot's official answer as evalscope compares it: the last boxed payload, else the text
    (`strip_boxed`)."""
    boxes = boxed_answers(value)
    return boxes[-1] if boxes else value.strip()


def _parse(text: str) -> list:
    """Math-Verify's objects for one answer, with evalscope's settings (parser.py `_parse`, mode
    'fragment')."""
    from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse

    text = text.strip()
    if not text:
        return []
    if _SCIENTIFIC.fullmatch(text):  # evalscope: lowercase e would be Euler's number
        text = f"${text.replace('e', 'E')}$"
    if not text.startswith(("$", r"\(", r"\[", r"\boxed", r"\fbox")):
        text = f"${text}$"
    config = dict(fallback_mode="first_match", extraction_mode="first_match", parsing_timeout=None)
    result = parse(
        text, extraction_config=[LatexExtractionConfig(boxed_match_priority=0), ExprExtractionConfig()], **config
    )
    objects = [item for item in result if not isinstance(item, str)]
    display = next((item for item in result if isinstance(item, str)), "")
    if objects and _SCIENTIFIC_LOWER.fullmatch(display):
        canonical = parse(f"${display.replace('e', 'E')}$", extraction_config=[LatexExtractionConfig()], **config)
        objects = [item for item in canonical if not isinstance(item, str)]
    return objects


def rule_match(given: str, official: str) -> bool:
    """evalscope's `compare_answers(given, official)` with its defaults: any parsed gold equals any
    parsed answer by Math-Verify's strict `verify`, in a forked process with evalscope's deadline.
    Raises `Unscorable` where evalscope excludes the problem: a gold that does not parse (even
    against an empty answer), a failing comparison, a comparison past the deadline."""
    try:
        import math_verify  # noqa: F401
    except ImportError:
        raise InputError(
            "HiPhO's evalscope protocol checks answers with Math-Verify, as evalscope does: "
            "pip install 'olympiad-eval[evalscope]'"
        ) from None
    return _isolated(_compare, given, official)


def _compare(given: str, official: str) -> bool:
    predictions, golds = _parse(given), _parse(official)
    if not golds:
        raise Unscorable(f"Math-Verify cannot parse the official answer {official!r}")
    return any(verify(g, p) for g in golds for p in predictions)


# evalscope/metrics/math/parser.py MATH_DEADLINE_S: Math-Verify can backtrack for minutes on some
# answers, so evalscope runs each comparison in a forked child and excludes the sample past it.
# Here the deadline is the child's CPU time, as every check's budget is (`scoring.pool`): evalscope
# counts wall time, which would let a busy machine exclude what an idle one scores.
MATH_DEADLINE_S = 30


def _isolated(function, *args):
    """`function(*args)` in a forked child with evalscope's deadline (isolation.py `run_isolated`), in
    CPU seconds; in-process where fork is unavailable, as there. Math-Verify is loaded first, so
    children inherit it."""
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods() or multiprocessing.current_process().daemon:
        return _outcome(*_run(function, args))
    _warm_up()
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_send, args=(sender, function, args), daemon=True)
    try:
        child.start()
        sender.close()
        return _outcome(*receiver.recv())
    except EOFError:
        child.join()
        if ended_by_cpu_limit(child.exitcode):
            raise Unscorable(f"Math-Verify took over {MATH_DEADLINE_S} s of CPU on {args!r}") from None
        raise Unscorable(f"Math-Verify's process ended without a result on {args!r}") from None
    finally:
        receiver.close()
        if child.pid is not None:
            child.kill()
            child.join()


@functools.cache
def _warm_up() -> None:
    """Sympy and Math-Verify's grammar loaded once, before the first fork: children inherit them."""
    _parse("0")


def _run(function, args) -> tuple[bool, object]:
    try:
        return True, function(*args)
    except Unscorable as error:
        return False, str(error)
    except Exception as error:  # evalscope: MathEvaluationError, the sample excluded
        return False, f"Math-Verify failed on {args!r}: {type(error).__name__}: {error}"


def _send(sender, function, args) -> None:
    limit_cpu(MATH_DEADLINE_S)
    try:
        sender.send(_run(function, args))
    finally:
        sender.close()


def _outcome(ok: bool, value):
    if not ok:
        raise Unscorable(value)
    return value


# ---------------------------------------------------------------- judge requests


def parse_awarded(points: float):
    """`{"awarded": x}` with 0 <= x <= points (evalscope's StepGrade schema); else invalid."""

    def parse(text: str) -> dict | None:
        data = _one_object(text)
        awarded = data.get("awarded") if data else None
        if isinstance(awarded, str):
            try:
                awarded = float(awarded)
            except ValueError:
                return None
        if isinstance(awarded, bool) or not isinstance(awarded, (int, float)) or not 0 <= awarded <= points:
            return None
        return {"awarded": float(awarded)}

    return parse


def parse_correct(text: str) -> dict | None:
    """`{"correct": true|false}` (evalscope's AnswerVerdict schema); else invalid."""
    data = _one_object(text)
    if not data or not isinstance(data.get("correct"), bool):
        return None
    return {"correct": data["correct"]}


def _one_object(text: str) -> dict | None:
    """The reply's JSON object when it holds exactly one at top level, as evalscope's contract
    requires (`_payloads`); two verdicts in one reply are invalid."""
    import json

    found, depth, start, in_string, escaped = [], 0, 0, False, False
    for index, char in enumerate(text or ""):
        if in_string:
            escaped, in_string = (False, True) if escaped else (char == "\\", char != '"')
        elif char == '"':
            in_string = True
        elif char == "{":
            start = index if depth == 0 else start
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0:
                found.append(text[start : index + 1])
    if len(found) != 1:
        return None
    try:
        data = json.loads(found[0])
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def _prompt(scoring, key: str) -> str:
    asks = "HiPhO's evalscope protocol asks with evalscope"
    return str(harness_prompt(scoring, key, PROMPTS, asks, "hipho_evalscope").text)


def _ask(fence: Fence, template: str, fields: dict) -> tuple[dict, ...]:
    """evalscope's prompt as one user message, no figures; where evalscope sends it alone, the
    model's text in it is fenced and the fence's system message comes first (the words around it
    are evalscope's own: bench/evalscope_agreement.py compares them with the fence taken out)."""
    return fence.guard, {"role": "user", "content": fence.fill(template, fields)}


def judge_tasks(problem: Problem, response: str, scoring) -> list[JudgeTask]:
    """Every criterion worth parsed points, where the problem has marking schemes."""
    if not problem.marking:
        return []
    template, fence = _prompt(scoring, "criterion"), Fence.around(response)
    return [
        JudgeTask(
            f"criterion {s}.{c}",
            _ask(
                fence,
                template,
                {
                    "question": problem.question,
                    "response": completion(response),
                    "criterion": criterion.text,
                    "points": repr(points),
                },
            ),
            parse_awarded(points),
        )
        for s, scheme in enumerate(problem.marking)
        for c, criterion in enumerate(scheme)
        if (points := criterion_points(criterion.text)) > 0
    ]


def judge_tasks_after_rules(problem: Problem, response: str, rules, scoring) -> list[JudgeTask]:
    """Without marking schemes: the answer slots whose non-empty answer the rule check did not match."""
    if problem.marking or not isinstance(rules, Score):
        return []
    template = _prompt(scoring, "answer")
    try:
        unmatched = _unmatched_slots(problem, rules)
    except Unscorable:
        return []  # `combine` says why
    fence = Fence.around(response)
    return [_slot_task(fence, template, problem, index, given, official) for index, given, official in unmatched]


def judge_tasks_after_rules_at_most(problem: Problem, response: str, scoring) -> list[JudgeTask]:
    """Without marking schemes: every slot with an official answer, as if each were answered and
    Math-Verify matched none (the official answer stands in for the response's)."""
    if problem.marking:
        return []
    template = _prompt(scoring, "answer")
    officials = [(index, gold(slot.value)) for index, slot in enumerate(problem.answers)]
    fence = Fence.around(response)
    return [
        _slot_task(fence, template, problem, index, official, official) for index, official in officials if official
    ]


def _slot_task(fence: Fence, template: str, problem: Problem, index: int, given: str, official: str) -> JudgeTask:
    return JudgeTask(
        f"slot {index}",
        _ask(fence, template, {"question": problem.question, "given": given, "reference": official}),
        parse_correct,
    )


def _unmatched_slots(problem: Problem, rules: Score) -> list[tuple[int, str, str]]:
    """(index, answer, gold) of the slots the rule check did not match and that have an answer."""
    unmatched = []
    for index, slot in enumerate(problem.answers):
        given, official = _given(rules, index), gold(slot.value)
        if not rule_match(given, official) and given:
            unmatched.append((index, given, official))
    return unmatched


def _given(rules: Score, index: int) -> str:
    return str(rules.slots[index]["given"]) if index < len(rules.slots) else ""


# ---------------------------------------------------------------- scores


def combine(problem: Problem, rules, replies: dict) -> Score | str:
    """The per-problem ratio in [0, 1] (the mean over judges), or why evalscope would leave the
    problem out of its mean."""
    failure = failed_tasks(replies)
    if failure:
        return failure
    if not isinstance(rules, Score):
        return rules
    if not problem.marking and not problem.answers:
        return "evalscope protocol: no official answer (evalscope excludes the problem)"
    try:
        ratios = [
            (step_ratio if problem.marking else answer_ratio)(problem, rules, judged) for judged in replies.values()
        ]
    except Unscorable as error:
        return f"evalscope protocol: {error} (evalscope excludes the problem)"
    ratio = sum(ratios) / len(ratios)
    regime = "step" if problem.marking else "answer"
    slots = (
        rules.slots
        if problem.marking
        else tuple(  # the rules' verdicts are Math-Verify's here
            {**slot, "correct": rule_match(_given(rules, index), gold(answer.value))}
            for index, (slot, answer) in enumerate(zip(rules.slots, problem.answers))
        )
    )
    return Score(
        score=ratio,
        points=ratio * problem.points,
        parts={
            "answer_points": None if problem.marking else ratio * problem.points,
            "step_points": ratio * problem.points if problem.marking else None,
        },
        extracted=rules.extracted,
        slots=slots,
        details=tuple({"judge": name, **judged} for name, judged in replies.items()),
        detail=f"evalscope protocol ({regime} level), {len(ratios)} judge(s)",
    )


def step_ratio(problem: Problem, rules: Score, judged: dict) -> float:
    """The best scheme's awarded / attainable, in evalscope's parsed points (`_reduce_step`)."""
    best = 0.0
    for s, scheme in enumerate(problem.marking):
        awarded = attainable = 0.0
        for c, criterion in enumerate(scheme):
            points = criterion_points(criterion.text)
            if points > 0:
                attainable += points
                awarded += judged[f"criterion {s}.{c}"]["awarded"]
        if attainable > 0:
            best = max(best, awarded / attainable)
    return best


def answer_ratio(problem: Problem, rules: Score, judged: dict) -> float:
    """The fraction of slots right by the rule check or, failing it, by the judge (`_reduce_answer`)."""
    right = sum(
        rule_match(_given(rules, index), gold(slot.value)) or bool(judged.get(f"slot {index}", {}).get("correct"))
        for index, slot in enumerate(problem.answers)
    )
    return right / len(problem.answers)
