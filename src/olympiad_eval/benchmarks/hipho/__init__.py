"""HiPhO: physics olympiad papers scored in points by official marking schemes.

Release layout (github SciYu/HiPhO): `data/<EXAM>.json`, a list whose element 0 is
`{"information": ...}` (the exam's constants sheet, or "None."), then the problems; figures
under `data/image_question/`. Official score per problem: max(answer-level, step-level) in
points; step-level needs an LLM judge of the marking criteria, so the rule judge scores the
answer level only.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from olympiad_eval.benchmarks import (
    Filter,
    JudgeTask,
    ReportChart,
    ReportSection,
    ReportTable,
    Score,
    Scoring as BaseScoring,
    Suite as BaseSuite,
    choices,
    delimited,
    failed_tasks,
    json_reply,
)
from olympiad_eval.benchmarks.hipho import evalscope as hipho_evalscope
from olympiad_eval.benchmarks.release import Fields, as_points, as_text, load_figure
from olympiad_eval.core.records import (
    AnswerSlot,
    Criterion,
    Figure,
    InputError,
    Problem,
    RecordError,
    check_no_surrogates,
    exact,
)
from olympiad_eval.core.templates import fill
from olympiad_eval.scoring import answers
from olympiad_eval.scoring.checks import Check, Equivalence

if TYPE_CHECKING:  # pandas only types `tables`: the judge stage need not pay its import (0.3 s)
    import pandas as pd

REQUIRED = ("id", "question", "answer", "points")
_SLACK = Fraction(1, 10**6)  # points written with more decimals than the release uses (1/3 as 0.3333333) still add up

# See `benchmarks/__init__.py`: bump a version with any change that can alter a verdict or a score.
PROTOCOL_VERSIONS = {"official": 3, "evalscope": 3}
PARTS = ("answer_points", "step_points")  # answer and step level, in points (where the protocol has them)

_TOTAL = re.compile(r"award\s+a\s+total\s+of\s+([\d.]+)\s*pts?", re.I)
_AWARD = re.compile(r"award\s+([\d.]+)\s*pts?", re.I)
_CHINESE = re.compile(r"得\s*([\d.]+)\s*分")


# ---------------------------------------------------------------- suites

Figures = choices("Figures", ("all", "none"))


@dataclass
class Scoring(BaseScoring):
    """official: the paper's protocol (VLMEvalKit's HiPhO verifier and its judges); evalscope:
    evalscope 1.14.1's (`hipho_evalscope`). Prompts: `criterion` (step level) and `answer`."""

    rel_tol: float = 0.0  # HiPhO states accepted ranges [a, b] instead
    judge_figures: bool = False  # show the problem's figures to the criterion judge


@dataclass
class Suite(BaseSuite):
    prompt_language: Optional[str] = None  # null: the problem's language picks the template
    figures: Figures = Figures.all
    exams: Optional[list[str]] = None  # only these exams (IPhO_2025: the release's data/<EXAM>.json); null: all
    scoring: Scoring = field(default_factory=Scoring)


def filters(suite) -> list[Filter]:
    """HiPhO's own part of the release: `exams`, by the exam a problem is from (its subset)."""
    return [Filter("exams", suite.exams, lambda problem: (problem.subset,))]


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
        raise RecordError(
            path, "(file)", "(encoding)", f"not UTF-8: byte {error.object[error.start]:#04x} at offset {error.start}"
        ) from None
    except json.JSONDecodeError as error:
        raise RecordError(path, "(file)", "(json)", f"invalid JSON: {error}") from None
    if not isinstance(items, list) or not items or "information" not in items[0]:
        raise RecordError(path, "(element 0)", "information", 'an exam file starts with {"information": ...}')
    for index, item in enumerate(items[1:], start=1):
        if not isinstance(item, dict):
            raise RecordError(
                path, f"(element {index})", "(json)", f"a problem must be a JSON object, got {type(item).__name__}"
            )
    for index, item in enumerate(items):
        record = str(item.get("id") or f"(element {index})") if isinstance(item, dict) else f"(element {index})"
        check_no_surrogates(item, path, record)
    information = str(items[0]["information"]).strip()
    information = "" if information == "None." else information
    language = dict(cfg.get("language_by_exam") or {}).get(path.stem, cfg.get("default_language", "en"))
    problems = [_problem(item, path, data_dir, information, language, benchmark) for item in items[1:]]
    for problem in problems:
        _check_gradable(problem, path)
    _check_full_marks(problems, path, dict(cfg.get("exams") or {}).get(path.stem) or {})
    return problems


