"""Who answers a request: one contract for models and judges alike, and the registry of providers.

A provider (`Provider`) names the model behind its requests (`identity()`, which enters every
request key, so that no reply is ever served for another model) and answers one request at a time
(`complete(request)`): generation asks every prompt of a suite at once, a judge asks task by task
and asks again after a reply off its schema, both through a `Client`. A provider that `sends`
(over the network, paid for) is probed before its first request that is not cached, and its replies
go through the request cache; an offline one answers at once and nothing is stored.

- `openai`: any OpenAI-compatible endpoint (`transport.OpenAIEndpoint`: retries, probe, breaker, rate limits).
- `reference`: the gold answer in the format the prompt asks for: an upper bound that checks the
  whole pipeline.
- `replay`: recorded responses keyed by problem id and sample: to re-score released model outputs.
- `scripted`: canned replies chosen by what the request says: an LLM judge's whole path (prompts,
  parsing, re-asks, combination) offline, for dry runs and tests (conf/judge/scripted.yaml).

A model's config names its provider (`provider:`); a judge endpoint may (default `openai`), but not
`reference` or `replay`, which answer only a suite's prompts. A new provider is a subclass of
`Provider` added to `PROVIDERS`, its settings named in its `settings` and checked in its `check`,
and a config file naming it. A config's keys are those of its provider and of every model
(`MODEL_SETTINGS`) or judge endpoint (`JUDGE_SETTINGS`): a misspelt key is refused with the closest
(`check_config`), and so is a secret written in it (an API key is named by `api_key_env`).
"""

from __future__ import annotations

import asyncio
import functools
import glob
import logging
import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar

from omegaconf import OmegaConf
from tqdm import tqdm

from olympiad_eval.core.config import REQUEST_SETTINGS, known_keys, number
from olympiad_eval.core.records import InputError, Prompt, RecordError, iter_json_lines
from olympiad_eval.core.secrets import check_no_secrets
from olympiad_eval.llm.cache import Reply, RequestCache
from olympiad_eval.llm.transport import OpenAIEndpoint, api_key, concurrency_of
from olympiad_eval.llm.usage import Tally

log = logging.getLogger("olympiad_eval")


@dataclass(frozen=True)
class Request:
    """One request: its key (`llm.request_key`: the hash of all that determines its reply), what
    is sent, and in generation the suite's prompt it asks and its sample (a judge asks no prompt)."""

    key: str
    messages: list
    settings: dict
    prompt: Prompt | None = None
    sample: int = 0


class Provider(ABC):
    """The contract every provider meets. Built once per batch (a generate cell) or per judge of
    a judge cell, from its config (`cfg`); `who` names it in messages ("model 'gpt-4o'")."""

    name: ClassVar[str]  # its name in configs (`provider: <name>`) and in its requests' identity
    settings: ClassVar[tuple[str, ...]] = ()  # the keys of its own in a config (beside MODEL_SETTINGS, JUDGE_SETTINGS)
    sends: ClassVar[bool] = False  # replies come over the network, at a price: cached, and probed first
    needs_prompts: ClassVar[bool] = False  # answers only a suite's prompts (reads them): no judge can use it
    concurrency: int = 64  # requests a judge keeps in flight; an offline provider answers at once

    def __init__(self, cfg, who: str, suite: str | None = None):
        self.cfg, self.who, self.suite = cfg, who, suite

    @classmethod
    def check(cls, cfg, where: str) -> None:
        """Its settings in `cfg`, checked before any work: an InputError naming `where` and the key."""

    @classmethod
    def inputs(cls, cfg, suite: str) -> list[Path]:
        """The files besides the suite's prompts that its answers to a suite are read from: the check
        stage records each with its MD5 in the model's record for the suite (`stages.configs`), on
        which the cell's generate stage depends, so that editing one reruns that cell alone."""
        return []

    @abstractmethod
    def identity(self) -> dict:
        """What names the model behind a request (never a key): `{"provider": name, ...}`."""

    @abstractmethod
    async def complete(self, request: Request) -> Reply:
        """The reply to one request: an answer, a refusal, or an error (never raised: recorded)."""

    async def probe(self) -> None:
        """Raise `llm.EndpointError` where it cannot serve at all; called before its first request
        that is not cached (a provider that does not send is never probed)."""

    def show_waits(self, show: Callable[[float], None]) -> None:
        """`show` is told each wait it makes for the endpoint (a rate limit), for the progress bar."""

    async def aclose(self) -> None:
        """Release what it holds (connections), once its batch or cell is done."""


