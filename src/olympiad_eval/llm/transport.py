"""Requests over the network to an OpenAI-compatible endpoint (`OpenAIEndpoint`, behind the `openai`
provider of `providers`): retries, a probe, a breaker and rate-limit waits. A reply is an answer, a
refusal (the model's own answer, cached) or malformed (no message, no content: retried, then an
error); `_parsed` says which is which. Failed requests are returned as errors, never cached
(`cache`), so a rerun retries exactly those.

Retries are the `openai` client's own: exponential backoff with jitter on 408/409/429/5xx,
timeouts and dropped connections, up to `max_retries`. Each attempt is counted (an httpx event
hook), and the count is kept with the reply. `timeout` bounds each attempt as a whole (connect,
first byte and the whole body: `WaitingHTTPClient._within_deadline`), so that a reply that trickles a byte at a time
times out like one that never comes.
API keys are read from the environment variable the config names and go nowhere else; a value of
`api_key_env` that is no variable's name (a key pasted there) is refused without being shown.

What a reply says is checked, not trusted: usage figures that are not token counts leave its usage
unknown (`cache.checked_usage`; the reply is kept), the model that served it is kept with it
(`Reply.served_model`; `strict_model: true` refuses another model's replies), and every field is
valid Unicode (`cache.sanitized`).

Failing fast (settings of an endpoint's config):
- `probe` (default true), `probe_timeout` (5 s): before the first request of a batch goes out
  (never when every reply is cached: a rerun works offline), one GET {base_url}/models, without
  retries, paid for by no one and cached nowhere. Connection refused, a host name that does not
  resolve, a connect timeout, 401/403, or a listing without the model stop the batch at once with
  `EndpointError` (one line: who, base URL, what failed, what to check). Anything else (404: the
  endpoint lists no models; a slow or failing listing) lets the batch go on. Set `probe: false`
  for an endpoint that serves models it does not list.
- `max_consecutive_failures` (default 10; 0: never): a breaker. After that many requests in a row
  failed in transport (connection, timeout, 401/403/404/408/409/429/5xx, after their retries) with
  no success between them, the batch stops: the requests not yet sent, and those still waiting for
  a reply, end at once as errors saying so (never answers, never cached).
- `max_rate_limit_wait` (default 900 s): a 429 whose `Retry-After` (seconds or an HTTP date) or
  `retry-after-ms` asks for a wait is waited for and resent below the client's retries, however
  long the wait, up to this many seconds in all per request: not a failure, not a retry, shown in
  the progress bar. Requests about to start wait too. Past it, the 429 goes to the client's retries.
"""

from __future__ import annotations

import asyncio
import contextvars
import difflib
import email.utils
import functools
import json
import logging
import math
import os
import re
import socket
import time
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from olympiad_eval.core.records import InputError
from olympiad_eval.core.secrets import shown_url, variable_name
from olympiad_eval.llm.cache import (
    CONTENT_FILTER,
    USAGE,
    Reply,
    checked_usage,
    one_line,
    same_model,
    sanitized,
    usage_mismatch,
)
from olympiad_eval.llm.images import inline_images

_attempts: contextvars.ContextVar[list[int]] = contextvars.ContextVar("attempts")
_reply_limit: contextvars.ContextVar[int | None] = contextvars.ContextVar("reply_limit", default=None)
log = logging.getLogger("olympiad_eval")


# ---------------------------------------------------------------- endpoints


class RateLimiter:
    """Spaces request starts evenly so that at most `rpm` start in any minute."""

    def __init__(self, rpm: float | None):
        self.interval = 60.0 / rpm if rpm else 0.0
        self._next = 0.0
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        if not self.interval:
            return
        loop = asyncio.get_running_loop()
        async with self._lock:
            start = max(loop.time(), self._next)
            self._next = start + self.interval
        await asyncio.sleep(max(0.0, start - loop.time()))


# Requests in flight at once to one endpoint, where its config sets no `concurrency`.
DEFAULT_CONCURRENCY = 8
# The wait before a retry of a reply that is no completion, doubling from the first: the openai
# client's own backoff for the transport failures it retries (its INITIAL_RETRY_DELAY, MAX_RETRY_DELAY).
FIRST_RETRY_WAIT, LAST_RETRY_WAIT = 0.5, 8.0


