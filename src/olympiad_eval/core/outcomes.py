"""What two runs say of each problem: a cell of a run (model, judge, samples), its judgments read as
one outcome per problem (its points, whether it is right), and the problems that flipped between two
runs. The report's side-by-side pages and `cli.compare` both read runs so."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from olympiad_eval.core.records import InputError, Judgment
from olympiad_eval.core.stats import TIE

# pandas only types the flips' table: a cell's pages, which read `RIGHT_FROM`, need not pay its import
if TYPE_CHECKING:
    import pandas as pd

_CELL = re.compile(r"(?P<model>[^/:\s]+)/(?P<judge>[^/:\s]+)(?::(?P<samples>[\d,\-]+))?")


@dataclass(frozen=True)
class Cell:
    """A cell of a suite as the command line names it: its model, judge and samples (() for all)."""

    model: str
    judge: str
    samples: tuple[int, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.model}/{self.judge}" + (f":{samples_text(self.samples)}" if self.samples else "")

    @property
    def slug(self) -> str:
        """The label as a file name: `demo/rule:0,2` is `demo__rule__s0_2`."""
        return f"{self.model}__{self.judge}" + (
            f"__s{samples_text(self.samples).replace(',', '_')}" if self.samples else ""
        )


def parse_cell(text: str) -> Cell:
    match = _CELL.fullmatch(text.strip())
    if match is None:
        raise InputError(f"cell '{text}': write it as MODEL/JUDGE or MODEL/JUDGE:SAMPLES (demo/rule, demo/rule:0-3)")
    samples = parse_samples(match["samples"], text) if match["samples"] else ()
    return Cell(match["model"], match["judge"], samples)


def parse_samples(text: str, cell: str) -> tuple[int, ...]:
    """`0-3,7` is samples 0, 1, 2, 3 and 7."""
    chosen: set[int] = set()
    for part in text.split(","):
        first, dash, last = part.partition("-")
        if not first.isdigit() or (dash and not last.isdigit()) or (dash and int(last) < int(first)):
            raise InputError(f"cell '{cell}': samples '{text}': give sample numbers and ranges, e.g. 0, 0-3, 0,2")
        chosen.update(range(int(first), int(last if dash else first) + 1))
    return tuple(sorted(chosen))


def samples_text(samples: Sequence[int]) -> str:
    """Sample numbers with runs written as ranges: 0, 1, 2, 3, 7 is `0-3,7`."""
    runs: list[list[int]] = []
    for sample in samples:
        if runs and sample == runs[-1][-1] + 1:
            runs[-1].append(sample)
        else:
            runs.append([sample])
    return ",".join(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]) for run in runs)


@dataclass(frozen=True)
class Judged:
    """A cell's judgments of the samples it was asked for, with the file they came from and what made them."""

    cell: Cell
    path: Path
    judgments: tuple[Judgment, ...]
    samples: tuple[int, ...]
    made_by: tuple[str, str, str]  # protocol, judge config, packages


# A problem is right when it earned all its points (score 1); scores are fractions written as
# floats, so "all" allows for the last bit.
RIGHT_FROM = 1 - 1e-9


@dataclass(frozen=True)
class Outcome:
    """One problem in one cell, over the cell's chosen samples."""

    subset: str
    points: float  # mean over the samples; a failed generation or judgment earns 0, as in the tables
    max_points: float
    right: bool  # every sample earned all of the problem's points
    unscored: Counter = field(default_factory=Counter)  # samples not scored, by status


def outcomes(judged: Judged) -> dict[str, Outcome]:
    by_problem: dict[str, list[Judgment]] = {}
    for judgment in judged.judgments:
        by_problem.setdefault(judgment.id, []).append(judgment)
    return {problem: outcome(judged, problem, samples) for problem, samples in by_problem.items()}


def outcome(judged: Judged, problem: str, samples: list[Judgment]) -> Outcome:
    missing = sorted(set(judged.samples) - {judgment.sample for judgment in samples})
    if missing:
        raise InputError(
            f"{judged.path}: record {problem}: no judgment of sample {samples_text(missing)}, "
            f"which cell {judged.cell.label} compares; rerun its stages"
        )
    return Outcome(
        subset=samples[0].subset,
        points=sum(j.points or 0.0 for j in samples) / len(samples),
        max_points=samples[0].max_points,
        right=all(j.status == "scored" and j.score is not None and j.score >= RIGHT_FROM for j in samples),
        unscored=Counter(j.status for j in samples if j.status != "scored"),
    )


def percent(part: float, whole: float) -> float:
    return 100 * part / whole if whole else math.nan


def flips_table(problems: list[str], pairs: list[tuple[Outcome, Outcome]]) -> pd.DataFrame:
    """Every problem whose right/wrong flipped between the runs, or whose points changed."""
    rows = []
    for problem, (a, b) in zip(problems, pairs):
        change = (
            "right → wrong"
            if a.right and not b.right
            else "wrong → right"
            if b.right and not a.right
            else "fewer points"
            if a.points - b.points > TIE * a.max_points
            else "more points"
            if b.points - a.points > TIE * a.max_points
            else None
        )
        if change:
            rows.append(
                {
                    "id": problem,
                    "subset": a.subset,
                    "A points": a.points,
                    "B points": b.points,
                    "max points": a.max_points,
                    "change": change,
                    "unscored": unscored_text(a, b),
                }
            )
    import pandas as pd

    return pd.DataFrame(rows, columns=["id", "subset", "A points", "B points", "max points", "change", "unscored"])


def unscored_text(a: Outcome, b: Outcome) -> str:
    """Why a flip may be no verdict at all: samples a run failed to generate or judge (scored 0)."""
    said = [
        f"{side}: {count} {status.replace('_', ' ')}"
        for side, outcome in (("A", a), ("B", b))
        for status, count in sorted(outcome.unscored.items())
    ]
    return "; ".join(said)
