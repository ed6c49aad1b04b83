"""HiPhO: physics olympiad papers scored in points by official marking schemes.

Release layout (github SciYu/HiPhO): `data/<EXAM>.json`, a list whose element 0 is
`{"information": ...}` (the exam's constants sheet, or "None."), then the problems; figures
under `data/image_question/`. Official score per problem: max(answer-level, step-level) in
points; step-level needs an LLM judge of the marking criteria, so the rule judge scores the
answer level only.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

from olympiad_eval import answers
from olympiad_eval.benchmarks import JudgeTask, Score, delimited, failed_tasks, hipho_evalscope, json_reply
from olympiad_eval.fetch import Fields, load_figure
from olympiad_eval.render import fill
from olympiad_eval.records import InputError, AnswerSlot, Criterion, Figure, Problem, RecordError

if TYPE_CHECKING:  # pandas only types `tables`: the judge stage need not pay its import (0.3 s)
    import pandas as pd

REQUIRED = ("id", "question", "answer", "points")

_TOTAL = re.compile(r"award\s+a\s+total\s+of\s+([\d.]+)\s*pts?", re.I)
_AWARD = re.compile(r"award\s+([\d.]+)\s*pts?", re.I)
_CHINESE = re.compile(r"得\s*([\d.]+)\s*分")


# ---------------------------------------------------------------- loading

def load(root: Path, cfg, benchmark: str) -> list[Problem]:
    data_dir = root / "data"
    exams = sorted(data_dir.glob("*.json"))
    if not exams:
        raise InputError(f"benchmark '{benchmark}': no <EXAM>.json files under {data_dir}")
    problems = []
    for path in exams:
        problems += _load_exam(path, data_dir, cfg, benchmark)
    return problems


def _load_exam(path: Path, data_dir: Path, cfg, benchmark: str) -> list[Problem]:
    try:
        items = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as error:
        raise RecordError(path, "(file)", "(encoding)", f"not UTF-8: byte {error.object[error.start]:#04x} at offset {error.start}") from None
    except json.JSONDecodeError as error:
        raise RecordError(path, "(file)", "(json)", f"invalid JSON: {error}") from None
    if not isinstance(items, list) or not items or "information" not in items[0]:
        raise RecordError(path, "(element 0)", "information", 'an exam file starts with {"information": ...}')
    for index, item in enumerate(items[1:], start=1):
        if not isinstance(item, dict):
            raise RecordError(path, f"(element {index})", "(json)", f"a problem must be a JSON object, got {type(item).__name__}")
    information = str(items[0]["information"]).strip()
    information = "" if information == "None." else information
    language = dict(cfg.get("language_by_exam") or {}).get(path.stem, cfg.get("default_language", "en"))
    problems = [_problem(item, path, data_dir, information, language, benchmark) for item in items[1:]]
    _check_full_marks(problems, path, dict(cfg.get("exams") or {}).get(path.stem) or {})
    return problems


def _check_full_marks(problems: list[Problem], path: Path, exam) -> None:
    """The exam's points must add up to its official full marks, where the config states them."""
    full_marks = exam.get("full_marks")
    total = round(sum(problem.points for problem in problems), 6)
    if full_marks is not None and abs(total - float(full_marks)) > 1e-6:
        raise RecordError(path, "(exam)", "points", f"the problems add up to {total:g} points; the config's full_marks is {full_marks:g}")


def _problem(item: dict, path: Path, data_dir: Path, information: str, language: str, benchmark: str) -> Problem:
    fields = Fields(item, path)
    fields.require(*REQUIRED)
    slots = _answer_slots(fields)
    total = round(sum(slot.points for slot in slots), 6)
    return Problem(
        id=fields.record,
        origin=f"data/{path.name}",
        benchmark=benchmark,
        language=language,
        subset=str(item.get("source") or path.stem),
        question=fields.text("question"),
        context=fields.text("context", required=False),
        information=information,
        figures=tuple(_figures(fields, data_dir)),
        answers=slots,
        marking=_schemes(fields.list("marking"), total, path, fields.record),
        subject=str(item.get("field") or ""),
    )