class OpenAIProvider(Provider):
    """Any OpenAI-compatible chat endpoint, through `transport.OpenAIEndpoint` (every setting is
    documented in conf/model/gpt-4o.yaml)."""

    name = "openai"
    sends = True
    settings = (
        "base_url",
        "model",
        "api_key_env",
        "concurrency",
        "rpm",
        "max_retries",
        "timeout",
        "probe",
        "probe_timeout",
        "max_consecutive_failures",
        "max_rate_limit_wait",
        "max_image_bytes",
        "strict_model",
        "max_reply_bytes",
    )

    @functools.cached_property
    def endpoint(self) -> OpenAIEndpoint:
        """The client, built on first use: `identity()` needs none, so that a cost plan can key the
        requests of an endpoint whose API key is not in this environment, and a batch whose replies
        are all cached never builds one (nor imports `openai`, half a second)."""
        endpoint = OpenAIEndpoint(self.cfg, self.who)
        endpoint.rate_limits.show = getattr(self, "_show_waits", None)
        return endpoint

    @property
    def concurrency(self) -> int:
        return concurrency_of(self.cfg)

    @classmethod
    def check(cls, cfg, where: str) -> None:
        """Its settings, and its API key present in the environment."""
        base_url = cfg.get("base_url")
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise InputError(f"{where}: base_url must be an http(s) URL, got {base_url!r}")
        if not isinstance(cfg.get("model"), str) or not cfg.get("model"):
            raise InputError(f"{where}: model (the endpoint's model id) must be set, got {cfg.get('model')!r}")
        number(cfg, "concurrency", where, integer=True, minimum=1)
        number(cfg, "max_retries", where, integer=True, minimum=0)
        number(cfg, "timeout", where, above=0)
        number(cfg, "rpm", where, above=0)
        number(cfg, "max_image_bytes", where, integer=True, minimum=1)
        number(cfg, "max_reply_bytes", where, integer=True, minimum=1)
        number(cfg, "probe_timeout", where, above=0)
        number(cfg, "max_consecutive_failures", where, integer=True, minimum=0)
        number(cfg, "max_rate_limit_wait", where, minimum=0)
        for flag in ("probe", "strict_model"):
            if cfg.get(flag) is not None and not isinstance(cfg.get(flag), bool):
                raise InputError(f"{where}: {flag} must be true or false, got {cfg.get(flag)!r}")
        try:
            api_key(cfg.get("api_key_env"))
        except InputError as error:
            raise InputError(f"{where}: {error}") from None

    def identity(self) -> dict:
        """The endpoint and model id; the image size limit where set, since it changes what is sent."""
        identity = {"provider": self.name, "base_url": str(self.cfg.base_url), "model": str(self.cfg.model)}
        if self.cfg.get("max_image_bytes"):
            identity["max_image_bytes"] = int(self.cfg.max_image_bytes)
        return identity

    async def complete(self, request: Request) -> Reply:
        return await self.endpoint.complete(list(request.messages), request.settings)

    async def probe(self) -> None:
        await self.endpoint.probe()

    def show_waits(self, show: Callable[[float], None]) -> None:
        self._show_waits = show  # handed to the endpoint when it is built, or now where it is
        if "endpoint" in vars(self):
            self.endpoint.rate_limits.show = show

    async def aclose(self) -> None:
        if "endpoint" in vars(self):  # never built: nothing to release
            await self.endpoint.aclose()


class ReferenceProvider(Provider):
    """Answers each prompt with its gold answer, in the format the prompt asks for: every
    answer-level score should be 100%, an upper-bound check of the whole pipeline."""

    name = "reference"
    needs_prompts = True

    def identity(self) -> dict:
        return {"provider": self.name}

    async def complete(self, request: Request) -> Reply:
        return Reply(text=request.prompt.reference, finish_reason="stop", cached=True)


