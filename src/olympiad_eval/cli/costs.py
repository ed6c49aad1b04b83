"""The cost plan: what a run of the plan would send and what it would cost, before any request.

    olympiad-eval costs [--csv costs.csv] [paths.plan=other.yaml paths.outputs=...]

For each cell of the plan (params.yaml, or `paths.plan`), its configs composed as its stage
composes them: the requests it asks (generation: each prompt x `samples`; an LLM judge: each
task its suite's benchmark protocol gives, `judge_tasks` and `judge_tasks_after_rules`, for each
judge of the ensemble), how many of them the request cache holds already, and for the rest, which
would be sent, the estimated input tokens, the assumed output tokens and the cost at the config's
`prices`. Requests are keyed exactly as the stages key them (`generate.generation_requests`,
`judging.task_key`), so "cached" means the stage would not send it.

It reads what render wrote (each suite's prompts, problems and scoring): render the suites first,
which is offline and free. It sends nothing: an offline provider (`reference`, `replay`,
`scripted`) is asked here, since it answers at once for free, and its requests cost nothing.

A judge's tasks depend on the response it grades. Where the response is known (an offline model's,
or a reply the request cache holds), the tasks are exact: the rules are run on it as the judge
stage runs them, for the tasks asked after them. Where it is not (a model whose requests are not
all cached yet), the count is an upper bound: the tasks asked after the rules are counted as if
the rules matched none of its answers (`judge_tasks_after_rules_at_most`: HiPhO, every slot with
an official answer; with every later round's too), and the response's length is the model's
assumed output. A protocol that asks in rounds depending on the judge's replies (VLMEvalKit's
HiPhO) has its later rounds counted at most even for a known response (`judge_tasks_next_at_most`:
as if each reply called for the next round). The `counted` column says which. Re-asks (a judge
reply off its schema, asked again) are not counted.

Estimated input tokens (no tokenizer is downloaded: an estimate, not a bill):
- text: 4 characters a token for ASCII (OpenAI's rule of thumb for English), one token for each
  other character (CJK); 3 tokens per message and 3 for the reply, as OpenAI counts chat messages;
- images: OpenAI's rule for `detail: high` (what `auto` gives a large image): fit within
  2048 x 2048, scale the shortest side down to 768 px, then 85 tokens + 170 per 512 px tile; the
  size is read with pillow, after the shrinking `max_image_bytes` asks for.
Assumed output tokens: `assumed_output_tokens` of the model or judge endpoint, else the most a
reply can be (`max_tokens` or `max_completion_tokens` of its request settings).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import io
import math
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from hydra.errors import HydraException
from omegaconf import OmegaConf

from olympiad_eval.benchmarks import plugin
from olympiad_eval.benchmarks.base import Benchmark, JudgeTask
from olympiad_eval.cli import run_alone
from olympiad_eval.core.config import check_costs, number, request_settings
from olympiad_eval.core.layout import Layout
from olympiad_eval.core.plan import family_of_suite, read_plan, stage_address
from olympiad_eval.core.records import Generation, InputError, Problem, Prompt, read_jsonl, read_suite_info
from olympiad_eval.llm.cache import Reply, RequestCache
from olympiad_eval.llm.images import shrink_image
from olympiad_eval.llm.providers import Provider, complete_all, judge_provider_class, provider_class
from olympiad_eval.stages.generate import generation_requests
from olympiad_eval.stages.judge import rule_grades, task_key, typed_judge

# What a response not generated yet is written as in its judge prompts: its tokens are then
# counted as the model's assumed output.
STAND_IN = "[[olympiad-eval: a response not generated yet]]"

COLUMNS = [
    "stage",
    "suite",
    "model",
    "judge",
    "asks",
    "requests",
    "cached",
    "to send",
    "input tokens",
    "output tokens",
    "cost ($)",
    "counted",
]


# ---------------------------------------------------------------- token estimates

MESSAGE_TOKENS, REPLY_TOKENS = 3, 3  # OpenAI's count of a chat request's framing


def text_tokens(text: str) -> int:
    """4 ASCII characters a token; any other character (CJK, symbols) a token of its own."""
    ascii_chars = len(text.encode("ascii", "ignore"))
    return math.ceil(ascii_chars / 4) + len(text) - ascii_chars


def tile_tokens(width: int, height: int) -> int:
    """OpenAI's high-detail rule: fit in 2048 x 2048, shortest side down to 768, 85 + 170 per 512 px tile."""
    scale = min(1.0, 2048 / max(width, height))
    width, height = width * scale, height * scale
    scale = min(1.0, 768 / min(width, height))
    width, height = width * scale, height * scale
    return 85 + 170 * math.ceil(width / 512) * math.ceil(height / 512)


