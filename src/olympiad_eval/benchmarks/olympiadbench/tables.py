"""OlympiadBench's tables: accuracy overall and per subject, language, source, modality and subfield."""

from __future__ import annotations

from olympiad_eval import lazy_import
from olympiad_eval.core.stats import cluster_bootstrap
from olympiad_eval.core.tables import CELL, clusters, interval_method, resampled_lines, with_interval_notes

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
    interval (a cluster bootstrap: problems resampled, each with its samples; the notes say how
    many). A judgment the rules could not score (a problem left to human evaluation, asked anyway)
    is counted in `not scored` and left out of the accuracy, as the official evaluation leaves such
    problems out; a failed generation counts as wrong."""
    parts = frame["subset"].str.split("_", expand=True).reindex(columns=range(5))
    frame = frame.assign(
        type=parts[0],
        modality=parts[1],
        subject=parts[2],
        source=parts[4],
        subfield=frame["subject"].replace("", "(none)"),
    )
    scored = frame[frame["status"] != "judge_error"]
    result = {"accuracy": with_interval_notes(_accuracy(frame, []), _notes(scored, []))}
    for name, column in BREAKDOWNS.items():
        result[f"accuracy_by_{name}"] = with_interval_notes(_accuracy(frame, [column]), _notes(scored, [column]))
    return result


def _notes(scored: pd.DataFrame, by: list[str]) -> list[str]:
    """How the intervals were made, and what the overall rows resampled (each breakdown row
    resamples the `problems` it counts)."""
    if by:
        return [interval_method("problem"), "each row: its `problems`, with all their samples"]
    return [interval_method("problem"), *resampled_lines(scored, "problem")] if len(scored) else []


def _accuracy(frame: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    rows = []
    for keys, group in frame.groupby([*CELL, *by], sort=True):
        scored = group[group["status"] != "judge_error"]
        scored = scored.assign(score=scored["score"].fillna(0), _cluster=clusters(scored))
        per_problem = scored.groupby("id")[["score", "_cluster"]].agg({"score": "mean", "_cluster": "first"})
        low, high = interval(per_problem["score"].to_numpy(), per_problem["_cluster"].to_numpy())
        rows.append(
            (
                *keys,
                len(per_problem),
                int(group["id"][group["status"] == "judge_error"].nunique()),
                round(100 * per_problem["score"].mean(), 2) if len(per_problem) else float("nan"),
                low,
                high,
            )
        )
    columns = [*CELL, *by, "problems", "not scored", "accuracy (%)", "95% CI low", "95% CI high"]
    return pd.DataFrame(rows, columns=columns)


def interval(scores, problem_clusters) -> tuple[float, float]:
    """The 95% cluster bootstrap interval of the accuracy (%), the mean of the problems' scores (each
    the mean over its samples): the problems' clusters (a label per problem) resampled with
    replacement, each with all its problems."""
    low, high = cluster_bootstrap(scores, np.ones(len(scores)), problem_clusters, seed=0)
    return (low, high) if np.isnan(low) else (round(low, 2), round(high, 2))
