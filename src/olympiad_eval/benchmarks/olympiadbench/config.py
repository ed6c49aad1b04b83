"""OlympiadBench's suite options: subjects, sources, modalities, figures and scoring modes, and the
protocol settings its suites score by."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from olympiad_eval.benchmarks.base import Filter
from olympiad_eval.benchmarks.olympiadbench.loading import AUTO, HUMAN, auto_scored
from olympiad_eval.benchmarks.suites import Scoring as BaseScoring, Suite as BaseSuite

COMPLETE, MISSING = "complete", "missing"  # a problem's figure status


@dataclass
class Scoring(BaseScoring):
    """official: the official automatic scorer (`olympiadbench.official`), its tolerance per problem
    (`error`); rules: our physics rules on the same extracted answer, within `rel_tol`."""

    rel_tol: float = 0.0


@dataclass
class Suite(BaseSuite):
    figure_status: Optional[list[str]] = None  # [complete]: leave out problems whose figure the release lacks
    scoring_modes: Optional[list[str]] = None  # [auto]: only the problems the official scorer scores
    subjects: Optional[list[str]] = None  # maths, physics
    sources: Optional[list[str]] = None  # COMP, CEE
    modalities: Optional[list[str]] = None  # TO, MM
    scoring: Scoring = field(default_factory=Scoring)


def filters(suite) -> list[Filter]:
    """OlympiadBench's parts of the release, as its tables report them, and the two that keep a
    suite to what can be asked and scored (`figure_status`, `scoring_modes`)."""
    own = lambda name: lambda problem: (problem.attributes[name],)  # noqa: E731
    return [
        Filter(
            "figure_status", suite.figure_status, lambda p: (MISSING if p.attributes["figure_missing"] else COMPLETE,)
        ),
        Filter("scoring_modes", suite.scoring_modes, lambda p: (AUTO if auto_scored(p) else HUMAN,)),
        Filter("subjects", suite.subjects, own("subject")),
        Filter("sources", suite.sources, own("source")),
        Filter("modalities", suite.modalities, own("modality")),
    ]