@functools.cache
def image_tokens(path: str, max_image_bytes: int | None) -> int:
    """The tokens of a prompt's figure as its endpoint would get it (shrunk where it is too large)."""
    from PIL import Image

    data = Path(path).read_bytes()
    if max_image_bytes and len(data) > max_image_bytes:
        data, _ = shrink_image(data, max_image_bytes, where=path)
    with Image.open(io.BytesIO(data)) as image:
        return tile_tokens(*image.size)


def input_tokens(messages: Iterable[dict], max_image_bytes: int | None, response_tokens: int = 0) -> int:
    """A request's estimated input tokens; each `STAND_IN` in its text counts `response_tokens`."""
    total = REPLY_TOKENS
    for message in messages:
        content = message["content"]
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        total += MESSAGE_TOKENS
        for part in parts:
            if part.get("type") == "image":
                total += image_tokens(part["path"], max_image_bytes)
            elif part.get("type") == "text":
                text = part["text"]
                total += text_tokens(text.replace(STAND_IN, "")) + text.count(STAND_IN) * response_tokens
    return total


def assumed_output_tokens(cfg, settings: dict, where: str) -> int:
    """What one reply is assumed to take: `assumed_output_tokens`, else the most it can be."""
    for value in (cfg.get("assumed_output_tokens"), settings.get("max_tokens"), settings.get("max_completion_tokens")):
        if value is not None:
            return int(value)
    raise InputError(
        f"{where}: set assumed_output_tokens (the tokens a reply is assumed to take) or a max_tokens "
        "request setting, so that its cost can be planned"
    )


# ---------------------------------------------------------------- one row of the plan


@dataclass
class Endpoint:
    """Who answers a row's requests, and what one of them is estimated to cost."""

    provider: Provider
    prices: dict
    output_tokens: int  # assumed per reply
    max_image_bytes: int | None

    def estimate(self, messages, response_tokens: int = 0) -> tuple[int, int, float]:
        """(input tokens, output tokens, cost in USD) of one request."""
        tokens = input_tokens(messages, self.max_image_bytes, response_tokens)
        price = {kind: float(self.prices.get(kind, 0)) for kind in ("input", "output")}
        return tokens, self.output_tokens, (tokens * price["input"] + self.output_tokens * price["output"]) / 1e6

    def named(self, name: str) -> str:
        """Its name in the table, flagged where it would be paid for but has no prices (costed 0)."""
        return f"{name} (no prices)" if self.provider.sends and not self.prices else name


@dataclass
class Row:
    """One cell's requests to one endpoint (a model, or one judge of an ensemble): each distinct
    request once, as the stage sends it once. `to_send` maps each request it would send (its key,
    or a stand-in's where its response is not known yet) to its (input tokens, output tokens, cost)."""

    stage: str
    suite: str
    model: str
    judge: str
    asks: str
    counted: str = "exact"
    requests: int = 0
    cached: int = 0
    to_send: dict = field(default_factory=dict)
    _seen: set = field(default_factory=set)

    def add(self, key: str, cached: bool, estimate: Callable[[], tuple] | None) -> None:
        """One request: in the cache, or to be sent and costed (`estimate`; None: answered offline, free)."""
        if key in self._seen:
            return
        self._seen.add(key)
        self.requests += 1
        if cached:
            self.cached += 1
        elif estimate is not None:
            self.to_send[key] = estimate()

    def record(self) -> dict:
        return dict(
            zip(
                COLUMNS,
                [
                    self.stage,
                    self.suite,
                    self.model,
                    self.judge,
                    self.asks,
                    self.requests,
                    self.cached,
                    *totals(self.to_send),
                    self.counted,
                ],
            )
        )


def totals(to_send: dict) -> list:
    """Requests to send, their input and output tokens, and their cost."""
    sums = [sum(values) for values in zip(*to_send.values())] or [0, 0, 0.0]
    return [len(to_send), sums[0], sums[1], round(sums[2], 6)]


# ---------------------------------------------------------------- what render wrote


@dataclass(frozen=True)
class RenderedSuite:
    name: str
    bench: Benchmark
    scoring: object  # the suite's `scoring`, as the judge stage reads it from suite.json
    problems: dict[str, Problem]
    prompts: list[Prompt]