def _answer_slots(fields: Fields) -> tuple[AnswerSlot, ...]:
    values, points = fields.list("answer"), fields.list("points")
    if len(values) != len(points):
        raise RecordError(fields.where, fields.record, "points", f"{len(points)} points for {len(values)} answers")
    kinds = fields.list("answer_type")
    units = fields.list("unit")  # sometimes shorter than `answer`: missing units are None
    slots = []
    for index, (value, point) in enumerate(zip(values, points)):
        try:
            point = float(point)
        except (TypeError, ValueError):
            raise RecordError(fields.where, fields.record, f"points[{index}]", f"not a number: {point!r}") from None
        kind = kinds[index] if index < len(kinds) else ""
        unit = units[index] if index < len(units) else None
        slots.append(AnswerSlot(value=str(value), kind=str(kind or ""), unit=unit or None, points=point))
    return tuple(slots)


def _schemes(marking, total: float, path: Path, record: str) -> tuple[tuple[Criterion, ...], ...]:
    """Alternative schemes; a flat list of strings is one scheme. Points must add up to the total."""
    if not marking:
        return ()
    schemes = [marking] if all(isinstance(line, str) for line in marking) else marking
    parsed = []
    for number, scheme in enumerate(schemes):
        if not isinstance(scheme, list):
            raise RecordError(path, record, f"marking[{number}]", f"expected a list of criteria, got {type(scheme).__name__}")
        criteria = tuple(_criterion(text, path, record, number, index) for index, text in enumerate(scheme))
        awarded = round(sum(c.points for c in criteria), 6)
        if abs(awarded - total) > 1e-6:
            raise RecordError(path, record, f"marking[{number}]", f"criteria add up to {awarded:g} points, the problem has {total:g}")
        parsed.append(criteria)
    return tuple(parsed)


def criterion_points(text: str) -> float | None:
    """The points a criterion awards, stated in English or Chinese."""
    for pattern in (_TOTAL, _AWARD, _CHINESE):
        match = pattern.search(text)
        if match:
            return float(match.group(1).rstrip("."))
    return None


def _criterion(text: str, path: Path, record: str, scheme: int, index: int) -> Criterion:
    points = criterion_points(str(text))
    if points is None:
        raise RecordError(path, record, f"marking[{scheme}][{index}]", f"no points stated in criterion: {str(text)[:80]!r}")
    return Criterion(text=str(text), points=points)


def _figures(fields: Fields, data_dir: Path) -> list[Figure]:
    return [
        load_figure(fields.path("image_question", data_dir, value=name), release_file=fields.where,
                    record=fields.record, field_name="image_question", name=name)
        for name in fields.list("image_question")
    ]


# ---------------------------------------------------------------- rendering

def template_fields(problem: Problem, suite) -> tuple[str, dict]:
    language = suite.get("prompt_language") or problem.language
    fields = {
        "information": problem.information or "None.",
        "context": problem.context,
        "question": problem.question,
        "problem": problem.question,  # the name VLMEvalKit's wording gives it
    }
    return language, fields


def figures(problem: Problem, suite) -> list[Figure]:
    return list(problem.figures) if suite.get("figures", "all") != "none" else []


def gold_value(slot: AnswerSlot) -> str:
    """The inside of `\\boxed{$...$}`; an accepted range answers with its midpoint."""
    boxes = answers.boxed(slot.value)
    value = (boxes[0] if boxes else slot.value).replace("$", "").strip()
    bounds = re.fullmatch(r"\[\s*([^,]+?)\s*,\s*([^,]+?)\s*\]", value)
    if bounds:
        from olympiad_eval.mathcheck import to_number

        low, high = (to_number(side) for side in bounds.groups())
        if low is not None and high is not None:
            return f"{(low + high) / 2:.6g}"
    return value


def reference(problem: Problem, suite) -> str:
    boxes = ", ".join(f"\\boxed{{{gold_value(slot)}}}" for slot in problem.answers)
    return f"<think>\nReference solution.\n</think>\n<answer>\n[{boxes}]\n</answer>"


# ---------------------------------------------------------------- scoring

