"""Reading MATH-Vision's release: `data/<split>.jsonl` with its figures."""

from __future__ import annotations

from pathlib import Path

from olympiad_eval.benchmarks.mathvision.config import LEVELS
from olympiad_eval.benchmarks.release import Fields, FigureStore, as_text
from olympiad_eval.core.records import AnswerSlot, InputError, Problem, RecordError, iter_json_lines

REQUIRED = ("id", "question", "answer")


def load(root: Path, cfg, benchmark: str, store: FigureStore) -> list[Problem]:
    split = cfg.get("split", "test")
    path = root / "data" / f"{split}.jsonl"
    if not path.is_file():
        raise InputError(f"benchmark '{benchmark}': {path} not found")
    require_figures = bool(cfg.get("require_figures", True))
    return [
        _problem(_repair(data), path, line, root, benchmark, require_figures, store)
        for line, data in iter_json_lines(path)
    ]


def _repair(item: dict) -> dict:
    """The release has a form feed where `\f` was meant (`\frac` read as an escape): put it back."""
    fix = lambda text: text.replace("\x0c", "\\f") if isinstance(text, str) else text  # noqa: E731
    return {key: [fix(v) for v in value] if isinstance(value, list) else fix(value) for key, value in item.items()}


def _problem(
    item: dict, path: Path, line: int, root: Path, benchmark: str, require_figures: bool, store: FigureStore
) -> Problem:
    fields = Fields(item, f"{path}:{line}")
    fields.require("id")
    for name in REQUIRED:
        fields.text(name)
    level = fields.level("level")
    if level is not None and level not in LEVELS:
        raise RecordError(fields.where, fields.record, "level", f"must be {LEVELS[0]} to {LEVELS[-1]}, got {level}")
    choices = tuple(
        as_text(option, where=fields.where, record=fields.record, field_name="options")
        for option in fields.list("options")
    )
    figures = ()
    if item.get("image") not in (None, ""):
        image = fields.path("image", root)
        if require_figures or image.is_file():
            figures = (
                store.file(
                    image, release_file=fields.where, record=fields.record, field_name="image", name=item["image"]
                ),
            )
    subject = fields.text("subject", required=False)
    return Problem(
        origin=f"data/{path.name}:{line}",
        id=fields.record,
        benchmark=benchmark,
        language="en",
        subset=subject,
        subject=subject,
        level=level,
        question=fields.text("question"),
        choices=choices,
        figures=figures,
        answers=(AnswerSlot(value=fields.gold("answer"), kind="Multiple Choice" if choices else "Free Form"),),
        solution=fields.text("solution", required=False),
    )
