"""The request engine: retries through injected faults, limits, images, accounting."""

from __future__ import annotations

import asyncio
import base64
import email.utils
import hashlib
import io
import itertools
import json
import logging
import os
import re
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import replace

import pytest
from omegaconf import OmegaConf
from PIL import Image

from olympiad_eval.cli.fake_server import (
    FakeOpenAI,
    Fault,
    bad_usage,
    default_responder,
    gathered,
    other_model,
    reasoning_only,
    surrogates,
    trickling,
)
from olympiad_eval.core.records import Generation, InputError, read_jsonl
from olympiad_eval.llm.cache import Reply, RequestCache, utc_now
from olympiad_eval.llm.images import shrink_image
from olympiad_eval.llm.providers import OpenAIProvider, Request, complete_all
from olympiad_eval.llm.transport import EndpointError, RateLimiter, retry_after
from olympiad_eval.stages.generate import generate
from tests.support import ROOT, UNSERVABLE, generate_sample, unservable_endpoint


def model(base_url: str, **extra):
    return OmegaConf.create(
        {
            "provider": "openai",
            "base_url": base_url,
            "model": "fake-model",
            "api_key_env": None,
            "concurrency": 4,
            "max_retries": 6,
            "timeout": 5,
            **extra,
        }
    )


def endpoint(cfg) -> OpenAIProvider:
    return OpenAIProvider(cfg, "model 'fake-model'")


@pytest.fixture
def hipho(render_suite):
    return render_suite("sample_hipho", "sample_hipho")


class Flaky:
    """Fails each distinct request once in each way, then answers."""

    FAULTS = [
        Fault(delay=1.0),  # slower than the client's timeout below: a timeout, then retried
        Fault(drop=True),
        Fault(429, headers={"Retry-After": "0.1"}),
        Fault(500, headers={"Retry-After": "0.1"}),
        Fault(503, headers={"Retry-After": "0.1"}),
        Fault(raw=b"<html>502 Bad Gateway</html>"),  # status 200, but no completion: retried by us
    ]

    def __init__(self):
        self.seen: dict[str, int] = {}
        self.lock = threading.Lock()

    def __call__(self, body: dict):
        key = hashlib.sha256(json.dumps(body["messages"]).encode()).hexdigest()
        with self.lock:
            tries = self.seen[key] = self.seen.get(key, 0) + 1
        return self.FAULTS[tries - 1] if tries <= len(self.FAULTS) else default_responder(body)


def test_every_problem_ends_answered_through_injected_faults(hipho):
    responder = Flaky()
    with FakeOpenAI(responder) as server:
        outcome, generations, usage = generate_sample(hipho, model(server.base_url, timeout=0.5))
        assert outcome.errors == 0 and all(g.response and g.error is None for g in generations)
        # each 429 with Retry-After was waited out and resent: a wait, not a retry
        rate_limited = 5
        expected_retries = sum(tries - 1 for tries in responder.seen.values()) - rate_limited
        assert usage["retries"] == expected_retries == 5 * (len(Flaky.FAULTS) - 1)
        assert server.count() == usage["answered"] + expected_retries + rate_limited
        # the retry counts are kept with the replies: a rerun reports the same, sending nothing
        _, again, usage_again = generate_sample(hipho, model(server.base_url, timeout=0.5))
        assert server.count() == usage["answered"] + expected_retries + rate_limited
    assert usage_again == usage and again == generations


def test_a_body_that_is_never_a_completion_is_retried_then_an_error(hipho):
    with FakeOpenAI(lambda body: Fault(raw=b"<html>bad gateway</html>")) as server:
        outcome, generations, _ = generate_sample(hipho, model(server.base_url, max_retries=1))
    assert outcome.errors == 5 and server.count() == 5 * 2
    assert all(g.error.startswith("invalid response") for g in generations)


def test_a_bounded_number_of_attempts_then_an_error(hipho):
    with FakeOpenAI(lambda body: Fault(503)) as server:
        outcome, generations, usage = generate_sample(hipho, model(server.base_url, max_retries=2))
    assert outcome.errors == 5 and server.count() == 5 * 3
    assert all(g.response is None and g.error.startswith("HTTP 503") for g in generations)
    assert usage["failed"] == 5 and usage["answered"] == 0


@pytest.mark.parametrize(
    "fault,message",
    [
        (Fault(401, {"error": {"message": "invalid api key"}}), "HTTP 401"),
        (Fault(404, {"error": {"message": "no such model"}}), "HTTP 404"),
        (Fault(400, {"error": {"message": "maximum context length exceeded"}}), "HTTP 400"),
    ],
)
def test_permanent_failures_are_not_retried_and_recorded_as_errors(hipho, fault, message):
    with FakeOpenAI(lambda body: fault) as server:
        outcome, generations, _ = generate_sample(hipho, model(server.base_url))
    assert outcome.errors == 5 and all(g.error.startswith(message) for g in generations)
    assert server.count() == 5  # no retry of a permanent failure


def test_concurrency_bounds_requests_in_flight(hipho):
    with FakeOpenAI(gathered(2), latency=0.05) as server:  # the first two wait for each other
        generate_sample(hipho, model(server.base_url, concurrency=2, samples=4))
    assert server.peak_in_flight == 2


def test_identical_requests_asked_together_go_out_once(tmp_path):
    messages = [{"role": "user", "content": "Grade this."}]
    with FakeOpenAI(latency=0.2) as server:
        cache = RequestCache(tmp_path / "cache.sqlite")
        replies = asyncio.run(
            complete_all(
                endpoint(model(server.base_url)),
                cache,
                [Request(key, messages, {}) for key in ("same", "same", "other")],
            )
        )
        cache.close()
    assert server.count() == 2
    assert replies[0].text == replies[1].text and [reply.cached for reply in replies] == [False, True, False]