def _check_full_marks(problems: list[Problem], path: Path, exam) -> None:
    """The exam's points must add up to its official full marks, where the config states them."""
    full_marks = exam.get("full_marks")
    total = sum((problem.exact_points for problem in problems), Fraction(0))
    if full_marks is not None and abs(total - exact(full_marks)) > _SLACK:
        raise RecordError(
            path,
            "(exam)",
            "points",
            f"the problems add up to {float(total):g} points; the config's full_marks is {full_marks:g}",
        )


def _problem(item: dict, path: Path, data_dir: Path, information: str, language: str, benchmark: str) -> Problem:
    fields = Fields(item, path)
    fields.require(*REQUIRED)
    slots = _answer_slots(fields)
    total = sum((exact(slot.points) for slot in slots), Fraction(0))
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
        at = {"where": fields.where, "record": fields.record}
        kind = as_text(
            kinds[index] if index < len(kinds) else None, **at, field_name=f"answer_type[{index}]", required=False
        )
        unit = as_text(units[index] if index < len(units) else None, **at, field_name=f"unit[{index}]", required=False)
        slots.append(
            AnswerSlot(
                value=as_text(value, **at, field_name=f"answer[{index}]"),
                kind=kind,
                unit=unit or None,
                points=as_points(point, **at, field_name=f"points[{index}]"),
            )
        )
    return tuple(slots)


def _check_gradable(problem: Problem, where: Path) -> None:
    """An empty gold answer is an open-ended slot that only a marking scheme can award (the answer
    judge compares with the gold): without one, nothing could ever award its points."""
    if problem.marking:
        return
    for index, slot in enumerate(problem.answers):
        if not gold_value(slot):
            raise RecordError(
                where,
                problem.id,
                f"answer[{index}]",
                f"empty ({slot.value!r}), and the problem has no marking scheme: nothing could award its points",
            )


def _schemes(marking, total: Fraction, path: Path, record: str) -> tuple[tuple[Criterion, ...], ...]:
    """Alternative schemes; a flat list of strings is one scheme. Points must add up to the total."""
    if not marking:
        return ()
    schemes = [marking] if all(isinstance(line, str) for line in marking) else marking
    parsed = []
    for number, scheme in enumerate(schemes):
        if not isinstance(scheme, list):
            raise RecordError(
                path, record, f"marking[{number}]", f"expected a list of criteria, got {type(scheme).__name__}"
            )
        criteria = tuple(_criterion(text, path, record, number, index) for index, text in enumerate(scheme))
        awarded = sum((exact(c.points) for c in criteria), Fraction(0))
        if abs(awarded - total) > _SLACK:
            raise RecordError(
                path,
                record,
                f"marking[{number}]",
                f"criteria add up to {float(awarded):g} points, the problem has {float(total):g}",
            )
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
        raise RecordError(
            path, record, f"marking[{scheme}][{index}]", f"no points stated in criterion: {str(text)[:80]!r}"
        )
    return Criterion(text=str(text), points=points)


