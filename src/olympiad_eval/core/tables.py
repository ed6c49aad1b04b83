"""Writing tables: Markdown and LaTeX with the lines that say what made them (protocol, judge config,
packages), as the aggregate stage and `cli.compare` write them."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from olympiad_eval.core.records import InputError
from olympiad_eval.core.stats import BOOTSTRAP_RESAMPLES, FEW_CLUSTERS, resampled_text

CELL = ["suite", "model", "judge"]  # the columns that name a cell in a frame of judgments
# The column of a frame of judgments that names each one's cluster (`Benchmark.cluster_of`): what a
# 95% interval resamples as one. A frame without it (a benchmark's tables called on a frame made by
# hand) clusters by problem id.
CLUSTER = "cluster"
# Where a table keeps the notes that say what its intervals resampled (`DataFrame.attrs`): the
# Markdown prints them under the table, the LaTeX as comments above it.
INTERVALS = "intervals"


def clusters(frame: pd.DataFrame) -> pd.Series:
    """Each judgment's cluster: the frame's `cluster` column, else its problem."""
    return frame[CLUSTER] if CLUSTER in frame.columns else frame["id"]


def with_interval_notes(table: pd.DataFrame, lines: list[str]) -> pd.DataFrame:
    """The table, carrying the lines that say what its intervals resampled (see `interval_notes`)."""
    table.attrs[INTERVALS] = list(lines)
    return table


def interval_notes(table: pd.DataFrame) -> list[str]:
    return list(table.attrs.get(INTERVALS) or [])


def interval_method(unit: str, columns: str = "95% CI low, 95% CI high") -> str:
    """The first note of a table with intervals: how they were made and what one draw takes."""
    return (
        f"{columns}: a percentile cluster bootstrap ({BOOTSTRAP_RESAMPLES:,} resamples, seed 0) that draws "
        f"whole {unit}s with replacement, each with all its answers (its questions, languages and samples, "
        f"which are not independent)"
    )


def resampled_lines(frame: pd.DataFrame, unit: str, cells: list[str] = CELL, by: str = "suite") -> list[str]:
    """What each row's interval resampled, a line per `by` (a suite) whose cells all resampled
    alike (`sample_hipho: 4 exam problems, 5 answers`), else a line per cell; with the warning that
    fewer than `FEW_CLUSTERS` clusters make a too narrow interval."""
    drawn = frame.assign(_cluster=clusters(frame)).groupby(cells, sort=True)["_cluster"].agg(["nunique", "size"])
    lines = []
    for key, group in drawn.groupby(level=cells.index(by), sort=True):
        rows = {tuple(map(int, counts)) for counts in group[["nunique", "size"]].itertuples(index=False)}
        named = (
            [(str(key), *rows)]
            if len(rows) == 1
            else [(" x ".join(map(str, cell)), (int(n), int(size))) for cell, (n, size) in group.iterrows()]
        )
        for name, (count, answers) in named:
            few = f" (fewer than {FEW_CLUSTERS}: the interval is likely too narrow)" if count < FEW_CLUSTERS else ""
            lines.append(f"{name}: {resampled_text(count, unit, answers)}{few}")
    return lines


def intervals_markdown(lines: list[str]) -> str:
    return "\n95% intervals:\n" + "".join(f"- {line}\n" for line in lines) if lines else ""


def intervals_latex(lines: list[str]) -> str:
    return "".join(f"% 95% interval: {line}\n" for line in lines)


def check_one_provenance(path: Path, seen: set) -> None:
    """A cell's judgments all come from one protocol version, judge config and package set: a
    file that mixes them (a judgment file pieced together by hand, or appended across versions)
    would average verdicts of different protocols into one number."""
    if len(seen) > 1:
        kinds = "; ".join(" | ".join(value or "(none)" for value in made) for made in sorted(seen))
        raise InputError(
            f"{path}: judgments made by {len(seen)} different protocols or setups ({kinds}): "
            "judge the cell again (dvc repro --force judge@<suite>-<model>-<judge>) so that one protocol scores "
            "the whole cell"
        )


def made_by_markdown(lines: list[str]) -> str:
    return "\nMade by:\n" + "".join(f"- {line}\n" for line in lines)


def made_by_latex(lines: list[str]) -> str:
    return "".join(f"% made by {line}\n" for line in lines)


def to_markdown(table: pd.DataFrame) -> str:
    missing = table.astype(object).where(table.notna(), None)  # NaN and <NA> alike print as "–"
    return missing.to_markdown(index=False, floatfmt=".2f", missingval="–") + "\n"


# Counts, not scores: no "best" among them. A row of reference values ("full marks") is not ranked.
NOT_RANKED = {
    "problems",
    "samples",
    "scored",
    "judge errors",
    "undecided",
    "failed generations",
    "refusals",
    "truncated",
    "95% CI low",
    "95% CI high",
    "generation tokens",
    "generation cost ($)",
    "judge tokens",
    "judge cost ($)",
    "replies from another model",
    "judge replies from another model",
    "protocol",
    "judge config",
}


REFERENCE_ROWS = {"full marks"}


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(char, char) for char in text)


def to_latex(table: pd.DataFrame) -> str:
    """A booktabs table; in each score column the best value is bold and the second underlined,
    as the papers print them."""
    ranked_rows = ~table.iloc[:, 0].astype(str).isin(REFERENCE_ROWS)
    marks: dict[tuple[int, str], str] = {}
    for column in table.columns:
        if (
            column in NOT_RANKED
            or str(column).endswith(("CI low", "CI high"))  # "Ans. 95% CI low": an interval's end, not a score
            or not pd.api.types.is_numeric_dtype(table[column])
        ):
            continue
        values = sorted({round(v, 2) for v in table.loc[ranked_rows, column].dropna()}, reverse=True)
        for row, value in table[column].items():
            if ranked_rows[row] and pd.notna(value) and values:
                if round(value, 2) == values[0]:
                    marks[(row, column)] = r"\textbf"
                elif len(values) > 1 and round(value, 2) == values[1]:
                    marks[(row, column)] = r"\underline"
    align = "".join("r" if pd.api.types.is_numeric_dtype(table[c]) else "l" for c in table.columns)
    lines = [
        rf"\begin{{tabular}}{{{align}}}",
        r"\toprule",
        " & ".join(latex_escape(str(c)) for c in table.columns) + r" \\",
        r"\midrule",
    ]
    for row, record in table.iterrows():
        cells = []
        for column in table.columns:
            value = record[column]
            text = (
                "--" if pd.isna(value) else (f"{value:.2f}" if isinstance(value, float) else latex_escape(str(value)))
            )
            cells.append(f"{marks[(row, column)]}{{{text}}}" if (row, column) in marks else text)
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"
