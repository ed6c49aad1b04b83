"""Judge: grade each generation of a suite x model cell.

Rules always come first (answer extraction and equivalence checks in warm worker processes, every
check of the cell submitted at once). A `rule` judge stops there. An `llm` judge also sends what
the benchmark's protocol asks to every judge of its ensemble, each through its provider
(`providers`: an OpenAI-compatible endpoint unless the judge's entry names another, such as the
offline `scripted`) with the same client and request cache as generation, all tasks of the cell
concurrently. The tasks that do not need the rules' result (`judge_tasks`: HiPhO's marking
criteria, every PhysElite task) go out while the rules run; the rest (`judge_tasks_after_rules`:
answer slots the rules missed) as soon as they finish. A protocol whose questions depend on a
judge's replies (VLMEvalKit's HiPhO: an answer asked again on the text after its last `=`, the
criteria asked again when their awards overflow) then asks that judge further rounds about a
response (`judge_tasks_next`), each once the one before is answered, until it asks none. How a
suite is scored (protocol, tolerance, judge prompts and flags) is the suite's `scoring`, read from
its `suite.json`; the judge config says who grades and how (endpoints, ensemble, re-asks).
A reply that does not follow the asked schema is asked again at once, up to `max_reasks` times; a
request that failed (after the client's retries) is not: it ends that task's asking at once. Each
judge's endpoint is probed before the cell's first request to it (see `llm`), before the rules run.
The benchmark's `combine` turns the rules' score and the judges' replies into the protocol's
score. A generation that failed, or a task whose replies stayed invalid, is recorded as such:
never a score. A refusal is not judged: it scores 0 and is marked `refused`.

A check that cannot finish (hostile LaTeX such as `9^{9^{9^{9}}}` in a response or a gold answer
runs past `check_cpu_seconds`, or crashes sympy) is *undecided*, on every rerun alike: the rules count
it as not matched, and the judgment records it in `undecided`. Where the protocol asks an LLM
judge about answers the rules did not match (HiPhO's official answer slots), the judge decides
it; with rules alone it scores nothing. Either way the response is scored: an undecided check
costs that check, never the cell's coverage. The log names the problems. What the rules can never
decide (`Score.rules_cannot_decide`: HiPhO's open-ended answer slots, with no official answer to
compare) is another matter: with rules alone the response is left unscored, a judge error that
records why in `undecided` and lowers coverage, though `min_coverage` does not fail the cell for it
(a rerun would not change it); an LLM protocol decides it with its own score.
"""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import logging
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from omegaconf import MISSING, OmegaConf
from tqdm import tqdm

from olympiad_eval.benchmarks import plugin
from olympiad_eval.benchmarks.base import Benchmark, ContractError, JudgeTask, Score
from olympiad_eval.benchmarks.suites import Provenance, provenance
from olympiad_eval.core.config import check_costs, number, request_settings, typed_config
from olympiad_eval.core.layout import SUITE_INFO, Layout
from olympiad_eval.core.records import (
    Conversation,
    Generation,
    InputError,
    Judgment,
    Problem,
    read_jsonl,
    read_suite_info,
    without_paths,
    write_json,
    write_jsonl,
)
from olympiad_eval.llm.cache import Reply, RequestCache, request_key
from olympiad_eval.llm.providers import Client, Request, check_config, judge_provider_class
from olympiad_eval.llm.usage import Tally, merged_usage, most_common, this_run, usage_totals, usage_warnings
from olympiad_eval.scoring.checks import Options
from olympiad_eval.scoring.pool import CheckPool
from olympiad_eval.scoring.verdicts import Verdicts

JudgeKind = enum.StrEnum("JudgeKind", {"rule": "rule", "llm": "llm"})


