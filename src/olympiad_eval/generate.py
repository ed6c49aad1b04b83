"""Generate: one response (or `samples` responses) per prompt of a suite, from one model.

Providers: `openai` (any OpenAI-compatible endpoint), `reference` (answers with the gold answer
in the format the prompt asks for: an upper bound that checks the whole pipeline) and `replay`
(serves recorded responses keyed by problem id: to re-score released model outputs).

A reply is an answer, a refusal (recorded in `refusal`: scored 0 and counted apart) or a failure
(recorded in `error`, never as a response; see `llm._parsed` for which replies are which).

The generations file holds only what later stages read, so it is byte-stable; usage, retries and
cost go to a separate metrics file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from omegaconf import OmegaConf

from olympiad_eval.llm import Reply, Tally, request_key, send
from olympiad_eval.records import (
    Generation, InputError, Prompt, RecordError, iter_json_lines, read_jsonl, write_json, write_jsonl,
)

PROVIDERS = ("openai", "reference", "replay")


@dataclass(frozen=True)
class Outcome:
    total: int
    errors: int
    sent: int
    usage: dict = field(default_factory=dict)
    refusals: int = 0

    def summary(self) -> str:
        cost = self.usage.get("cost_usd", 0.0)
        return (f"{self.total} generations, {self.errors} failed, {self.refusals} refused, {self.sent} requests sent, "
                f"{self.usage.get('retries', 0)} retries, cost ${cost:.4f}")


def sample_settings(settings: dict, sample: int) -> dict:
    """A fixed `seed` would make every sample the same: sample i asks with seed + i."""
    if settings.get("seed") is None:
        return settings
    return {**settings, "seed": int(settings["seed"]) + sample}


def generate(suite: str, model: str, cfg, prompts_path: str | Path, out_path: str | Path, cache_path: str | Path,
             usage_path: str | Path | None = None) -> Outcome:
    provider = cfg.provider
    if provider not in PROVIDERS:
        raise InputError(f"model '{model}': unknown provider '{provider}'; known: {', '.join(PROVIDERS)}")
    prompts = read_jsonl(prompts_path, Prompt)
    samples = int(cfg.get("samples", 1))
    settings = OmegaConf.to_container(cfg.generation, resolve=True) if cfg.get("generation") else {}
    identity = {"provider": provider, **_identity(cfg)}
    jobs = [(prompt, sample, sample_settings(settings, sample)) for prompt in prompts for sample in range(samples)]
    keys = [request_key(identity, prompt.messages, asked, sample) for prompt, sample, asked in jobs]
    tally = Tally(prices=dict(cfg.get("prices") or {}))
    if provider == "reference":
        replies = [Reply(text=prompt.reference, finish_reason="stop", cached=True) for prompt, _, _ in jobs]
    elif provider == "replay":
        replies = _replay(cfg, suite, [(prompt.id, sample) for prompt, sample, _ in jobs])
    else:
        requests = [(key, list(prompt.messages), asked) for key, (prompt, _, asked) in zip(keys, jobs)]
        replies = send(cfg, cache_path, requests, f"generate {suite} x {model}", tally, who=f"model '{model}'")
    generations = [
        Generation(id=prompt.id, suite=suite, model=model, sample=sample, response=reply.text, request_hash=key,
                   finish_reason=reply.finish_reason, reasoning=reply.reasoning, error=reply.error,
                   refusal=reply.refusal)
        for key, (prompt, sample, _), reply in zip(keys, jobs, replies)
    ]
    write_jsonl(out_path, generations)
    usage = usage_totals(replies, tally)
    if usage_path is not None:
        write_json(usage_path, usage)
    return Outcome(total=len(generations), errors=usage["failed"], sent=tally.sent, usage=usage,
                   refusals=sum(g.refusal is not None for g in generations))


def usage_totals(replies: list[Reply], tally: Tally) -> dict:
    """Totals per cell, from the replies as stored: the same on every rerun."""
    answered = [reply for reply in replies if reply.error is None]
    tokens = {name: sum(reply.usage.get(name, 0) for reply in answered)
              for name in ("prompt_tokens", "completion_tokens", "reasoning_tokens")}
    cost = Tally(prices=tally.prices, **tokens).cost
    return {
        "requests": len(replies),
        "answered": len(answered),
        "failed": len(replies) - len(answered),
        "truncated": sum(reply.finish_reason == "length" for reply in answered),
        "retries": sum(max(reply.attempts - 1, 0) for reply in answered),
        **tokens,
        "cost_usd": round(cost, 6),
    }


def _identity(cfg) -> dict:
    """What names the model behind a request (never the key)."""
    if cfg.provider == "openai":
        identity = {"base_url": str(cfg.base_url), "model": str(cfg.model)}
        if cfg.get("max_image_bytes"):
            identity["max_image_bytes"] = int(cfg.max_image_bytes)
        return identity
    if cfg.provider == "replay":
        return {"path": str(cfg.path)}
    return {}


def _replay(cfg, suite: str, wanted: list[tuple[str, int]]) -> list[Reply]:
    """Recorded responses from `cfg.path` (`{suite}` is replaced by the suite's name)."""
    path = Path(str(cfg.path).replace("{suite}", suite))
    if not path.is_file():
        raise InputError(f"replay file {path} not found")
    id_field, response_field = cfg.get("id_field", "id"), cfg.get("response_field", "response")
    recorded: dict[tuple[str, int], str] = {}
    for line, row in iter_json_lines(path):
        if id_field not in row or response_field not in row:
            raise InputError(f"{path}:{line}: a replay row needs the fields '{id_field}' and '{response_field}'")
        response, sample = row[response_field], row.get("sample", 0)
        if not isinstance(response, str):  # a null would otherwise be replayed as the text "None"
            raise RecordError(path, f"{row[id_field]} (line {line})", response_field,
                              f"expected text, got {type(response).__name__}")
        if not isinstance(sample, int) or isinstance(sample, bool):
            raise RecordError(path, f"{row[id_field]} (line {line})", "sample", f"expected an integer, got {sample!r}")
        recorded[(str(row[id_field]), sample)] = response
    return [
        Reply(text=recorded[key], finish_reason="stop", cached=True) if key in recorded
        else Reply(error=f"no recorded response for id {key[0]} sample {key[1]} in {path}", cached=True)
        for key in wanted
    ]