def score(problem: Problem, response: str, check, rel_tol: float, cfg=None) -> Score:
    """Answer level: the boxes of the `<answer>` block line up with the answer slots in order."""
    gradable = [slot for slot in problem.answers if gold_value(slot)]  # "" is open-ended: judges only
    extracted = answers.boxed_answers(response, len(problem.answers))
    extracted = extracted + [""] * (len(problem.answers) - len(extracted))
    jobs, indices = [], []
    for index, (slot, given) in enumerate(zip(problem.answers, extracted)):
        if gold_value(slot) and given:
            jobs.append((slot.value, given, rel_tol, slot.unit))
            indices.append(index)
    verdicts = dict(zip(indices, check(jobs)))
    slots, earned, undecided = [], 0.0, []
    for index, (slot, given) in enumerate(zip(problem.answers, extracted)):
        verdict = verdicts.get(index)
        correct = bool(verdict and verdict.correct)
        if verdict is not None and verdict.correct is None:
            undecided.append(f"slot {index + 1}: {verdict.reason}")
        earned += slot.points if correct else 0.0
        slots.append({"expected": gold_value(slot), "given": given, "correct": correct, "points": slot.points})
    return Score(
        score=round(earned / problem.points, 6) if problem.points else 0.0,
        points=round(earned, 6),
        extracted=tuple(extracted),
        slots=tuple(slots),
        detail=f"answer level: {earned:g} of {problem.points:g} points"
        + (f" ({len(problem.answers) - len(gradable)} open-ended slots need an LLM judge)" if len(gradable) < len(problem.answers) else ""),
        undecided=tuple(undecided),
    )


# ---------------------------------------------------------------- LLM judges

PROTOCOLS = ("official", "evalscope")


def parse_awarded(points: float):
    """A parser of `{"awarded": x, "reasoning": ...}` that rejects x outside [0, points]."""

    def parse(text: str) -> dict | None:
        data = json_reply(text)
        awarded = data.get("awarded") if data else None
        if isinstance(awarded, bool) or not isinstance(awarded, (int, float)) or not 0 <= awarded <= points + 1e-9:
            return None
        return {"awarded": float(awarded), "reasoning": str(data.get("reasoning", ""))[:1000]}

    return parse


def parse_equivalent(text: str) -> dict | None:
    data = json_reply(text)
    if not data or not isinstance(data.get("equivalent"), bool):
        return None
    return {"equivalent": data["equivalent"], "reasoning": str(data.get("reasoning", ""))[:1000]}


def judge_tasks(problem: Problem, response: str, rules, cfg) -> list[JudgeTask]:
    """Step level: every criterion of every scheme. Answer level (official protocol): every
    slot that rules did not find correct but that has an answer to compare."""
    protocol = cfg.get("protocol", "official")
    if protocol not in PROTOCOLS:
        raise InputError(f"judge protocol '{protocol}' is not one of {', '.join(PROTOCOLS)} for HiPhO")
    if protocol == "evalscope":
        return hipho_evalscope.judge_tasks(problem, response, rules, cfg)
    fenced, guard = delimited(response)
    common = {"information": problem.information or "None.", "context": problem.context,
              "question": problem.question, "response": fenced}
    images = [] if not cfg.get("figures") else [
        {"type": "image", "sha256": f.sha256, "path": f.path, "mime": f.mime} for f in problem.figures]

    def ask(prompt, **fields) -> tuple[dict, ...]:
        text = fill(str(prompt.text), {**common, **fields})
        return ({"role": "system", "content": guard},
                {"role": "user", "content": [{"type": "text", "text": text}, *images]})

    tasks = [
        JudgeTask(f"criterion {s}.{c}", ask(cfg.prompts.hipho_criterion, criterion=criterion.text,
                                             points=f"{criterion.points:g}"), parse_awarded(criterion.points))
        for s, scheme in enumerate(problem.marking) for c, criterion in enumerate(scheme)
    ]
    if protocol == "official" and isinstance(rules, Score):
        for index, slot in enumerate(rules.slots):
            if not slot["correct"] and slot["given"] and slot["expected"]:
                tasks.append(JudgeTask(f"slot {index}", ask(
                    cfg.prompts.hipho_answer, reference=slot["expected"], given=slot["given"],
                    unit=problem.answers[index].unit or "none"), parse_equivalent))
    return tasks