def _figures(fields: Fields, data_dir: Path) -> list[Figure]:
    return [
        load_figure(
            fields.path("image_question", data_dir, value=name),
            release_file=fields.where,
            record=fields.record,
            field_name="image_question",
            name=name,
        )
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


_FIGURE_MARKER = re.compile(r"\[figure(\d+)\]")


def figures(problem: Problem, suite) -> dict[int, Figure]:
    """The figures sent with the prompt, by their own number. The release numbers a paper's figures
    across the whole problem and lists a record only the ones it needs, in their numbers' order, so
    the k-th figure listed is the k-th number its text cites (IPhO_2025_1_C_4 lists two figures and
    cites [figure2] and [figure3]); its image names number them within a part, not in the paper
    (`IPhO_2025_2_b_1.png` is Fig. 3). Where the text cites another count of numbers than it lists
    figures, the N-th figure listed is number N."""
    if suite.figures == "none":
        return {}
    cited = sorted(
        {int(number) for text in (problem.context, problem.question) for number in _FIGURE_MARKER.findall(text)}
    )
    numbers = cited if len(cited) == len(problem.figures) else range(1, len(problem.figures) + 1)
    return dict(zip(numbers, problem.figures))


# The one reading of a slot's gold answer that the answer judge, `reference` and the rule check share.
# The release wraps it as `\boxed{$...$}`, and also: a box without `$`, text inside the box around the
# math (`\boxed{[6.32, 6.34] for $v_{r,1}$}`), a `$` the box leaves outside
# (`\boxed{$\gamma = \sqrt{...}}$`), a box that is never closed (`\boxed{$\omega^2 = ...$`), a box inside
# `$...$`, text outside the box, and no box at all; "" is an open-ended slot (judges only).
_BOX_OPENS = re.compile(r"\\(?:boxed|fbox)\s*\{")
# An accepted range `[a, b]`, labelled or not (`[0.94, 0.96] for R_1`), as mathcheck's rule 4 reads it.
_ACCEPTED_RANGE = re.compile(r"\[\s*([^,\[\]]+?)\s*,\s*([^,\[\]]+?)\s*\](?:\s+for\b.*)?", re.S)


def gold_text(slot: AnswerSlot) -> str:
    """The official answer as written, without its box: what an official answer judge is shown
    (VLMEvalKit's judge sees the box's content). Several boxes are one answer, joined by commas; an
    unclosed box runs to the end; text outside the box is not the answer. A `$` that the box cut
    from its pair is dropped, so that the math reads whole."""
    text = slot.value.strip()
    boxes = _outer_boxes(text)
    inside = ", ".join(boxes) if boxes else text
    if inside.count("$") % 2:
        inside = inside.replace("$", "")
    return inside.strip()


def _outer_boxes(text: str) -> list[str]:
    """The contents of the boxes not inside another box; a box never closed runs to the end."""
    found, position = [], 0
    while opened := _BOX_OPENS.search(text, position):
        depth, index = 1, opened.end()
        while index < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[index], 0)
            index += 1
        found.append(text[opened.end() : index - 1] if depth == 0 else text[opened.end() :])
        position = index
    return found


def gold_value(slot: AnswerSlot) -> str:
    """The gold answer that rules compare with: the official text without `$`. A range stays a
    range: rules and judges accept any value inside it."""
    return " ".join(gold_text(slot).replace("$", "").split())


def accepted_range(slot: AnswerSlot) -> tuple[float, float] | None:
    """The bounds of a slot whose gold is an accepted range, else None."""
    bounds = _ACCEPTED_RANGE.fullmatch(gold_value(slot))
    if not bounds:
        return None
    from olympiad_eval.scoring.expressions import to_number  # sympy's import only where a range needs it

    low, high = (to_number(side) for side in bounds.groups())
    return (min(low, high), max(low, high)) if low is not None and high is not None else None


def reference_answer(slot: AnswerSlot) -> str:
    """What the `reference` model answers for a slot: the gold value; for a range, its midpoint."""
    bounds = accepted_range(slot)
    if bounds is None:
        return gold_value(slot)
    middle = (bounds[0] + bounds[1]) / 2
    return f"{middle:.6g}" if bounds[0] <= float(f"{middle:.6g}") <= bounds[1] else repr(middle)


def reference(problem: Problem, suite) -> str:
    boxes = ", ".join(f"\\boxed{{{reference_answer(slot)}}}" for slot in problem.answers)
    return f"<think>\nReference solution.\n</think>\n<answer>\n[{boxes}]\n</answer>"


# ---------------------------------------------------------------- scoring


def rule_checks(problem: Problem, response: str, scoring) -> list[Check]:
    """Each slot's answer against its gold, where both are given (evalscope's protocol checks with
    Math-Verify instead, as evalscope does: `hipho_evalscope`)."""
    if scoring.protocol == "evalscope":
        return []
    return [
        Equivalence(gold_value(slot), given, scoring.rel_tol, slot.unit)
        for slot, given in zip(problem.answers, _extracted(problem, response, scoring))
        if _checked(slot, given)
    ]


def rule_score(problem: Problem, response: str, scoring, verdicts: list) -> Score:
    """Answer level: the boxes of the `<answer>` block line up with the answer slots in order; with
    fewer boxes than slots, they fill the slots the protocol's own code fills (`aligned`)."""
    gradable = [slot for slot in problem.answers if gold_value(slot)]  # "" is open-ended: judges only
    extracted = _extracted(problem, response, scoring)
    checked = scoring.protocol != "evalscope"
    verdict_of = iter(verdicts)
    slots, earned, undecided = [], Fraction(0), []
    for index, (slot, given) in enumerate(zip(problem.answers, extracted)):
        verdict = next(verdict_of) if checked and _checked(slot, given) else None
        correct = bool(verdict and verdict.correct)
        if verdict is not None and verdict.correct is None:
            undecided.append(f"slot {index + 1}: {verdict.reason}")
        earned += exact(slot.points) if correct else 0
        slots.append({"expected": gold_value(slot), "given": given, "correct": correct, "points": slot.points})
    total = problem.exact_points
    return Score(
        score=float(earned / total) if total else 0.0,
        points=float(earned),
        extracted=tuple(extracted),
        slots=tuple(slots),
        detail=f"answer level: {float(earned):g} of {problem.points:g} points"
        + (
            f" ({len(problem.answers) - len(gradable)} open-ended slots need an LLM judge)"
            if len(gradable) < len(problem.answers)
            else ""
        ),
        undecided=tuple(undecided),
    )


