"""The aggregate's tables as the report's index shows them, laid out for a 1,400-pixel screen; each
whole, as its CSV has it, one click away.

- Rows that differ only in their judge (and its config) are one row, whose judge cell names every
  judge it stands for: a benchmark scored by rules alone reads the same under each judge.
- The headline comes first: the columns that name a row, the scores with their 95% interval in the
  same cell, and the counts of what went wrong where one is not 0. A column with one value in every
  row is said once above the table; the protocol that made each row once below it, with its judges.
- Sample counts, tokens, cost, the protocol and judge config columns are in the whole table
  (`<details>`), which is the CSV's.
- A table of many score columns (an exam or subject each) that its headers would make wider than
  the page stands the headers of its number columns upright, so that each is as wide as its numbers.
"""

from __future__ import annotations

import math

import pandas as pd

from olympiad_eval.report.html import text

JUDGE_COLUMNS = ("judge", "judge config")  # what two judges' rows differ in by definition
PROTOCOL = "protocol"
# Counts of what went wrong: in the headline where one is not 0, else named once as 0 everywhere.
ISSUES = (
    "judge errors",
    "undecided",
    "failed generations",
    "refusals",
    "truncated",
    "replies from another model",
    "judge replies from another model",
)
# In the whole table only (and the CSV).
DETAILS = ("samples", "generation tokens", "generation cost ($)", "judge tokens", "judge cost ($)", "judge config")
LOW, HIGH = "95% CI low", "95% CI high"
# What a table's headline may take: the page's 1,200 px less its margins. A table that its headers
# would make wider stands the headers of its score columns upright (CHAR: a character's width, px).
WIDTH, CHAR, PADDING = 1150, 8.6, 22
DASH = "\u2013"