class EndpointError(InputError):
    """An endpoint that cannot serve a batch at all (down, refusing the key, not serving the model),
    found before anything was sent: the stage stops with this one line."""


def concurrency_of(cfg) -> int:
    """The requests an endpoint's config lets be in flight at once."""
    return int(cfg.get("concurrency", DEFAULT_CONCURRENCY))


class OpenAIEndpoint:
    """Any OpenAI-compatible chat endpoint, through the official async client. `who` names it in
    messages ("model 'gpt-4o'", "judge 'gpt-4o'")."""

    def __init__(self, cfg, who: str | None = None):
        import openai

        self._openai = openai
        self.model, self.base_url = str(cfg.model), str(cfg.base_url)
        self.who = who or f"model '{self.model}'"
        self.api_key_env = cfg.get("api_key_env")
        self.max_image_bytes = cfg.get("max_image_bytes")
        self.max_retries = int(cfg.get("max_retries", 5))
        self.probe_enabled = _setting(cfg, "probe", True) is not False
        self.probe_timeout = float(_setting(cfg, "probe_timeout", 5))
        self.breaker = Breaker(int(_setting(cfg, "max_consecutive_failures", 10)))
        self.rate_limits = RateLimitWait(float(_setting(cfg, "max_rate_limit_wait", 900)))
        self.strict_model = _setting(cfg, "strict_model", False) is True
        self.max_reply_bytes = cfg.get("max_reply_bytes")
        self.client = openai.AsyncOpenAI(
            base_url=self.base_url,
            api_key=api_key(self.api_key_env),
            max_retries=self.max_retries,
            timeout=float(cfg.get("timeout", 600)),
            http_client=_waiting_http_client()(
                self.rate_limits,
                event_hooks={"request": [_count_attempt], "response": [_refuse_another_origin]},
            ),
        )
        self._refused = _waiting_http_client().Refused
        self._completion = openai.types.chat.ChatCompletion
        self.concurrency = concurrency_of(cfg)
        self.limit = asyncio.Semaphore(self.concurrency)
        self.rate = RateLimiter(cfg.get("rpm"))

    async def complete(self, messages: list, settings: dict) -> Reply:
        """One request, unless the breaker has stopped the batch (then an error saying it was not
        sent, or abandoned where it was waiting for its reply). The client retries failed transport
        itself; a reply that is not a completion (a proxy's HTML page with status 200, a cut-off
        body) or holds no answer (see `_parsed`) is as transient, so it is retried here with the
        same budget and backoff."""
        attempts = [0]
        _attempts.set(attempts)
        _reply_limit.set(reply_limit(self.max_reply_bytes, settings))
        async with self.limit:  # images are read and encoded only once the request may go out
            if self.breaker.reason is not None:
                return Reply(error=f"not sent: {self.breaker.reason}", attempts=0)
            inlined = inline_images(messages, self.max_image_bytes)
            sent = time.monotonic()
            reply = await self.breaker.unless_tripped(self._attempts(inlined, settings))
            if reply is None:
                return Reply(error=f"abandoned: {self.breaker.reason}", attempts=attempts[0])
            self.breaker.record(reply)
        return sanitized(replace(reply, attempts=attempts[0], latency=round(time.monotonic() - sent, 3)))

    async def _attempts(self, messages: list, settings: dict) -> Reply:
        """The client retries failed transport itself; a reply that is not a completion (a proxy's
        HTML page with status 200, a cut-off body) is as transient, so it is retried here with the
        same budget and backoff."""
        paid = []  # the usage of each attempt that a completion came back for: each was billed
        for retry in range(self.max_retries + 1):
            if retry:
                await asyncio.sleep(min(FIRST_RETRY_WAIT * 2 ** (retry - 1), LAST_RETRY_WAIT))
            reply, malformed = await self._request(messages, settings)
            paid += [reply.usage] if reply.usage else []
            if (
                not malformed
                and self.strict_model
                and reply.error is None
                and not same_model(self.model, reply.served_model)
            ):
                reply, malformed = (
                    Reply(
                        error=f"served by another model: '{reply.served_model}', not '{self.model}' (strict_model: "
                        "true refuses its replies)",
                        usage=reply.usage,
                        usage_problem=reply.usage_problem,
                    ),
                    True,
                )
            if not malformed:
                break
        # a request costs what all its attempts were billed, those refused or without an answer too
        return replace(reply, usage={name: sum(usage[name] for usage in paid) for name in USAGE}) if paid else reply

    async def probe(self) -> None:
        """GET {base_url}/models once, no retries: free, and no request of the batch. Raises
        EndpointError where the endpoint is down, refuses the key or does not list the model;
        returns where it looks able to serve, or where the listing cannot tell (404: it lists no
        models; a slow or failing listing, a rate limit: the requests themselves will tell)."""
        if not self.probe_enabled:
            return
        openai = self._openai
        _attempts.set([0])  # not an attempt of any request
        _reply_limit.set(REPLY_FIELDS_BYTES + BYTES_PER_TOKEN * LONGEST_OUTPUT_TOKENS)  # a listing of models
        try:
            listing = await self.client.get(
                "/models", cast_to=object, options={"timeout": self.probe_timeout, "max_retries": 0}
            )
        except self._refused as error:
            raise self._down(str(error), "set base_url to the endpoint's own address") from None
        except (openai.AuthenticationError, openai.PermissionDeniedError) as error:
            raise self._down(
                f"the endpoint refused the API key (HTTP {error.status_code}: {_short(_said(error), 120)})",
                self._key_hint(error.status_code),
            ) from None
        except openai.APIStatusError:
            return
        except openai.APITimeoutError as error:
            if _caused_by(error, "ConnectTimeout"):
                raise self._down(
                    f"no connection within {self.probe_timeout:g} s (probe_timeout)",
                    "check that the host is up and reachable from here, and base_url",
                ) from None
            return
        except openai.APIConnectionError as error:
            raise self._down(*_connection_failure(error)) from None
        except (openai.OpenAIError, ValueError):
            return
        served = _listed_models(listing)
        if served is not None and self.model not in served:
            raise self._down(
                f"the endpoint does not list the model (it lists {len(served)}: "
                f"{', '.join(_some_models(self.model, served))})",
                "check `model`, or set `probe: false` if the endpoint serves models it does not list",
            )

    def _down(self, what: str, check: str) -> EndpointError:
        return EndpointError(f"{self.who} ('{self.model}' at {shown_url(self.base_url)}): {what}; {check}")

    def _key_hint(self, status: int) -> str:
        if not self.api_key_env:
            return "the endpoint wants a key: set api_key_env to the environment variable that holds it"
        if status == 403:
            return f"check that the key in {self.api_key_env} may use this model"
        return f"check the key in the environment variable {self.api_key_env} (is it this endpoint's?)"

    async def _request(self, messages: list, settings: dict) -> tuple[Reply, bool]:
        """The reply, and whether it failed for want of a well-formed completion."""
        openai = self._openai
        await self.rate.wait()
        try:
            result = await self.client.post(
                "/chat/completions", cast_to=self._completion, **_request_parts(self.model, messages, settings)
            )
        except self._refused as error:  # too large, or a redirect elsewhere: never retried, never cached
            return Reply(error=str(error)), False
        except openai.APIStatusError as error:
            return Reply(error=f"HTTP {error.status_code}: {_short(error.message)}"), False
        except openai.APITimeoutError as error:
            said = next((cause.deadline_said for cause in _causes(error) if hasattr(cause, "deadline_said")), None)
            said = said or _short(error)
            return Reply(error=f"APITimeoutError: {said}"), False
        except openai.APIConnectionError as error:
            return Reply(error=f"{type(error).__name__}: {_short(error)}"), False
        except (openai.APIResponseValidationError, json.JSONDecodeError, ValueError) as error:
            return Reply(error=f"invalid response: {_short(error)}"), True
        return _parsed(result)

    async def aclose(self) -> None:
        await self.client.close()


