"""Evaluate: one model on every suite of one benchmark, as one DVC stage per model and benchmark
(`evaluate@<benchmark>-<model>`, in its family's pipeline). Each suite, in the plan's order, is
generated (`generate`), judged by each of the plan's judges (`judge`), and its pages of the report
written (`report.write_cell`).

DVC's own cost is per stage it runs and grows with the stages that share a lock, so a paper's plan
(every suite x 30 models x 2 judges) cannot be a stage per cell; this stage is the cells of one model
on one benchmark. DVC reruns it whole when anything it depends on changes, so each part of a cell keeps a
stamp of what made it (`core.stamps`: its code, the config values it reads, its input files) and a
part whose stamp still holds is left alone: editing a judge redoes that judge's judgments and the
cells' pages, never the generations; a suite added to the benchmark makes that suite's cells alone.
What a part reads is exactly what its stamp names, so a stamp never hides a change.

A part that fails (too many failed requests, too few responses judged) is recorded as data and not
stamped; the suite's later parts are left for the rerun, the other suites go on, and the stage then
fails naming every such part. An endpoint that cannot serve stops the stage at once (exit 2). What
the plan no longer has (a suite, a judge) is removed from the model's folders, so that they hold
exactly the plan's cells.
"""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from omegaconf import OmegaConf

from olympiad_eval.core.code import EVALUATE_PARTS, current, part_code_list, part_list
from olympiad_eval.core.layout import Layout
from olympiad_eval.core.stamps import Made
from olympiad_eval.report import write_cell_pages
from olympiad_eval.stages.generate import generate_cell
from olympiad_eval.stages.judge import judge_cell

log = logging.getLogger("olympiad_eval")


@dataclass
class Outcome:
    made: list[Made] = field(default_factory=list)

    @property
    def failures(self) -> list[str]:
        return [made.failure for made in self.made if made.failure]

    def summary(self) -> str:
        done = [made for made in self.made if made.summary is not None]
        return f"{len(done)} parts made, {len(self.made) - len(done)} up to date, {len(self.failures)} failed"


def evaluate(plan: dict, layout: Layout, benchmark: str, model: str, cfg, judges: dict, root: Path) -> Outcome:
    """Every cell of `model` on `benchmark`: `cfg` is the stage's config as composed (the model's under
    `model`), `judges` each of the plan's judges' config as composed, by name."""
    suites = [suite for suite, of in plan["suites"].items() if of == benchmark]
    family = plan["family"][benchmark]
    code = {part: part_code(layout, root, family, part) for part in EVALUATE_PARTS}
    settings = OmegaConf.to_container(cfg.model, resolve=True)
    outcome = Outcome()
    for suite in suites:
        generated = generate_cell(
            layout,
            benchmark,
            suite,
            model,
            cfg.model,
            code["generate"],
            cfg.paths.request_cache,
            cfg.max_failed_fraction,
        )
        outcome.made.append(_logged(generated))
        if generated.failure:
            continue
        judged = [
            _logged(
                judge_cell(
                    layout,
                    benchmark,
                    suite,
                    model,
                    name,
                    judge,
                    code["judge"],
                    cfg.paths.request_cache,
                    cfg.min_coverage,
                )
            )
            for name, judge in judges.items()
        ]
        outcome.made += judged
        if any(made.failure for made in judged):
            continue
        outcome.made.append(
            _logged(write_cell_pages(plan, layout, suite, model, settings, code["report"], cfg.paths.plan))
        )
    prune(layout, benchmark, model, suites, list(judges))
    return outcome


def _logged(made: Made) -> Made:
    if made.summary is None:
        log.info("%s: up to date", made.name)
    else:
        log.info("%s: %s", made.name, made.summary)
    return made


def part_code(layout: Layout, root: Path, family: str, part: str) -> str:
    """The code a part runs, as its stamp names it: the list the family's code stage wrote, while it
    still names every file with the hash it has (`core.code.current`); else listed again here."""
    listed = layout.code(family, part_list(part))
    text = listed.read_text(encoding="utf-8") if listed.is_file() else ""
    return text if current(text, root) else part_code_list(part, root, family)


def prune(layout: Layout, benchmark: str, model: str, suites: list[str], judges: list[str]) -> None:
    """Remove from the model's folders (its cells, their pages and stamps) what the plan no longer
    has: a suite left out, a judge left out. A cell's folder then holds exactly the plan's files."""
    folders = (
        layout.cells(benchmark, model),
        layout.report_cell(benchmark, None, model),
        layout.stamp(benchmark, None, model),
    )
    for folder in folders:
        for path in _children(folder):
            if path.name not in suites:
                _remove(path)
    for suite in suites:
        for path in _children(layout.judgments(benchmark, suite, model)):
            if path.name not in judges:
                _remove(path)
        judged = {f"judge-{judge}.json" for judge in judges}
        for path in _children(layout.stamp(benchmark, suite, model, None)):
            if path.name.startswith("judge-") and path.name not in judged:
                _remove(path)


def _children(folder: Path) -> list[Path]:
    return sorted(folder.iterdir()) if folder.is_dir() else []


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink()