def _extracted(problem: Problem, response: str, scoring) -> list[str]:
    slots = len(problem.answers)
    return aligned(final_boxes(response, slots, scoring.protocol), slots, scoring.protocol)


def _checked(slot: AnswerSlot, given: str) -> bool:
    return bool(gold_value(slot) and given)


def final_boxes(response: str, slots: int, protocol_name: str) -> list[str]:
    """The last boxes, one per slot at most: those of the `<answer>` block when it has any, else of
    the whole response (the official code's reading); evalscope reads the whole response without
    its first think block."""
    if protocol_name == "evalscope":
        boxes = hipho_evalscope.boxed_answers(hipho_evalscope.completion(response))
        return boxes[-slots:] if slots else boxes
    return answers.boxed_answers(response, slots)


def aligned(boxes: list[str], slots: int, protocol_name: str) -> list[str]:
    """One answer per slot. With fewer boxes than slots, VLMEvalKit's HiPhO verifier (the official
    code: `get_answer_str` pads in front of the last boxes) gives them to the last slots; evalscope
    to the first. The slots left over are answered by "" (nothing to check)."""
    missing = [""] * (slots - len(boxes))
    return boxes + missing if protocol_name == "evalscope" else missing + boxes


# ---------------------------------------------------------------- LLM judges


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


def judge_tasks(problem: Problem, response: str, scoring) -> list[JudgeTask]:
    """Step level: every criterion of every scheme (evalscope: see `hipho_evalscope`)."""
    if scoring.protocol == "evalscope":
        return hipho_evalscope.judge_tasks(problem, response, scoring)
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
    """Answer level (official protocol): every slot that rules did not find correct but that has
    an answer to compare."""
    if scoring.protocol == "evalscope":
        return hipho_evalscope.judge_tasks_after_rules(problem, response, rules, scoring)
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
    if scoring.protocol == "evalscope":
        return hipho_evalscope.judge_tasks_after_rules_at_most(problem, response, scoring)
    ask = _asker(problem, response, scoring)
    return [
        _slot_task(ask, problem, index, reference_answer(slot), scoring)
        for index, slot in enumerate(problem.answers)
        if gold_value(slot)
    ]


def _slot_task(ask, problem: Problem, index: int, given: str, scoring) -> JudgeTask:
    """Whether the answer `given` for slot `index` is the official one."""
    slot = problem.answers[index]
    return JudgeTask(
        f"slot {index}",
        ask(scoring.prompts.answer, reference=gold_text(slot), given=given, unit=slot.unit or "none"),
        parse_equivalent,
    )


def _asker(problem: Problem, response: str, scoring):
    """The messages of one question to the judge: the response fenced, the problem's figures where
    the suite shows them to the judge."""
    fenced, guard = delimited(response)
    common = {
        "information": problem.information or "None.",
        "context": problem.context,
        "question": problem.question,
        "response": fenced,
    }
    images = (
        []
        if not scoring.judge_figures
        else [{"type": "image", "sha256": f.sha256, "path": f.path, "mime": f.mime} for f in problem.figures]
    )

    def ask(prompt, **fields) -> tuple[dict, ...]:
        text = fill(str(prompt.text), {**common, **fields})
        return (
            {"role": "system", "content": guard},
            {"role": "user", "content": [{"type": "text", "text": text}, *images]},
        )

    return ask


def combine(problem: Problem, rules, replies: dict, scoring) -> Score | str:
    """Official: max(answer level, step level) in points, the best scheme winning; with several
    judges, the mean of their scores; points add up exactly (as the decimals they are written as),
    floats only in the returned score. evalscope: see `hipho_evalscope`."""
    if scoring.protocol == "evalscope":
        return hipho_evalscope.combine(problem, rules, replies)
    failure = failed_tasks(replies)
    if failure:
        return failure
    if not isinstance(rules, Score):
        return rules
    scores = [_official(problem, rules, judged) for judged in replies.values()]
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
        detail=f"official protocol, {len(scores)} judge(s)",
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