@pytest.mark.parametrize("name", ["cache.sqlite", "shared-cache"])
def test_a_cache_keeps_replies_for_every_process_that_opens_it(tmp_path, name):
    writer, reader = RequestCache(tmp_path / name), RequestCache(tmp_path / name)  # two machines, one store
    reply = Reply(text="\\boxed{42}", finish_reason="stop", usage={"prompt_tokens": 7}, attempts=2)
    stored = writer.put("k1", reply)
    assert stored == replace(reply, received=stored.received)  # dated as it was stored
    assert reader.get("k1") == replace(stored, cached=True) and reader.get("k2") is None and len(reader) == 1
    writer.put("k1", reply)  # a reply stored twice (two machines at once) stays one reply
    assert len(reader) == 1
    writer.close(), reader.close()
    if name == "shared-cache":  # whole files only: no temporary file is left beside a reply
        assert [path.name for path in (tmp_path / name).rglob("*") if path.is_file()] == ["k1.json"]


@pytest.mark.parametrize("name", ["cache.sqlite", "shared-cache"])
def test_a_cache_keeps_each_replys_date(tmp_path, name):
    cache = RequestCache(tmp_path / name)
    before = utc_now()
    stamped = cache.put("new", Reply(text="a", finish_reason="stop"))
    assert before <= stamped.received <= utc_now() and re.fullmatch(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", stamped.received
    )
    cache.put("dated", Reply(text="b", finish_reason="stop", received="2026-01-02T03:04:05Z"))  # its own date stays
    cache.close()
    reopened = RequestCache(tmp_path / name)
    assert reopened.get("new").received == stamped.received
    assert reopened.get("dated").received == "2026-01-02T03:04:05Z"
    reopened.close()


def test_a_cache_shared_with_code_from_before_dates_works_both_ways(tmp_path):
    """The date is a field of the stored reply, not a column: a clone on older code keeps reading
    and writing the same cache file (its own replies are undated), and this code reads its rows."""
    path = tmp_path / "cache.sqlite"
    row = json.dumps({"text": "old", "reasoning": None, "finish_reason": "stop", "usage": {}, "attempts": 1})
    with sqlite3.connect(path) as db:  # the table as every cache has it
        db.execute("CREATE TABLE replies (key TEXT PRIMARY KEY, reply TEXT NOT NULL)")
        db.execute("INSERT INTO replies VALUES (?, ?)", ("old", row))
    db.close()
    cache = RequestCache(path)
    assert cache.get("old") == Reply(text="old", finish_reason="stop", cached=True, received=None)
    cache.put("new", Reply(text="new", finish_reason="stop"))
    with sqlite3.connect(path) as db:  # older code, as it writes and reads
        db.execute("INSERT OR REPLACE INTO replies VALUES (?, ?)", ("older", row))
        stored = json.loads(db.execute("SELECT reply FROM replies WHERE key = 'new'").fetchone()[0])
        assert [column[1] for column in db.execute("PRAGMA table_info(replies)")] == ["key", "reply"]
    db.close()
    assert stored["text"] == "new" and stored["received"] == cache.get("new").received is not None
    assert cache.get("older").received is None and len(cache) == 3
    cache.close()


def test_a_runs_usage_dates_its_replies_and_a_rerun_writes_the_same_bytes(hipho):
    usage_path = hipho / "usage" / "sample_hipho" / "m.json"
    with FakeOpenAI() as server:
        before = utc_now()
        _, _, usage = generate_sample(hipho, model(server.base_url, samples=2))
        after = utc_now()
        written = usage_path.read_bytes()
        time.sleep(1.1)  # a date read from the clock on the rerun would be another second
        generate_sample(hipho, model(server.base_url, samples=2))
        assert server.count() == 10  # the rerun sent nothing
    span = usage["replies_received"]
    assert before <= span["first"] <= span["last"] <= after
    assert usage_path.read_bytes() == written


def test_an_offline_providers_usage_has_no_dates(hipho):
    _, _, usage = generate_sample(hipho, OmegaConf.create({"provider": "reference"}))
    assert usage["requests"] == 5 and "replies_received" not in usage


def test_the_rate_limit_spaces_request_starts():
    async def starts(limiter, count):
        begin = time.perf_counter()
        times = []
        for _ in range(count):
            await limiter.wait()
            times.append(time.perf_counter() - begin)
        return times

    times = asyncio.run(starts(RateLimiter(rpm=1200), 6))  # one start per 50 ms
    assert times[-1] >= 0.24
    assert asyncio.run(starts(RateLimiter(rpm=None), 6))[-1] < 0.05


def test_settings_pass_through_and_samples_get_their_own_seed(hipho):
    settings = {
        "max_completion_tokens": 100,
        "reasoning_effort": "high",
        "temperature": 0.7,
        "seed": 10,
        "extra_body": {"top_k": 20},
    }
    with FakeOpenAI() as server:
        generate_sample(hipho, model(server.base_url, samples=2, generation=settings))
    body = server.requests[0]
    assert body["max_completion_tokens"] == 100 and body["reasoning_effort"] == "high"
    assert body["temperature"] == 0.7 and body["top_k"] == 20
    assert sorted({b["seed"] for b in server.requests}) == [10, 11]


def test_reasoning_is_kept_apart_from_the_answer(hipho):
    reply = {"content": "<answer>[\\boxed{1}]</answer>", "reasoning_content": "Let me think."}
    with FakeOpenAI(lambda body: reply) as server:
        _, generations, usage = generate_sample(hipho, model(server.base_url))
    assert all(g.response == reply["content"] and g.reasoning == "Let me think." for g in generations)


def test_truncated_responses_are_flagged(hipho):
    with FakeOpenAI(lambda body: {"content": "<think>and so", "finish_reason": "length"}) as server:
        _, generations, usage = generate_sample(hipho, model(server.base_url))
    assert {g.finish_reason for g in generations} == {"length"} and usage["truncated"] == 5


def test_usage_and_cost_are_totalled_per_cell(hipho):
    with FakeOpenAI() as server:
        _, _, usage = generate_sample(hipho, model(server.base_url, prices={"input": 2.0, "output": 8.0}))
    assert usage["requests"] == usage["answered"] == 5 and usage["prompt_tokens"] > 0
    expected = (usage["prompt_tokens"] * 2.0 + usage["completion_tokens"] * 8.0) / 1e6
    assert usage["cost_usd"] == pytest.approx(expected, abs=1e-6)


