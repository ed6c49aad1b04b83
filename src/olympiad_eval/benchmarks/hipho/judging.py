"""HiPhO's LLM judges under our protocol (`olympiad_eval`): the criterion (step level) and
answer-slot questions, and the paper's score from their replies: max(answer level, step level) in
points. The other protocols ask and score their own way (`hipho.evalscope`, `hipho.vlmevalkit`)."""

from __future__ import annotations

from fractions import Fraction

from olympiad_eval.benchmarks.base import JudgeTask, Score
from olympiad_eval.benchmarks.hipho import evalscope, vlmevalkit
from olympiad_eval.benchmarks.hipho.scoring import gold_text, gold_value, reference_answer
from olympiad_eval.benchmarks.judging import Fence, failed_tasks, json_reply
from olympiad_eval.core.records import (
    Problem,
    exact,
)


def parse_awarded(points: float):
    """A parser of `{"awarded": x, "reasoning": ...}` that rejects x outside [0, points]."""

    def parse(text: str) -> dict | None:
        data = json_reply(text, "awarded")
        awarded = data.get("awarded") if data else None
        if isinstance(awarded, bool) or not isinstance(awarded, (int, float)) or not 0 <= awarded <= points + 1e-9:
            return None
        return {"awarded": float(awarded), "reasoning": str(data.get("reasoning", ""))[:1000]}

    return parse


def parse_equivalent(text: str) -> dict | None:
    data = json_reply(text, "equivalent")
    if not data or not isinstance(data.get("equivalent"), bool):
        return None
    return {"equivalent": data["equivalent"], "reasoning": str(data.get("reasoning", ""))[:1000]}


# The third-party protocols, each its own module, which makes its own judge tasks.
THIRD_PARTY = {"vlmevalkit": vlmevalkit, "evalscope": evalscope}


def judge_tasks(problem: Problem, response: str, scoring) -> list[JudgeTask]:
    """Step level: every criterion of every scheme (evalscope, vlmevalkit: their own modules)."""
    if third_party := THIRD_PARTY.get(scoring.protocol):
        return third_party.judge_tasks(problem, response, scoring)
    ask = _asker(problem, response, scoring)
    return [
        JudgeTask(
            f"criterion {s}.{c}",
            ask(scoring.prompts.criterion, criterion=criterion.text, points=f"{criterion.points:g}"),
            parse_awarded(criterion.points),
        )
        for s, scheme in enumerate(problem.marking)
        for c, criterion in enumerate(scheme)
    ]


def judge_tasks_after_rules(problem: Problem, response: str, rules, scoring) -> list[JudgeTask]:
    """Answer level (our protocol): every slot that rules did not find correct but that has an
    answer to compare."""
    if third_party := THIRD_PARTY.get(scoring.protocol):
        return third_party.judge_tasks_after_rules(problem, response, rules, scoring)
    if not isinstance(rules, Score):
        return []
    ask = _asker(problem, response, scoring)
    return [
        _slot_task(ask, problem, index, slot["given"], scoring)
        for index, slot in enumerate(rules.slots)
        if not slot["correct"] and slot["given"] and slot["expected"]
    ]


def judge_tasks_after_rules_at_most(problem: Problem, response: str, scoring) -> list[JudgeTask]:
    """Every slot with an official answer, as if the response answered each and the rules matched
    none (the slot's reference answer stands in for the response's)."""
    if third_party := THIRD_PARTY.get(scoring.protocol):
        return third_party.judge_tasks_after_rules_at_most(problem, response, scoring)
    ask = _asker(problem, response, scoring)
    return [
        _slot_task(ask, problem, index, reference_answer(slot), scoring)
        for index, slot in enumerate(problem.answers)
        if gold_value(slot)
    ]


def judge_tasks_next(problem: Problem, response: str, rules, replies: dict, scoring) -> list[JudgeTask]:
    """Only VLMEvalKit's protocol asks in rounds (answers after the step level, a split answer asked
    again, overflowing criteria)."""
    if scoring.protocol == "vlmevalkit":
        return vlmevalkit.judge_tasks_next(problem, response, rules, replies, scoring)
    return []