def _official(problem: Problem, rules: Score, judged: dict) -> tuple[Fraction, Fraction, Fraction | None]:
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


# ---------------------------------------------------------------- tables

MEDALS = ("gold", "silver", "bronze")


def medal(score, cutoffs) -> str:
    """The official medal of an exam score: the best whose cutoff it reaches (score >= cutoff),
    compared exactly: a score at the cutoff earns it, one a millionth below does not."""
    if score is None or _missing(score):
        return ""
    for name in MEDALS:
        if cutoffs.get(name) is not None and exact(score) >= exact(cutoffs[name]):
            return name
    return ""


def _missing(value) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _exact_sum(values) -> Fraction | None:
    """The exact sum of the values present (None when none is: a cell that failed throughout)."""
    present = [exact(value) for value in values if value is not None and not _missing(value)]
    return sum(present, Fraction(0)) if present else None


def _exact_mean(values) -> Fraction | None:
    present = [exact(value) for value in values if value is not None and not _missing(value)]
    return sum(present, Fraction(0)) / len(present) if present else None


def _shown(value, digits: int = 2) -> float:
    """An exact value rounded for display; missing is NaN."""
    return float("nan") if value is None or _missing(value) else round(float(value), digits)


def tables(frame: pd.DataFrame, cfg) -> dict[str, pd.DataFrame]:
    """Exam scores in points (the mean over samples; and their standard deviation with several
    samples), with each exam's full marks; medals per exam by the official cutoffs and their counts;
    and the headline numbers as each official evaluation prints them:
    - `exam_score_rate`: each exam's score as a share of its full marks (%), and their mean over the
      exams, the HiPhO paper's and VLMEvalKit's headline;
    - `problem_ratio`: the mean over problems of points earned / problem points (%), per exam and over
      every problem, evalscope's number.
    Points add up exactly (as the decimals they are written as); rounding is for display only. A
    failed generation or judgment earns nothing but still counts."""
    rows = ["suite", "model", "judge"]
    exams = {name: dict(value) for name, value in dict(cfg.get("exams") or {}).items()}
    per_sample = frame.groupby([*rows, "subset", "sample"])["points"].agg(_exact_sum)
    means = per_sample.groupby([*rows, "subset"]).agg(_exact_mean).unstack("subset")
    full_marks = frame.drop_duplicates(["subset", "id"]).groupby("subset")["max_points"].agg(_exact_sum)[means.columns]
    scores = means.map(_shown)
    scores.loc[("full marks", "", ""), :] = full_marks.map(_shown)
    tables = {"exam_scores": scores.reset_index()}
    if frame["sample"].nunique() > 1:
        spread = per_sample.map(lambda value: float("nan") if value is None else float(value))
        tables["exam_scores_std"] = (
            spread.groupby([*rows, "subset"]).std(ddof=0).unstack("subset").round(2).reset_index()
        )
    medals = means.apply(lambda column: column.map(lambda score: medal(score, exams.get(column.name, {}))))
    for name in MEDALS:
        medals[name] = (medals[list(means.columns)] == name).sum(axis=1)
    tables["medals"] = medals.reset_index()
    tables["exam_score_rate"] = _exam_score_rates(means, full_marks).reset_index()
    tables["problem_ratio"] = _problem_ratios(frame, rows).reset_index()
    return tables


def _exam_score_rates(means: pd.DataFrame, full_marks: pd.Series) -> pd.DataFrame:
    """Exam score / full marks per exam (%), and the mean of those rates over the exams."""
    rates = means.apply(
        lambda column: column.map(
            lambda score: (
                None
                if score is None or _missing(score) or not full_marks[column.name]
                else 100 * exact(score) / full_marks[column.name]
            )
        )
    )
    shown = rates.map(_shown)
    shown["mean over exams"] = [_shown(_exact_mean(list(row))) for _, row in rates.iterrows()]
    return shown


def _problem_ratios(frame: pd.DataFrame, rows: list[str]) -> pd.DataFrame:
    """evalscope's number: the mean per-problem ratio (points / problem points, %), per exam and over
    every problem of the cell; each sample of a problem counts once."""
    rated = frame[frame["max_points"] > 0]
    ratio = [
        100 * (Fraction(0) if _missing(points) or points is None else exact(points)) / exact(available)
        for points, available in zip(rated["points"], rated["max_points"])
    ]
    rated = rated.assign(ratio=ratio)
    per_exam = rated.groupby([*rows, "subset"])["ratio"].agg(_exact_mean).unstack("subset").map(_shown)
    per_exam["overall"] = rated.groupby(rows)["ratio"].agg(_exact_mean).map(_shown)
    return per_exam