def _parsed(result) -> tuple[Reply, bool]:
    """The reply a completion holds, and whether it is malformed (retried like a garbled body).
    Whatever it holds, it keeps the model that the completion says served it, and its usage where
    the figures are token counts (else `usage_problem` says what is wrong: a reply paid for is kept).

    - content text: the answer (also when the model called a tool besides).
    - a refusal (`message.refusal`, not empty), or a stop by the endpoint's content filter: the
      model's answer, of its own kind (`Reply.refusal`), cached and counted apart; any text that
      came with it is kept.
    - no content, but `finish_reason: length`: an empty answer, truncated (a reasoning model that
      spent its whole budget thinking). Asking again would pay for the same again.
    - no content otherwise (null, "" or only whitespace: reasoning alone is no answer), no choice,
      or a choice without a message: malformed, an answer that never came.
    - no content but a tool call: malformed too. We offer no tools, so it is no answer; it comes
      from a server that reads tool calls into the text (e.g. a vLLM tool parser) and may not on a
      retry, and if it keeps doing so it ends as an error record naming the tool, not as a zero.
    """
    choices = getattr(result, "choices", None)
    if not choices or not isinstance(choices, list):
        return Reply(error="invalid response: the endpoint returned no choices"), True
    usage, problem, mismatch = _usage(result)
    paid = {"usage": usage, "usage_problem": problem}  # a completion without an answer was billed too
    choice = choices[0]
    message = getattr(choice, "message", None)
    if message is None:
        return Reply(error="invalid response: the choice has no message", **paid), True
    finish_reason = getattr(choice, "finish_reason", None)
    content = getattr(message, "content", None)
    refusal = getattr(message, "refusal", None)
    reasoning = getattr(message, "reasoning_content", None) or getattr(message, "reasoning", None)
    if not all(value is None or isinstance(value, str) for value in (content, refusal, reasoning, finish_reason)):
        return Reply(error="invalid response: content, refusal, reasoning and finish_reason must be text", **paid), True
    served = getattr(result, "model", None)
    about = {**paid, "usage_mismatch": mismatch, "served_model": served if isinstance(served, str) else None}
    if refusal or finish_reason == "content_filter":  # an empty refusal is none: some servers send ""
        said = refusal or CONTENT_FILTER
        return sanitized(
            Reply(text=content, reasoning=reasoning, finish_reason=finish_reason, refusal=said, **about)
        ), False
    if content is not None and not content.strip() and finish_reason != "length":
        what = "reasoning only" if reasoning else "nothing"
        return Reply(
            error=f"invalid response: no answer, the content is empty ({what}; finish_reason {finish_reason})", **paid
        ), True
    if content is None and finish_reason != "length":
        tools = [
            getattr(getattr(call, "function", None), "name", None) or "?"
            for call in getattr(message, "tool_calls", None) or ()
        ]
        if tools:
            return Reply(
                error=f"invalid response: a call of the tool {', '.join(tools)} instead of an answer "
                "(no tools are offered)",
                **paid,
            ), True
        return Reply(
            error=f"invalid response: no content (null), no refusal, no tool call (finish_reason {finish_reason})",
            **paid,
        ), True
    return sanitized(Reply(text=content or "", reasoning=reasoning, finish_reason=finish_reason, **about)), False