def combine(problem: Problem, rules, replies: dict, cfg) -> Score | str:
    """Official: max(answer level, step level) in points, the best scheme winning; with several
    judges, the mean of their scores. evalscope: see `hipho_evalscope`."""
    if cfg.get("protocol", "official") == "evalscope":
        return hipho_evalscope.combine(problem, rules, replies)
    failure = failed_tasks(replies)
    if failure:
        return failure
    if not isinstance(rules, Score):
        return rules
    scores = [_official(problem, rules, judged) for judged in replies.values()]
    mean = lambda values: round(sum(values) / len(values), 6) if values else None  # noqa: E731
    steps = [step for _, _, step in scores if step is not None]
    return Score(
        score=mean([score for score, _, _ in scores]),
        points=round(mean([score for score, _, _ in scores]) * problem.points, 6),
        answer_points=mean([answer for _, answer, _ in scores]),
        step_points=mean(steps),
        extracted=rules.extracted,
        slots=rules.slots,
        details=tuple({"judge": name, **judged} for name, judged in replies.items()),
        detail=f"official protocol, {len(scores)} judge(s)",
    )


def _scheme_points(problem: Problem, judged: dict) -> list[tuple[float, float]]:
    """(awarded, attainable) per scheme; each criterion capped at its points, a scheme at the problem's."""
    return [(min(sum(min(judged[f"criterion {s}.{c}"]["awarded"], criterion.points)
                     for c, criterion in enumerate(scheme)), problem.points),
             sum(criterion.points for criterion in scheme))
            for s, scheme in enumerate(problem.marking)]


def _official(problem: Problem, rules: Score, judged: dict) -> tuple[float, float, float | None]:
    answer = sum(slot.points for index, (slot, checked) in enumerate(zip(problem.answers, rules.slots))
                 if checked["correct"] or judged.get(f"slot {index}", {}).get("equivalent"))
    schemes = _scheme_points(problem, judged)
    step = max(awarded for awarded, _ in schemes) if schemes else None
    best = max(answer, step or 0.0)
    return (best / problem.points if problem.points else 0.0), answer, step


# ---------------------------------------------------------------- tables

MEDALS = ("gold", "silver", "bronze")


def medal(score: float, cutoffs) -> str:
    """The official medal of an exam score: the best whose cutoff it reaches (score >= cutoff)."""
    for name in MEDALS:
        if cutoffs.get(name) is not None and round(score, 6) >= float(cutoffs[name]):
            return name
    return ""


def tables(frame: pd.DataFrame, cfg) -> dict[str, pd.DataFrame]:
    """Exam scores in points (the mean over samples; and their standard deviation with several
    samples), with each exam's full marks; medals per exam by the official cutoffs and their counts;
    and the normalised accuracy per exam (points earned / full marks, the evalscope-style number)."""
    rows = ["suite", "model", "judge"]
    exams = {name: dict(value) for name, value in dict(cfg.get("exams") or {}).items()}
    per_sample = frame.groupby([*rows, "subset", "sample"])["points"].sum(min_count=1)
    means = per_sample.groupby([*rows, "subset"]).mean().unstack("subset")
    full_marks = frame.drop_duplicates(["subset", "id"]).groupby("subset")["max_points"].sum()[means.columns]
    scores = means.round(2)
    scores.loc[("full marks", "", ""), :] = full_marks.round(2)
    tables = {"exam_scores": scores.reset_index()}
    if frame["sample"].nunique() > 1:
        tables["exam_scores_std"] = per_sample.groupby([*rows, "subset"]).std(ddof=0).unstack("subset").round(2).reset_index()
    medals = means.apply(lambda column: column.map(lambda score: medal(score, exams.get(column.name, {}))))
    for name in MEDALS:
        medals[name] = (medals[list(means.columns)] == name).sum(axis=1)
    tables["medals"] = medals.reset_index()
    tables["accuracy"] = (100 * means / full_marks).round(1).reset_index()
    return tables