# ---------------------------------------------------------------- the report


def report_sections(problem: Problem, judgment) -> list[ReportSection]:
    """The marking scheme as each judge applied it: every criterion with its text, its points, the
    award and the judge's reason; each scheme's total and the one that won; the answer slots the
    judge compared; and the answer level against the step level (the protocol takes the larger).
    A rules-only judgment shows the criteria unawarded."""
    entries = [entry for entry in judgment.details if isinstance(entry, dict)] or [{}]
    sections = []
    for entry in entries:
        judge = str(entry.get("judge", judgment.judge))
        rows, totals = [], []
        for s, scheme in enumerate(problem.marking):
            awarded = []
            for c, criterion in enumerate(scheme):
                reply = entry.get(f"criterion {s}.{c}")
                award = reply.get("awarded") if isinstance(reply, dict) else None
                award = award if isinstance(award, (int, float)) and not isinstance(award, bool) else None
                awarded.append(None if award is None else min(float(award), criterion.points))
                rows.append(
                    (
                        f"{s + 1}.{c + 1}",
                        criterion.text,
                        criterion.points,
                        award,
                        reply.get("reasoning", "") if isinstance(reply, dict) else "not judged (rules only)",
                    )
                )
            judged = [a for a in awarded if a is not None]
            totals.append((min(sum(judged), problem.points) if judged else None, sum(c.points for c in scheme)))
        facts = [
            (f"scheme {s + 1}", f"{'–' if got is None else f'{got:g}'} of {most:g} points")
            for s, (got, most) in enumerate(totals)
        ]
        scored = [(got, s) for s, (got, _) in enumerate(totals) if got is not None]
        if scored:
            best, winner = max(scored)
            facts.append(("winning scheme", f"scheme {winner + 1}: this judge's step level, {best:g} points"))
        parts = judgment.parts or {}
        # a rules-only judgment has no parts: its points are the answer level
        answer = parts.get("answer_points", judgment.points if not judgment.details else None)
        facts += [
            ("answer level", _points(answer, problem.points) + " (mean over the judges)"),
            ("step level", _points(parts.get("step_points"), problem.points) + " (mean over the judges)"),
            ("the protocol's score", "the larger of the two levels, of each judge, averaged"),
        ]
        tables = (
            [
                ReportTable(
                    "criteria",
                    ("criterion", "text", "points", "awarded", "reason"),
                    tuple(rows),
                    math=("text", "reason"),
                )
            ]
            if rows
            else []
        )
        slots = [
            (_slot_number(key), reply.get("equivalent"), reply.get("reasoning", ""))
            for key, reply in sorted(entry.items())
            if key.startswith("slot ") and isinstance(reply, dict)
        ]
        if slots:
            tables.append(
                ReportTable("slot-judgments", ("answer slot", "equivalent", "reason"), tuple(slots), math=("reason",))
            )
        other = [
            (key, str(reply))
            for key, reply in sorted(entry.items())
            if key != "judge" and not key.startswith(("criterion ", "slot "))
        ]
        if other:
            tables.append(ReportTable("replies", ("task", "reply"), tuple(other), math=("reply",)))
        sections.append(ReportSection("criteria", f"Marking scheme: judge {judge}", tuple(facts), tuple(tables)))
    return sections


def _slot_number(key: str) -> str:
    """`slot 0` is the first answer, numbered from 1 as the page numbers them."""
    index = key.removeprefix("slot ")
    return str(int(index) + 1) if index.isdigit() else index


def _points(value, most: float) -> str:
    return "not judged" if value is None else f"{value:g} of {most:g} points"


def report_charts(tables: dict) -> list[ReportChart]:
    """Medals per cell (stacked gold, silver, bronze), from the `medals` table."""
    medals = tables.get("medals")
    if medals is None or medals.empty:
        return []
    bars = tuple(
        (f"{row['model']} / {row['judge']} / {row['suite']}", name, float(row[name]))
        for row in medals.to_dict("records")
        for name in MEDALS
        if str(row.get("suite", ""))
    )
    return [ReportChart("medals", "medals", bars, stacked=True)] if bars else []