def rendered_suite(layout: Layout, plan: dict, suite: str, plan_path: str) -> RenderedSuite:
    """A suite of the plan as its render stage wrote it (each problem, each prompt, its scoring)."""
    family = family_of_suite(plan, suite, plan_path)
    folder, path = layout.suite(family, suite), layout.suite_info(family, suite)
    if not path.is_file():
        raise InputError(
            f"suite '{suite}' has not been rendered ({path} is missing): render it first, offline and "
            f"free (dvc repro {stage_address(family, 'render', suite)})"
        )
    rendered = read_suite_info(path)
    return RenderedSuite(
        suite,
        plugin(rendered.kind),
        OmegaConf.create(rendered.scoring),
        {p.id: p for p in read_jsonl(folder / "problems.jsonl", Problem)},
        read_jsonl(layout.prompts(family, suite), Prompt),
    )


# ---------------------------------------------------------------- generation


def plan_generation(suite: RenderedSuite, model: str, cfg, cache: RequestCache | None) -> tuple[Row, dict, int]:
    """A generate cell's row, each (problem id, sample)'s reply where it is known before the cell
    runs (None where not), and the tokens a response is assumed to take."""
    where = f"model '{model}' (conf/model/{model}.yaml or an override)"
    number(cfg, "samples", where, integer=True, minimum=1)
    request_settings(cfg, "generation", where)
    check_costs(cfg, where)
    provider = provider_class(cfg.get("provider"), where)(cfg, where, suite.name)
    requests = generation_requests(provider, cfg, suite.prompts)
    settings = OmegaConf.to_container(cfg.generation, resolve=True) if cfg.get("generation") else {}
    output = assumed_output_tokens(cfg, settings, where) if provider.sends else 0
    endpoint = Endpoint(provider, dict(cfg.get("prices") or {}), output, cfg.get("max_image_bytes"))
    replies = known_replies(provider, requests, cache)
    row = Row("generate", suite.name, model, "", endpoint.named(model))
    for request, reply in zip(requests, replies):
        row.add(
            request.key,
            provider.sends and reply is not None,
            functools.partial(endpoint.estimate, request.messages) if provider.sends else None,
        )
    return row, {(r.prompt.id, r.sample): reply for r, reply in zip(requests, replies)}, output


def known_replies(provider: Provider, requests: list, cache: RequestCache | None) -> list[Reply | None]:
    """An offline provider's replies (it answers at once, for free), else those in the cache."""
    if not provider.sends:
        return asyncio.run(complete_all(provider, None, requests))
    return [cache.get(request.key) if cache is not None else None for request in requests]


# ---------------------------------------------------------------- judging


def plan_judging(
    suite: RenderedSuite,
    model: str,
    responses: dict,
    response_tokens: int,
    judge: str,
    cfg,
    cache: RequestCache | None,
    rules: dict,
) -> list[Row]:
    """A judge cell's rows: one per judge of its ensemble (none asked by a rule judge).
    `rules` keeps the rules' grades of each suite x model's known responses, for the next judge."""
    where = f"judge '{judge}' (conf/judge/{judge}.yaml or an override)"
    request_settings(cfg, "settings", where)
    cfg = typed_judge(cfg, judge)
    if cfg.kind != "llm":
        return [Row("judge", suite.name, model, judge, "(rules only)")]
    tasks = response_tasks(suite, model, responses, cfg, rules)
    unknown = sum(not asked.known for asked in tasks.values())
    rounds = sum(bool(asked.later) for asked in tasks.values())
    bounds = [f"{unknown} of {len(tasks)} responses not generated yet"] if unknown else []
    bounds += [f"later rounds of {rounds} responses counted as if each were asked"] if rounds else []
    counted = "exact" if not bounds else f"at most ({'; '.join(bounds)})"
    settings = OmegaConf.to_container(cfg.settings, resolve=True)
    return [
        judge_row(
            suite,
            model,
            judge,
            name,
            endpoint,
            settings,
            f"{where}: judges.{name}",
            tasks,
            counted,
            response_tokens,
            cache,
        )
        for name, endpoint in cfg.judges.items()
    ]


