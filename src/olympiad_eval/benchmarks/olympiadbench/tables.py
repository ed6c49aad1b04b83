"""OlympiadBench's tables: accuracy overall and per subject, language, source, modality and subfield."""

from __future__ import annotations

from olympiad_eval import lazy_import
from olympiad_eval.core.stats import ratio_bootstrap
from olympiad_eval.core.tables import CELL

np, pd = lazy_import("numpy"), lazy_import("pandas")  # for the tables only


BREAKDOWNS = {
    "subject": "subject",
    "language": "language",
    "source": "source",
    "modality": "modality",
    "subfield": "subfield",
}


def tables(frame: pd.DataFrame, cfg) -> dict[str, pd.DataFrame]:
    """Accuracy (%) overall and per subject (maths, physics), language, source (COMP: competitions,
    CEE: the Gaokao), modality and subfield, as the paper reports it, each with its 95% bootstrap
    interval (problems resampled). A judgment the rules could not score (a problem left to human
    evaluation, asked anyway) is counted in `not scored` and left out of the accuracy, as the
    official evaluation leaves such problems out; a failed generation counts as wrong."""
    parts = frame["subset"].str.split("_", expand=True).reindex(columns=range(5))
    frame = frame.assign(
        type=parts[0],
        modality=parts[1],
        subject=parts[2],
        source=parts[4],
        subfield=frame["subject"].replace("", "(none)"),
    )
    result = {"accuracy": _accuracy(frame, [])}
    for name, column in BREAKDOWNS.items():
        result[f"accuracy_by_{name}"] = _accuracy(frame, [column])
    return result


def _accuracy(frame: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    rows = []
    for keys, group in frame.groupby([*CELL, *by], sort=True):
        scored = group[group["status"] != "judge_error"]
        per_problem = scored.assign(score=scored["score"].fillna(0)).groupby("id")["score"].mean().to_numpy()
        low, high = interval(per_problem)
        rows.append(
            (
                *keys,
                len(per_problem),
                int(group["id"][group["status"] == "judge_error"].nunique()),
                round(100 * per_problem.mean(), 2) if per_problem.size else float("nan"),
                low,
                high,
            )
        )
    columns = [*CELL, *by, "problems", "not scored", "accuracy (%)", "95% CI low", "95% CI high"]
    return pd.DataFrame(rows, columns=columns)


def interval(scores) -> tuple[float, float]:
    """The 95% bootstrap interval of the accuracy (%) over problems resampled with replacement."""
    low, high = ratio_bootstrap(scores, np.ones(len(scores)), seed=0)
    return (low, high) if np.isnan(low) else (round(low, 2), round(high, 2))