def picture(size: int, seed: int = 0) -> bytes:
    image = Image.effect_noise((size, size), 60 + seed).convert("RGB")
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def test_shrinking_an_image_fits_the_limit_and_is_deterministic():
    data = picture(600)
    small, mime = shrink_image(data, 40_000)
    assert len(small) <= 40_000 and small == shrink_image(data, 40_000)[0]
    with Image.open(io.BytesIO(small)) as image:
        assert image.format == mime.split("/")[1].upper().replace("JPG", "JPEG")


def test_max_image_bytes_shrinks_what_is_sent(hipho):
    with FakeOpenAI() as server:
        generate_sample(hipho, model(server.base_url, max_image_bytes=3_000))
    images = [
        part["image_url"]["url"]
        for body in server.requests
        for part in body["messages"][0]["content"]
        if part["type"] == "image_url"
    ]
    assert images and all(len(base64.b64decode(url.split(",", 1)[1])) <= 3_000 for url in images)


def test_the_fake_server_does_not_count_a_request_whose_client_died_before_its_body():
    """A client killed between its headers and its body sent no request: the kill tests count on it."""
    import socket

    with FakeOpenAI() as server:
        host, port = server.base_url.split("//")[1].split("/")[0].split(":")
        for body in (b"", b'{"model"'):  # killed before the body, or within it
            with socket.create_connection((host, int(port))) as client:
                client.sendall(
                    b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                    b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n" + body
                )
        time.sleep(0.3)  # the handlers have read what there was to read
        assert server.count() == 0 and server.requests == []


# ---------------------------------------------------------------- replies that are not answers


def completion_body(choice: dict) -> bytes:
    """A whole 200 body around one choice, for shapes the fake server's own replies never take."""
    return json.dumps(
        {"id": "c", "object": "chat.completion", "created": 0, "model": "fake-model", "choices": [choice]}
    ).encode()


class AnswersAfter:
    """Replies `first` to each distinct request's first `times` attempts, then a plain answer."""

    def __init__(self, first, times: int = 1):
        self.first, self.times, self.seen, self.lock = first, times, Counter(), threading.Lock()

    def __call__(self, body: dict):
        key = json.dumps(body["messages"])
        with self.lock:
            self.seen[key] += 1
            tries = self.seen[key]
        return self.first if tries <= self.times else default_responder(body)


@pytest.mark.parametrize(
    "reply,error",
    [
        (Fault(raw=completion_body({"index": 0, "finish_reason": "stop"})), "the choice has no message"),
        (
            Fault(raw=completion_body({"index": 0, "finish_reason": "stop", "message": None})),
            "the choice has no message",
        ),
        ({"content": None}, "no content (null), no refusal, no tool call"),
        ({"content": None, "refusal": ""}, "no content (null), no refusal, no tool call"),
        (
            {
                "content": None,
                "finish_reason": "tool_calls",
                "tool_calls": [{"id": "t1", "type": "function", "function": {"name": "python", "arguments": "{}"}}],
            },
            "a call of the tool python instead of an answer",
        ),
    ],
    ids=["no message", "null message", "null content", "empty refusal", "tool call"],
)
def test_a_reply_without_an_answer_is_retried_then_an_error_never_an_empty_answer(hipho, reply, error):
    with FakeOpenAI(lambda body: reply) as server:
        outcome, generations, usage = generate_sample(hipho, model(server.base_url, max_retries=1))
    assert outcome.errors == 5 and server.count() == 5 * 2  # the same budget as a garbled body
    assert all(g.response is None and error in g.error for g in generations)
    assert usage["answered"] == 0 and len(RequestCache(hipho.parent / "cache.sqlite")) == 0  # a rerun asks again


def test_a_reply_without_an_answer_is_retried_until_one_comes(hipho):
    with FakeOpenAI(AnswersAfter({"content": None})) as server:
        outcome, generations, usage = generate_sample(hipho, model(server.base_url, max_retries=1))
    assert outcome.errors == 0 and all("\\boxed{42}" in g.response for g in generations)
    assert server.count() == 5 * 2 and usage["retries"] == 5


def test_no_content_at_the_length_limit_is_a_truncated_empty_answer(hipho):
    """A reasoning model that spends its whole budget thinking answers nothing; asking again would
    pay for the same again, so it is kept: truncated, an empty response."""
    reply = {"content": None, "reasoning_content": "Let me think", "finish_reason": "length"}
    with FakeOpenAI(lambda body: reply) as server:
        outcome, generations, usage = generate_sample(hipho, model(server.base_url))
    assert outcome.errors == 0 and server.count() == 5 and usage["truncated"] == 5
    assert all(g.response == "" and g.reasoning == "Let me think" and g.refusal is None for g in generations)


def test_an_empty_refusal_beside_an_answer_is_no_refusal(hipho):
    """Some servers send `refusal: ""` with every answer."""
    with FakeOpenAI(lambda body: {"content": "\\boxed{42}", "refusal": ""}) as server:
        outcome, generations, _ = generate_sample(hipho, model(server.base_url))
    assert outcome.refusals == 0 and all(g.response == "\\boxed{42}" and g.refusal is None for g in generations)


@pytest.mark.parametrize(
    "reply,refusal",
    [
        ({"content": None, "refusal": "I can't help with that."}, "I can't help with that."),
        ({"content": None, "finish_reason": "content_filter"}, "content filter"),
        ({"content": "The answer is", "finish_reason": "content_filter"}, "content filter"),
    ],
    ids=["refusal", "content filter", "filtered midway"],
)
def test_a_refusal_is_recorded_as_one_and_cached(hipho, reply, refusal):
    with FakeOpenAI(lambda body: reply) as server:
        outcome, generations, usage = generate_sample(hipho, model(server.base_url))
        assert outcome.errors == 0 and outcome.refusals == 5 and server.count() == 5  # what the model answered
        _, again, _ = generate_sample(hipho, model(server.base_url))
        assert server.count() == 5 and again == generations  # from the cache
    assert all(g.refusal == refusal and g.error is None and g.response == reply["content"] for g in generations)
    assert usage["answered"] == 5 and usage["failed"] == 0


