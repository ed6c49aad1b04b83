"""MATH-Vision's tables: accuracy overall, per level and per subject."""

from __future__ import annotations

from olympiad_eval import lazy_import

pd = lazy_import("pandas")  # for the tables only


def tables(frame: pd.DataFrame, cfg) -> dict[str, pd.DataFrame]:
    """Accuracy (%) overall, per level, per subject, and per subject x level, each as MATH-V's
    evaluation prints it in `<MODEL>_result.json` (`-all`, `-level<n>`, `<subject>`,
    `<subject>_level<n>`), digit for digit."""
    rows, accuracy = ["suite", "model", "judge"], _accuracy
    overall = frame.groupby(rows).apply(accuracy, include_groups=False).rename("overall")
    by_level = frame.assign(level=frame["level"].map(lambda v: f"level {int(v)}" if pd.notna(v) else "level ?"))
    levels = by_level.groupby([*rows, "level"]).apply(accuracy, include_groups=False).unstack("level")
    subjects = frame.groupby([*rows, "subject"]).apply(accuracy, include_groups=False).unstack("subject")
    crossed = by_level.groupby([*rows, "subject", "level"]).apply(accuracy, include_groups=False).unstack("level")
    return {
        "accuracy": pd.concat([overall, levels], axis=1).reset_index(),
        "accuracy_by_subject": subjects.reset_index(),
        "accuracy_by_subject_and_level": crossed.reset_index(),
    }


def _accuracy(group: pd.DataFrame) -> float:
    """Right over rows in percent, computed and rounded as the official evaluation does
    (`round(right / total * 100, 2)`, Python's rounding, not numpy's): so `17.66`, `12.5`, `0.0`.
    A response that failed or was not scored counts as wrong; except under evalscope's protocol,
    whose mean leaves out the responses it excludes (the rules' judge errors there)."""
    if "protocol" in group and "status" in group:
        group = group[
            ~(
                group["protocol"].astype(str).str.startswith("mathvision evalscope ")
                & (group["status"] == "judge_error")
            )
        ]
    right = float(group["score"].fillna(0).sum())
    return round(right / max(len(group), 1) * 100, 2)
