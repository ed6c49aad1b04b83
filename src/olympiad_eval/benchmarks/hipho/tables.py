"""HiPhO's tables: exam scores in points against the official full marks, medals by the official cutoffs."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

from olympiad_eval.core.records import (
    exact,
)

if TYPE_CHECKING:  # pandas only types `tables`: the judge stage need not pay its import (0.3 s)
    import pandas as pd

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


def cluster_of(judgment) -> str:
    """The exam problem a judgment's question belongs to, which its tables' intervals resample as
    one: the release names each question `<exam>_<problem>_<part>...` after its exam (its `source`,
    the judgment's subset), so IPhO_2025_1_A_1 and IPhO_2025_1_C_4 are parts of IPhO_2025_1 and
    share its setup, while F=MA_2024_07 and PanMechanics_2024_3, numbered without parts, are
    problems of their own. An id that does not start with its exam's name is its own problem."""
    exam, pid = judgment.subset, judgment.id
    if not exam or not pid.startswith(f"{exam}_"):
        return pid
    return f"{exam}_{pid[len(exam) + 1 :].split('_', 1)[0]}"


def tables(frame: pd.DataFrame, cfg) -> dict[str, pd.DataFrame]:
    """Exam scores in points (the mean over samples; and their standard deviation with several
    samples), with each exam's full marks; medals per exam by the official cutoffs and their counts;
    and the headline numbers as each official evaluation prints them:
    - `exam_score_rate`: each exam's score as a share of its full marks (%), and their mean over the
      exams, the HiPhO paper's and VLMEvalKit's headline;
    - `scored_score_rate`: each exam's score as a share of the points of the problems it scored (%),
      leaving out those whose judgment failed, and their mean: VLMEvalKit's own rate, whose scoring
      leaves a problem it cannot score out of the exam's maximum (`protocol: vlmevalkit` records such
      a problem as a judge error that says so); the same as `exam_score_rate` where none failed;
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
    tables["scored_score_rate"] = _scored_score_rates(frame, rows).reset_index()
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


def _scored_score_rates(frame: pd.DataFrame, rows: list[str]) -> pd.DataFrame:
    """Per sample, an exam's points over the points of its problems not left a judge error (%); the
    mean over samples per exam, and of those rates over the exams."""
    kept = frame[frame["status"] != "judge_error"]
    keys = [*rows, "subset", "sample"]
    earned = frame.groupby(keys)["points"].agg(_exact_sum)
    most = kept.groupby(keys)["max_points"].agg(_exact_sum).reindex(earned.index)
    rates = [
        None if not available or _missing(available) else 100 * (score or Fraction(0)) / available
        for score, available in zip(earned, most)
    ]
    per_sample = earned.to_frame("points").assign(rate=rates)["rate"]
    per_exam = per_sample.groupby([*rows, "subset"]).agg(_exact_mean).unstack("subset")
    shown = per_exam.map(_shown)
    shown["mean over exams"] = [_shown(_exact_mean(list(row))) for _, row in per_exam.iterrows()]
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