@dataclass
class JudgeConfig:
    """A judge config's schema (`conf/judge/*.yaml`): who grades and how, never how a benchmark is
    scored (that is each suite's `scoring`). Its defaults are the only ones."""

    kind: JudgeKind = MISSING  # rule: rules only; llm: the rules, then the suite's protocol with LLM judges
    workers: int = 2  # warm worker processes for equivalence checks
    check_cpu_seconds: float = 10.0  # CPU seconds per check (`scoring.pool`)
    max_reasks: int = 2  # re-asks of a judge whose reply broke the asked schema
    settings: dict[str, Any] = field(default_factory=dict)  # sent with every judge request
    judges: dict[str, Any] = field(default_factory=dict)  # name: endpoint (its provider's settings)


log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Outcome:
    total: int
    scored: int
    judge_errors: int
    generation_errors: int
    undecided: int = 0  # checks that could not finish (scored as not matched, or decided by a judge)
    refusals: int = 0  # scored (0), so not in the coverage's shortfall; counted in the tables
    left_undecided: int = 0  # of the judge errors: what rules alone cannot decide (`Score.rules_cannot_decide`)
    usage: dict = field(default_factory=lambda: usage_totals([], {}))  # the judges' requests, tokens and cost
    requests: str = ""  # what this run sent to the LLM judges and paid, apart from the cached replies; rules: none

    @property
    def coverage(self) -> float:
        return self.scored / self.total if self.total else 1.0

    def metrics(self) -> dict:
        return {
            "judgments": self.total,
            "scored": self.scored,
            "judge_errors": self.judge_errors,
            "failed_generations": self.generation_errors,
            "undecided": self.undecided,
            "coverage": round(self.coverage, 6),
        }

    def summary(self) -> str:
        return (
            f"{self.total} judgments: {self.scored} scored, {self.judge_errors} judge errors, "
            f"{self.generation_errors} failed generations, {self.undecided} undecided checks, "
            f"{self.refusals} refusals (coverage {self.coverage:.1%})" + (f"; {self.requests}" if self.requests else "")
        )


def judge_cell(*args, **kwargs) -> tuple[Outcome, str | None]:
    """`judge_cell_async`, with its arguments, alone in its event loop."""
    return asyncio.run(judge_cell_async(*args, **kwargs))


async def judge_cell_async(
    layout: Layout, family: str, suite: str, model: str, judge_name: str, cfg, cache_path, min_coverage
) -> tuple[Outcome, str | None]:
    """Judge one cell with one judge into its judge's folder; with the outcome, why the stage must
    fail where it must: too few responses judged (the judge errors are recorded, and the rerun asks
    again; the replies that came are in the request cache)."""
    generations = layout.generations(family, suite, model)
    if not generations.is_file():
        raise InputError(
            f"no generations of model '{model}' for suite '{suite}' at {generations}: generate them first "
            f"(python stages/generate.py model={model} cell.suite={suite}, or dvc repro)"
        )
    out = layout.judgments(family, suite, model, judge_name)
    conversations = layout.conversations(family, suite, model, judge_name)
    outcome = await judge_async(
        layout.suite(family, suite), generations, judge_name, cfg, out, cache_path, conversations
    )
    write_json(layout.coverage(family, suite, model, judge_name), outcome.metrics())
    write_json(layout.judge_usage(family, suite, model, judge_name), outcome.usage)
    judged = outcome.total - outcome.generation_errors
    # what the judge can never decide (rules alone and an open-ended answer) lowers coverage, but a
    # rerun would not change it: it is no failure to retry
    if not judged or (outcome.scored + outcome.left_undecided) / judged >= min_coverage:
        return outcome, None
    reasons = most_common(j.detail[:300] for j in read_jsonl(out, Judgment) if j.status == "judge_error")
    return outcome, (
        f"{suite} x {model} x {judge_name}: only {outcome.scored} of {judged} responses were judged (required: "
        f"{min_coverage:.0%}): {reasons}; rerun to retry the failed judgments"
    )


def judge(*args, **kwargs) -> Outcome:
    """A cell's written generations judged: `judge_async`, with its arguments, alone in its event loop."""
    return asyncio.run(judge_async(*args, **kwargs))


