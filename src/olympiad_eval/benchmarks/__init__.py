"""One module per benchmark: loading its release, rendering its prompts, scoring, tables.

Every benchmark module offers the same functions, so the generic stages never need to know
which benchmark they run:

- `load(root, cfg, benchmark) -> list[Problem]`: read a release laid out as officially published;
- `template_fields(problem, suite) -> (template key, fields)`: what fills the suite's template;
- `figures(problem, suite) -> list[Figure]`: the figures sent with the prompt;
- `reference(problem, suite) -> str`: the gold answer written as the prompt asks for it;
- `judge_reference(problem) -> str`: the gold answer as an LLM judge is shown it;
- `score(problem, response, check, rel_tol) -> Score`: answer-level scoring by rules, where
  `check(jobs)` runs (gold, predicted, rel_tol, unit) checks in worker processes;
- `tables(frame, cfg) -> dict[str, DataFrame]`: the benchmark's tables from its judgments.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from types import ModuleType

from olympiad_eval.records import InputError

KINDS = ("hipho", "mathvision", "physelite")


@dataclass(frozen=True)
class Score:
    """What rules made of one response: the fraction of points earned and why."""

    score: float
    points: float
    extracted: tuple[str, ...] = ()
    slots: tuple[dict, ...] = ()
    verdict: str | None = None
    detail: str = ""
    undecided: tuple[str, ...] = field(default=())  # reasons a check could not finish


def module(kind: str) -> ModuleType:
    if kind not in KINDS:
        raise InputError(f"unknown benchmark kind '{kind}'; known kinds: {', '.join(KINDS)}")
    return importlib.import_module(f"olympiad_eval.benchmarks.{kind}")
