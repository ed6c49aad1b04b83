"""Reading HiPhO's release: each exam's problems, answer slots, marking schemes and figures."""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path

from olympiad_eval.benchmarks.hipho.scoring import gold_value
from olympiad_eval.benchmarks.release import Fields, FigureStore, as_points, as_text
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

REQUIRED = ("id", "question", "answer", "points")


_SLACK = Fraction(1, 10**6)  # points written with more decimals than the release uses (1/3 as 0.3333333) still add up


_TOTAL = re.compile(r"award\s+a\s+total\s+of\s+([\d.]+)\s*pts?", re.I)


_AWARD = re.compile(r"award\s+([\d.]+)\s*pts?", re.I)


_CHINESE = re.compile(r"得\s*([\d.]+)\s*分")


def load(root: Path, cfg, benchmark: str, store: FigureStore) -> list[Problem]:
    data_dir = root / "data"
    exams = sorted(data_dir.glob("*.json"))
    if not exams:
        raise InputError(f"benchmark '{benchmark}': no <EXAM>.json files under {data_dir}")
    problems = []
    for path in exams:
        problems += _load_exam(path, data_dir, cfg, benchmark, store)
    return problems


def _load_exam(path: Path, data_dir: Path, cfg, benchmark: str, store: FigureStore) -> list[Problem]:
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
    problems = [_problem(item, path, data_dir, information, language, benchmark, store) for item in items[1:]]
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


def _problem(
    item: dict, path: Path, data_dir: Path, information: str, language: str, benchmark: str, store: FigureStore
) -> Problem:
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
        figures=tuple(_figures(fields, data_dir, store)),
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


def _figures(fields: Fields, data_dir: Path, store: FigureStore) -> list[Figure]:
    return [
        store.file(
            fields.path("image_question", data_dir, value=name),
            release_file=fields.where,
            record=fields.record,
            field_name="image_question",
            name=name,
        )
        for name in fields.list("image_question")
    ]