async def judge_async(
    suite_dir: str | Path,
    generations_path: str | Path,
    judge_name: str,
    cfg,
    out_path: str | Path,
    cache_path: str | Path,
    conversations_path: str | Path | None = None,
) -> Outcome:
    """Grade the generations; write the judgments to `out_path` and, where `conversations_path` is
    given, what was sent to the LLM judges and their raw replies (`Conversation`; none for rules
    alone) there."""
    made_by_cfg, cfg = cfg, typed_judge(cfg, judge_name)  # provenance hashes the config as composed
    suite_dir = Path(suite_dir)
    suite = read_suite_info(suite_dir / SUITE_INFO)
    bench, scoring = plugin(suite.kind), OmegaConf.create(suite.scoring)
    problems = {p.id: p for p in read_jsonl(suite_dir / "problems.jsonl", Problem)}
    made_by = provenance(bench, judge_name, made_by_cfg, scoring)  # also checks the protocol's name before any work

    def written() -> tuple[list[Generation], list[Generation]]:
        """The cell's generations, and those answered (a refusal is not judged)."""
        generations = read_jsonl(generations_path, Generation)
        unknown = sorted({g.id for g in generations} - set(problems))
        if unknown:
            raise InputError(f"{generations_path}: generations for ids not in the suite: {', '.join(unknown[:5])}")
        return generations, [g for g in generations if g.error is None and g.refusal is None]

    llm = cfg.kind != "rule"  # requests go out while the checks run: the workers give way to them
    options, verdicts = check_options(scoring), Verdicts(cache_path)  # what was decided before, by any stage
    with CheckPool(cfg.workers, cfg.check_cpu_seconds, options, give_way=llm, verdicts=verdicts) as pool:
        if not llm:
            generations, answered = written()
            grades = await asyncio.to_thread(by_rules, bench, problems, answered, scoring, pool)
            usage, asked, requests = usage_totals([], {}), {}, "no requests (rules only)"
        else:
            grades, usage, asked, requests, generations = await _by_llm(
                bench, problems, written, scoring, cfg, cache_path, pool
            )
    for line in usage_warnings(usage, f"judge '{judge_name}'"):
        log.warning("%s", line)
    _check_parts(bench, grades.values())
    judgments = [_judgment(problems[g.id], g, judge_name, grades.get((g.id, g.sample)), made_by) for g in generations]
    write_jsonl(out_path, judgments)
    if conversations_path is not None:
        write_jsonl(
            conversations_path,
            [
                Conversation(id=g.id, suite=g.suite, model=g.model, judge=judge_name, sample=g.sample, tasks=tasks)
                for g in generations
                for tasks in [asked.get((g.id, g.sample))]
                if tasks
            ],
        )
    _report_undecided(judgments, cfg.kind)
    return Outcome(
        total=len(judgments),
        scored=sum(j.status == "scored" for j in judgments),
        judge_errors=sum(j.status == "judge_error" for j in judgments),
        generation_errors=sum(j.status == "generation_error" for j in judgments),
        undecided=sum(len(j.undecided) for j in judgments),
        refusals=sum(j.refused for j in judgments),
        left_undecided=sum(j.status == "judge_error" and bool(j.undecided) for j in judgments),
        usage=usage,
        requests=requests,
    )


def _check_parts(bench: Benchmark, grades) -> None:
    """A score's parts are those its benchmark declares (`score_parts`): the tables read them by name."""
    declared = set(bench.score_parts)
    for grade in grades:
        if isinstance(grade, Score) and not set(grade.parts) <= declared:
            raise ContractError(
                f"benchmark '{bench.name}' scored parts {sorted(set(grade.parts) - declared)} that its score_parts "
                f"{sorted(declared)} does not declare"
            )


def _report_undecided(judgments: list[Judgment], judge_kind: str) -> None:
    """One line naming the problems whose checks could not finish, and what became of them."""
    undecided = [j for j in judgments if j.undecided]
    if not undecided:
        return
    ids = list(dict.fromkeys(j.id for j in undecided))
    left = sum(j.status == "judge_error" for j in undecided)
    became = (
        "the LLM judge decided where the protocol asks it about unmatched answers, else not matched"
        if judge_kind == "llm"
        else "scored as not matched"
    ) + (f"; {left} response(s) left unscored (coverage), as only an LLM judge decides them" if left else "")
    log.warning(
        "rules could not decide %d checks, of problem(s) %s%s (the first: %s): %s",
        sum(len(j.undecided) for j in undecided),
        ", ".join(ids[:10]),
        f" and {len(ids) - 10} more" if len(ids) > 10 else "",
        undecided[0].undecided[0],
        became,
    )


