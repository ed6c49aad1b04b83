"""HiPhO's suite options: which exams, and the protocol settings its suites score by."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from olympiad_eval.benchmarks.base import Filter
from olympiad_eval.benchmarks.suites import Scoring as BaseScoring, Suite as BaseSuite, choices

Figures = choices("Figures", ("all", "none"))


@dataclass
class Scoring(BaseScoring):
    """official: the paper's protocol (VLMEvalKit's HiPhO verifier and its judges); evalscope:
    evalscope 1.14.1's (`hipho.evalscope`). Prompts: `criterion` (step level) and `answer`."""

    rel_tol: float = 0.0  # HiPhO states accepted ranges [a, b] instead
    judge_figures: bool = False  # show the problem's figures to the criterion judge


@dataclass
class Suite(BaseSuite):
    prompt_language: Optional[str] = None  # null: the problem's language picks the template
    figures: Figures = Figures.all
    exams: Optional[list[str]] = None  # only these exams (IPhO_2025: the release's data/<EXAM>.json); null: all
    scoring: Scoring = field(default_factory=Scoring)


def filters(suite) -> list[Filter]:
    """HiPhO's own part of the release: `exams`, by the exam a problem is from (its subset)."""
    return [Filter("exams", suite.exams, lambda problem: (problem.subset,))]