class ReplayProvider(Provider):
    """Recorded responses from a JSONL file (`path`, `{suite}` replaced by the suite's name), keyed
    by problem id (`id_field`) and `sample` (default 0): to re-score released model outputs. A
    prompt without a recorded response gets an error, never an empty answer."""

    name = "replay"
    needs_prompts = True
    settings = ("path", "id_field", "response_field")

    def __init__(self, cfg, who: str, suite: str | None = None):
        super().__init__(cfg, who, suite)
        self.path = Path(str(cfg.path) if suite is None else str(cfg.path).replace("{suite}", suite))
        if not self.path.is_file():
            raise InputError(_not_recorded(who, self.path, str(cfg.path), suite))
        self.recorded = _recorded(self.path, cfg.get("id_field", "id"), cfg.get("response_field", "response"))

    @classmethod
    def check(cls, cfg, where: str) -> None:
        if not isinstance(cfg.get("path"), str) or not cfg.get("path"):
            raise InputError(
                f"{where}: path (the recorded responses, `{{suite}}` for the suite's name) must be "
                f"set, got {cfg.get('path')!r}"
            )

    @classmethod
    def inputs(cls, cfg, suite: str) -> list[Path]:
        return [Path(str(cfg.path).replace("{suite}", suite))]

    def identity(self) -> dict:
        return {"provider": self.name, "path": str(self.cfg.path)}  # as written: one identity for every suite

    async def complete(self, request: Request) -> Reply:
        wanted = (request.prompt.id, request.sample)
        if wanted not in self.recorded:
            return Reply(
                error=f"no recorded response for id {wanted[0]} sample {wanted[1]} in {self.path}", cached=True
            )
        return Reply(text=self.recorded[wanted], finish_reason="stop", cached=True)


def _not_recorded(who: str, path: Path, pattern: str, suite: str | None) -> str:
    """A missing replay file; where others fill the pattern, the suites they record (the `demo`
    model's recordings cover the bundled sample's suites only)."""
    recorded = _suites_recorded(pattern) if suite is not None and "{suite}" in pattern else ""
    if not recorded:
        return f"{who}: replay file {path} not found"
    return (
        f"{who} has no recorded responses for suite '{suite}' ({path} does not exist): it has them for "
        f"{recorded} only; run it on those, or leave it out of params.yaml's models for a plan of other suites"
    )


def _suites_recorded(pattern: str) -> str:
    """The suites whose names fill a replay path's `{suite}` with a file that exists."""
    head, _, tail = pattern.partition("{suite}")
    files = glob.glob(glob.escape(head) + "*" + glob.escape(tail))
    return ", ".join(sorted(name[len(head) : len(name) - len(tail)] for name in files))


def _recorded(path: Path, id_field: str, response_field: str) -> dict[tuple[str, int], str]:
    """The responses of a replay file, by (problem id, sample)."""
    recorded: dict[tuple[str, int], str] = {}
    for line, row in iter_json_lines(path):
        if id_field not in row or response_field not in row:
            raise InputError(f"{path}:{line}: a replay row needs the fields '{id_field}' and '{response_field}'")
        response, sample = row[response_field], row.get("sample", 0)
        if not isinstance(response, str):  # a null would otherwise be replayed as the text "None"
            raise RecordError(
                path, f"{row[id_field]} (line {line})", response_field, f"expected text, got {type(response).__name__}"
            )
        if not isinstance(sample, int) or isinstance(sample, bool):
            raise RecordError(path, f"{row[id_field]} (line {line})", "sample", f"expected an integer, got {sample!r}")
        recorded[(str(row[id_field]), sample)] = response
    return recorded


class ScriptedProvider(Provider):
    """Canned replies: a request gets the `reply` of the first of `replies` whose `when` its text
    contains (a rule without `when` matches any request), or an error where none matches. Offline
    and free: it runs an LLM judge's protocol without a model, for dry runs and tests."""

    name = "scripted"
    settings = ("replies",)

    def __init__(self, cfg, who: str, suite: str | None = None):
        super().__init__(cfg, who, suite)
        self.replies = [{"when": rule.get("when"), "reply": str(rule.reply)} for rule in cfg.replies]

    @classmethod
    def check(cls, cfg, where: str) -> None:
        replies = cfg.get("replies")
        if not OmegaConf.is_list(replies) or not replies:
            raise InputError(
                f"{where}: replies must be a list of rules ({{when: '\"verdict\"', reply: ...}}), got {replies!r}"
            )
        for index, rule in enumerate(replies):
            if (
                not OmegaConf.is_dict(rule)
                or not isinstance(rule.get("reply"), str)
                or not isinstance(rule.get("when", ""), str)
                or set(rule) - {"when", "reply"}
            ):
                raise InputError(
                    f"{where}: replies[{index}] must have a text `reply` and may have a text `when` "
                    f"(nothing else), got {rule!r}"
                )

    def identity(self) -> dict:
        return {"provider": self.name, "replies": self.replies}  # another script is another model

    async def complete(self, request: Request) -> Reply:
        text = request_text(request.messages)
        for rule in self.replies:
            if rule["when"] is None or rule["when"] in text:
                return Reply(text=rule["reply"], finish_reason="stop", cached=True)
        return Reply(error="no scripted reply matches the request (each rule's `when` is missing from it)", cached=True)


