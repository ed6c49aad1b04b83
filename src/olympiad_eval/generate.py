"""Generate: one response (or `samples` responses) per prompt of a suite, from one model.

Providers: `openai` (any OpenAI-compatible endpoint), `reference` (answers with the gold answer
in the format the prompt asks for: an upper bound that checks the whole pipeline) and `replay`
(serves recorded responses keyed by problem id: to re-score released model outputs).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from omegaconf import OmegaConf
from tqdm import tqdm

from olympiad_eval.llm import OpenAIEndpoint, Reply, RequestCache, complete_all, request_key
from olympiad_eval.records import InputError, Generation, Prompt, iter_json_lines, read_jsonl, write_jsonl

PROVIDERS = ("openai", "reference", "replay")


@dataclass(frozen=True)
class Outcome:
    total: int
    errors: int
    sent: int

    def summary(self) -> str:
        return f"{self.total} generations, {self.errors} failed, {self.sent} requests sent"


def generate(suite: str, model: str, cfg, prompts_path: str | Path, out_path: str | Path, cache_path: str | Path) -> Outcome:
    provider = cfg.provider
    if provider not in PROVIDERS:
        raise InputError(f"model '{model}': unknown provider '{provider}'; known: {', '.join(PROVIDERS)}")
    prompts = read_jsonl(prompts_path, Prompt)
    samples = int(cfg.get("samples", 1))
    settings = OmegaConf.to_container(cfg.generation, resolve=True) if cfg.get("generation") else {}
    identity = {"provider": provider, **_identity(cfg)}
    jobs = [(prompt, sample, request_key(identity, prompt.messages, settings, sample))
            for prompt in prompts for sample in range(samples)]
    if provider == "reference":
        replies = [Reply(text=prompt.reference, finish_reason="stop") for prompt, _, _ in jobs]
    elif provider == "replay":
        replies = _replay(cfg, suite, [(prompt.id, sample) for prompt, sample, _ in jobs])
    else:
        replies = _request(cfg, cache_path, [(key, list(prompt.messages), settings) for prompt, _, key in jobs], model)
    generations = [
        Generation(id=prompt.id, suite=suite, model=model, sample=sample, response=reply.text, request_hash=key,
                   finish_reason=reply.finish_reason, reasoning=reply.reasoning, error=reply.error)
        for (prompt, sample, key), reply in zip(jobs, replies)
    ]
    write_jsonl(out_path, generations)
    return Outcome(total=len(generations), errors=sum(g.error is not None for g in generations),
                   sent=sum(not r.cached for r in replies) if provider == "openai" else 0)


def _identity(cfg) -> dict:
    """What names the model behind a request (never the key)."""
    if cfg.provider == "openai":
        return {"base_url": str(cfg.base_url), "model": str(cfg.model)}
    if cfg.provider == "replay":
        return {"path": str(cfg.path)}
    return {}


def _request(cfg, cache_path, requests: list, model: str) -> list[Reply]:
    cache = RequestCache(cache_path)
    try:
        with tqdm(total=len(requests), desc=f"generate {model}", unit="req") as progress:
            return asyncio.run(complete_all(OpenAIEndpoint(cfg), cache, requests, progress))
    finally:
        cache.close()


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
        recorded[(str(row[id_field]), int(row.get("sample", 0)))] = str(row[response_field])
    return [
        Reply(text=recorded[key], finish_reason="stop") if key in recorded
        else Reply(error=f"no recorded response for id {key[0]} sample {key[1]} in {path}")
        for key in wanted
    ]
