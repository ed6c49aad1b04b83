"""MATH-Vision's suite options: levels, subjects, and the protocol settings its suites score by."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from olympiad_eval.benchmarks.base import Filter
from olympiad_eval.benchmarks.suites import Scoring as BaseScoring, Suite as BaseSuite, choices

LETTERS = "ABCDE"


LEVELS = range(1, 6)  # the release's difficulty levels; its tables report each


Figures = choices("Figures", ("all", "none"))


@dataclass
class Scoring(BaseScoring):
    """official: MATH-V's own scorer, reproduced (`mathvision.official`); evalscope: evalscope
    1.14.1's scoring, reproduced (`mathvision.evalscope`). Scored by rules alone."""

    rel_tol: float = 0.0


@dataclass
class Suite(BaseSuite):
    figures: Figures = Figures.all
    levels: Optional[list[int]] = None  # only these levels (1-5); null: all
    subjects: Optional[list[str]] = None  # only these subjects (`metric geometry - area`, as the release spells them)
    scoring: Scoring = field(default_factory=Scoring)


def filters(suite) -> list[Filter]:
    """MATH-Vision's own parts of the release: `levels` and `subjects`, as its tables report them."""
    return [
        Filter("levels", suite.levels, lambda problem: (problem.level,)),
        Filter("subjects", suite.subjects, lambda problem: (problem.subject,)),
    ]