def _setting(cfg, key: str, default):
    """`cfg[key]`, or `default` where unset or null."""
    value = cfg.get(key)
    return default if value is None else value


def _said(error) -> str:
    """What an HTTP error's body says (OpenAI's {"error": {"message": ...}}), else the client's message."""
    body = getattr(error, "body", None)
    message = body.get("message") if isinstance(body, dict) else None
    return str(message) if message else str(error.message)


def _caused_by(error: BaseException, name: str) -> bool:
    return any(type(cause).__name__ == name for cause in _causes(error))


def _causes(error: BaseException):
    while error is not None:
        yield error
        error = error.__cause__ or error.__context__


def _connection_failure(error: BaseException) -> tuple[str, str]:
    """What a failed connection says (a host that does not resolve, a refused port), and what to check."""
    causes = list(_causes(error))
    if any(isinstance(cause, socket.gaierror) for cause in causes):
        return (
            f"the host name does not resolve ({causes[-1]})",
            "check the host in base_url, and this machine's network and DNS",
        )
    if any(isinstance(cause, ConnectionRefusedError) for cause in causes):
        return "connection refused", "check that the server is running and listens at that host and port"
    return f"cannot connect ({_short(causes[-1], 160)})", "check that the server is running and base_url is right"


def _listed_models(listing) -> set[str] | None:
    """The model ids of an OpenAI-style listing ({"data": [{"id": ...}]}), or None where it is not one."""
    data = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(data, list) or not all(
        isinstance(item, dict) and isinstance(item.get("id"), str) for item in data
    ):
        return None
    return {item["id"] for item in data}


