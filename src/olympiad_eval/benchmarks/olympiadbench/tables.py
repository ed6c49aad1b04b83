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
    """A row per cell (and breakdown): its problems' mean score with its interval. Each problem's
    mean over its samples is taken for every row at once: pandas' cost is per call, and a paper's
    plan has hundreds of rows."""
    keys = [*CELL, *by]
    failed = frame["status"] == "judge_error"
    scored = frame[~failed]
    scored = scored.assign(score=scored["score"].fillna(0), _cluster=clusters(scored))
    per_problem = scored.groupby([*keys, "id"], sort=True)[["score", "_cluster"]].agg(
        {"score": "mean", "_cluster": "first"}
    )
    problems = dict(iter(per_problem.groupby(level=list(range(len(keys))), sort=False)))
    not_scored = frame[failed].groupby(keys)["id"].nunique()
    none = per_problem.iloc[:0]
    rows = []
    for key in frame.groupby(keys, sort=True).size().index:
        own = problems.get(key, none)
        low, high = interval(own["score"].to_numpy(), own["_cluster"].to_numpy())
        rows.append(
            (
                *key,
                len(own),
                int(not_scored.get(key, 0)),
                round(100 * own["score"].mean(), 2) if len(own) else float("nan"),
                low,
                high,
            )
        )
    columns = [*keys, "problems", "not scored", "accuracy (%)", "95% CI low", "95% CI high"]
    return pd.DataFrame(rows, columns=columns)


def interval(scores, problem_clusters) -> tuple[float, float]:
    """The 95% cluster bootstrap interval of the accuracy (%), the mean of the problems' scores (each
    the mean over its samples): the problems' clusters (a label per problem) resampled with
    replacement, each with all its problems."""
    low, high = cluster_bootstrap(scores, np.ones(len(scores)), problem_clusters, seed=0)
    return (low, high) if np.isnan(low) else (round(low, 2), round(high, 2))