def test_an_ordinary_generation_has_no_refusal_field_in_its_json(hipho):
    """The generations file keeps its bytes for ordinary replies (the committed dvc.lock files hash it)."""
    with FakeOpenAI() as server:
        generate_sample(hipho, model(server.base_url))
    lines = (hipho / "generations" / "sample_hipho" / "m.jsonl").read_text(encoding="utf-8").splitlines()
    assert lines and all('"refusal"' not in line for line in lines)


# ---------------------------------------------------------------- the request cache's door

SURROGATES = (
    b'{"id": "c", "object": "chat.completion", "created": 0, "model": "fake-model", "choices": [{"index": 0, '
    b'"finish_reason": "stop", "message": {"role": "assistant", "content": "\\\\boxed{1} \\ud800 \\ud83d\\ude00",'
    b' "reasoning_content": "x\\udfff"}}]}'
)


def test_a_lone_surrogate_in_a_reply_is_replaced_and_a_rerun_reads_it_back(hipho):
    """Legal JSON, but no UTF-8 file can hold a lone surrogate: stored as it came, it made every
    write of the reply fail, run after run. It becomes U+FFFD; a valid pair stays its character."""
    with FakeOpenAI(lambda body: Fault(raw=SURROGATES)) as server:
        outcome, generations, _ = generate_sample(hipho, model(server.base_url))
        _, again, _ = generate_sample(hipho, model(server.base_url))
        assert server.count() == 5  # cached, and read back
    assert outcome.errors == 0 and again == generations
    assert all(g.response == "\\boxed{1} \ufffd \U0001f600" and g.reasoning == "x\ufffd" for g in generations)


@pytest.mark.parametrize("name", ["cache.sqlite", "shared-cache"])
def test_a_reply_stored_with_a_lone_surrogate_reads_back_as_valid_unicode(tmp_path, name):
    """A cache written before replies were cleaned at its door may hold one."""
    cache = RequestCache(tmp_path / name)
    cache._store.put(
        "k", json.dumps({"text": "a\ud800", "reasoning": None, "finish_reason": "stop", "usage": {}, "attempts": 1})
    )
    assert cache.get("k").text == "a\ufffd"
    cache.put("k2", Reply(text="\ud83d\ude00\udc00", refusal="no\ud800"))
    assert cache.get("k2").text == "\U0001f600\ufffd" and cache.get("k2").refusal == "no\ufffd"
    cache.close()


def corrupt_rows(cache_path, change) -> int:
    """Rewrite each stored reply with `change(text, index)` (None: leave it); returns how many changed."""
    if cache_path.suffix == ".sqlite":
        with sqlite3.connect(cache_path) as db:
            rows = db.execute("SELECT key, reply FROM replies ORDER BY key").fetchall()
            changed = [(change(text, index), key) for index, (key, text) in enumerate(rows)]
            changed = [(text, key) for text, key in changed if text is not None]
            db.executemany("UPDATE replies SET reply = ? WHERE key = ?", changed)
        db.close()
        return len(changed)
    count = 0
    for index, path in enumerate(sorted(cache_path.glob("??/*.json"))):
        text = change(path.read_text(encoding="utf-8"), index)
        if text is not None:
            path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
            count += 1
    return count


