"""PhysElite's tables: accuracy and process score per setting, language, subject and difficulty, and
the paper's analyses."""

from __future__ import annotations

from olympiad_eval import lazy_import
from olympiad_eval.benchmarks.physelite.judging import ERROR_TYPES
from olympiad_eval.benchmarks.physelite.loading import subjects_of
from olympiad_eval.core.records import InputError
from olympiad_eval.core.stats import cluster_bootstrap
from olympiad_eval.core.tables import clusters, interval_method, resampled_lines, with_interval_notes

ROWS = ["setting", "model", "judge"]  # every table's rows: settings never pool

pd = lazy_import("pandas")  # for the tables only


PER_LANGUAGE = [*ROWS, "language"]


def tables(frame: pd.DataFrame, cfg) -> dict[str, pd.DataFrame]:
    """Per setting (see `settings`), each the mean of its zh and en results as the paper reports:
    its Table 3 (answer accuracy per subject and overall with its 95% interval, process score), the
    same per language,
    accuracy per difficulty band, its Table 4 (each variant against its baseline on the same
    problems), and, where LLM judges graded steps and verdicts, the analyses of its section 5.
    `cfg` is the benchmark's config with `suites`, the composed config of each suite of the plan."""
    suites = dict(cfg.get("suites") or {})
    frame = frame.assign(setting=settings(frame, suites))
    tables = {
        "accuracy": _accuracy(frame),
        "accuracy_by_language": _accuracy_by_language(frame),
        "accuracy_by_difficulty": _accuracy_by_difficulty(frame, cfg),
    }
    effects = extra_information(frame, suites)
    if effects is not None:
        tables["extra_information"] = effects
    steps = graded_steps(frame)
    if steps is not None:
        tables["failure_analyses"] = failure_analyses(frame, steps)
        tables["first_step_errors_by_subject"] = first_step_errors_by_subject(steps)
    types = error_types(frame)
    if types is not None:
        tables["error_types"] = types
    return tables


def settings(frame: pd.DataFrame, suites: dict) -> pd.Series:
    """Each judgment's setting: its suite's `setting` (the suite's own name where it sets none).
    One suite per setting and language: two would be pooled into one number."""
    setting_of = {suite: str((suites.get(suite) or {}).get("setting") or suite) for suite in frame["suite"].unique()}
    column = frame["suite"].map(setting_of)
    pairs = frame.assign(setting=column).groupby(["setting", "language"])["suite"].unique()
    for (setting, language), names in pairs.items():
        if len(names) > 1:
            raise InputError(
                f"suites {', '.join(sorted(names))} are all setting '{setting}' in language '{language}': "
                "a setting averages one suite per language; give the others their own `setting`"
            )
    return column


def _percent(values: pd.Series) -> float:
    return values.mean() * 100


def _accuracy_of(group: pd.DataFrame) -> float:
    return group["score"].fillna(0).mean() * 100  # a failed response counts, as wrong