def check_options(scoring) -> Options:
    """The answer rules that the suite's scoring switches on (`check_options`, e.g.
    `{percent: true}`): the whole cell's checks apply them."""
    try:
        return Options.from_mapping(scoring.get("check_options"))
    except ValueError as error:
        raise InputError(f"suite scoring: check_options: {error}") from None


def _judgment(
    problem: Problem, generation: Generation, judge_name: str, grade: Score | str | None, made_by: Provenance
) -> Judgment:
    common = {
        **dataclasses.asdict(made_by),
        **{name: getattr(generation, name) for name in FROM_GENERATION},
        **{name: getattr(problem, name) for name in FROM_PROBLEM},
        "judge": judge_name,
        "max_points": problem.points,
        "truncated": generation.finish_reason == "length",
    }
    if generation.error is not None:
        return Judgment(**common, status="generation_error", score=None, points=None, detail=generation.error)
    if generation.refusal is not None:  # the model's answer, and one that earns nothing: scored 0, marked
        return Judgment(
            **common, status="scored", score=0.0, points=0.0, refused=True, detail=f"refused: {generation.refusal}"
        )
    if isinstance(grade, str) or grade is None:
        return Judgment(**common, status="judge_error", score=None, points=None, detail=grade or "not judged")
    if grade.rules_cannot_decide:  # rules alone: no score for what they cannot decide, never a silent 0
        return Judgment(
            **common,
            status="judge_error",
            score=None,
            points=None,
            detail=f"rules could not decide: {grade.rules_cannot_decide}",
            undecided=(*grade.undecided, grade.rules_cannot_decide),
        )
    return Judgment(**common, status="scored", **{name: getattr(grade, name) for name in RECORDED})


# What a judgment keeps of its generation and its problem, under the same names.
FROM_GENERATION = ("id", "suite", "model", "sample")
FROM_PROBLEM = ("language", "subset", "subject", "level")
# What a judgment keeps of its score: every field the two share (not `unscorable`, which never
# reaches a scored judgment).
RECORDED = tuple(f.name for f in fields(Score) if f.name in {g.name for g in fields(Judgment)})


def by_rules(bench: Benchmark, problems: dict, answered: list[Generation], scoring, pool: CheckPool) -> dict:
    """Each response scored by the benchmark's rules, in two steps: the checks every response needs,
    sent to the pool in one batch (each once, so that no worker waits for a response's turn); then
    each response's score from their verdicts. A check that could not finish counts as not matched
    and stays on record in the score's `undecided`; a response the rules cannot score at all
    (`unscorable`) is a judge error for the rule judge (an LLM judge's protocol may still score it)."""
    needed = {(g.id, g.sample): bench.rule_checks(problems[g.id], g.response or "", scoring) for g in answered}
    unique = list(dict.fromkeys(check for checks in needed.values() for check in checks))
    with tqdm(
        total=len(unique), desc="judge (rules)", unit="check", disable=None
    ) as progress:  # a bar on terminals only
        verdicts = dict(zip(unique, pool.check_many(unique, progress)))
    grades: dict = {}
    for generation in answered:
        key = (generation.id, generation.sample)
        grade = bench.rule_score(
            problems[generation.id], generation.response or "", scoring, [verdicts[check] for check in needed[key]]
        )
        grades[key] = f"rules could not decide: {grade.unscorable}" if grade.unscorable else grade
    return grades


