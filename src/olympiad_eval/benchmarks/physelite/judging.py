"""PhysElite's LLM judges: answer verdicts, graded process steps and error types, combined over the
judges as the paper does."""

from __future__ import annotations

from olympiad_eval.benchmarks.base import JudgeTask, Score
from olympiad_eval.benchmarks.judging import Fence, failed_tasks, json_reply
from olympiad_eval.benchmarks.physelite.prompts import judge_reference
from olympiad_eval.core.records import Problem

VERDICTS = ("correct", "partially_correct", "incorrect")


GRADES = (0.0, 0.5, 1.0)


ERROR_TYPES = (
    "physical_perception",
    "physical_law",
    "algebraic_symbolic",
    "incomplete_derivation",
    "geometric_visual",
    "numerical",
)


def parse_verdict(text: str) -> dict | None:
    """`{"verdict": ..., "reasoning": ...}` with one of the three verdicts, else None."""
    data = json_reply(text, "verdict")
    if not data or data.get("verdict") not in VERDICTS:
        return None
    return {"verdict": data["verdict"], "reasoning": str(data.get("reasoning", ""))[:1000]}


def parse_steps(text: str) -> dict | None:
    """`{"steps": [{"step": ..., "grade": 1 | 0.5 | 0}, ...]}` with at least one step, else None."""
    data = json_reply(text, "steps")
    steps = data.get("steps") if data else None
    if not isinstance(steps, list) or not steps:
        return None
    graded = []
    for step in steps:
        grade = step.get("grade") if isinstance(step, dict) else None
        if isinstance(grade, bool) or not isinstance(grade, (int, float)) or float(grade) not in GRADES:
            return None
        graded.append({"step": str(step.get("step", ""))[:500], "grade": float(grade)})
    return {"steps": graded}


def parse_error_type(text: str) -> dict | None:
    data = json_reply(text, "error_type")
    if not data or data.get("error_type") not in ("none", *ERROR_TYPES):
        return None
    return {"error_type": data["error_type"], "reasoning": str(data.get("reasoning", ""))[:1000]}


def judge_tasks(problem: Problem, response: str, scoring) -> list[JudgeTask]:
    """The answer verdict (the paper's judge prompt) and, unless turned off, the process grading."""
    fence = Fence.around(response)
    fields = {
        "question": problem.question,
        "reference": judge_reference(problem),
        "solution": problem.solution,
        "response": response,
    }

    def ask(prompt) -> tuple[dict, dict]:
        return fence.guard, {"role": "user", "content": fence.fill(str(prompt.text), fields)}

    tasks = [JudgeTask("answer", ask(scoring.prompts.answer), parse_verdict)]
    if scoring.process:
        tasks.append(JudgeTask("process", ask(scoring.prompts.process), parse_steps))
    if scoring.error_types:
        tasks.append(JudgeTask("error_type", ask(scoring.prompts.error_type), parse_error_type))
    return tasks


def judge_tasks_after_rules(problem: Problem, response: str, rules, scoring) -> list[JudgeTask]:
    """None: the judges grade every response whatever the rules made of it."""
    return []


def judge_tasks_after_rules_at_most(problem: Problem, response: str, scoring) -> list[JudgeTask]:
    return []


def combine(problem: Problem, rules, replies: dict, scoring) -> Score | str:
    """Each judge scores on its own; the scores are the mean over judges (the paper's ensemble).
    Answer accuracy is strict: only "correct" counts."""
    failure = failed_tasks(replies)
    if failure:
        return failure
    verdicts = [judged["answer"]["verdict"] for judged in replies.values()]
    correct = sum(verdict == "correct" for verdict in verdicts) / len(verdicts)
    processes = [
        sum(s["grade"] for s in judged["process"]["steps"]) / len(judged["process"]["steps"])
        for judged in replies.values()
        if "process" in judged
    ]
    top = max(VERDICTS, key=verdicts.count)
    majority = top if verdicts.count(top) * 2 > len(verdicts) else "split"
    return Score(
        score=round(correct, 6),
        points=round(correct * problem.points, 6),
        verdict=majority,
        parts={"process": round(sum(processes) / len(processes), 6) if processes else None},
        details=tuple(
            {"judge": name, **{key: reply for key, reply in judged.items()}} for name, judged in replies.items()
        ),
        detail=f"{len(verdicts)} judges: " + ", ".join(verdicts),
    )
