"""Requests to models and judges: OpenAI-compatible endpoints, offline providers, request cache.

Every request is keyed by the hash of its full content (endpoint, model id, messages with image
hashes, generation settings, sample index) and its reply is stored in a SQLite cache outside the
DVC outputs as soon as it arrives. A killed run therefore resends only what had no reply yet.
Failed requests are returned as errors and never cached, so a rerun retries exactly those.
API keys are read from the environment variable the config names and go nowhere else.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from olympiad_eval.records import InputError, content_hash, file_sha256, without_paths


@dataclass(frozen=True)
class Reply:
    text: str | None = None
    reasoning: str | None = None
    finish_reason: str | None = None
    error: str | None = None
    cached: bool = False


def request_key(endpoint: dict, messages: list | tuple, settings: dict, sample: int) -> str:
    """The hash of everything that determines a reply. Images enter by their content hash."""
    return content_hash({"endpoint": endpoint, "messages": without_paths(messages), "settings": settings,
                         "sample": sample})


class RequestCache:
    """Replies by request hash, committed one by one so that a kill loses none."""

    def __init__(self, path: str | Path):
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, reply TEXT NOT NULL)")

    def get(self, key: str) -> Reply | None:
        row = self._db.execute("SELECT reply FROM replies WHERE key = ?", (key,)).fetchone()
        return Reply(**json.loads(row[0]), cached=True) if row else None

    def put(self, key: str, reply: Reply) -> None:
        data = {"text": reply.text, "reasoning": reply.reasoning, "finish_reason": reply.finish_reason}
        self._db.execute("INSERT OR REPLACE INTO replies VALUES (?, ?)", (key, json.dumps(data, sort_keys=True)))

    def close(self) -> None:
        self._db.close()


def inline_images(messages: list | tuple) -> list[dict]:
    """Replace our image references by base64 data URLs, checking each file's hash."""
    inlined = []
    for message in messages:
        content = message["content"]
        if isinstance(content, (list, tuple)):
            content = [_inline(part) for part in content]
        inlined.append({**message, "content": content})
    return inlined


def _inline(part: dict) -> dict:
    if part.get("type") != "image":
        return dict(part)
    if file_sha256(part["path"]) != part["sha256"]:
        raise InputError(f"figure {part['path']} changed since it was rendered (sha256 differs); rerun the render stage")
    data = base64.b64encode(Path(part["path"]).read_bytes()).decode("ascii")
    return {"type": "image_url", "image_url": {"url": f"data:{part['mime']};base64,{data}"}}


class OpenAIEndpoint:
    """Any OpenAI-compatible chat endpoint, through the official async client."""

    def __init__(self, cfg):
        import openai

        self._openai = openai
        key = _api_key(cfg.get("api_key_env"))
        self.identity = {"base_url": str(cfg.base_url), "model": str(cfg.model)}
        self.model = str(cfg.model)
        self.client = openai.AsyncOpenAI(
            base_url=str(cfg.base_url), api_key=key, max_retries=int(cfg.get("max_retries", 5)),
            timeout=float(cfg.get("timeout", 600)),
        )
        self.limit = asyncio.Semaphore(int(cfg.get("concurrency", 8)))

    async def complete(self, messages: list, settings: dict) -> Reply:
        openai = self._openai
        async with self.limit:
            try:
                result = await self.client.chat.completions.create(
                    model=self.model, messages=inline_images(messages), **settings
                )
            except openai.APIStatusError as error:
                return Reply(error=f"HTTP {error.status_code}: {_short(error.message)}")
            except (openai.APIConnectionError, openai.APITimeoutError) as error:
                return Reply(error=f"{type(error).__name__}: {_short(str(error))}")
        if not result.choices:
            return Reply(error="the endpoint returned no choices")
        choice = result.choices[0]
        message = choice.message
        reasoning = getattr(message, "reasoning_content", None) or getattr(message, "reasoning", None)
        return Reply(text=message.content or "", reasoning=reasoning, finish_reason=choice.finish_reason)

    async def aclose(self) -> None:
        await self.client.close()


def _api_key(variable: str | None) -> str:
    if not variable:
        return "not-needed"  # local servers often take no key; the client still wants a string
    key = os.environ.get(str(variable))
    if not key:
        raise InputError(f"the API key is read from the environment variable {variable}, which is not set")
    return key


def _short(text: Any, limit: int = 300) -> str:
    text = str(text)
    return text if len(text) <= limit else text[:limit] + "..."


async def complete_all(endpoint: OpenAIEndpoint, cache: RequestCache, requests: list[tuple[str, list, dict]],
                       progress=None) -> list[Reply]:
    """Send (key, messages, settings) requests concurrently; cached replies are not sent again."""

    async def one(key: str, messages: list, settings: dict) -> Reply:
        cached = cache.get(key)
        if cached is not None:
            reply = cached
        else:
            reply = await endpoint.complete(messages, settings)
            if reply.error is None:
                cache.put(key, reply)
        if progress is not None:
            progress.update(1)
        return reply

    try:
        return await asyncio.gather(*(one(*request) for request in requests))
    finally:
        await endpoint.aclose()