def judge_row(
    suite: RenderedSuite,
    model: str,
    judge: str,
    name: str,
    cfg,
    settings: dict,
    where: str,
    tasks: dict,
    counted: str,
    response_tokens: int,
    cache: RequestCache | None,
) -> Row:
    """One judge of the ensemble: every task of every response, its first ask (re-asks are not counted)."""
    check_costs(cfg, where)
    provider = judge_provider_class(cfg, where)(cfg, f"judge '{name}'")
    output = assumed_output_tokens(cfg, settings, where) if provider.sends else 0
    endpoint = Endpoint(provider, dict(cfg.get("prices") or {}), output, cfg.get("max_image_bytes"))
    identity = provider.identity()
    row = Row("judge", suite.name, model, judge, endpoint.named(name), counted)
    for (problem_id, sample), asked in tasks.items():
        for task, after in [(task, False) for task in asked.first] + [
            (task, True) for task in asked.after + asked.later
        ]:
            key = task_key(identity, settings, task)
            cached = asked.known and provider.sends and cache is not None and cache.get(key) is not None
            estimate = functools.partial(endpoint.estimate, task.messages, 0 if asked.known else response_tokens)
            row.add(
                key if asked.known else stand_in_key(model, problem_id, sample, task, key, after),
                cached,
                estimate if provider.sends else None,
            )
    return row


def stand_in_key(model: str, problem_id: str, sample: int, task: JudgeTask, key: str, after_rules: bool) -> str:
    """What tells apart the requests about a response not generated yet (their keys are not known
    either). Tasks that ask the same of it are one request whatever it says (HiPhO's alternative
    schemes sharing a criterion); tasks after the rules quote its answers, which may differ where
    the stand-ins' are the same, so each is a request of its own."""
    return f"{model}/{problem_id}/{sample}/{task.key if after_rules else ''}/{key}"


@dataclass(frozen=True)
class ResponseTasks:
    """A response's judge tasks: those asked at once and those after the rules (or, for a response
    not generated yet, the most there could be), and whether the response is known."""

    first: list[JudgeTask]
    after: list[JudgeTask]
    known: bool
    # the most a known response's later rounds could ask (`judge_tasks_next_at_most`): its count
    # is then an upper bound, as for a response not generated yet
    later: list[JudgeTask] = field(default_factory=list)


def response_tasks(suite: RenderedSuite, model: str, responses: dict, cfg, rules: dict) -> dict:
    """Each response's judge tasks: a known response's exactly (the rules run on it, for the tasks
    asked after them), and for one not generated yet the most it could get. A failed generation or
    a refusal is not judged."""
    bench = suite.bench
    answered = {
        key: reply.text or ""
        for key, reply in responses.items()
        if reply is not None and reply.error is None and reply.refusal is None
    }
    graded = known_rules(suite, model, answered, cfg, rules)
    tasks: dict[tuple, ResponseTasks] = {}
    for key, response in answered.items():
        problem = suite.problems[key[0]]
        rules_grade = graded.get(key)
        after = bench.judge_tasks_after_rules(problem, response, rules_grade, suite.scoring) if key in graded else []
        later = bench.judge_tasks_next_at_most(problem, response, rules_grade, suite.scoring) if key in graded else []
        tasks[key] = ResponseTasks(bench.judge_tasks(problem, response, suite.scoring), after, True, later)
    for key in [key for key, reply in responses.items() if reply is None]:
        problem = suite.problems[key[0]]
        tasks[key] = ResponseTasks(
            bench.judge_tasks(problem, STAND_IN, suite.scoring),
            bench.judge_tasks_after_rules_at_most(problem, STAND_IN, suite.scoring),
            False,
        )
    return tasks


def known_rules(suite: RenderedSuite, model: str, answered: dict, cfg, rules: dict) -> dict:
    """The rules' grade of each known response that could have tasks after the rules (the others
    need none: their bound is empty), run once per suite x model."""
    if (suite.name, model) not in rules:
        bench = suite.bench
        needed = [
            Generation(id=problem_id, suite=suite.name, model=model, sample=sample, response=response, request_hash="")
            for (problem_id, sample), response in answered.items()
            if bench.judge_tasks_after_rules_at_most(suite.problems[problem_id], response, suite.scoring)
        ]
        rules[(suite.name, model)] = rule_grades(bench, suite.problems, needed, suite.scoring, cfg) if needed else {}
    return rules[(suite.name, model)]


# ---------------------------------------------------------------- the whole plan