async def _by_llm(
    bench: Benchmark,
    problems: dict,
    written: Callable[[], tuple[list[Generation], list[Generation]]],
    scoring,
    cfg,
    cache_path,
    pool: CheckPool,
) -> tuple[dict, dict, dict, str, list[Generation]]:
    """Every task of every response to every judge, then the protocol's combination; the judges'
    usage (requests, tokens, cost); each response's conversation (`conversation`); what this run
    sent and paid, apart from the cached replies (`usage.this_run`: the log's, never the usage
    file's); and the cell's generations (`written()`: all of them, and those answered)."""
    judges = dict(cfg.judges)
    if not judges:
        raise InputError("an llm judge needs at least one entry under `judges` (name: endpoint)")

    def rules_and_tasks() -> tuple[dict, dict]:
        """In a thread, so that the event loop keeps sending meanwhile."""
        rules = by_rules(bench, problems, answered, scoring, pool)
        return rules, {
            key: bench.judge_tasks_after_rules(problem, response, rules[key], scoring)
            for key, (problem, response) in responses.items()
        }

    cache = RequestCache(cache_path)
    askers = [Asker(name, endpoint, cfg, cache) for name, endpoint in judges.items()]
    try:
        asked: dict = {}
        tasks: dict = {}  # each response's tasks, in the order their replies are kept
        probed = False

        async def ask_first(key: tuple, problem: Problem, response: str) -> None:
            """A response's tasks that need no rules, asked at once."""
            nonlocal probed
            cell_tasks = tasks[key] = bench.judge_tasks(problem, response, scoring)
            if cell_tasks and not probed:  # an endpoint that cannot serve stops the cell before its rules run
                await asyncio.gather(*(asker.check_endpoint(cell_tasks) for asker in askers))
                probed = True
            asked.update(
                {(asker.name, key, task.key): asker.grade(task, key) for task in cell_tasks for asker in askers}
            )

        generations, answered = written()
        responses = {(g.id, g.sample): (problems[g.id], g.response or "") for g in answered}
        for key, (problem, response) in responses.items():  # the tasks that need no rules
            await ask_first(key, problem, response)
            await asyncio.sleep(0)  # the first requests go out while the next response's are prepared
        # The rules run while those are answered, not before: their thread would take the GIL from
        # the event loop at each socket call while the first requests go out.
        rules, later = await asyncio.to_thread(rules_and_tasks)
        for key, cell_tasks in later.items():
            tasks[key] = tasks[key] + cell_tasks
            asked.update(
                {(asker.name, key, task.key): asker.grade(task, key) for task in cell_tasks for asker in askers}
            )
        results = dict(zip(asked, await asyncio.gather(*asked.values())))
        replies = {
            key: {
                asker.name: {task.key: results[(asker.name, key, task.key)] for task in cell_tasks} for asker in askers
            }
            for key, cell_tasks in tasks.items()
        }
        rounds = [(key, asker) for key in tasks for asker in askers]
        later_asked = await asyncio.gather(
            *(
                _later_rounds(bench, *responses[key], rules[key], replies[key][asker.name], asker, scoring, key)
                for key, asker in rounds
            )
        )
        for (key, _), asked_later in zip(rounds, later_asked):  # into the conversation, each task once
            known = {task.key for task in tasks[key]}
            tasks[key] = tasks[key] + [task for task in asked_later if task.key not in known]
    finally:
        await asyncio.gather(*(asker.close() for asker in askers))
        cache.close()
    grades = {
        key: _with_undecided(bench.combine(problems[key[0]], rules[key], replies[key], scoring), rules[key])
        for key in tasks
    }
    conversations = {key: conversation(cell_tasks, askers, key) for key, cell_tasks in tasks.items()}
    usage = judges_usage([asker.usage() for asker in askers])
    return grades, usage, conversations, this_run([asker.client.tally for asker in askers]), generations


# What a conversation keeps of a reply: what the request cache stores of it (never `cached`, which
# differs between a run and its rerun), the fields that are empty left out.
CONVERSATION_FIELDS = ("text", "reasoning", "finish_reason", "refusal", "error", "usage", "attempts", "received")


def _kept(reply: Reply) -> dict:
    return {name: getattr(reply, name) for name in CONVERSATION_FIELDS if getattr(reply, name) not in (None, {})}