def collapsed(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows that differ only in their judge (and its config) as one, each of those columns
    naming every judge's value in the order of the rows ("rule, scripted")."""
    if "judge" not in frame.columns:
        return frame
    others = [column for column in frame.columns if column not in JUDGE_COLUMNS]
    groups: dict[tuple, list[int]] = {}
    for index, row in enumerate(frame.itertuples(index=False)):
        values = dict(zip(frame.columns, row))
        groups.setdefault(tuple(_plain(values[column]) for column in others), []).append(index)
    rows = []
    for indexes in groups.values():
        row = frame.iloc[indexes[0]].copy()
        for column in JUDGE_COLUMNS:
            if column in frame.columns:
                row[column] = ", ".join(dict.fromkeys(str(frame.iloc[i][column]) for i in indexes))
        rows.append(row)
    return pd.DataFrame(rows, columns=frame.columns).reset_index(drop=True)


def intervals(columns: list[str]) -> dict[str, tuple[str, str]]:
    """Each score column with its interval's ends: `Ans.` with `Ans. 95% CI low` and `... high`; a
    bare `95% CI low` belongs to the column before it (`score (%)`)."""
    found = {}
    for at, column in enumerate(columns):
        if not str(column).endswith(LOW):
            continue
        prefix = str(column)[: -len(LOW)]
        high = prefix + HIGH
        owner = prefix.strip() if prefix.strip() in columns else (columns[at - 1] if at else None)
        if owner is not None and high in columns and not str(owner).endswith((LOW, HIGH)):
            found[owner] = (column, high)
    return found


def table_html(frame: pd.DataFrame, source: str) -> str:
    """A table of the aggregate's (`source`: its CSV, as the notes name it): the headline, its notes,
    and the whole table one click away."""
    whole = frame
    frame = collapsed(frame)
    columns = [str(column) for column in frame.columns]
    paired = intervals(columns)
    ends = {end for pair in paired.values() for end in pair}
    same = [
        column
        for column in columns
        if len(frame) > 1
        and column not in DETAILS
        and not _numeric(frame[column])
        and frame[column].nunique(dropna=False) == 1
    ]
    quiet = [column for column in ISSUES if column in columns and not frame[column].fillna(0).astype(bool).any()]
    hidden = set(DETAILS) | {PROTOCOL} | ends | set(same) | set(quiet)
    shown = [column for column in columns if column not in hidden]
    numbers = [column for column in shown if _numeric(frame[column])]
    upright = _width(frame, shown, paired) > WIDTH
    upright_head = ' class="upright"' if upright else ""
    heads = "".join(
        f"<th{upright_head if column in numbers else ''}><span>{_breakable(column)}</span></th>" for column in shown
    )
    rows = []
    for record in frame.to_dict("records"):
        cells = []
        for column in shown:
            value = _value(record[column])
            if column in paired and _plain(record[paired[column][0]]) is not None:
                low, high = (_value(record[end]) for end in paired[column])
                value += f' <span class="interval">[{low}, {high}]</span>'
            cells.append(f'<td class="num">{value}</td>' if column in numbers else f"<td>{value}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    shared = "; ".join(f"{text(column)} <b>{text(frame[column].iloc[0])}</b>" for column in same)
    below = " \u00b7 ".join(_notes(frame, len(frame) < len(whole), quiet, bool(paired), PROTOCOL in same))
    full = whole.to_html(index=False, na_rep=DASH, float_format="%.2f", escape=True, border=0)
    return (
        (f'<p class="table-note">every row: {shared}</p>' if shared else "")
        + f'<div class="table-wrap"><table class="summary-table">\n<thead><tr>{heads}</tr></thead>\n<tbody>\n'
        + "\n".join(rows)
        + "\n</tbody></table></div>\n"
        + (f'<p class="table-note">{below}</p>' if below else "")
        + f'<details class="all-columns"><summary>all {len(whole.columns)} columns, every judge its own row, as in '
        f"{text(source)}</summary>\n" + f'<div class="table-wrap">{full}</div></details>'
    )


def _notes(frame: pd.DataFrame, joined: bool, quiet: list[str], paired: bool, one_protocol: bool) -> list[str]:
    """What the headline leaves out or joins, said once under the table (the protocol with the
    judges it made each row for, unless one made every row: that is said above it)."""
    notes = ["[95% interval] after each score"] if paired else []
    if joined:
        notes.append("a row that judges scored alike names every such judge")
    if quiet:
        notes.append("0 in every row: " + text(", ".join(quiet)))
    if PROTOCOL in frame.columns and "judge" in frame.columns and not one_protocol:
        judges: dict[str, list[str]] = {}
        for protocol, named in zip(frame[PROTOCOL], frame["judge"]):
            names = judges.setdefault(str(protocol), [])
            names += [judge for judge in str(named).split(", ") if judge not in names]
        notes.append(
            "made by "
            + "; ".join(
                f"{text(protocol)} (judge{'s' * (len(names) > 1)} {text(', '.join(names))})"
                for protocol, names in judges.items()
            )
        )
    return notes


def _width(frame: pd.DataFrame, shown: list[str], paired: dict) -> float:
    """About how wide the headline is with its headers lying down: each column as wide as its
    longest word of header or its widest value (with its interval)."""
    total = 0.0
    for column in shown:
        header = max((len(word) for word in column.replace("_", "_ ").replace("/", "/ ").split()), default=0)
        values = [len(_value(value)) + (16 if column in paired else 0) for value in frame[column]]
        total += max([header, *values]) * CHAR + PADDING
    return total


def _numeric(column: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column)


def _plain(value):
    """A value as rows are compared: every missing value alike."""
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def _value(value) -> str:
    if _plain(value) is None:
        return DASH
    if isinstance(value, float):
        return f"{value:.2f}"
    return text(value)


def _breakable(name: str) -> str:
    """A header that may wrap after an underscore or a slash (`DemoCPhO_` / `2025`), never inside a word."""
    return text(name).replace("_", "_<wbr>").replace("/", "/<wbr>")