def cost_plan(conf: Path, overrides: list[str]) -> list[Row]:
    """Every row of the plan that the shared settings (`paths.plan`, `paths.outputs`, the request
    cache; `overrides` of them as a stage takes them) name, each cell composed as its stage composes it."""
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(conf), version_base=None):
        shared = compose(config_name="report", overrides=overrides).paths
        plan = read_plan(shared.plan)
        layout, cache = Layout(shared.outputs), open_cache(Path(shared.request_cache))
        rows, rules = [], {}
        try:
            for suite_name in plan["suites"]:
                suite = rendered_suite(layout, plan, suite_name, shared.plan)
                for model in plan["models"]:
                    cell = [f"cell.suite={suite_name}", *overrides]
                    model_cfg = compose(config_name="generate", overrides=[f"model={model}", *cell]).model
                    row, responses, response_tokens = plan_generation(suite, model, model_cfg, cache)
                    rows.append(row)
                    for judge in plan["judges"]:
                        judge_cfg = compose(
                            config_name="judge", overrides=[f"judge={judge}", f"cell.model={model}", *cell]
                        ).judge
                        rows += plan_judging(suite, model, responses, response_tokens, judge, judge_cfg, cache, rules)
        finally:
            if cache is not None:
                cache.close()
    return rows


def open_cache(path: Path) -> RequestCache | None:
    """The request cache, or None where there is none yet (not created: a plan writes nothing)."""
    return RequestCache(path) if path.exists() else None


def table(rows: list[Row]) -> pd.DataFrame:
    """The rows and a total line. A request that several cells ask (two suites sending the same
    prompt) is sent once: the total counts it once."""
    merged: dict = {}
    for row in rows:
        for key, estimate in row.to_send.items():
            merged.setdefault(key, estimate)
    exact = all(row.counted == "exact" for row in rows)
    total = dict(
        zip(
            COLUMNS,
            [
                "total",
                "",
                "",
                "",
                "",
                sum(row.requests for row in rows),
                sum(row.cached for row in rows),
                *totals(merged),
                "exact" if exact else "at most",
            ],
        )
    )
    return pd.DataFrame([row.record() for row in rows] + [total], columns=COLUMNS)


def markdown(frame: pd.DataFrame) -> str:
    shown = frame.astype(object)
    shown["cost ($)"] = [f"{cost:.4f}" for cost in frame["cost ($)"]]
    for column in ("requests", "cached", "to send", "input tokens", "output tokens"):
        shown[column] = [f"{int(count):,}" for count in frame[column]]
    align = ["left"] * 5 + ["right"] * 6 + ["left"]
    return shown.to_markdown(index=False, disable_numparse=True, colalign=align) + "\n"  # as formatted here


NOTES = """
- requests: each distinct request of the cell (a judge's first ask of each task; re-asks are not counted);
  cached: in the request cache, not sent again; to send: the rest, unless answered offline and free.
- input tokens: estimated from the rendered prompts (text: 4 ASCII characters a token, one token for each other
  character, 3 a message; images: OpenAI's high-detail rule, 85 + 170 per 512 px tile after fitting 2048 px and
  768 px on the short side); output tokens: each config's assumed_output_tokens (else its max_tokens).
- counted: exact where every response is known (an offline model's, or cached replies: the rules run on them);
  "at most" where responses are not generated yet: the tasks after the rules (answer slots the rules miss) are
  counted as if the rules matched none, and a response as long as the model's assumed output; and where a
  protocol asks later rounds depending on the judge's replies, counted as if each reply called for the next.
"""


def configure(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The command line's arguments (this module's own, and `olympiad-eval costs`'s)."""
    parser.add_argument("--csv", type=Path, help="also write the table to this CSV file")
    parser.add_argument(
        "overrides", nargs="*", help="the shared settings as a stage takes them (paths.plan=..., paths.outputs=...)"
    )
    return parser


def execute(arguments: argparse.Namespace) -> int:
    conf = Path.cwd() / "conf"
    if not conf.is_dir():
        print(f"error: no conf/ in {Path.cwd()}: run it from the repository's root, as the stages run", file=sys.stderr)
        return 2
    try:
        frame = table(cost_plan(conf, arguments.overrides))
    except (InputError, HydraException) as error:  # a bad config or override: its message names it
        print(f"error: {str(error).strip()}", file=sys.stderr)
        return 2
    except OSError as error:  # a rendered file gone missing (a figure, the prompts)
        print(f"error: {error.strerror or error}: {error.filename}; render the suite again", file=sys.stderr)
        return 2
    print(markdown(frame) + NOTES, end="")
    if arguments.csv is not None:
        frame.to_csv(arguments.csv, index=False, lineterminator="\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    return run_alone("olympiad_eval.cli.costs", __doc__, configure, execute, argv)


if __name__ == "__main__":
    sys.exit(main())
