"""Judging ahead: while a cell is generated, each LLM judge of the plan is asked a response's tasks
that need no rules (HiPhO's marking criteria, PhysElite's verdict and process) as soon as the
model's reply arrives, and, once the rules have scored the responses that came meanwhile (in warm
workers, as the judge stage runs them), the tasks that wait for the rules (HiPhO's answer slots the
rules missed): the judges' requests overlap the model's (each endpoint keeps its own `concurrency`).
DVC runs a cell's judge stages after its generate stage, one stage at a time; asked ahead, their
requests wait for them in the request cache.

It writes nothing but those replies: no judgment, no file of any stage. The judge stage that comes
next asks the same requests (the same judge config, composed the same way, about the same response)
and finds them answered; whatever it asks that was not asked ahead (the tasks that wait for the
rules, a judge added since, a config edited since) it sends itself. So what a judge stage writes
never depends on whether its requests were asked ahead, and this module is no code of the generate
stage's outputs (`core.code.CACHE_ONLY`): editing it reruns no stage.

Ahead of time is best effort: a judge whose config does not pass its checks, whose endpoint cannot
serve, or whose asking fails in any way is left to its stage, which says why in its own words; the
generation goes on. A refused or failed reply is cached as the judge stage would cache it.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from omegaconf import OmegaConf

from olympiad_eval.benchmarks import plugin
from olympiad_eval.benchmarks.base import Benchmark
from olympiad_eval.core.layout import SUITE_INFO
from olympiad_eval.core.records import Generation, Problem, read_jsonl, read_suite_info
from olympiad_eval.llm.cache import RequestCache
from olympiad_eval.llm.usage import this_run
from olympiad_eval.scoring.pool import CheckPool
from olympiad_eval.scoring.verdicts import Verdicts
from olympiad_eval.stages.generate import Outcome, generate_cell_async
from olympiad_eval.stages.judge import Asker, by_rules, check_judge, check_options, typed_judge

log = logging.getLogger("olympiad_eval")


def generate_judging_ahead(layout, family: str, suite: str, model: str, cfg, cache_path, max_failed_fraction, judges):
    """`generate.generate_cell`, with each of `judges` (the plan's LLM judges, `llm_judges`) asked
    ahead as the replies come; returns what it returns, once every request asked ahead is answered."""

    async def generating() -> tuple[Outcome, str | None]:
        ahead = Ahead(layout.suite(family, suite), judges, cache_path, f"{suite} x {model}")
        try:
            return await generate_cell_async(
                layout, family, suite, model, cfg, cache_path, max_failed_fraction, ahead.arrived
            )
        finally:
            await ahead.finish()

    return asyncio.run(generating())


def llm_judges(judges: dict) -> dict:
    """Of the plan's judges (name: config as composed), those an LLM grades and whose config passes
    its stage's checks, typed; any other is left to its stage."""
    chosen = {}
    for name, cfg in judges.items():
        try:
            check_judge(cfg, name)
        except Exception as error:  # its own stage says why; generating goes on
            log.warning("judge '%s' is not asked ahead: %s", name, error)
            continue
        typed = typed_judge(cfg, name)
        if typed.kind == "llm":
            chosen[name] = typed
    return chosen


class Ahead:
    """The plan's LLM judges, asking each arriving response's tasks that need no rules."""

    def __init__(self, suite_dir: str | Path, judges: dict, cache_path: str | Path, label: str):
        suite_dir = Path(suite_dir)
        info = read_suite_info(suite_dir / SUITE_INFO)
        self.bench, self.scoring = plugin(info.kind), OmegaConf.create(info.scoring)
        self.problems = {p.id: p for p in read_jsonl(suite_dir / "problems.jsonl", Problem)}
        self.cache = RequestCache(cache_path)
        self.label = label
        self.askers = {
            name: [Asker(judge, endpoint, cfg, self.cache) for judge, endpoint in cfg.judges.items()]
            for name, cfg in judges.items()
        }
        self.asked: list[asyncio.Task] = []
        self.probed: dict[str, asyncio.Task] = {}
        # The rules, where the benchmark asks anything once they have scored (a hook of its own; if
        # not, they wait for the judge stage), in a pool per judges' check settings, as each judge
        # stage runs them; the verdicts they decide are kept for those stages (`scoring.verdicts`).
        after_rules = type(self.bench).judge_tasks_after_rules is not Benchmark.judge_tasks_after_rules
        self.rules = {name: (cfg.workers, cfg.check_cpu_seconds) for name, cfg in judges.items() if after_rules}
        self.pools = {
            settings: CheckPool(*settings, check_options(self.scoring), give_way=True, verdicts=Verdicts(cache_path))
            for settings in set(self.rules.values())
        }
        self.waiting: dict[tuple, list[Generation]] = {settings: [] for settings in self.pools}
        self.more = {settings: asyncio.Event() for settings in self.pools}
        self.generated = False
        self.ruling = [asyncio.create_task(self._rules(settings)) for settings in self.pools]

    def arrived(self, generation: Generation) -> None:
        """A response's tasks, to every judge still asking (called in the event loop as replies come)."""
        problem = self.problems.get(generation.id)
        if generation.error is not None or generation.refusal is not None or problem is None:
            return
        for settings, waiting in self.waiting.items():  # for the rules, then what waits for them
            waiting.append(generation)
            self.more[settings].set()
        tasks = self.bench.judge_tasks(problem, generation.response or "", self.scoring)
        if not tasks:
            return
        key = (generation.id, generation.sample)
        for name in list(self.askers):
            self.asked.append(asyncio.create_task(self._ask(name, tasks, key)))

    async def _rules(self, settings: tuple) -> None:
        """The rules, in batches of the responses that came meanwhile (in a thread, so that replies
        keep coming), then each judge that runs them so asked what waits for them."""
        while True:
            await self.more[settings].wait()
            batch, self.waiting[settings] = self.waiting[settings], []
            if not batch and self.generated:
                return
            if not batch:
                self.more[settings].clear()
                continue
            grades = await asyncio.to_thread(
                by_rules, self.bench, self.problems, batch, self.scoring, self.pools[settings]
            )
            judges = [name for name, own in self.rules.items() if own == settings and name in self.askers]
            for generation in batch:
                key = (generation.id, generation.sample)
                problem, response = self.problems[generation.id], generation.response or ""
                tasks = self.bench.judge_tasks_after_rules(problem, response, grades[key], self.scoring)
                if tasks:
                    self.asked += [asyncio.create_task(self._ask(name, tasks, key)) for name in judges]

    async def _ask(self, name: str, tasks: list, key: tuple) -> None:
        if name not in self.probed:  # an endpoint that cannot serve is probed once, before its first request
            self.probed[name] = asyncio.create_task(self._probe(name, tasks))
        if not await self.probed[name] or name not in self.askers:
            return
        await asyncio.gather(*(asker.grade(task, key) for task in tasks for asker in self.askers[name]))

    async def _probe(self, name: str, tasks: list) -> bool:
        try:
            await asyncio.gather(*(asker.check_endpoint(tasks) for asker in self.askers[name]))
            return True
        except Exception as error:  # its stage probes again and says why
            log.warning("%s: judge '%s' is not asked ahead: %s", self.label, name, error)
            await self._close(self.askers.pop(name))
            return False

    async def finish(self) -> None:
        """Wait for the rules and every request asked ahead (so that its reply is cached, not lost),
        then close."""
        self.generated = True
        for more in self.more.values():
            more.set()
        ruled = await asyncio.gather(*self.ruling, return_exceptions=True)
        for pool in self.pools.values():
            pool.close()
        outcomes = await asyncio.gather(*self.asked, return_exceptions=True) + ruled
        failed = [outcome for outcome in outcomes if isinstance(outcome, BaseException)]
        if failed:
            log.warning("%s: %d judgings ahead failed (their stages ask again): %s", self.label, len(failed), failed[0])
        for name, askers in self.askers.items():
            log.info(
                "%s: judge '%s' asked ahead: %s", self.label, name, this_run([asker.client.tally for asker in askers])
            )
            await self._close(askers)
        self.askers = {}
        self.cache.close()

    async def _close(self, askers: list) -> None:
        await asyncio.gather(*(asker.close() for asker in askers), return_exceptions=True)