def _per_subject(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per judgment and subject: a problem with several subjects counts under each."""
    return frame.assign(subject=frame["subject"].map(lambda subject: subjects_of(subject) or ["no subject"])).explode(
        "subject"
    )


def _mean_over_languages(table: pd.DataFrame) -> pd.DataFrame:
    """Per setting, the mean of its languages' values (the paper's zh and en mean), and which."""
    averaged = table.groupby(ROWS).mean().round(1)
    languages = table.reset_index().groupby(ROWS)["language"].agg(lambda names: "+".join(sorted(set(names))))
    averaged.insert(0, "languages", languages)
    return averaged.reset_index()


def _accuracy(frame: pd.DataFrame) -> pd.DataFrame:
    by_subject = _per_subject(frame).groupby([*PER_LANGUAGE, "subject"]).apply(_accuracy_of, include_groups=False)
    table = by_subject.unstack("subject")
    table["Ans."] = frame.groupby(PER_LANGUAGE).apply(_accuracy_of, include_groups=False)
    table["Proc."] = frame.groupby(PER_LANGUAGE)["process"].mean() * 100
    averaged = _mean_over_languages(table)
    bounds = frame.groupby(ROWS).apply(_answer_interval, include_groups=False)
    ends = pd.DataFrame(bounds.tolist(), index=bounds.index, columns=["Ans. 95% CI low", "Ans. 95% CI high"])
    notes = [interval_method("problem", "Ans. 95% CI low, high"), *resampled_lines(frame, "problem", ROWS, "setting")]
    return with_interval_notes(averaged.merge(ends.reset_index(), on=ROWS, how="left"), notes)


def _answer_interval(group: pd.DataFrame) -> tuple[float, float]:
    """The 95% interval of a setting's answer accuracy, the mean of its languages' accuracies: a
    cluster bootstrap that draws problems (the benchmark's clusters) with their answers in every
    language and sample together, a zh and an en answer to one problem being no two independent
    draws; each resample's accuracy is again the mean over languages."""
    low, high = cluster_bootstrap(
        group["score"].fillna(0).to_numpy(), [1.0] * len(group), clusters(group), group["language"], seed=0
    )
    return (low, high) if pd.isna(low) else (round(low, 1), round(high, 1))


def _accuracy_by_language(frame: pd.DataFrame) -> pd.DataFrame:
    table = (
        pd.DataFrame(
            {
                "Ans.": frame.groupby(PER_LANGUAGE).apply(_accuracy_of, include_groups=False),
                "Proc.": frame.groupby(PER_LANGUAGE)["process"].mean() * 100,
            }
        )
        .unstack("language")
        .round(1)
    )
    table.columns = [f"{measure} {language}" for measure, language in table.columns]
    return table.reset_index()


def _accuracy_by_difficulty(frame: pd.DataFrame, cfg) -> pd.DataFrame:
    bands = _bands(cfg)
    banded = frame.assign(band=frame["level"].map(lambda level: band_of(level, bands)))
    table = banded.groupby([*PER_LANGUAGE, "band"]).apply(_accuracy_of, include_groups=False).unstack("band")
    table = table[[band for band in [*bands, "unrated"] if band in table.columns]]
    return _mean_over_languages(table)


def _bands(cfg) -> dict:
    bands = (cfg or {}).get("difficulty_bands")
    if not bands:
        raise InputError(
            "the benchmark config needs `difficulty_bands` (name: [lowest, highest]): the paper gives "
            "1-2/3-5/6-7 (H.3) and 1-3/4-5/6-7 (Table 2), so the choice is the config's"
        )
    return {str(name): (low, high) for name, (low, high) in dict(bands).items()}


def band_of(level, bands: dict) -> str:
    for name, (low, high) in bands.items():
        if level is not None and pd.notna(level) and low <= level <= high:
            return name
    return "unrated"


def extra_information(frame: pd.DataFrame, suites: dict) -> pd.DataFrame | None:
    """The paper's Table 4: each variant setting against its baseline on the same problems, per
    model (columns) and judge, answer accuracy and process score as "value (change)". A variant
    suite names its baseline suite (`baseline`, same language); the problems compared are those
    both suites answered, and each setting's value is the mean over its languages."""
    variants = {
        suite: str(config["baseline"])
        for suite, config in suites.items()
        if config.get("baseline") and suite in set(frame["suite"])
    }
    if not variants:
        return None
    setting_of = dict(zip(frame["suite"], frame["setting"]))
    records = []
    for variant, baseline in variants.items():
        _check_baseline(variant, baseline, suites, frame)
        ours, theirs = frame[frame["suite"] == variant], frame[frame["suite"] == baseline]
        for (model, judge), answered in ours.groupby(["model", "judge"]):
            base = theirs[(theirs["model"] == model) & (theirs["judge"] == judge)]
            same = set(answered["id"]) & set(base["id"])
            answered, base = answered[answered["id"].isin(same)], base[base["id"].isin(same)]
            records.append(
                {
                    "setting": setting_of[variant],
                    "baseline": setting_of[baseline],
                    "model": model,
                    "judge": judge,
                    "problems": len(same),
                    "Answer": _accuracy_of(answered),
                    "Answer baseline": _accuracy_of(base),
                    "Process": answered["process"].mean() * 100,
                    "Process baseline": base["process"].mean() * 100,
                }
            )
    compared = pd.DataFrame(records)
    baselines = compared.groupby("setting")["baseline"].unique()
    for setting, names in baselines.items():
        if len(names) > 1:
            raise InputError(
                f"the suites of setting '{setting}' name baselines of different settings "
                f"({', '.join(sorted(names))}): Table 4 compares a setting with one baseline setting"
            )
    keys = ["setting", "baseline", "judge", "model"]
    means = compared.groupby(keys)[["Answer", "Answer baseline", "Process", "Process baseline"]].mean()
    problems = compared.groupby(keys)["problems"].sum()
    rows = []
    for (setting, baseline, judge), group in means.groupby(level=[0, 1, 2]):
        models = group.index.get_level_values("model")
        for metric in ("Answer", "Process"):
            cells = [_with_change(value, base) for value, base in zip(group[metric], group[f"{metric} baseline"])]
            rows.append(
                {"setting": setting, "baseline": baseline, "judge": judge, "metric": metric, **dict(zip(models, cells))}
            )
        counts = problems.loc[(setting, baseline, judge)]
        rows.append(
            {
                "setting": setting,
                "baseline": baseline,
                "judge": judge,
                "metric": "problems compared",
                **{model: str(int(counts.loc[model])) for model in models},
            }
        )
    return pd.DataFrame(rows)


def _check_baseline(variant: str, baseline: str, suites: dict, frame: pd.DataFrame) -> None:
    if baseline not in suites or baseline not in set(frame["suite"]):
        raise InputError(
            f"suite '{variant}' names baseline '{baseline}', which is not a suite of this benchmark in the "
            "plan: add it to the plan (Table 4 compares the two on the same problems)"
        )
    language, base_language = suites[variant].get("language"), suites[baseline].get("language")
    if language != base_language:
        raise InputError(
            f"suite '{variant}' ({language}) names baseline '{baseline}' ({base_language}): "
            "a variant is compared with the baseline in its own language"
        )


def _with_change(value: float, baseline: float) -> str | None:
    """ "26.7 (+2.7)", as the paper's Table 4 prints it; the change from the unrounded values."""
    if pd.isna(value) or pd.isna(baseline):
        return None
    change = round(value - baseline, 1) + 0.0  # no "-0.0"
    return f"{value:.1f} ({change:+.1f})"


def graded_steps(frame: pd.DataFrame) -> pd.DataFrame | None:
    """One row per response and judge that graded its steps (the ensemble's judges each grade; a
    response's analyses are the mean over its judges, as its process score is)."""
    records = []
    for row in frame.itertuples():
        for judged in row.details or ():
            steps = [step["grade"] for step in (judged.get("process") or {}).get("steps", [])]
            if not steps:
                continue
            failed = [index for index, grade in enumerate(steps, start=1) if grade < 1.0]
            records.append(
                {
                    "setting": row.setting,
                    "model": row.model,
                    "judge": row.judge,
                    "language": row.language,
                    "subject": row.subject,
                    "first error": failed[0] if failed else None,
                    "complete": not failed,
                    "fails at step 1": failed[:1] == [1],
                    "failed steps": len(failed),
                    "soft": sum(steps[i - 1] == 0.5 for i in failed),
                    "last only": failed == [len(steps)],
                }
            )
    return pd.DataFrame(records) if records else None


def failure_analyses(frame: pd.DataFrame, steps: pd.DataFrame) -> pd.DataFrame:
    """Section 5 of the paper, per setting (the mean of its languages): where the first error falls
    (1-based, mean over responses with one), the share of responses that fail at step 1, that
    complete without an error, the share of failed steps graded 0.5 (soft failures, also per
    language: the paper finds them higher in Chinese), responses whose only failed step is the
    last, and how often all judges agree on the verdict."""
    graded = steps.groupby(PER_LANGUAGE)
    soft = graded["soft"].sum() / graded["failed steps"].sum().replace(0, float("nan")) * 100
    table = pd.DataFrame(
        {
            "first error (mean step)": graded["first error"].mean(),
            "fails at step 1 (%)": graded["fails at step 1"].apply(_percent),
            "complete (%)": graded["complete"].apply(_percent),
            "soft failures (%)": soft,
            "last-step-only (%)": graded["last only"].apply(_percent),
        }
    )
    verdicts = frame.assign(
        agree=frame["details"].map(
            lambda details: len({d["answer"]["verdict"] for d in details if "answer" in d}) == 1 if details else None
        )
    )
    table["judges agree (%)"] = verdicts.groupby(PER_LANGUAGE)["agree"].apply(
        lambda agree: agree.dropna().astype(float).mean() * 100 if agree.notna().any() else float("nan")
    )
    averaged = _mean_over_languages(table)
    by_language = soft.unstack("language").round(1)
    by_language.columns = [f"soft failures {language} (%)" for language in by_language.columns]
    return averaged.merge(by_language.reset_index(), on=ROWS, how="left")


def first_step_errors_by_subject(steps: pd.DataFrame) -> pd.DataFrame:
    """Per subject, the share of graded responses whose first step is already wrong (the paper's
    first-step error rate, section 5.3: highest in Optics, lowest in Thermodynamics)."""
    per_subject = _per_subject(steps)
    table = per_subject.groupby([*PER_LANGUAGE, "subject"])["fails at step 1"].apply(_percent).unstack("subject")
    return _mean_over_languages(table)


def error_types(frame: pd.DataFrame) -> pd.DataFrame | None:
    """The error types of wrong answers (the paper's Figure 5 and Table 7), per setting, model and
    judge. Only responses the answer judges did not find correct (the ensemble's verdict: a
    majority of "correct" is correct) are classified; each counts once, its judges' error types
    sharing its weight, "unclassified" where none named one. Both languages of a setting pooled:
    shares of its failed responses."""
    records = []
    for row in frame.itertuples():
        said = [judged["error_type"]["error_type"] for judged in row.details or () if judged.get("error_type")]
        if row.status != "scored" or row.verdict == "correct" or not said:  # right, or not classified at all
            continue
        named = [error for error in said if error != "none"] or ["unclassified"]
        records += [
            {
                "setting": row.setting,
                "model": row.model,
                "judge": row.judge,
                "response": (row.suite, row.id, row.sample),
                "error type": error,
                "weight": 1 / len(named),
            }
            for error in named
        ]
    if not records:
        return None
    weights = pd.DataFrame(records)
    wrong = weights.groupby(ROWS)["response"].nunique().rename("wrong answers")
    shares = weights.groupby([*ROWS, "error type"])["weight"].sum().unstack("error type").fillna(0.0)
    order = [error for error in (*ERROR_TYPES, "unclassified") if error in shares.columns]
    shares = (shares[order].div(wrong, axis=0) * 100).round(1).add_prefix("error: ").add_suffix(" (%)")
    return pd.concat([wrong, shares], axis=1).reset_index()