def judge_tasks_next_at_most(problem: Problem, response: str, rules, scoring) -> list[JudgeTask]:
    if scoring.protocol == "vlmevalkit":
        return vlmevalkit.judge_tasks_next_at_most(problem, response, rules, scoring)
    return []


def _slot_task(ask, problem: Problem, index: int, given: str, scoring) -> JudgeTask:
    """Whether the answer `given` for slot `index` is the official one."""
    slot = problem.answers[index]
    return JudgeTask(
        f"slot {index}",
        ask(scoring.prompts.answer, reference=gold_text(slot), given=given, unit=slot.unit or "none"),
        parse_equivalent,
    )


def _asker(problem: Problem, response: str, scoring):
    """The messages of one question to the judge: the model's text (the response, the answer read
    from it) fenced, the problem's figures where the suite shows them to the judge."""
    fence = Fence.around(response)
    common = {
        "information": problem.information or "None.",
        "context": problem.context,
        "question": problem.question,
        "response": response,
    }
    images = (
        []
        if not scoring.judge_figures
        else [{"type": "image", "sha256": f.sha256, "path": f.path, "mime": f.mime} for f in problem.figures]
    )

    def ask(prompt, **fields) -> tuple[dict, ...]:
        text = fence.fill(str(prompt.text), {**common, **fields})
        return (
            fence.guard,
            {"role": "user", "content": [{"type": "text", "text": text}, *images]},
        )

    return ask


def combine(problem: Problem, rules, replies: dict, scoring) -> Score | str:
    """Ours: max(answer level, step level) in points, the best scheme winning; with several
    judges, the mean of their scores; points add up exactly (as the decimals they are written as),
    floats only in the returned score. evalscope, vlmevalkit: their own modules."""
    if scoring.protocol == "vlmevalkit":
        return vlmevalkit.combine(problem, rules, replies, scoring)
    if scoring.protocol == "evalscope":
        return evalscope.combine(problem, rules, replies)
    failure = failed_tasks(replies)
    if failure:
        return failure
    if not isinstance(rules, Score):
        return rules
    scores = [_ours(problem, rules, judged) for judged in replies.values()]
    mean = lambda values: sum(values, Fraction(0)) / len(values) if values else None  # noqa: E731
    as_float = lambda value: None if value is None else float(value)  # noqa: E731
    ratio = mean([score for score, _, _ in scores])
    steps = [step for _, _, step in scores if step is not None]
    return Score(
        score=float(ratio),
        points=float(ratio * problem.exact_points),
        parts={
            "answer_points": as_float(mean([answer for _, answer, _ in scores])),
            "step_points": as_float(mean(steps)),
        },
        extracted=rules.extracted,
        slots=rules.slots,
        details=tuple({"judge": name, **judged} for name, judged in replies.items()),
        detail=f"olympiad_eval protocol, {len(scores)} judge(s)",
    )


def _scheme_points(problem: Problem, judged: dict) -> list[tuple[Fraction, Fraction]]:
    """(awarded, attainable) per scheme, exactly; each criterion capped at its points, a scheme at the problem's."""
    return [
        (
            min(
                sum(
                    (
                        min(exact(judged[f"criterion {s}.{c}"]["awarded"]), exact(criterion.points))
                        for c, criterion in enumerate(scheme)
                    ),
                    Fraction(0),
                ),
                problem.exact_points,
            ),
            sum((exact(criterion.points) for criterion in scheme), Fraction(0)),
        )
        for s, scheme in enumerate(problem.marking)
    ]


def _ours(problem: Problem, rules: Score, judged: dict) -> tuple[Fraction, Fraction, Fraction | None]:
    answer = sum(
        (
            exact(slot.points)
            for index, (slot, checked) in enumerate(zip(problem.answers, rules.slots))
            if checked["correct"] or judged.get(f"slot {index}", {}).get("equivalent")
        ),
        Fraction(0),
    )
    schemes = _scheme_points(problem, judged)
    step = max(awarded for awarded, _ in schemes) if schemes else None
    best = max(answer, step or Fraction(0))
    return (best / problem.exact_points if problem.exact_points else Fraction(0)), answer, step
