"""Aggregate: the judgments of a benchmark's cells in the plan, turned into its tables.

Reads exactly the cells of the plan (never a glob: a cell removed from the plan leaves its files
behind), writes every table as Markdown and CSV, and a metrics JSON that `dvc metrics show` reads.
Errors are counted next to every score: a failed generation or judgment is never hidden.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd

from olympiad_eval.benchmarks import module
from olympiad_eval.records import InputError, Judgment, atomic_dir, atomic_file, read_jsonl, write_json

COUNTS = ["problems", "scored", "judge errors", "failed generations", "truncated"]


def judgment_path(outputs: str | Path, suite: str, model: str, judge: str) -> Path:
    return Path(outputs) / "judgments" / suite / model / f"{judge}.jsonl"


def cells(plan: dict, benchmark: str) -> list[tuple[str, str, str]]:
    suites = [suite for suite, bench in dict(plan["suites"]).items() if bench == benchmark]
    return [(s, m, j) for s in suites for m in plan["models"] for j in plan["judges"]]


def load_judgments(outputs: str | Path, plan: dict, benchmark: str) -> pd.DataFrame:
    rows = []
    for suite, model, judge in cells(plan, benchmark):
        path = judgment_path(outputs, suite, model, judge)
        if not path.is_file():
            raise InputError(f"{path}: the plan's cell {suite} x {model} x {judge} has no judgments; run its stages first")
        rows += [asdict(judgment) for judgment in read_jsonl(path, Judgment)]
    if not rows:
        raise InputError(f"benchmark '{benchmark}': no suite of the plan belongs to it")
    return pd.DataFrame(rows)


def counts(frame: pd.DataFrame) -> pd.DataFrame:
    """Per cell: how many problems, how many scored, and every kind of failure."""
    grouped = frame.groupby(["suite", "model", "judge"])
    table = pd.DataFrame({
        "problems": grouped["id"].nunique(),
        "samples": grouped["sample"].nunique(),
        "scored": grouped["status"].apply(lambda s: int((s == "scored").sum())),
        "judge errors": grouped["status"].apply(lambda s: int((s == "judge_error").sum())),
        "failed generations": grouped["status"].apply(lambda s: int((s == "generation_error").sum())),
        "truncated": grouped["truncated"].sum().astype(int),
        "score (%)": grouped.apply(_score_percent, include_groups=False),
    })
    bounds = grouped.apply(bootstrap_interval, include_groups=False)
    table["95% CI low"] = bounds.map(lambda pair: pair[0])
    table["95% CI high"] = bounds.map(lambda pair: pair[1])
    return table.reset_index()


BOOTSTRAP_RESAMPLES = 1000


def bootstrap_interval(group: pd.DataFrame, resamples: int = BOOTSTRAP_RESAMPLES) -> tuple[float, float]:
    """The 95% percentile bootstrap interval of the score, resampling problems (with all their
    samples) with replacement. The generator is seeded so that the tables stay byte-stable."""
    per_problem = group.groupby("id").agg(points=("points", lambda p: p.fillna(0).sum()), available=("max_points", "sum"))
    if per_problem["available"].sum() == 0:
        return float("nan"), float("nan")
    rng = np.random.default_rng(0)
    picks = rng.integers(0, len(per_problem), size=(resamples, len(per_problem)))
    earned, available = per_problem["points"].to_numpy()[picks].sum(1), per_problem["available"].to_numpy()[picks].sum(1)
    scores = 100 * earned / np.where(available > 0, available, np.nan)
    low, high = np.nanpercentile(scores, [2.5, 97.5])
    return round(float(low), 2), round(float(high), 2)


def with_usage(table: pd.DataFrame, outputs: str | Path) -> pd.DataFrame:
    """Each cell's generation tokens and cost, from the generate stage's usage metrics."""
    usage = [_usage(outputs, suite, model) for suite, model in zip(table["suite"], table["model"])]
    tokens = [u.get("prompt_tokens", 0) + u.get("completion_tokens", 0) if u else None for u in usage]
    return table.assign(**{"tokens": pd.array(tokens, dtype="Int64"),
                           "cost ($)": [u.get("cost_usd") if u else None for u in usage]})


def _usage(outputs: str | Path, suite: str, model: str) -> dict:
    path = Path(outputs) / "usage" / suite / f"{model}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _score_percent(group: pd.DataFrame) -> float:
    """Points earned over points available; a failed response earns nothing but still counts."""
    available = group["max_points"].sum()
    return round(100 * group["points"].fillna(0).sum() / available, 2) if available else float("nan")


def headline(table: pd.DataFrame) -> dict:
    metrics: dict = {}
    for row in table.to_dict("records"):
        cell = metrics.setdefault(row["suite"], {}).setdefault(row["model"], {})
        cell[row["judge"]] = {
            "score": row["score (%)"], "scored": row["scored"], "problems": row["problems"],
            "judge_errors": row["judge errors"], "failed_generations": row["failed generations"],
            "truncated": row["truncated"],
        }
    return metrics


def to_markdown(table: pd.DataFrame) -> str:
    missing = table.astype(object).where(table.notna(), None)  # NaN and <NA> alike print as "–"
    return missing.to_markdown(index=False, floatfmt=".2f", missingval="–") + "\n"


# Counts, not scores: no "best" among them. A row of reference values ("full marks") is not ranked.
NOT_RANKED = {"problems", "samples", "scored", "judge errors", "failed generations", "truncated",
              "95% CI low", "95% CI high", "tokens", "cost ($)"}
REFERENCE_ROWS = {"full marks"}
_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(char, char) for char in text)


def to_latex(table: pd.DataFrame) -> str:
    """A booktabs table; in each score column the best value is bold and the second underlined,
    as the papers print them."""
    ranked_rows = ~table.iloc[:, 0].astype(str).isin(REFERENCE_ROWS)
    marks: dict[tuple[int, str], str] = {}
    for column in table.columns:
        if column in NOT_RANKED or not pd.api.types.is_numeric_dtype(table[column]):
            continue
        values = sorted({round(v, 2) for v in table.loc[ranked_rows, column].dropna()}, reverse=True)
        for row, value in table[column].items():
            if ranked_rows[row] and pd.notna(value) and values:
                if round(value, 2) == values[0]:
                    marks[(row, column)] = r"\textbf"
                elif len(values) > 1 and round(value, 2) == values[1]:
                    marks[(row, column)] = r"\underline"
    align = "".join("r" if pd.api.types.is_numeric_dtype(table[c]) else "l" for c in table.columns)
    lines = [rf"\begin{{tabular}}{{{align}}}", r"\toprule",
             " & ".join(latex_escape(str(c)) for c in table.columns) + r" \\", r"\midrule"]
    for row, record in table.iterrows():
        cells = []
        for column in table.columns:
            value = record[column]
            text = "--" if pd.isna(value) else (f"{value:.2f}" if isinstance(value, float) else latex_escape(str(value)))
            cells.append(f"{marks[(row, column)]}{{{text}}}" if (row, column) in marks else text)
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def plot_data(frame: pd.DataFrame, summary: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Long tables for `dvc plots`: the score of each cell, and of each cell per subset."""
    cell = lambda table: table["model"] + " / " + table["judge"] + " / " + table["suite"]  # noqa: E731
    scores = pd.DataFrame({"cell": cell(summary), "score (%)": summary["score (%)"]})
    subsets = frame.groupby(["suite", "model", "judge", "subset"]).apply(_score_percent, include_groups=False)
    subsets = subsets.rename("score (%)").reset_index()
    return {"scores": scores, "subsets": pd.DataFrame({"cell": cell(subsets), "subset": subsets["subset"],
                                                       "score (%)": subsets["score (%)"]})}


def aggregate(benchmark: str, bench_cfg, plan: dict, outputs: str | Path, tables_dir: str | Path,
              metrics_path: str | Path, plots_dir: str | Path | None = None) -> dict[str, pd.DataFrame]:
    frame = load_judgments(outputs, plan, benchmark)
    summary = with_usage(counts(frame), outputs)
    tables = {"summary": summary, **module(bench_cfg.kind).tables(frame, bench_cfg)}
    with atomic_dir(tables_dir) as staging:
        sections = []
        for name, table in tables.items():
            table.to_csv(staging / f"{name}.csv", index=False, lineterminator="\n")
            (staging / f"{name}.md").write_text(to_markdown(table), encoding="utf-8")
            (staging / f"{name}.tex").write_text(to_latex(table), encoding="utf-8")
            sections.append(f"## {benchmark}: {name.replace('_', ' ')}\n\n{to_markdown(table)}")
        (staging / "tables.md").write_text("\n".join(sections), encoding="utf-8")
    write_json(metrics_path, headline(summary))
    if plots_dir is not None:
        for name, table in plot_data(frame, summary).items():
            with atomic_file(Path(plots_dir) / f"{name}.csv") as handle:
                table.to_csv(handle, index=False, lineterminator="\n")
    return tables