def conversation(tasks: list[JudgeTask], askers: list[Asker], key: tuple) -> tuple[dict, ...]:
    """A response's tasks as `Conversation.tasks`: each task's messages (once: every judge of the
    ensemble and every re-ask is sent the same) and each judge's replies in the order they came."""
    return tuple(
        {
            "task": task.key,
            "messages": without_paths(task.messages),
            "replies": {
                asker.name: [
                    {
                        name: getattr(reply, name)
                        for name in CONVERSATION_FIELDS
                        if getattr(reply, name) not in (None, {})
                    }
                    for reply in asker.asked.get((key, task.key), [])
                ]
                for asker in askers
            },
        }
        for task in tasks
    )


async def _later_rounds(
    bench: Benchmark,
    problem: Problem,
    response: str,
    rules: Score | str,
    judged: dict,
    asker: Asker,
    scoring,
    key: tuple,
) -> list[JudgeTask]:
    """The protocol's further rounds of questions to one judge about one response (`key`), each
    asked once the judge has answered the round before, until the protocol asks none
    (`judge_tasks_next`); their replies join `judged`, the tasks asked are returned. Most protocols
    ask none: their judgments keep their bytes."""
    asked: list[JudgeTask] = []
    while tasks := bench.judge_tasks_next(problem, response, rules, dict(judged), scoring):
        keys = [task.key for task in tasks]
        again = sorted({key for key in keys if key in judged or keys.count(key) > 1})
        if again:
            raise ContractError(
                f"benchmark '{bench.name}': judge_tasks_next asked '{again[0]}' again about problem {problem.id} "
                "(a task key is asked once: a protocol says it is done by asking nothing)"
            )
        judged.update(zip(keys, await asyncio.gather(*(asker.grade(task, key) for task in tasks))))
        asked += tasks
    return asked


def judges_usage(usages: list[dict]) -> dict:
    """An ensemble's usage: the sum of its judges' (each costed at its own prices; unknown where any
    judge's is), and the span of the dates of the replies of those that send (none where every
    judge is offline)."""
    return merged_usage(usages)


def _with_undecided(grade: Score | str, rules: Score | str) -> Score | str:
    """The protocol's score, keeping on record the rules' checks that could not finish (whether a
    judge then decided them or they scored nothing)."""
    if isinstance(grade, Score) and isinstance(rules, Score) and rules.undecided:
        return replace(grade, undecided=rules.undecided)
    return grade


def task_key(identity: dict, settings: dict, task: JudgeTask, attempt: int = 0) -> str:
    """The request key of a task's `attempt`-th ask (0: the first; each re-ask is a request of its
    own) to the judge `identity` names, with the judge config's request `settings`."""
    return request_key(identity, task.messages, settings, attempt)


def rule_grades(bench: Benchmark, problems: dict, answered: list[Generation], scoring, cfg) -> dict:
    """Each response's score by the rules, as a judge cell computes it (`cfg`: the typed judge
    config, for its workers and checks' CPU budget): what decides the tasks asked after the rules."""
    with CheckPool(cfg.workers, cfg.check_cpu_seconds, check_options(scoring)) as pool:
        return by_rules(bench, problems, answered, scoring, pool)