def _some_models(model: str, served: set[str], shown: int = 5) -> list[str]:
    """A few of the served models, the names closest to `model` first."""
    close = difflib.get_close_matches(model, served, n=shown, cutoff=0.3)
    some = (close + sorted(served - set(close)))[:shown]
    return [one_line(name, 80) for name in some] + (["..."] if len(served) > shown else [])


# The errors `OpenAIEndpoint._request` writes for a request that got no reply (the client's
# exception name, or "HTTP <status>: ..."): a new kind of error there is not counted unless named here.
_TRANSPORT_FAILURE = re.compile(r"(APIConnectionError|APITimeoutError): |HTTP (401|403|404|408|409|429|5\d\d): ")


def failed_in_transport(error: str | None) -> bool:
    """Whether a request's error says that no reply came through (endpoint unreachable, down, or
    refusing every request: key, model), as opposed to a reply that arrived and was wrong (a 400
    for this request, a malformed body). These are what the breaker counts."""
    return error is not None and _TRANSPORT_FAILURE.match(error) is not None


class Breaker:
    """Stops an endpoint's batch after `limit` requests in a row failed in transport with no success
    between them (0: never). It then also ends the requests still waiting for their reply."""

    def __init__(self, limit: int):
        self.limit, self.in_a_row = limit, 0
        self.reason: str | None = None  # why it stopped, once it has
        self._tripped: asyncio.Future | None = None

    def record(self, reply: Reply) -> None:
        if reply.error is None:
            self.in_a_row = 0
        elif failed_in_transport(reply.error):
            self.in_a_row += 1
            if self.limit and self.in_a_row >= self.limit and self.reason is None:
                self.reason = (
                    f"the batch stopped after {self.in_a_row} requests in a row failed with no success "
                    f"(the last: {_short(reply.error, 160)})"
                )
                self.tripped().set_result(None)

    def tripped(self) -> asyncio.Future:
        if self._tripped is None:
            self._tripped = asyncio.get_running_loop().create_future()
        return self._tripped

    async def unless_tripped(self, work) -> Reply | None:
        """`work`'s result, or None where the breaker trips first (`work` is then cancelled)."""
        task = asyncio.ensure_future(work)
        try:
            await asyncio.wait((task, self.tripped()), return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not task.done():
                task.cancel()
        return task.result() if task.done() and not task.cancelled() else None


def retry_after(headers) -> float | None:
    """The wait a reply asks for, in seconds: `retry-after-ms`, else `Retry-After` in seconds or as
    an HTTP date (None: it asks for none, or says it so that it cannot be read)."""
    milliseconds, value = headers.get("retry-after-ms"), headers.get("retry-after")
    try:
        if milliseconds is not None:
            seconds = float(milliseconds) / 1000
        elif value is None:
            return None
        else:
            seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        when = when if when.tzinfo else when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    return seconds if math.isfinite(seconds) else None


class RateLimitWait:
    """Waits out a 429 that says how long to wait, and resends, up to `max_wait` seconds in all per
    request. Below the `openai` client's retries (which honour at most two minutes, and count each
    as a retry): a rate limit is the endpoint pacing us, not a failure. Every request about to start
    waits too, so that the pause is not spent sending more requests to be refused. `show` is told
    each wait (for the progress bar)."""

    def __init__(self, max_wait: float, show=None):
        self.max_wait, self.show = max_wait, show
        self._resume_at = 0.0  # event-loop time before which no request starts

    async def send(self, send, request, **kwargs):
        if request.method != "POST":  # the probe: a rate limit there is no reason to wait
            return await send(request, **kwargs)
        loop = asyncio.get_running_loop()
        first_refusal = None
        while True:
            pause = self._resume_at - loop.time()
            if pause > 0 and (first_refusal is None or loop.time() + pause - first_refusal <= self.max_wait):
                if self.show is not None:
                    self.show(pause)
                await asyncio.sleep(pause)
            response = await send(request, **kwargs)
            delay = retry_after(response.headers) if response.status_code == 429 else None
            if delay is None or delay <= 0:
                return response
            first_refusal = loop.time() if first_refusal is None else first_refusal
            if loop.time() + delay - first_refusal > self.max_wait:
                return response  # the client's retries, then an error
            await response.aclose()
            _uncount_attempt()  # the resend is the same attempt, paced by the endpoint
            self._resume_at = max(self._resume_at, loop.time() + delay)


@functools.cache
def _waiting_http_client():
    """The `openai` client's own HTTP client class (its limits and proxies), sending through a
    RateLimitWait (built on first use: importing this module does not import `openai`)."""
    import openai

    httpx = _httpx_module(openai.DefaultAsyncHttpxClient)

    class Refused(openai.OpenAIError):
        """A reply refused as it came (larger than its bound, a redirect to another origin): an
        OpenAIError, which the client raises as it is, never retried (`_request` records it)."""

    class WaitingHTTPClient(openai.DefaultAsyncHttpxClient):
        def __init__(self, rate_limits: RateLimitWait, **kwargs):
            super().__init__(**kwargs)
            self.rate_limits = rate_limits

        async def send(self, request, **kwargs):
            return await self.rate_limits.send(self._within_deadline, request, **kwargs)

        async def _within_deadline(self, request, **kwargs):
            """One attempt, its whole reply (connect, headers, every byte of the body) within its
            timeout: httpx's own timeouts are per read, and a body that trickles a byte at a time
            passes every one of them. Past the deadline it is a timeout, which the client retries."""
            seconds = _deadline(request)
            if seconds is None:
                return await self._bounded(request, **kwargs)
            try:
                async with asyncio.timeout(seconds):
                    return await self._bounded(request, **kwargs)
            except TimeoutError:
                raise _deadline_error(seconds, httpx.ReadTimeout, request) from None

        async def _bounded(self, request, stream: bool = False, **kwargs):
            """The reply read whole, but no more of it than the request's bound (`reply_limit`):
            a larger one is refused as its Content-Length says so, or as its body passes the bound
            (counted decoded: a compressed body is bounded by what it unpacks to)."""
            limit = _reply_limit.get()
            response = await super().send(request, stream=True, **kwargs)
            if stream or limit is None:
                return response if stream else await _read(response)
            try:
                declared = int(response.headers.get("content-length", 0))
            except ValueError:
                declared = 0
            body, size = [], declared if declared > limit else 0
            if not size:
                async for chunk in response.aiter_bytes():
                    body.append(chunk)
                    size += len(chunk)
                    if size > limit:
                        break
            await response.aclose()
            if size > limit:
                raise Refused(_too_large(limit, declared))
            kept = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in _READ_HEADERS]
            return httpx.Response(
                response.status_code,
                headers=kept,
                content=b"".join(body),
                request=request,
                extensions=response.extensions,
            )

    WaitingHTTPClient.Refused = Refused
    return WaitingHTTPClient


