"""HiPhO's suite options: which exams, and the protocol settings its suites score by."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from olympiad_eval.benchmarks.base import Filter
from olympiad_eval.benchmarks.suites import Scoring as BaseScoring, Suite as BaseSuite, choices

Figures = choices("Figures", ("all", "none"))


@dataclass
class Scoring(BaseScoring):
    """The protocols (docs/protocols.md): olympiad_eval, this project's (the paper's marking: the
    larger of the answer and step level in points, the best scheme; our physics rules and our JSON
    judges); vlmevalkit, the authors' VLMEvalKit code reproduced (`hipho.vlmevalkit`); evalscope,
    evalscope 1.14.1's (`hipho.evalscope`). Prompts: `criterion` (step level) and `answer`."""

    protocol: str = "olympiad_eval"
    rel_tol: float = 0.0  # HiPhO states accepted ranges [a, b] instead
    judge_figures: bool = False  # show the problem's figures to the criterion judge (olympiad_eval)
    # vlmevalkit: VLMEvalKit's prediction file (.xlsx, its default) keeps the first 32,767 characters
    # of a response; null keeps it whole (VLMEvalKit with PRED_FORMAT=tsv)
    prediction_chars: Optional[int] = 32767


@dataclass
class Suite(BaseSuite):
    prompt_language: Optional[str] = None  # null: the problem's language picks the template
    figures: Figures = Figures.all
    exams: Optional[list[str]] = None  # only these exams (IPhO_2025: the release's data/<EXAM>.json); null: all
    scoring: Scoring = field(default_factory=Scoring)


def filters(suite) -> list[Filter]:
    """HiPhO's own part of the release: `exams`, by the exam a problem is from (its subset)."""
    return [Filter("exams", suite.exams, lambda problem: (problem.subset,))]
