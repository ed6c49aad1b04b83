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

import asyncio
import logging
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from olympiad_eval.core.code import EVALUATE_PARTS, current, part_code_list, part_list
from olympiad_eval.core.layout import Layout
from olympiad_eval.core.stamps import Made
from olympiad_eval.report import write_cell_pages
from olympiad_eval.stages.generate import generate_cell_async
from olympiad_eval.stages.judge import judge_cell_async

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
    cell = Cell(
        layout, benchmark, model, cfg, judges, {part: part_code(layout, root, family, part) for part in EVALUATE_PARTS}
    )
    settings = OmegaConf.to_container(cfg.model, resolve=True)
    outcome = Outcome()
    for suite in suites:
        made = asyncio.run(cell.generated_and_judged(suite))
        outcome.made += [_logged(part) for part in made]
        if any(part.failure for part in made):
            continue
        pages = write_cell_pages(plan, layout, suite, model, settings, cell.code["report"], cfg.paths.plan)
        outcome.made.append(_logged(pages))
    prune(layout, benchmark, model, suites, list(judges))
    return outcome


@dataclass(frozen=True)
class Cell:
    """What the cells of one model on one benchmark share: where they go, the stage's config (the
    model's under `model`), each judge's config by name, and each part's code (`part_code`)."""

    layout: Layout
    benchmark: str
    model: str
    cfg: Any
    judges: dict
    code: dict

    async def generated_and_judged(self, suite: str) -> list[Made]:
        """A suite's generations, then each judge's judgments, in the plan's order. Where the cell is
        being generated and an LLM judge has never judged it (a new cell), that judge starts with the
        first reply and grades while the rest come (`judge_cell_async`'s `arriving`), so that
        generating and judging overlap; a judge that judged the cell before waits for the
        generations, which may be those it judged (made again, the same bytes, from the request
        cache), and so finds its judgments up to date. A rules judge always waits: its checks are
        run in one batch."""
        streamed = {
            name: asyncio.Queue()
            for name, judge in self.judges.items()
            if judge.kind == "llm"
            and not self.layout.stamp(self.benchmark, suite, self.model, f"judge-{name}").exists()
        }

        def arrived(generation) -> None:
            for queue in streamed.values():
                queue.put_nowait(generation)

        judging = {name: asyncio.create_task(self.judged(suite, name, queue)) for name, queue in streamed.items()}
        generating = asyncio.create_task(self.generated(suite, arrived if streamed else None))
        try:
            made = await _generated_unless_a_judge_fails(generating, list(judging.values()))
        except BaseException:
            await _cancelled(judging.values())
            raise
        finally:
            for queue in streamed.values():
                queue.put_nowait(None)  # the generations are written (or none will come)
        if made.failure:  # its judging waits for the rerun
            await _cancelled(judging.values())
            return [made]
        return [
            made,
            *[await judging[name] if name in judging else await self.judged(suite, name) for name in self.judges],
        ]

    async def generated(self, suite: str, arrived) -> Made:
        cfg = self.cfg
        return await generate_cell_async(
            self.layout,
            self.benchmark,
            suite,
            self.model,
            cfg.model,
            self.code["generate"],
            cfg.paths.request_cache,
            cfg.max_failed_fraction,
            arrived,
        )

    async def judged(self, suite: str, name: str, arriving: asyncio.Queue | None = None) -> Made:
        cfg = self.cfg
        return await judge_cell_async(
            self.layout,
            self.benchmark,
            suite,
            self.model,
            name,
            self.judges[name],
            self.code["judge"],
            cfg.paths.request_cache,
            cfg.min_coverage,
            arriving,
        )


async def _generated_unless_a_judge_fails(generating: asyncio.Task, judging: list[asyncio.Task]) -> Made:
    """What the generation made; where a judge fails while the cell is generated (its endpoint cannot
    serve), the judge's error, the generation stopped: no more requests are paid for."""
    pending = {generating, *judging}
    while not generating.done():
        done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        failed = [task for task in done if task is not generating and not task.cancelled() and task.exception()]
        if failed:
            await _cancelled([generating])
            raise failed[0].exception()
    return generating.result()


async def _cancelled(tasks) -> None:
    tasks = list(tasks)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


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
        layout.report_cell(benchmark, model=model),
        layout.stamp(benchmark, model=model),
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
