"""PhysElite's suite options: the language, the hint, which figures, and the protocol settings its suites score by."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from olympiad_eval.benchmarks.base import Filter
from olympiad_eval.benchmarks.physelite.loading import subjects_of
from olympiad_eval.benchmarks.suites import Placement, Scoring as BaseScoring, Suite as BaseSuite, choices

Figures = choices("Figures", ("none", "schematic", "schematic+process"))  # paper, Table 4


HintMode = choices("HintMode", ("none", "first_step", "without_result"))


@dataclass
class Hint:
    """A textual solution hint after the problem (see `hint`)."""

    mode: HintMode = HintMode.none
    step_separator: str = r"\n+"
    label: str = "Hint:"
    answer_tolerance: float = 0.05


@dataclass
class Scoring(BaseScoring):
    """The paper's protocol: answer verdicts (5% numeric tolerance) and, unless turned off, the
    process score, from each judge of the ensemble. Prompts: `answer`, `process`, `error_type`."""

    rel_tol: float = 0.05
    process: bool = True  # also grade the derivation's steps
    error_types: bool = False  # also classify the error of a wrong answer (the paper's six types)


@dataclass
class Suite(BaseSuite):
    setting: Optional[str] = None  # the row its results take in every table (null: the suite's own name)
    baseline: Optional[str] = None  # the suite a variant setting is compared with
    figures: Figures = Figures.schematic
    figure_placement: Placement = Placement.after_text
    hint: Hint = field(default_factory=Hint)
    subjects: Optional[list[str]] = None  # only problems tagged with one of these subjects; null: all
    difficulty: Optional[list[int]] = None  # only these difficulties (1-7: [6, 7] is the hard band); null: all
    scoring: Scoring = field(default_factory=Scoring)


def filters(suite) -> list[Filter]:
    """PhysElite's own parts of the release: `subjects` (a problem with several subject tags is
    in each) and `difficulty`, as its tables report them."""
    return [
        Filter("subjects", suite.subjects, lambda problem: subjects_of(problem.subject)),
        Filter("difficulty", suite.difficulty, lambda problem: (problem.level,)),
    ]