# Headers of the body as sent, which no longer describe it once read (decoded, whole).
_READ_HEADERS = ("content-encoding", "content-length", "transfer-encoding")


async def _read(response):
    await response.aread()
    return response


# A reply's bound, where its config sets none (`max_reply_bytes`): room for `max_tokens` tokens of
# text and as many of reasoning, each token a few characters and each character at most 6 bytes
# in JSON (\uXXXX), beside the completion's own fields; a request without `max_tokens` is bounded
# as one of the longest outputs models give.
BYTES_PER_TOKEN, REPLY_FIELDS_BYTES, LONGEST_OUTPUT_TOKENS = 64, 65_536, 131_072


def reply_limit(max_reply_bytes: int | None, settings: dict) -> int:
    """The most bytes a request's reply may have: the config's `max_reply_bytes`, else derived
    from the request's `max_tokens` (or `max_completion_tokens`)."""
    if max_reply_bytes:
        return int(max_reply_bytes)
    tokens = settings.get("max_completion_tokens") or settings.get("max_tokens") or LONGEST_OUTPUT_TOKENS
    return REPLY_FIELDS_BYTES + BYTES_PER_TOKEN * int(tokens)


def _too_large(limit: int, declared: int) -> str:
    said = f"its Content-Length is {declared} bytes" if declared > limit else f"more than {limit} bytes came"
    return (
        f"reply refused: larger than its bound of {limit} bytes ({said}; max_reply_bytes, by default from "
        "max_tokens): not read further, not cached; raise max_reply_bytes if such replies are right"
    )