class Asker:
    """One judge of the ensemble: its provider (`provider` in its endpoint, default openai; one
    client for the whole cell), progress bar (with tokens and cost at its endpoint's `prices`) and
    the replies it got."""

    def __init__(self, name: str, endpoint, cfg, cache: RequestCache):
        self.name, self.tries = name, 1 + cfg.max_reasks
        self.settings = OmegaConf.to_container(cfg.settings, resolve=True)
        who = f"judge '{name}'"
        provider = judge_provider_class(endpoint, who)(endpoint, who)
        self.identity = provider.identity()
        self.model = endpoint.get("model") if provider.sends else None  # the model asked, told from the one that serves
        self.progress = tqdm(total=0, desc=f"judge {name}", unit="req", dynamic_ncols=True, disable=None)
        self.prices = dict(endpoint.get("prices") or {})
        self.client = Client(provider, cache, self.progress, Tally(prices=self.prices))
        # Each distinct request's reply: a request that two tasks share is paid for once.
        self.replies: dict[str, Reply] = {}
        # Each (response, task)'s replies in the order asked, re-asks included: its conversation.
        self.asked: dict[tuple, list[Reply]] = {}
        # A task hashes its request only when it may send it: the first requests then go out at
        # once, not after every task of the cell has been hashed and looked up in the cache.
        self.turns = asyncio.Semaphore(provider.concurrency)

    def key(self, task: JudgeTask, attempt: int) -> str:
        return task_key(self.identity, self.settings, task, attempt)

    async def check_endpoint(self, tasks: list[JudgeTask]) -> None:
        """Probe the endpoint now unless these tasks' first asks are all cached (then only if a
        later request is not: a cell whose replies are all cached is judged offline)."""
        if not all(self.client.cached(self.key(task, 0)) for task in tasks):
            await self.client.check_endpoint()

    def grade(self, task: JudgeTask, response: tuple) -> asyncio.Task:
        """The task's parsed reply about `response` (its id and sample), or why there is none; each
        re-ask is a request of its own."""
        return asyncio.create_task(self._grade(task, self.asked.setdefault((response, task.key), [])))

    async def _grade(self, task: JudgeTask, conversation: list[Reply]) -> dict | str:
        for attempt in range(self.tries):
            self.progress.total += 1
            async with self.turns:
                request = Request(self.key(task, attempt), list(task.messages), self.settings)
                duplicate = self.client.sending(request.key)
                if not duplicate:
                    reply = await self.client.ask(request)
            if duplicate:  # the same request is on the wire for another task: its reply, without a turn
                reply = await self.client.ask(request)
            self.replies[request.key] = reply
            conversation.append(reply)
            if reply.error is not None:
                # Re-asks are for replies that arrived and broke the schema. A request that failed
                # has had its retries: asking again would only repeat them.
                return f"judge {self.name}: {reply.error}"  # no task key: the stage groups the reasons
            parsed = task.parse(reply.text or "") if reply.refusal is None else None
            if parsed is not None:
                return parsed
        # a judge that refuses gives no grade: re-asked like any reply off the schema, then a judge error
        said = f"refused: {reply.refusal}" if reply.refusal is not None else (reply.text or "")[:200]
        return f"judge {self.name}: invalid reply to '{task.key}' after {self.tries} tries: {said!r}"

    def usage(self) -> dict:
        return usage_totals(list(self.replies.values()), self.prices, self.client.provider.sends, self.model)

    async def close(self) -> None:
        await self.client.aclose()
        self.progress.close()


def check_judge(cfg, name: str) -> None:
    where = f"judge '{name}' (conf/judge/{name}.yaml or an override)"
    request_settings(cfg, "settings", where)  # before typing it: this message says what a mapping holds
    cfg = typed_judge(cfg, name)
    number(cfg, "workers", where, integer=True, minimum=1)
    number(cfg, "check_cpu_seconds", where, above=0)
    number(cfg, "max_reasks", where, integer=True, minimum=0)
    if cfg.kind != "llm":
        return
    judges = cfg.get("judges")
    if not OmegaConf.is_dict(judges) or not judges:
        raise InputError(
            f"{where}: an llm judge needs at least one entry under `judges` (name: endpoint), got {judges!r}"
        )
    for judge_name, endpoint in judges.items():
        if not OmegaConf.is_dict(endpoint):
            raise InputError(
                f"{where}: judges.{judge_name} must be an endpoint (base_url, model, ...), got {endpoint!r}"
            )
        at = f"{where}: judges.{judge_name}"
        provider = judge_provider_class(endpoint, at)
        check_config(endpoint, at, provider, judge=True)
        provider.check(endpoint, at)
        check_costs(endpoint, at)


def typed_judge(cfg, name: str):
    """The judge config checked against `JudgeConfig`, with its defaults."""
    return typed_config(JudgeConfig, cfg, f"judge '{name}' (conf/judge/{name}.yaml or an override)")
