"""Aggregate: the judgments of a benchmark's cells in the plan, turned into its tables.

Reads exactly the cells of the plan (never a glob: a cell removed from the plan leaves its files
behind), writes every table as Markdown, CSV and LaTeX with an index of them (`index.json`, which the
report reads), and a metrics JSON that `dvc metrics show` reads.
Errors are counted next to every score: a failed generation or judgment is never hidden, nor a
rule check that could not finish (`undecided`: counted as not matched unless a judge decided it),
nor a refusal (scored 0, counted apart). Nor is a partial suite (a `limit`, `ids`, an exam, ...):
every table of its benchmark says what it took.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path

import pandas as pd
from omegaconf import OmegaConf

from olympiad_eval.benchmarks import plugin, typed_suite
from olympiad_eval.core.layout import TABLE_INDEX, Layout
from olympiad_eval.core.records import (
    InputError,
    Judgment,
    Problem,
    atomic_dir,
    atomic_file,
    iter_jsonl,
    read_jsonl,
    write_json,
)
from olympiad_eval.core.stats import BOOTSTRAP_RESAMPLES, ratio_bootstrap, resampled_text
from olympiad_eval.core.tables import (
    CELL,
    CLUSTER,
    check_one_provenance,
    clusters,
    interval_method,
    interval_notes,
    intervals_latex,
    intervals_markdown,
    made_by_latex,
    made_by_markdown,
    resampled_lines,
    to_latex,
    to_markdown,
    with_interval_notes,
)
from olympiad_eval.stages.render import select, selection, selection_options


def cells(plan: dict, benchmark: str) -> list[tuple[str, str, str]]:
    suites = [suite for suite, bench in dict(plan["suites"]).items() if bench == benchmark]
    return [(s, m, j) for s in suites for m in plan["models"] for j in plan["judges"]]


def load_judgments(
    layout: Layout, plan: dict, benchmark: str, parts: tuple[str, ...] = (), cluster_of: Callable | None = None
) -> pd.DataFrame:
    """Every judgment of the plan's cells, one row each, with what the tables read (see `_row`), a
    column for each of the benchmark's `parts` (empty where a judgment has none), and its `cluster`
    (the benchmark's `cluster_of`; by default its problem)."""
    rows = []  # one frame from every row, so that each column's type is inferred from them all
    family = plan["family"][benchmark]
    for suite, model, judge in cells(plan, benchmark):
        path = layout.judgments(family, suite, model, judge)
        if not path.is_file():
            raise InputError(
                f"{path}: the plan's cell {suite} x {model} x {judge} has no judgments; run its stages first"
            )
        judgments = [_row(judgment, parts, cluster_of) for judgment in iter_jsonl(path, Judgment)]
        check_one_provenance(path, {row[_PROVENANCE] for row in judgments})
        rows += judgments
    if not rows:
        raise InputError(f"benchmark '{benchmark}': no suite of the plan belongs to it")
    return pd.DataFrame(rows, columns=[*COLUMNS, *parts, CLUSTER])


# A judgment as the tables read it: no table reads the extracted answers, the slots or the detail
# text, and the judges' prose (reasons, step descriptions) is for the report. Leaving them out, and
# sharing the names every row repeats, keeps a PhysElite-sized plan (140,000 judgments, each with
# its judges' replies) in a few hundred MB instead of gigabytes.
DROPPED = {"extracted", "slots", "detail", "parts"}  # parts: a column each
COLUMNS = [f.name for f in fields(Judgment) if f.name not in DROPPED]
PROSE = {"reasoning", "step"}
_NAMES = {
    "suite",
    "model",
    "judge",
    "language",
    "subset",
    "subject",
    "status",
    "verdict",
    "protocol",
    "judge_config",
    "packages",
}


def _row(judgment: Judgment, parts: tuple[str, ...], cluster_of: Callable | None = None) -> tuple:
    return (
        tuple(
            _without_prose(getattr(judgment, name))
            if name == "details"
            else sys.intern(value)
            if name in _NAMES and isinstance(value := getattr(judgment, name), str)
            else getattr(judgment, name)
            for name in COLUMNS
        )
        + tuple(judgment.parts.get(name) for name in parts)
        + (sys.intern(cluster_of(judgment)) if cluster_of else judgment.id,)
    )


PROVENANCE = ["protocol", "judge_config", "packages"]
_PROVENANCE = slice(COLUMNS.index("protocol"), COLUMNS.index("packages") + 1)
assert COLUMNS[_PROVENANCE] == PROVENANCE


def _without_prose(value):
    if isinstance(value, dict):
        return {key: _without_prose(item) for key, item in value.items() if key not in PROSE}
    if isinstance(value, (list, tuple)):
        return tuple(_without_prose(item) for item in value)
    return value


def counts(frame: pd.DataFrame) -> pd.DataFrame:
    """Per cell: how many problems, how many scored, and every kind of failure; `undecided` counts
    the rule checks that could not finish (not judgments: a response may have several)."""
    grouped = frame.groupby(CELL)
    table = pd.DataFrame(
        {
            "problems": grouped["id"].nunique(),
            "samples": grouped["sample"].nunique(),
            "scored": grouped["status"].apply(lambda s: int((s == "scored").sum())),
            "judge errors": grouped["status"].apply(lambda s: int((s == "judge_error").sum())),
            "undecided": grouped["undecided"].apply(lambda checks: int(sum(len(undecided) for undecided in checks))),
            "failed generations": grouped["status"].apply(lambda s: int((s == "generation_error").sum())),
            # scored (0 points), but told apart from wrong answers: the model declined, or a filter stopped it
            "refusals": grouped["refused"].sum().astype(int),
            "truncated": grouped["truncated"].sum().astype(int),
            "score (%)": grouped.apply(_score_percent, include_groups=False),
        }
    )
    bounds = grouped.apply(bootstrap_interval, include_groups=False)
    table["95% CI low"] = bounds.map(lambda pair: pair[0])
    table["95% CI high"] = bounds.map(lambda pair: pair[1])
    return table.reset_index()


def bootstrap_interval(group: pd.DataFrame, resamples: int = BOOTSTRAP_RESAMPLES) -> tuple[float, float]:
    """The 95% percentile cluster bootstrap interval of the score: whole clusters (the `cluster`
    column, the benchmark's `cluster_of`: a problem with all its samples, HiPhO's exam problem with
    all its parts) resampled with replacement, the score of each resample its points over its points
    available. The generator is seeded so that the tables stay byte-stable."""
    drawn = group.assign(points=group["points"].fillna(0), _cluster=clusters(group))
    per_cluster = drawn.groupby("_cluster")[["points", "max_points"]].sum()
    low, high = ratio_bootstrap(
        per_cluster["points"].to_numpy(), per_cluster["max_points"].to_numpy(), resamples, seed=0
    )
    return (low, high) if math.isnan(low) else (round(low, 2), round(high, 2))


def resampled(frame: pd.DataFrame, unit: str) -> dict[tuple[str, str, str], str]:
    """What each cell's interval resampled, as its metrics say it: `4 exam problems, 5 answers`."""
    drawn = frame.assign(_cluster=clusters(frame)).groupby(CELL)["_cluster"].agg(["nunique", "size"])
    return {cell: resampled_text(int(n), unit, int(size)) for cell, (n, size) in drawn.iterrows()}


def summary_notes(frame: pd.DataFrame, unit: str) -> list[str]:
    return [interval_method(unit), *resampled_lines(frame, unit)]


def with_usage(table: pd.DataFrame, layout: Layout, family: str) -> pd.DataFrame:
    """Each cell's tokens and cost, generation's and its judge's apart, from their usage metrics
    (its generation's, per suite x model; each judge's, per judge of the cell). A cost that is
    unknown (replies that came without a usage, or with figures that are no token counts) says
    "unknown", never 0; where some cell's replies were served by another model than the one asked,
    or reported usage whose parts disagree, a column counts them."""
    cells = list(zip(table["suite"], table["model"], table["judge"]))
    generation = [_usage(layout.usage(family, suite, model)) for suite, model, _ in cells]
    judging = [_usage(layout.judge_usage(family, suite, model, judge)) for suite, model, judge in cells]
    table = table.assign(
        **{
            "generation tokens": _tokens(generation),
            "generation cost ($)": _costs(generation),
            "judge tokens": _tokens(judging),
            "judge cost ($)": _costs(judging),
        }
    )
    for column, key, usages in (
        (OTHER_MODEL, "other_model", generation),
        (JUDGE_OTHER_MODEL, "other_model", judging),
        (USAGE_MISMATCHED, "usage_mismatched", generation),
        (JUDGE_USAGE_MISMATCHED, "usage_mismatched", judging),
    ):
        flagged = [usage.get(key, 0) for usage in usages]
        if any(flagged):  # only then: every table of runs without such replies keeps its bytes
            table[column] = pd.array(flagged, dtype="Int64")
    return table


OTHER_MODEL = "replies from another model"
JUDGE_OTHER_MODEL = "judge replies from another model"
USAGE_MISMATCHED = "replies whose usage parts disagree"  # counted as given: the cost beside it may be wrong
JUDGE_USAGE_MISMATCHED = "judge replies whose usage parts disagree"
UNKNOWN = "unknown"  # a cost whose replies did not all say what they used


def _tokens(usages: list[dict]) -> pd.api.extensions.ExtensionArray:
    """Input and output tokens together; missing where a cell has no usage metrics."""
    return pd.array(
        [u.get("prompt_tokens", 0) + u.get("completion_tokens", 0) if u else None for u in usages], dtype="Int64"
    )


def _costs(usages: list[dict]) -> list:
    return [(UNKNOWN if u.get("cost_usd") is None else u["cost_usd"]) if u else None for u in usages]


def _usage(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _score_percent(group: pd.DataFrame) -> float:
    """Points earned over points available; a failed response earns nothing but still counts."""
    available = group["max_points"].sum()
    return round(100 * group["points"].fillna(0).sum() / available, 2) if available else float("nan")


def protocol_by_judge(frame: pd.DataFrame) -> pd.DataFrame:
    """Each judge's protocol and config. A judge whose cells were judged under different ones (a
    cell left from before a protocol changed) would put two protocols' numbers in one table."""
    made = frame.drop_duplicates([*CELL, *PROVENANCE])
    mixed = made.groupby("judge").filter(lambda cells: len(cells[PROVENANCE].drop_duplicates()) > 1)
    if not mixed.empty:
        cells = "; ".join(
            f"{s} x {m}: {p or 'not recorded'} ({c})"
            for s, m, p, c in mixed[["suite", "model", "protocol", "judge_config"]].itertuples(index=False)
        )
        raise InputError(
            f"judge '{mixed['judge'].iloc[0]}': its cells were judged under different protocols or "
            f"configs ({cells}): judge the older cells again (dvc repro --force judge@<suite>-<model>-<judge>, "
            "then dvc repro)"
        )
    return made.groupby("judge")[PROVENANCE].first()


def with_protocol(table: pd.DataFrame, made: pd.DataFrame) -> pd.DataFrame:
    """A table with a row per judge's numbers gets that judge's protocol as its last column, so
    that a number is never read apart from the protocol (and version) that made it. (Its CSV does:
    the Markdown and LaTeX, made to be read and printed, say it in a note below or a comment above.)"""
    if "judge" not in table.columns or "protocol" in table.columns:
        return table
    return table.join(made["protocol"], on="judge")


def made_by(made: pd.DataFrame, judge: str) -> str:
    """What made a judge's numbers: its protocol, its config's hash and the versions of the packages
    that decided its verdicts."""
    protocol, config, packages = made.loc[judge, PROVENANCE]
    return (
        f"{protocol}; judge config {config}; {packages}"
        if protocol
        else "not recorded (judged before protocols had versions)"
    )


def made_by_lines(made: pd.DataFrame) -> list[str]:
    return [f"{judge}: {made_by(made, judge)}" for judge in made.index]


# ---------------------------------------------------------------- partial suites


def partial_suites(benchmark: str, suites: dict, layout: Layout) -> dict[str, str]:
    """Each of the plan's suites of the benchmark that leaves problems out, with what it took
    (`5 of 403 problems (limit 5)`). Worked out as its render stage did, from the same suite
    config and problems (both dependencies of this stage); the problems are read only when some
    suite sets a selection option."""
    typed = {name: typed_suite(name, OmegaConf.create(suite)) for name, suite in suites.items()}
    selecting = {name: suite for name, suite in typed.items() if selection_options(suite)}
    if not selecting:
        return {}
    problems = read_jsonl(layout.problem_records(benchmark), Problem)
    taken = {name: selection(problems, select(problems, suite, name), suite) for name, suite in selecting.items()}
    return {name: took.describe() for name, took in sorted(taken.items()) if took.partial}


def with_partial(table: pd.DataFrame, partial: dict[str, str]) -> pd.DataFrame:
    """A table's CSV where some suite is partial: a `partial` column with what each row's suite
    took (empty for a whole suite), or, in a table whose rows pool suites, every partial suite."""
    if not partial:
        return table
    pooled = "; ".join(partial_lines(partial))
    return table.assign(partial=table["suite"].map(partial) if "suite" in table.columns else pooled)


def partial_lines(partial: dict[str, str]) -> list[str]:
    return [f"{suite}: {took}" for suite, took in partial.items()]


def partial_markdown(partial: dict[str, str]) -> str:
    return (
        "\nPartial, not every problem:\n" + "".join(f"- partial: {line}\n" for line in partial_lines(partial))
        if partial
        else ""
    )


def partial_latex(partial: dict[str, str]) -> str:
    return "".join(f"% partial: {line}\n" for line in partial_lines(partial))


def headline(
    summary: pd.DataFrame, frame: pd.DataFrame, partial: dict[str, str], unit: str = "problem"
) -> dict[tuple[str, str, str], dict]:
    """Each cell's headline for `dvc metrics show` and `dvc exp show`, a few columns wide: its
    score, the score's 95% interval and what it resampled (`ci_resampled`: its clusters, named by
    the benchmark's `cluster_unit`, and answers), its coverage (the share of its judgments that were
    scored, as its judge stage counts it), the protocol (with its version) that made it and, for a
    suite that leaves problems out, what it took; the counts, costs, judge config and package
    versions are in the summary table."""
    judgments = frame.groupby(CELL).size()
    drawn = resampled(frame, unit)
    return {
        (row["suite"], row["model"], row["judge"]): {
            "score": row["score (%)"],
            "ci_low": row["95% CI low"],
            "ci_high": row["95% CI high"],
            "ci_resampled": drawn[(row["suite"], row["model"], row["judge"])],
            "coverage": round(row["scored"] / judgments[(row["suite"], row["model"], row["judge"])], 6),
            "protocol": row["protocol"],
            **({"partial": partial[row["suite"]]} if row["suite"] in partial else {}),
        }
        for row in summary.to_dict("records")
    }


def plot_data(frame: pd.DataFrame, summary: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Long tables for `dvc plots`: the score of each cell, and of each cell per subset."""
    cell = lambda table: table["model"] + " / " + table["judge"] + " / " + table["suite"]  # noqa: E731
    scores = pd.DataFrame({"cell": cell(summary), "score (%)": summary["score (%)"]})
    subsets = frame.groupby(["suite", "model", "judge", "subset"]).apply(_score_percent, include_groups=False)
    subsets = subsets.rename("score (%)").reset_index()
    return {
        "scores": scores,
        "subsets": pd.DataFrame(
            {"cell": cell(subsets), "subset": subsets["subset"], "score (%)": subsets["score (%)"]}
        ),
    }


def with_suites(bench_cfg, suites: dict):
    """The benchmark's config with `suites` added, each typed as its render stage types it (a copy:
    Hydra's own config is read-only)."""
    plain = OmegaConf.to_container(bench_cfg, resolve=True) if OmegaConf.is_config(bench_cfg) else dict(bench_cfg)
    return OmegaConf.create(
        {
            **plain,
            "suites": {
                name: OmegaConf.to_container(typed_suite(name, OmegaConf.create(suite)))
                for name, suite in suites.items()
            },
        }
    )


def table_index(benchmark: str, names: list[str]) -> dict:
    """What the tables folder holds, in the order the tables are printed: each table's name, its
    title, and its file in each format; the report reads it (`TABLE_INDEX`)."""
    return {
        "benchmark": benchmark,
        "all": "tables.md",
        "tables": [
            {
                "name": name,
                "title": name.replace("_", " "),
                "files": {"markdown": f"{name}.md", "csv": f"{name}.csv", "latex": f"{name}.tex"},
            }
            for name in names
        ],
    }


def aggregate(
    benchmark: str, bench_cfg, plan: dict, layout: Layout, suites: dict | None = None
) -> dict[str, pd.DataFrame]:
    """Write a benchmark's tables, their index, its metrics and plots where `layout` puts them.
    `suites`: the composed config of each of the plan's suites of this benchmark, which its tables
    read under `suites` in the benchmark's config (which suites are one setting, and so on)."""
    bench = plugin(bench_cfg.kind)
    frame = load_judgments(layout, plan, benchmark, bench.score_parts, bench.cluster_of)
    made = protocol_by_judge(frame)
    summary = with_usage(counts(frame), layout, plan["family"][benchmark]).join(
        made[["protocol", "judge_config"]].rename(columns={"judge_config": "judge config"}), on="judge"
    )
    with_interval_notes(summary, summary_notes(frame, bench.cluster_unit))
    tables = {"summary": summary, **bench.tables(frame, with_suites(bench_cfg, suites or {}))}
    partial = partial_suites(benchmark, suites or {}, layout)
    write_tables(benchmark, tables, made, layout.tables(benchmark), partial)
    with atomic_dir(layout.metrics(benchmark)) as staging:
        for (suite, model, judge), metrics in headline(summary, frame, partial, bench.cluster_unit).items():
            write_json(staging / suite / model / f"{judge}.json", metrics)
    for name, table in plot_data(frame, summary).items():
        with atomic_file(layout.plot(benchmark, name)) as handle:
            table.to_csv(handle, index=False, lineterminator="\n")
    return tables


def write_tables(
    benchmark: str,
    tables: dict[str, pd.DataFrame],
    made: pd.DataFrame,
    folder: Path,
    partial: dict[str, str] | None = None,
) -> None:
    """Each table as CSV, Markdown and LaTeX, all of them in tables.md, and their index; each
    says which suites are `partial` (suite: what it took; see `partial_suites`), and a table with
    intervals what they resampled (its `interval_notes`)."""
    notes, partial = made_by_lines(made), partial or {}
    index = table_index(benchmark, list(tables))
    with atomic_dir(folder) as staging:
        sections = []
        for entry in index["tables"]:
            table, files = tables[entry["name"]], entry["files"]
            drawn = interval_notes(table)
            with_partial(with_protocol(table, made), partial).to_csv(
                staging / files["csv"], index=False, lineterminator="\n"
            )
            shown = to_markdown(table) + intervals_markdown(drawn) + partial_markdown(partial)
            (staging / files["markdown"]).write_text(shown + made_by_markdown(notes), encoding="utf-8")
            (staging / files["latex"]).write_text(
                partial_latex(partial) + made_by_latex(notes) + intervals_latex(drawn) + to_latex(table),
                encoding="utf-8",
            )
            sections.append(f"## {benchmark}: {entry['title']}\n\n{shown}")
        sections.append(made_by_markdown(notes).lstrip("\n"))  # no heading: headings name the tables
        (staging / index["all"]).write_text("\n".join(sections), encoding="utf-8")
        write_json(staging / TABLE_INDEX, index)