def request_text(messages: list) -> str:
    """The text of a request's messages, one after the other (images left out)."""
    parts = []
    for message in messages:
        content = message["content"]
        parts.extend(
            [content] if isinstance(content, str) else [part["text"] for part in content if part.get("type") == "text"]
        )
    return "\n".join(parts)


# ---------------------------------------------------------------- the registry

PROVIDERS: dict[str, type[Provider]] = {
    provider.name: provider for provider in (OpenAIProvider, ReferenceProvider, ReplayProvider, ScriptedProvider)
}
JUDGE_PROVIDER = "openai"  # of a judge endpoint that names none: every judge config written before there were others


# The keys every model's config may have beside its provider's, and every judge endpoint's.
MODEL_SETTINGS = ("provider", "samples", "prices", "assumed_output_tokens", "generation")
JUDGE_SETTINGS = ("provider", "prices", "assumed_output_tokens")


def check_config(cfg, where: str, provider: type[Provider], judge: bool = False) -> None:
    """A model's (or, `judge`, a judge endpoint's) config holds no secret and no key that neither
    its provider nor every model (judge endpoint) has: a misspelt key would be silently ignored."""
    check_no_secrets(cfg, where)
    common = JUDGE_SETTINGS if judge else MODEL_SETTINGS
    whose = f"a {'judge endpoint' if judge else 'model'} of provider '{provider.name}'"
    extra = (
        "; request settings go under the judge config's `settings`"
        if judge
        else "; request settings go under `generation`, and a parameter your endpoint adds under generation.extra_body"
    )
    nested = {"generation": REQUEST_SETTINGS} if provider.sends and not judge else None
    known_keys(cfg, (*common, *provider.settings), where, whose, extra if provider.sends else "", nested)


def provider_class(name, where: str) -> type[Provider]:
    """The provider a config names (`provider: <name>`)."""
    if not isinstance(name, str) or name not in PROVIDERS:
        raise InputError(f"{where}: provider must be one of {', '.join(PROVIDERS)}, got {name!r}")
    return PROVIDERS[name]


def judge_provider_class(endpoint, where: str) -> type[Provider]:
    """The provider of a judge endpoint (`provider`, default openai): one that answers any request."""
    provider = provider_class(endpoint.get("provider", JUDGE_PROVIDER), where)
    if provider.needs_prompts:
        judging = ", ".join(name for name, other in PROVIDERS.items() if not other.needs_prompts)
        raise InputError(
            f"{where}: provider '{provider.name}' answers only a suite's prompts; a judge needs one "
            f"that answers any request ({judging})"
        )
    return provider


# ---------------------------------------------------------------- asking

LEASE_POLL = (0.05, 1.0)  # seconds between looks for a reply that another process is waiting for: first, most