BREAKS = [
    lambda text: text[: len(text) // 2],  # cut short
    lambda text: "",  # empty
    lambda text: json.dumps({"text": "only the text"}),  # fields missing
    lambda text: json.dumps({**json.loads(text), "usage": "lots"}),  # a field of the wrong type
    lambda text: json.dumps({**json.loads(text), "text": None}),  # no answer, no refusal
    lambda text: "[1, 2]",  # not an object
    lambda text: b"\xff" + text.encode("utf-8"),  # not UTF-8 (in SQLite: a blob)
]


@pytest.mark.parametrize("name", ["cache.sqlite", "shared-cache"])
def test_an_unreadable_cache_row_is_asked_again_overwritten_and_reported_once(hipho, caplog, name):
    cache_path = hipho.parent / name

    def generate_with_cache():
        out = hipho / "generations" / "sample_hipho" / "m.jsonl"
        generate(
            "sample_hipho",
            "m",
            model(server.base_url, samples=2),
            hipho / "suites/hipho/sample_hipho/prompts.jsonl",
            out,
            cache_path,
        )
        return out.read_bytes()

    with FakeOpenAI() as server:
        clean = generate_with_cache()
        assert server.count() == 10
        broken = corrupt_rows(cache_path, lambda text, index: BREAKS[index](text) if index < len(BREAKS) else None)
        assert broken == len(BREAKS)
        caplog.clear()
        assert generate_with_cache() == clean
        assert server.count() == 10 + broken  # each broken row asked again, no other
        warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
        assert warnings == [
            (
                f"request cache {cache_path}: {broken} stored replies could not be read (corrupt or cut "
                "short); they were treated as not cached and requested again (each reply that came "
                "overwrote its row)"
            )
        ]
        caplog.clear()
        assert generate_with_cache() == clean  # overwritten: the third run reads them all
        assert server.count() == 10 + broken and not [r for r in caplog.records if r.levelname == "WARNING"]


def test_a_full_sqlite_cache_stops_with_its_path(tmp_path):
    """SQLite's own "database or disk is full", from the code that stores replies. `max_page_count`
    caps this connection's file as a full disk would, without root or a small filesystem."""
    path = tmp_path / "cache.sqlite"
    cache = RequestCache(path)
    with FakeOpenAI(lambda body: "x" * 20_000) as server:
        requests = [Request(f"k{i}", [{"role": "user", "content": f"q{i}"}], {}) for i in range(3)]
        asyncio.run(complete_all(endpoint(model(server.base_url)), cache, requests[:1]))
        pages = cache._store._db.execute("PRAGMA page_count").fetchone()[0]
        cache._store._db.execute(f"PRAGMA max_page_count = {pages}")
        with pytest.raises(
            InputError,
            match=re.escape(
                f"no room to store a reply in the request cache {path} (database or disk is full): free space there"
            ),
        ):
            asyncio.run(complete_all(endpoint(model(server.base_url)), cache, requests[1:]))
    assert cache.get("k0").text == "x" * 20_000  # what was stored stays
    cache.close()


# ---------------------------------------------------------------- failing fast


def batch(count: int, words: str = "question") -> list[Request]:
    return [Request(f"key-{index}", [{"role": "user", "content": f"{words} {index}"}], {}) for index in range(count)]


def ask(tmp_path, cfg, requests) -> tuple[list[Reply], int]:
    """The replies of a batch, and how many of them the cache kept."""
    cache = RequestCache(tmp_path / "cache.sqlite")
    try:
        return asyncio.run(complete_all(endpoint(cfg), cache, requests)), len(cache)
    finally:
        cache.close()


@pytest.mark.parametrize("case", UNSERVABLE)
def test_an_endpoint_that_cannot_serve_stops_the_batch_before_anything_is_sent(hipho, case, monkeypatch):
    monkeypatch.setenv("OE_TEST_KEY", "not-the-servers-key")
    listed = ["fake-model-v2", "fake-embedder", "other"]
    server, base_url, expected = unservable_endpoint(case, listed, ", ".join(listed))
    with server:
        with pytest.raises(EndpointError) as caught:
            generate_sample(hipho, model(base_url, api_key_env="OE_TEST_KEY"))
        assert server.count() == 0 and server.probes == (
            0 if case in ("connection refused", "unresolvable host") else 1
        )
    assert str(caught.value).startswith(f"model 'm' ('fake-model' at {base_url}): {expected}")
    assert not (hipho / "generations").exists() and len(RequestCache(hipho.parent / "cache.sqlite")) == 0


@pytest.mark.parametrize(
    "listed,probe,probes", [(None, True, 1), (["other", "fake-model"], True, 1), (["other"], False, 0)]
)
def test_an_endpoint_that_may_serve_is_probed_once_then_sent_the_batch(hipho, listed, probe, probes):
    """No listing (404 on /models) cannot tell; `probe: false` trusts an endpoint that lists others."""
    with FakeOpenAI(models=listed) as server:
        outcome, _, _ = generate_sample(hipho, model(server.base_url, probe=probe))
        assert outcome.errors == 0 and server.count() == 5 and server.probes == probes


def test_a_batch_whose_replies_are_all_cached_probes_nothing_and_works_offline(hipho):
    with FakeOpenAI() as server:
        cfg = model(server.base_url)
        _, generations, _ = generate_sample(hipho, cfg)
        assert server.probes == 1
    outcome, again, _ = generate_sample(hipho, cfg)  # the server is gone
    assert outcome.errors == 0 and outcome.sent == 0 and again == generations


def test_the_breaker_stops_a_batch_whose_endpoint_goes_down(tmp_path):
    received = itertools.count(1)

    def down_after_three(body: dict):
        return "fine" if next(received) <= 3 else Fault(503)

    with FakeOpenAI(down_after_three) as server:  # one request at a time: the order is the batch's
        replies, cached = ask(
            tmp_path, model(server.base_url, concurrency=1, max_retries=0, max_consecutive_failures=4), batch(20)
        )
        assert server.count() == 3 + 4
    assert [reply.text for reply in replies[:3]] == ["fine"] * 3 and cached == 3
    assert all(reply.error.startswith("HTTP 503") for reply in replies[3:7])
    unsent = replies[7:]
    assert all(
        reply.text is None
        and reply.attempts == 0
        and reply.error.startswith(
            "not sent: the batch stopped after 4 requests in a row failed with no success (the last: HTTP 503"
        )
        for reply in unsent
    )


def test_a_model_not_found_trips_the_breaker_at_once(tmp_path):
    """A 404 is not retried: the batch stops after `max_consecutive_failures` of them, not 200."""
    not_found = Fault(404, {"error": {"message": "The model `fake-model` does not exist", "code": "model_not_found"}})
    with FakeOpenAI(lambda body: not_found) as server:
        replies, cached = ask(tmp_path, model(server.base_url, concurrency=4, max_consecutive_failures=3), batch(200))
        assert server.count() <= 3 + 3  # those that went out before the third failure came back
    assert cached == 0 and all(reply.text is None for reply in replies)
    assert sum(reply.error.startswith("not sent: ") for reply in replies) >= 194


def test_the_breaker_ends_the_requests_still_waiting_for_a_reply(tmp_path):
    released = threading.Event()

    def hang_or_fail(body: dict):
        if "slow" in body["messages"][0]["content"]:
            released.wait(30)
            return "too late"
        return Fault(502)

    with FakeOpenAI(hang_or_fail) as server:
        requests = batch(1, "slow") + batch(5, "fail")
        replies, cached = ask(
            tmp_path,
            model(server.base_url, concurrency=2, max_retries=0, timeout=60, max_consecutive_failures=2),
            requests,
        )
        released.set()
    assert replies[0].error.startswith("abandoned: the batch stopped after 2 requests in a row failed")
    assert cached == 0


@pytest.mark.parametrize("header", ["seconds", "milliseconds", "date"])
def test_a_429_with_retry_after_is_waited_out_and_not_counted_as_a_retry(hipho, header, caplog):
    """Even with no retries at all: the wait is below the client's retries, and said: in the progress bar in a
    terminal, as a log line in a log (here)."""
    caplog.set_level(logging.INFO, logger="olympiad_eval")
    arrivals: list[float] = []

    def rate_limited_once(body: dict):
        arrivals.append(time.monotonic())
        if len(arrivals) > 1:
            return default_responder(body)
        wait = {
            "seconds": {"Retry-After": "1"},
            "milliseconds": {"retry-after-ms": "1000"},
            "date": {"Retry-After": email.utils.formatdate(time.time() + 2, usegmt=True)},
        }[header]
        return Fault(429, {"error": {"message": "Rate limit reached", "type": "requests"}}, headers=wait)

    with FakeOpenAI(rate_limited_once) as server:
        outcome, generations, usage = generate_sample(hipho, model(server.base_url, concurrency=1, max_retries=0))
        assert server.count() == 5 + 1
    assert outcome.errors == 0 and usage["retries"] == 0 and all(g.error is None for g in generations)
    assert arrivals[1] - arrivals[0] >= 0.9  # the date has whole seconds: 1 to 2 s ahead
    assert ": rate-limited, waiting " in caplog.text


def test_a_retry_after_beyond_max_rate_limit_wait_is_not_waited(hipho):
    with FakeOpenAI(lambda body: Fault(429, headers={"Retry-After": "3600"})) as server:
        outcome, generations, _ = generate_sample(
            hipho, model(server.base_url, max_rate_limit_wait=60, max_consecutive_failures=0)
        )
        assert server.count() == 5  # the client does not retry a wait over two minutes either
    assert outcome.errors == 5 and all(g.error.startswith("HTTP 429") for g in generations)


def test_retry_after_is_read_in_seconds_milliseconds_or_as_a_date():
    assert retry_after({"retry-after": "90"}) == 90.0
    assert retry_after({"retry-after-ms": "1500", "retry-after": "90"}) == 1.5
    in_two_minutes = retry_after({"retry-after": email.utils.formatdate(time.time() + 120, usegmt=True)})
    assert 118 <= in_two_minutes <= 120
    assert retry_after({}) is None and retry_after({"retry-after": "soon"}) is None
    assert retry_after({"retry-after": "inf"}) is None


# ---------------------------------------------------------------- replies that stall, lie or poison


def test_a_reply_that_trickles_times_out_each_attempt_and_fails_the_request(hipho):
    """Status 200, then a byte of whitespace every 0.2 s: each read gets a byte, so a timeout per
    read never fires. The whole reply of an attempt must come within `timeout`: two attempts of
    1 s, then an error that says so, nothing cached."""
    with FakeOpenAI(trickling(0.2)) as server:
        started = time.perf_counter()
        outcome, generations, usage = generate_sample(
            hipho, model(server.base_url, timeout=1, max_retries=1, concurrency=5)
        )
        took = time.perf_counter() - started
        assert server.count() == 5 * 2  # each attempt cut at its deadline, retried once
    assert took < 15, took
    assert outcome.errors == 5 and usage["answered"] == 0
    assert all(
        g.response is None and g.error.startswith("APITimeoutError: no whole reply within 1 s") for g in generations
    )
    assert len(RequestCache(hipho.parent / "cache.sqlite")) == 0  # a rerun asks again


def test_a_slow_reply_inside_its_deadline_is_an_answer(hipho):
    with FakeOpenAI(latency=0.5) as server:
        outcome, generations, _ = generate_sample(hipho, model(server.base_url, timeout=3, max_retries=0))
    assert outcome.errors == 0 and all(g.response for g in generations)


BAD_USAGE = {
    "negative": (
        {"prompt_tokens": -1_000_000, "completion_tokens": -2_500_000, "total_tokens": 0},
        "prompt_tokens -1000000",
    ),
    "huge": ({"prompt_tokens": 10, "completion_tokens": 1e30, "total_tokens": 1e30}, "completion_tokens 1e+30"),
    "text": ({"prompt_tokens": "many", "completion_tokens": 3, "total_tokens": 3}, "prompt_tokens 'many'"),
    "fraction": ({"prompt_tokens": 12.5, "completion_tokens": 3, "total_tokens": 15.5}, "prompt_tokens 12.5"),
    "missing": ({"prompt_tokens": 12, "total_tokens": 12}, "completion_tokens missing"),
}


@pytest.mark.parametrize("case", BAD_USAGE)
def test_usage_that_is_no_token_count_leaves_the_cost_unknown_and_the_paid_reply_kept(hipho, caplog, case):
    """A reply that was paid for is kept (cached: a rerun pays nothing) whatever its usage says;
    its tokens and cost are unknown, never negative, huge or zero, and the problem is said."""
    figures, problem = BAD_USAGE[case]
    with FakeOpenAI(bad_usage(figures)) as server:
        outcome, generations, usage = generate_sample(
            hipho, model(server.base_url, prices={"input": 2.5, "output": 10.0})
        )
        assert outcome.errors == 0 and all("\\boxed{42}" in g.response for g in generations)
        _, again, usage_again = generate_sample(hipho, model(server.base_url, prices={"input": 2.5, "output": 10.0}))
        assert server.count() == 5 and again == generations and usage_again == usage
    assert usage["cost_usd"] is None and usage["cost_usd_known"] == 0.0 and usage["usage_unknown"] == 5
    assert usage["usage_invalid"] == 5 and usage["usage_problem"].startswith(f"usage {problem}")
    assert usage["prompt_tokens"] == usage["completion_tokens"] == 0
    assert "cost of this run unknown (5 replies without a usage" in outcome.summary()
    assert "5 of 5 replies came without a usable usage; 5 reported figures that are no token counts" in caplog.text


def test_a_reply_without_usage_costs_unknown_never_zero(hipho):
    with FakeOpenAI(bad_usage(None)) as server:
        outcome, _, usage = generate_sample(hipho, model(server.base_url, prices={"input": 2.5, "output": 10.0}))
    assert outcome.errors == 0 and usage["cost_usd"] is None and usage["usage_unknown"] == 5
    assert "usage_invalid" not in usage and "cost $0" not in outcome.summary()


def test_a_usage_of_token_counts_adds_no_key_to_the_usage_file(hipho):
    """Usage files of ordinary runs keep their bytes: the keys of unknown usage and of another
    model are written only where there is something to say."""
    with FakeOpenAI() as server:
        _, generations, usage = generate_sample(hipho, model(server.base_url))
    assert set(usage) == {
        "replies_received", "requests", "answered", "failed", "truncated", "retries",
        "prompt_tokens", "completion_tokens", "reasoning_tokens", "cost_usd",
    }  # fmt: skip
    lines = (hipho / "generations" / "sample_hipho" / "m.jsonl").read_text(encoding="utf-8")
    assert '"served_model"' not in lines


@pytest.mark.parametrize("name", ["cache.sqlite", "shared-cache"])
def test_a_cached_reply_with_usage_that_is_no_token_count_reads_back_as_unknown(tmp_path, name):
    """A row stored before usage was checked: its negative figures are never added up."""
    cache = RequestCache(tmp_path / name)
    row = {"text": "a", "reasoning": None, "finish_reason": "stop", "attempts": 1}
    cache._store.put("k", json.dumps({**row, "usage": {"prompt_tokens": -5, "completion_tokens": 3}}))
    reply = cache.get("k")
    assert reply.usage == {} and reply.usage_problem.startswith("usage prompt_tokens -5, not a token count")
    cache.close()


def test_a_reply_served_by_another_model_is_recorded_counted_and_warned_about(hipho, caplog):
    with FakeOpenAI(other_model("gpt-3.5-turbo-cheap-fallback")) as server:
        outcome, generations, usage = generate_sample(hipho, model(server.base_url))
        assert outcome.errors == 0 and server.count() == 5
    assert {g.served_model for g in generations} == {"gpt-3.5-turbo-cheap-fallback"}
    assert usage["other_model"] == 5 and usage["served_models"] == {"gpt-3.5-turbo-cheap-fallback": 5}
    assert (
        "5 of 5 replies were served by another model than 'fake-model' ('gpt-3.5-turbo-cheap-fallback' 5x)"
        in caplog.text
    )


def test_every_reply_keeps_the_model_that_served_it_in_the_cache(tmp_path):
    with FakeOpenAI() as server:
        replies, _ = ask(tmp_path, model(server.base_url), batch(2))
    cache = RequestCache(tmp_path / "cache.sqlite")
    assert [cache.get(f"key-{i}").served_model for i in range(2)] == ["fake-model"] * 2
    assert [reply.served_model for reply in replies] == ["fake-model"] * 2
    cache.close()


@pytest.mark.parametrize(
    "asked,served,same",
    [
        ("gpt-4o", "gpt-4o-2024-08-06", True),  # a dated snapshot of the model asked
        ("openai/gpt-4o", "gpt-4o-2024-08-06", True),  # a router that drops the organisation
        ("claude-3-5-sonnet", "claude-3-5-sonnet-20241022", True),
        ("llama3", "llama3:latest", True),
        ("gpt-4o", "gpt-4o-mini", False),
        ("gpt-3.5-turbo", "gpt-3.5-turbo-cheap-fallback", False),
        ("gpt-4o", "gpt-4o-2024-08-06-cheap-fallback", False),
        ("Qwen/Qwen2.5-VL-7B-Instruct", "Qwen/Qwen2.5-VL-72B-Instruct", False),
    ],
)
def test_a_snapshot_of_the_model_asked_is_no_other_model(hipho, asked, served, same):
    with FakeOpenAI(other_model(served)) as server:
        _, generations, usage = generate_sample(hipho, model(server.base_url, model=asked, probe=False))
    assert ("other_model" not in usage) == same
    assert {g.served_model for g in generations} == {None if same else served}


def test_strict_model_refuses_another_models_replies(hipho):
    with FakeOpenAI(other_model("gpt-3.5-turbo-cheap-fallback")) as server:
        outcome, generations, usage = generate_sample(hipho, model(server.base_url, max_retries=1, strict_model=True))
        assert server.count() == 5 * 2  # retried like a reply that is no answer
    assert outcome.errors == 5 and usage["answered"] == 0
    assert all(
        g.response is None
        and g.error.startswith("served by another model: 'gpt-3.5-turbo-cheap-fallback', not 'fake-model'")
        for g in generations
    )
    assert len(RequestCache(hipho.parent / "cache.sqlite")) == 0


@pytest.mark.parametrize("field_name", ["content", "reasoning_content", "refusal", "finish_reason", "model"])
def test_a_lone_surrogate_in_any_field_of_a_reply_is_cleaned_at_the_door(hipho, field_name):
    """Every field of a reply is written somewhere (the generation, the cache); a lone surrogate in
    any of them is U+FFFD there, and a rerun reads the same back from the cache."""
    with FakeOpenAI(surrogates(field_name)) as server:
        outcome, generations, _ = generate_sample(hipho, model(server.base_url))
        _, again, _ = generate_sample(hipho, model(server.base_url))
        assert server.count() == 5 and again == generations
    written = (hipho / "generations" / "sample_hipho" / "m.jsonl").read_text(encoding="utf-8")
    assert "\ufffd" in written and outcome.errors == 0
    if field_name == "finish_reason":
        assert {g.finish_reason for g in generations} == {"stop\ufffd"}
    if field_name == "model":
        assert {g.served_model for g in generations} == {"fake-model\ufffd"}


def test_a_lone_surrogate_in_an_error_is_cleaned_too(hipho):
    fault = Fault(400, {"error": {"message": "bad request \ud800 here"}})
    with FakeOpenAI(lambda body: fault) as server:
        outcome, generations, _ = generate_sample(hipho, model(server.base_url))
        assert server.count() == 5
    assert outcome.errors == 5 and all(
        g.error.startswith("HTTP 400: ") and g.error.endswith("bad request \ufffd here") for g in generations
    )


@pytest.mark.parametrize("name", ["cache.sqlite", "shared-cache"])
def test_a_cached_row_poisoned_in_any_field_is_read_back_clean_without_a_hand_edit(hipho, name):
    """A row that code before this stored (it cleaned the texts only): the run that reads it back
    writes its outputs, offline, with U+FFFD where the surrogate was."""
    cache_path = hipho.parent / name
    out = hipho / "generations" / "sample_hipho" / "m.jsonl"

    def generate_from(base_url):
        return generate(
            "sample_hipho",
            "m",
            model(base_url),
            hipho / "suites/hipho/sample_hipho/prompts.jsonl",
            out,
            cache_path,
        )

    with FakeOpenAI() as server:
        generate_from(server.base_url)
        poisoned = corrupt_rows(
            cache_path, lambda text, index: json.dumps({**json.loads(text), "finish_reason": "stop\ud800"})
        )
        base_url = server.base_url
    outcome = generate_from(base_url)  # the server is gone: every reply from the cache
    assert poisoned == 5 and outcome.errors == 0 and outcome.sent == 0
    assert {g.finish_reason for g in read_jsonl(out, Generation)} == {"stop\ufffd"}


@pytest.mark.parametrize(
    "reply",
    [
        {"content": "", "reasoning_content": "Let me think about the forces.", "finish_reason": "stop"},
        {"content": "  \n", "reasoning_content": "Let me think.", "finish_reason": "stop"},
        {"content": "", "finish_reason": "stop"},
    ],
    ids=["reasoning only", "whitespace and reasoning", "empty"],
)
def test_a_reply_with_reasoning_but_no_answer_is_retried_then_an_error_never_a_zero(hipho, reply):
    with FakeOpenAI(lambda body: reply) as server:
        outcome, generations, usage = generate_sample(hipho, model(server.base_url, max_retries=1))
        assert server.count() == 5 * 2
    assert outcome.errors == 5 and usage["answered"] == 0
    assert all(g.response is None and "no answer, the content is empty" in g.error for g in generations)


def test_a_reasoning_only_reply_is_retried_until_an_answer_comes(hipho):
    with FakeOpenAI(AnswersAfter(reasoning_only({}))) as server:
        outcome, generations, usage = generate_sample(hipho, model(server.base_url, max_retries=1))
    assert outcome.errors == 0 and all("\\boxed{42}" in g.response for g in generations)
    assert server.count() == 5 * 2 and usage["retries"] == 5


@pytest.mark.parametrize(
    "schema",
    [
        "CREATE TABLE replies (id INTEGER PRIMARY KEY, payload BLOB)",
        "CREATE TABLE replies (key TEXT PRIMARY KEY, reply TEXT NOT NULL, stored REAL NOT NULL)",
        "CREATE TABLE replies (key TEXT, reply TEXT)",
        "CREATE TABLE leases (key TEXT PRIMARY KEY, holder INTEGER)",
    ],
    ids=["other columns", "a column more", "no primary key", "foreign leases"],
)
def test_a_cache_of_a_foreign_schema_is_refused_before_the_first_request(hipho, schema):
    """Another program's SQLite file: every reply stored in it would be lost after it was paid for."""
    path = hipho.parent / "cache.sqlite"
    with sqlite3.connect(path) as db:
        db.execute(schema)
    db.close()
    with FakeOpenAI() as server:
        with pytest.raises(InputError) as caught:
            generate_sample(hipho, model(server.base_url))
        assert server.count() == 0 and server.probes == 0
    said = str(caught.value)
    assert said.startswith(f"the request cache {path} holds a table `") and "\n" not in said
    assert "that is not a request cache's" in said and "set paths.request_cache" in said
    assert not (hipho / "generations").exists()


GENERATE_IN_ANOTHER_PROCESS = """
import sys
from pathlib import Path
from omegaconf import OmegaConf
from olympiad_eval.stages.generate import generate
base_url, outputs, cache, out = sys.argv[1], Path(sys.argv[2]), sys.argv[3], sys.argv[4]
cfg = OmegaConf.create({"provider": "openai", "base_url": base_url, "model": "fake-model", "api_key_env": None,
                        "concurrency": 5, "max_retries": 0, "timeout": 60})
outcome = generate("sample_hipho", "m", cfg, outputs / "suites/hipho/sample_hipho/prompts.jsonl", out, cache)
print(outcome.sent, outcome.errors)
"""


def another_process(base_url: str, outputs, cache, out) -> subprocess.Popen:
    """A clone's generate stage, in a process of its own, sharing `cache` with this one."""
    return subprocess.Popen(
        [sys.executable, "-c", GENERATE_IN_ANOTHER_PROCESS, base_url, str(outputs), str(cache), str(out)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("name", ["cache.sqlite", "shared-cache"])
def test_two_processes_sharing_a_cache_pay_once_for_each_reply(hipho, name):
    """The second process finds each request on its way (a lease in the cache) and waits for the
    reply the first one stores, instead of paying for it again; both write the same generations."""
    cache = hipho.parent / name
    with FakeOpenAI(latency=2.0) as server:
        first = another_process(server.base_url, hipho, cache, hipho / "first.jsonl")
        deadline = time.monotonic() + 60
        while server.count() < 5 and time.monotonic() < deadline:  # the first one's requests are out
            time.sleep(0.05)
        second = another_process(server.base_url, hipho, cache, hipho / "second.jsonl")
        outputs = [process.communicate(timeout=120) for process in (first, second)]
        assert [process.returncode for process in (first, second)] == [0, 0], outputs
        assert server.count() == 5  # each reply paid once
    assert [out.split() for out, _ in outputs] == [["5", "0"], ["0", "0"]]  # sent, failed
    assert (hipho / "first.jsonl").read_bytes() == (hipho / "second.jsonl").read_bytes()


def test_a_lease_whose_owner_was_killed_is_taken_over_at_once(hipho):
    """A process killed while its requests were on their way leaves its leases in the cache; the
    next run sees that their owner is gone and sends at once, not after the leases' time runs out."""
    cache = hipho.parent / "cache.sqlite"
    hold = threading.Event()

    def held_then_answered(body: dict):
        hold.wait(60)
        return default_responder(body)

    with FakeOpenAI(held_then_answered) as server:
        first = another_process(server.base_url, hipho, cache, hipho / "first.jsonl")
        deadline = time.monotonic() + 60
        while server.count() < 5 and time.monotonic() < deadline:
            time.sleep(0.05)
        first.kill()
        first.communicate()
        hold.set()
        with sqlite3.connect(cache) as db:  # the dead process's leases are still there
            assert db.execute("SELECT COUNT(*) FROM leases").fetchone()[0] == 5
        db.close()
        started = time.perf_counter()
        second = another_process(server.base_url, hipho, cache, hipho / "second.jsonl")
        out, err = second.communicate(timeout=120)
        assert second.returncode == 0, err
        assert time.perf_counter() - started < 30  # not LEASE_SECONDS per request
        assert out.split() == ["5", "0"] and server.count() == 10
