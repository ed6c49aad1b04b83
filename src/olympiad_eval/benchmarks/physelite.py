"""PhysElite: bilingual (zh/en) olympiad physics, every problem answered in both languages.

The Hub release has one row per problem x language; its column names are not settled, so the
mapping from our fields to the release's columns lives in the benchmark config (`fields`).
The official answer score comes from LLM judges; the rule judge compares the "FINAL ANSWER:"
line with the reference answer within the numeric tolerance (5% by default).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from olympiad_eval import answers
from olympiad_eval.benchmarks import Score
from olympiad_eval.fetch import load_figure
from olympiad_eval.records import InputError, AnswerSlot, Figure, Problem, RecordError, iter_json_lines

REQUIRED = ("id", "language", "text", "answer")


def load(root: Path, cfg, benchmark: str) -> list[Problem]:
    path = root / "data" / f"{cfg.get('split', 'test')}.jsonl"
    if not path.is_file():
        raise InputError(f"benchmark '{benchmark}': {path} not found")
    columns = dict(cfg.fields)
    return [_problem(data, f"{path}:{line}", root, columns, benchmark) for line, data in iter_json_lines(path)]


def _problem(row: dict, where: str, root: Path, columns: dict, benchmark: str) -> Problem:
    value = lambda name, default=None: row.get(columns.get(name, name), default)  # noqa: E731
    record = str(value("id", "?"))
    for name in REQUIRED:
        if value(name) is None:
            raise RecordError(where, record, columns.get(name, name), "missing")
    difficulty = value("difficulty")
    return Problem(
        id=record,
        benchmark=benchmark,
        language=str(value("language")),
        group=record,
        subset=str(value("subject") or ""),
        subject=str(value("subject") or ""),
        level=int(difficulty) if difficulty is not None else None,
        question=str(value("text")),
        solution=str(value("solution") or ""),
        answers=(AnswerSlot(value=str(value("answer")), kind="Open"),),
        figures=tuple(
            _figures(value("images") or [], root, where, record, columns.get("images", "images"), "schematic")
            + _figures(value("process_images") or [], root, where, record, columns.get("process_images", "process_images"), "process")
        ),
    )


def _figures(names: list, root: Path, where: str, record: str, field_name: str, role: str) -> list[Figure]:
    return [
        load_figure(root / name, release_file=where, record=record, field_name=field_name, name=name, role=role)
        for name in names
    ]


def template_fields(problem: Problem, suite) -> tuple[str, dict]:
    hint = f"\n\nHint (reference solution):\n{problem.solution}" if suite.get("hint") else ""
    return "default", {"problem": problem.question + hint}


def figures(problem: Problem, suite) -> list[Figure]:
    wanted = {"none": (), "schematic": ("schematic",), "schematic+process": ("schematic", "process")}
    roles = wanted[suite.get("figures", "schematic")]
    return [figure for figure in problem.figures if figure.role in roles]


def reference(problem: Problem, suite) -> str:
    return f"Reference derivation.\nFINAL ANSWER: {problem.answers[0].value}"


def judge_reference(problem: Problem) -> str:
    return problem.answers[0].value


def score(problem: Problem, response: str, check, rel_tol: float) -> Score:
    gold = problem.answers[0].value
    given = answers.final_answer_line(response) or ""
    verdicts = check([(gold, given, rel_tol, None)]) if given else []
    correct = bool(verdicts and verdicts[0].correct)
    return Score(
        score=1.0 if correct else 0.0,
        points=1.0 if correct else 0.0,
        extracted=(given,),
        slots=({"expected": gold, "given": given, "correct": correct, "points": 1.0},),
        verdict="correct" if correct else "incorrect",
        undecided=tuple(v.reason for v in verdicts if v.correct is None),
    )


def tables(frame: pd.DataFrame, cfg) -> dict[str, pd.DataFrame]:
    """Answer accuracy (%) per subject and overall, averaged over languages; and per language."""
    accuracy = lambda group: group["score"].fillna(0).mean() * 100  # noqa: E731
    per_language = ["model", "judge", "language"]
    by_subject = frame.groupby([*per_language, "subject"]).apply(accuracy, include_groups=False).unstack("subject")
    by_subject["overall"] = frame.groupby(per_language).apply(accuracy, include_groups=False)
    averaged = by_subject.groupby(["model", "judge"]).mean().round(1)
    languages = by_subject["overall"].unstack("language").round(1)
    return {"accuracy": averaged.reset_index(), "accuracy_by_language": languages.reset_index()}
