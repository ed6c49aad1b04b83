"""Generate: one response (or `samples` responses) per prompt of a suite, from one model.

The model's config names its provider (`providers`: `openai`, `reference`, `replay`, `scripted`),
which answers every prompt; what names the model (`identity()`) enters each request's hash.

A reply is an answer, a refusal (recorded in `refusal`: scored 0 and counted apart) or a failure
(recorded in `error`, never as a response; see `llm._parsed` for which replies are which).

The generations file holds only what later stages read, so it is byte-stable; usage, retries and
cost go to a separate metrics file, and each sample's own (tokens, attempts, the date its reply
came, the model served) to a file of reply facts that only the report reads (`records.SampleReply`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from omegaconf import OmegaConf

from olympiad_eval.core.config import check_costs, number, request_settings
from olympiad_eval.core.layout import Layout
from olympiad_eval.core.records import (
    Generation,
    InputError,
    Prompt,
    SampleReply,
    read_jsonl,
    write_json,
    write_jsonl,
)
from olympiad_eval.llm.cache import request_key, same_model
from olympiad_eval.llm.providers import Provider, Request, ask_each, check_config, provider_class
from olympiad_eval.llm.usage import Tally, most_common, this_run, usage_totals, usage_warnings

log = logging.getLogger("olympiad_eval")


@dataclass(frozen=True)
class Outcome:
    total: int
    errors: int
    sent: int
    usage: dict = field(default_factory=dict)
    refusals: int = 0
    requests: str = ""  # what this run sent and paid, apart from the cached replies (`usage.this_run`)

    def summary(self) -> str:
        return f"{self.total} generations, {self.errors} failed, {self.refusals} refused; {self.requests}"


def sample_settings(settings: dict, sample: int) -> dict:
    """A fixed `seed` would make every sample the same: sample i asks with seed + i."""
    if settings.get("seed") is None:
        return settings
    return {**settings, "seed": int(settings["seed"]) + sample}


def generation_requests(provider: Provider, cfg, prompts: list[Prompt]) -> list[Request]:
    """Each prompt's request for each of the model's `samples`, keyed by the provider's identity
    (the cost plan keys them here too, so that it finds what the request cache holds)."""
    samples = int(cfg.get("samples", 1))
    settings = OmegaConf.to_container(cfg.generation, resolve=True) if cfg.get("generation") else {}
    identity = provider.identity()
    return [
        Request(request_key(identity, prompt.messages, asked, sample), list(prompt.messages), asked, prompt, sample)
        for prompt in prompts
        for sample in range(samples)
        for asked in [sample_settings(settings, sample)]
    ]


def generate(*args, **kwargs) -> Outcome:
    """One cell's generations: `generate_async`, with its arguments, alone in its event loop."""
    return asyncio.run(generate_async(*args, **kwargs))


async def generate_async(
    suite: str,
    model: str,
    cfg,
    prompts_path: str | Path,
    out_path: str | Path,
    cache_path: str | Path,
    usage_path: str | Path | None = None,
    replies_path: str | Path | None = None,
    on_generation: Callable[[Generation], None] | None = None,
) -> Outcome:
    """Ask the model every prompt of the suite; write its generations (and their usage and reply
    facts). Each generation is also handed to `on_generation` as its reply arrives."""
    where = f"model '{model}'"
    provider = provider_class(cfg.get("provider"), where)(cfg, where, suite)
    requests = generation_requests(provider, cfg, read_jsonl(prompts_path, Prompt))
    tally = Tally(prices=dict(cfg.get("prices") or {}))
    asked = str(cfg.model) if provider.sends and cfg.get("model") else None

    def made(request: Request, reply) -> Generation:
        return Generation(
            id=request.prompt.id,
            suite=suite,
            model=model,
            sample=request.sample,
            response=reply.text,
            request_hash=request.key,
            finish_reason=reply.finish_reason,
            reasoning=reply.reasoning,
            error=reply.error,
            refusal=reply.refusal,
            served_model=None if asked is None or same_model(asked, reply.served_model) else reply.served_model,
        )

    arrived = None if on_generation is None else lambda request, reply: on_generation(made(request, reply))
    replies = await ask_each(provider, cache_path, requests, f"generate {suite} x {model}", tally, arrived)
    generations = [made(request, reply) for request, reply in zip(requests, replies)]
    write_jsonl(out_path, generations)
    usage = usage_totals(replies, tally.prices, provider.sends, asked)
    for line in usage_warnings(usage, where, asked):
        log.warning("%s", line)
    if usage_path is not None:
        write_json(usage_path, usage)
    if replies_path is not None:
        write_jsonl(replies_path, sample_replies(suite, model, requests, replies) if provider.sends else [])
    return Outcome(
        total=len(generations),
        errors=usage["failed"],
        sent=tally.sent,
        usage=usage,
        refusals=sum(g.refusal is not None for g in generations),
        requests=this_run([tally]),
    )


def generate_cell(*args, **kwargs) -> tuple[Outcome, str | None]:
    """`generate_cell_async`, with its arguments, alone in its event loop."""
    return asyncio.run(generate_cell_async(*args, **kwargs))


async def generate_cell_async(
    layout: Layout,
    family: str,
    suite: str,
    model: str,
    cfg,
    cache_path,
    max_failed_fraction: float,
    on_generation: Callable[[Generation], None] | None = None,
) -> tuple[Outcome, str | None]:
    """Generate one cell (suite x model) into its folder (generations, usage, reply facts), each
    generation handed to `on_generation` as its reply arrives; with the outcome, why the stage must
    fail where it must: too many failed requests (they are recorded as errors, never as answers; the
    rerun sends only them, the others come from the request cache)."""
    prompts = layout.prompts(family, suite)
    if not prompts.is_file():
        raise InputError(f"suite '{suite}' has no prompts at {prompts}: has it been rendered (stage render@{suite})?")
    out = layout.generations(family, suite, model)
    usage, replies = layout.usage(family, suite, model), layout.sample_replies(family, suite, model)
    outcome = await generate_async(suite, model, cfg, prompts, out, cache_path, usage, replies, on_generation)
    if outcome.errors <= max_failed_fraction * outcome.total:
        return outcome, None
    endpoint = f" at {cfg.base_url}" if cfg.get("base_url") else ""
    reasons = most_common(g.error for g in read_jsonl(out, Generation) if g.error is not None)
    return outcome, (
        f"{suite} x {model}: {outcome.errors} of {outcome.total} requests failed (model '{model}'{endpoint}; "
        f"tolerated: {max_failed_fraction:.0%}): {reasons}; they are recorded as errors, never as answers: rerun "
        "to retry them"
    )


def sample_replies(suite: str, model: str, requests: list[Request], replies: list) -> list[SampleReply]:
    """Each sample's reply facts, as the request cache keeps them (a cached reply has the date and
    attempts of when it was first received), for the report's page of the problem."""
    return [
        SampleReply(
            id=request.prompt.id,
            suite=suite,
            model=model,
            sample=request.sample,
            usage=dict(reply.usage or {}),
            attempts=reply.attempts,
            received=reply.received,
            served_model=reply.served_model,
            latency=reply.latency,
        )
        for request, reply in zip(requests, replies)
    ]


def check_model(cfg, name: str) -> None:
    """Everything of a model's config that generate reads, checked before its first request."""
    where = f"model '{name}' (conf/model/{name}.yaml or an override)"
    provider = provider_class(cfg.get("provider"), where)
    check_config(cfg, where, provider)
    number(cfg, "samples", where, integer=True, minimum=1)
    request_settings(cfg, "generation", where)
    check_costs(cfg, where)
    provider.check(cfg, where)