class Client:
    """One provider behind the request cache: a cached reply is not asked again, and a reply is
    cached the moment it arrives. Requests may be asked one by one, from many tasks at once. A
    provider that sends is probed once, before the first request that is not cached goes out: a
    batch whose replies are all cached sends nothing and works offline. An offline provider
    answers at once: its replies are neither cached nor shared."""

    def __init__(self, provider: Provider, cache: RequestCache | None, progress=None, tally: Tally | None = None):
        self.provider, self.progress = provider, progress
        self.cache = cache if provider.sends else None
        self.tally = tally if tally is not None else Tally()
        self._sending: dict[str, asyncio.Future] = {}
        self._tallied: set[str] = set()
        self._probe: asyncio.Future | None = None
        provider.show_waits(self._show_wait)

    def sending(self, key: str) -> bool:
        """Whether an identical request is on its way (asking it again waits for that reply)."""
        return key in self._sending

    def cached(self, key: str) -> bool:
        """Whether the cache holds the reply to `key` (an offline provider's never: it is not stored)."""
        return self.cache is not None and self.cache.get(key) is not None

    async def check_endpoint(self) -> None:
        """Probe the provider, once for all callers (EndpointError where it cannot serve)."""
        if self._probe is None:
            self._probe = asyncio.ensure_future(self.provider.probe())
        await asyncio.shield(self._probe)

    async def ask(self, request: Request) -> Reply:
        reply = await self._reply(request)
        if request.key not in self._tallied:  # a request that two tasks share is paid for once
            self._tallied.add(request.key)
            self.tally.add(reply, self.provider.sends)
        if self.progress is not None:
            self.progress.set_postfix(
                tokens=self.tally.prompt_tokens + self.tally.completion_tokens,
                cost=self.tally.cost_text(),
                refresh=False,
            )
            self.progress.update(1)
        return reply

    async def _reply(self, request: Request) -> Reply:
        if self.cache is None:
            return await self.provider.complete(request)
        reply = self.cache.get(request.key)
        return reply if reply is not None else await self._send(request)

    def _show_wait(self, seconds: float) -> None:
        said = f"rate-limited, waiting {math.ceil(seconds)} s"
        if self.progress is not None and not self.progress.disable:
            self.progress.set_postfix_str(said, refresh=True)
        else:  # no bar (a log, not a terminal): a long silent wait would look like a hang
            log.info("%s: %s", self.provider.who, said)

    async def _send(self, request: Request) -> Reply:
        """Identical requests asked at the same time (HiPhO's alternative marking schemes share
        criteria) go out once: the others get its reply, as they would from the cache. So do those
        of other processes that share the cache: the request goes out under its key's lease in the
        cache (`_leased`), and a process that finds it held waits for the reply to be stored."""
        key = request.key
        if key in self._sending:
            return replace(await self._sending[key], cached=True)
        sent = self._sending[key] = asyncio.get_running_loop().create_future()
        try:
            reply = await self._leased(key)
            if reply is None:
                try:
                    await self.check_endpoint()  # once it is on its way: an identical request asked meanwhile waits
                    reply = await self.provider.complete(request)
                    if reply.error is None:
                        reply = self.cache.put(key, reply)  # dated as stored: a rerun reads the same date
                finally:
                    self.cache.release(key)
            sent.set_result(reply)
            return reply
        finally:
            del self._sending[key]
            sent.cancel()  # a no-op once answered; else its waiters fail as this request did

    async def _leased(self, key: str) -> Reply | None:
        """None once this process holds the lease of `key` and its reply is still not stored (then
        it sends); or the reply, where another process that held the lease stored it meanwhile."""
        pause = LEASE_POLL[0]
        while True:
            if self.cache.acquire(key):
                stored = self.cache.get(key)  # stored between this batch's look in the cache and now
                if stored is None:
                    return None
                self.cache.release(key)
                return stored
            await asyncio.sleep(pause)
            pause = min(pause * 2, LEASE_POLL[1])
            stored = self.cache.get(key)
            if stored is not None:
                return stored

    async def aclose(self) -> None:
        await self.provider.aclose()


async def complete_all(
    provider: Provider,
    cache: RequestCache | None,
    requests: list[Request],
    progress=None,
    tally: Tally | None = None,
    on_reply: Callable[[Request, Reply], None] | None = None,
) -> list[Reply]:
    """Ask every request concurrently, in order; cached replies are not asked again. Each reply is
    handed to `on_reply` as it arrives (a judge then grades it while the others are awaited)."""
    client = Client(provider, cache, progress, tally)

    async def ask(request: Request) -> Reply:
        reply = await client.ask(request)
        if on_reply is not None:
            on_reply(request, reply)
        return reply

    try:
        return await asyncio.gather(*(ask(request) for request in requests))
    finally:
        await client.aclose()


async def ask_each(
    provider: Provider,
    cache_path: str | Path,
    requests: list[Request],
    label: str,
    tally: Tally | None = None,
    on_reply: Callable[[Request, Reply], None] | None = None,
) -> list[Reply]:
    """A batch through one provider and, where it sends, the request cache and a progress bar, each
    reply handed to `on_reply` as it arrives. Raises EndpointError, sending nothing, where the probe
    finds the endpoint unable to serve."""
    if not provider.sends:  # answered at once: no cache to open, no progress to show
        return await complete_all(provider, None, requests, tally=tally, on_reply=on_reply)
    cache = RequestCache(cache_path)
    try:
        # disable=None: a bar in a terminal; in a log (not a terminal) none, and the stage's one
        # summary line says what happened
        with tqdm(total=len(requests), desc=label, unit="req", dynamic_ncols=True, disable=None) as progress:
            return await complete_all(provider, cache, requests, progress, tally, on_reply)
    finally:
        cache.close()