async def _refuse_another_origin(response) -> None:
    """A redirect is followed only within the endpoint's origin (scheme, host and port): elsewhere the
    request would go, key dropped or not, to a server that is not the one configured."""
    if not response.has_redirect_location:
        return
    source, target = response.request.url, response.request.url.join(response.headers["location"])
    if (source.scheme, source.host, source.port) != (target.scheme, target.host, target.port):
        await response.aclose()
        raise _waiting_http_client().Refused(
            f"the endpoint redirects (HTTP {response.status_code}) to another origin, "
            f"{one_line(shown_url(f'{target.scheme}://{target.netloc.decode()}'), 120)}: not followed; "
            "set base_url to the address that serves the requests"
        )


def _httpx_module(client_class):
    """The httpx (or httpx2) module that the `openai` client's HTTP client class comes from."""
    import sys

    base = next(cls for cls in client_class.__mro__ if cls.__name__ == "AsyncClient")
    return sys.modules[base.__module__.partition(".")[0]]


def _deadline(request) -> float | None:
    """The seconds an attempt may take in all: its timeout (the config's `timeout`, or the probe's)."""
    timeouts = request.extensions.get("timeout") or {}
    seconds = timeouts.get("read") if isinstance(timeouts, dict) else None
    return float(seconds) if isinstance(seconds, (int, float)) and seconds > 0 else None


def _deadline_error(seconds: float, timeout_error: type, request):
    """A read timeout (the client retries it, then raises APITimeoutError from it) that says why."""
    error = timeout_error(f"no whole reply within {seconds:g} s", request=request)
    error.deadline_said = (
        f"no whole reply within {seconds:g} s (timeout: connect, first byte and whole body of each attempt; "
        "the endpoint stalled, or sent its reply too slowly)"
    )
    return error


def _request_parts(model: str, messages: list, settings: dict) -> dict:
    """The body and options of a chat completion request, as `chat.completions.create` builds them.
    Sent through the client's own `post` (documented for requests the typed API does not cover):
    same retries, timeouts and response parsing, without `create`'s walk over every message part
    to convert types, which plain JSON messages do not need and which costs milliseconds a request."""
    extras = {name: settings[name] for name in ("extra_body", "extra_headers", "extra_query") if name in settings}
    body = {"model": model, "messages": messages, **{k: v for k, v in settings.items() if k not in extras}}
    body.update(extras.get("extra_body") or {})
    options = {"headers": extras.get("extra_headers") or {}, "params": extras.get("extra_query") or {}}
    return {"body": body, "options": {k: v for k, v in options.items() if v}}


async def _count_attempt(request) -> None:
    counter = _attempts.get(None)
    if counter is not None:
        counter[0] += 1


def _uncount_attempt() -> None:
    counter = _attempts.get(None)
    if counter is not None:
        counter[0] -= 1


def _usage(result) -> tuple[dict, str | None, str | None]:
    """A completion's usage ({}: none given), what is wrong with its figures (None: nothing), and how
    they disagree with one another (None: they do not)."""
    usage = getattr(result, "usage", None)
    if usage is None:
        return {}, None, None
    details = getattr(usage, "completion_tokens_details", None)
    figures = {
        "prompt_tokens": getattr(usage, "prompt_tokens", None),
        "completion_tokens": getattr(usage, "completion_tokens", None),
        "reasoning_tokens": getattr(details, "reasoning_tokens", None) if details is not None else None,
    }
    checked, problem = checked_usage(figures)
    return checked, problem, usage_mismatch(checked, getattr(usage, "total_tokens", None))


def api_key(variable: str | None) -> str:
    """The key in the environment variable `variable` names; a clear error where it is not set. A
    value that is no variable's name (a key pasted in its place) is said to be one, never shown."""
    if not variable:
        return "not-needed"  # local servers often take no key; the client still wants a string
    variable = variable_name(variable, "api_key_env")
    key = os.environ.get(variable)
    if not key:
        raise InputError(f"the API key is read from the environment variable {variable}, which is not set")
    return key


def _short(text: Any, limit: int = 300) -> str:
    """What an endpoint or a library said, as one printable line of at most `limit` characters."""
    return one_line(str(text), limit)
