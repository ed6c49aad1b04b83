"""The request engine: retries through injected faults, limits, images, accounting."""

from __future__ import annotations

import asyncio
import base64
import email.utils
import hashlib
import io
import itertools
import json
import threading
import time
from dataclasses import replace

import pytest
from omegaconf import OmegaConf
from PIL import Image

from olympiad_eval.fake_server import FakeOpenAI, Fault, default_responder
from olympiad_eval.generate import generate
from olympiad_eval.llm import (
    EndpointError,
    OpenAIEndpoint,
    RateLimiter,
    Reply,
    RequestCache,
    complete_all,
    retry_after,
    shrink_image,
)
from olympiad_eval.records import Generation, read_jsonl


def model(base_url: str, **extra):
    return OmegaConf.create({"provider": "openai", "base_url": base_url, "model": "fake-model", "api_key_env": None,
                             "concurrency": 4, "max_retries": 6, "timeout": 5, **extra})


@pytest.fixture
def hipho(render_suite):
    return render_suite("sample_hipho", "sample_hipho")


def run(outputs, cfg, name="m", suite="sample_hipho"):
    out = outputs / "generations" / suite / f"{name}.jsonl"
    usage = outputs / "usage" / suite / f"{name}.json"
    outcome = generate(suite, name, cfg, outputs / "suites" / suite / "prompts.jsonl", out,
                       outputs.parent / "cache.sqlite", usage)
    return outcome, read_jsonl(out, Generation), json.loads(usage.read_text())


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
        outcome, generations, usage = run(hipho, model(server.base_url, timeout=0.5))
        assert outcome.errors == 0 and all(g.response and g.error is None for g in generations)
        # each 429 with Retry-After was waited out and resent: a wait, not a retry
        rate_limited = 5
        expected_retries = sum(tries - 1 for tries in responder.seen.values()) - rate_limited
        assert usage["retries"] == expected_retries == 5 * (len(Flaky.FAULTS) - 1)
        assert server.count() == usage["answered"] + expected_retries + rate_limited
        # the retry counts are kept with the replies: a rerun reports the same, sending nothing
        _, again, usage_again = run(hipho, model(server.base_url, timeout=0.5))
        assert server.count() == usage["answered"] + expected_retries + rate_limited
    assert usage_again == usage and again == generations


def test_a_body_that_is_never_a_completion_is_retried_then_an_error(hipho):
    with FakeOpenAI(lambda body: Fault(raw=b"<html>bad gateway</html>")) as server:
        outcome, generations, _ = run(hipho, model(server.base_url, max_retries=1))
    assert outcome.errors == 5 and server.count() == 5 * 2
    assert all(g.error.startswith("invalid response") for g in generations)


def test_a_bounded_number_of_attempts_then_an_error(hipho):
    with FakeOpenAI(lambda body: Fault(503)) as server:
        outcome, generations, usage = run(hipho, model(server.base_url, max_retries=2))
    assert outcome.errors == 5 and server.count() == 5 * 3
    assert all(g.response is None and g.error.startswith("HTTP 503") for g in generations)
    assert usage["failed"] == 5 and usage["answered"] == 0


@pytest.mark.parametrize("fault,message", [
    (Fault(401, {"error": {"message": "invalid api key"}}), "HTTP 401"),
    (Fault(404, {"error": {"message": "no such model"}}), "HTTP 404"),
    (Fault(400, {"error": {"message": "maximum context length exceeded"}}), "HTTP 400"),
])
def test_permanent_failures_are_not_retried_and_recorded_as_errors(hipho, fault, message):
    with FakeOpenAI(lambda body: fault) as server:
        outcome, generations, _ = run(hipho, model(server.base_url))
    assert outcome.errors == 5 and all(g.error.startswith(message) for g in generations)
    assert server.count() == 5  # no retry of a permanent failure


def test_concurrency_bounds_requests_in_flight(hipho):
    with FakeOpenAI(latency=0.2) as server:
        run(hipho, model(server.base_url, concurrency=2, samples=4))
    assert server.peak_in_flight == 2


def test_identical_requests_asked_together_go_out_once(tmp_path):
    messages = [{"role": "user", "content": "Grade this."}]
    with FakeOpenAI(latency=0.2) as server:
        cache = RequestCache(tmp_path / "cache.sqlite")
        replies = asyncio.run(complete_all(OpenAIEndpoint(model(server.base_url)), cache,
                                           [("same", messages, {}), ("same", messages, {}), ("other", messages, {})]))
        cache.close()
    assert server.count() == 2
    assert replies[0].text == replies[1].text and [reply.cached for reply in replies] == [False, True, False]


@pytest.mark.parametrize("name", ["cache.sqlite", "shared-cache"])
def test_a_cache_keeps_replies_for_every_process_that_opens_it(tmp_path, name):
    writer, reader = RequestCache(tmp_path / name), RequestCache(tmp_path / name)  # two machines, one store
    reply = Reply(text="\\boxed{42}", finish_reason="stop", usage={"prompt_tokens": 7}, attempts=2)
    writer.put("k1", reply)
    assert reader.get("k1") == replace(reply, cached=True) and reader.get("k2") is None and len(reader) == 1
    writer.put("k1", reply)  # a reply stored twice (two machines at once) stays one reply
    assert len(reader) == 1
    writer.close(), reader.close()
    if name == "shared-cache":  # whole files only: no temporary file is left beside a reply
        assert [path.name for path in (tmp_path / name).rglob("*") if path.is_file()] == ["k1.json"]


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
    settings = {"max_completion_tokens": 100, "reasoning_effort": "high", "temperature": 0.7, "seed": 10,
                "extra_body": {"top_k": 20}}
    with FakeOpenAI() as server:
        run(hipho, model(server.base_url, samples=2, generation=settings))
    body = server.requests[0]
    assert body["max_completion_tokens"] == 100 and body["reasoning_effort"] == "high"
    assert body["temperature"] == 0.7 and body["top_k"] == 20
    assert sorted({b["seed"] for b in server.requests}) == [10, 11]


def test_reasoning_is_kept_apart_from_the_answer(hipho):
    reply = {"content": "<answer>[\\boxed{1}]</answer>", "reasoning_content": "Let me think."}
    with FakeOpenAI(lambda body: reply) as server:
        _, generations, usage = run(hipho, model(server.base_url))
    assert all(g.response == reply["content"] and g.reasoning == "Let me think." for g in generations)


def test_truncated_responses_are_flagged(hipho):
    with FakeOpenAI(lambda body: {"content": "<think>and so", "finish_reason": "length"}) as server:
        _, generations, usage = run(hipho, model(server.base_url))
    assert {g.finish_reason for g in generations} == {"length"} and usage["truncated"] == 5


def test_usage_and_cost_are_totalled_per_cell(hipho):
    with FakeOpenAI() as server:
        _, _, usage = run(hipho, model(server.base_url, prices={"input": 2.0, "output": 8.0}))
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
        run(hipho, model(server.base_url, max_image_bytes=3_000))
    images = [part["image_url"]["url"] for body in server.requests for part in body["messages"][0]["content"]
              if part["type"] == "image_url"]
    assert images and all(len(base64.b64decode(url.split(",", 1)[1])) <= 3_000 for url in images)


def test_the_fake_server_does_not_count_a_request_whose_client_died_before_its_body():
    """A client killed between its headers and its body sent no request: the kill tests count on it."""
    import socket

    with FakeOpenAI() as server:
        host, port = server.base_url.split("//")[1].split("/")[0].split(":")
        for body in (b"", b'{"model"'):  # killed before the body, or within it
            with socket.create_connection((host, int(port))) as client:
                client.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                               b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n" + body)
        time.sleep(0.3)  # the handlers have read what there was to read
        assert server.count() == 0 and server.requests == []


# ---------------------------------------------------------------- failing fast


def batch(count: int, words: str = "question") -> list[tuple[str, list, dict]]:
    return [(f"key-{index}", [{"role": "user", "content": f"{words} {index}"}], {}) for index in range(count)]


def ask(tmp_path, cfg, requests) -> tuple[list[Reply], int]:
    """The replies of a batch, and how many of them the cache kept."""
    cache = RequestCache(tmp_path / "cache.sqlite")
    try:
        return asyncio.run(complete_all(OpenAIEndpoint(cfg), cache, requests)), len(cache)
    finally:
        cache.close()


@pytest.mark.parametrize("case", ["connection refused", "unresolvable host", "wrong key", "misnamed model"])
def test_an_endpoint_that_cannot_serve_stops_the_batch_before_anything_is_sent(hipho, case, monkeypatch):
    monkeypatch.setenv("OE_TEST_KEY", "not-the-servers-key")
    server = FakeOpenAI(api_key="the-servers-key" if case == "wrong key" else None,
                        models=["fake-model-v2", "fake-embedder", "other"] if case == "misnamed model" else None)
    base_url = {"connection refused": "http://127.0.0.1:9/v1",  # the discard port: nothing listens there
                "unresolvable host": "http://no-such-host.invalid/v1"}.get(case, server.base_url)
    expected = {"connection refused": "connection refused; check that the server is running",
                "unresolvable host": "the host name does not resolve",
                "wrong key": "the endpoint refused the API key (HTTP 401: Incorrect API key provided); "
                             "check the key in the environment variable OE_TEST_KEY",
                "misnamed model": "the endpoint does not list the model (it lists 3: fake-model-v2, fake-embedder, "
                                  "other); check `model`, or set `probe: false`"}[case]
    with server:
        with pytest.raises(EndpointError) as caught:
            run(hipho, model(base_url, api_key_env="OE_TEST_KEY"))
        assert server.count() == 0 and server.probes == (0 if case in ("connection refused", "unresolvable host") else 1)
    assert str(caught.value).startswith(f"model 'm' ('fake-model' at {base_url}): {expected}")
    assert not (hipho / "generations").exists() and len(RequestCache(hipho.parent / "cache.sqlite")) == 0


@pytest.mark.parametrize("listed,probe,probes", [(None, True, 1), (["other", "fake-model"], True, 1),
                                                 (["other"], False, 0)])
def test_an_endpoint_that_may_serve_is_probed_once_then_sent_the_batch(hipho, listed, probe, probes):
    """No listing (404 on /models) cannot tell; `probe: false` trusts an endpoint that lists others."""
    with FakeOpenAI(models=listed) as server:
        outcome, _, _ = run(hipho, model(server.base_url, probe=probe))
        assert outcome.errors == 0 and server.count() == 5 and server.probes == probes


def test_a_batch_whose_replies_are_all_cached_probes_nothing_and_works_offline(hipho):
    with FakeOpenAI() as server:
        cfg = model(server.base_url)
        _, generations, _ = run(hipho, cfg)
        assert server.probes == 1
    outcome, again, _ = run(hipho, cfg)  # the server is gone
    assert outcome.errors == 0 and outcome.sent == 0 and again == generations


def test_the_breaker_stops_a_batch_whose_endpoint_goes_down(tmp_path):
    received = itertools.count(1)

    def down_after_three(body: dict):
        return "fine" if next(received) <= 3 else Fault(503)

    with FakeOpenAI(down_after_three) as server:  # one request at a time: the order is the batch's
        replies, cached = ask(tmp_path, model(server.base_url, concurrency=1, max_retries=0, max_consecutive_failures=4),
                              batch(20))
        assert server.count() == 3 + 4
    assert [reply.text for reply in replies[:3]] == ["fine"] * 3 and cached == 3
    assert all(reply.error.startswith("HTTP 503") for reply in replies[3:7])
    unsent = replies[7:]
    assert all(reply.text is None and reply.attempts == 0 and reply.error.startswith(
        "not sent: the batch stopped after 4 requests in a row failed with no success (the last: HTTP 503") for reply in unsent)


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
        replies, cached = ask(tmp_path, model(server.base_url, concurrency=2, max_retries=0, timeout=60,
                                              max_consecutive_failures=2), requests)
        released.set()
    assert replies[0].error.startswith("abandoned: the batch stopped after 2 requests in a row failed")
    assert cached == 0


@pytest.mark.parametrize("header", ["seconds", "milliseconds", "date"])
def test_a_429_with_retry_after_is_waited_out_and_not_counted_as_a_retry(hipho, header, capsys):
    """Even with no retries at all: the wait is below the client's retries, and shown in the progress bar."""
    arrivals: list[float] = []

    def rate_limited_once(body: dict):
        arrivals.append(time.monotonic())
        if len(arrivals) > 1:
            return default_responder(body)
        wait = {"seconds": {"Retry-After": "1"}, "milliseconds": {"retry-after-ms": "1000"},
                "date": {"Retry-After": email.utils.formatdate(time.time() + 2, usegmt=True)}}[header]
        return Fault(429, {"error": {"message": "Rate limit reached", "type": "requests"}}, headers=wait)

    with FakeOpenAI(rate_limited_once) as server:
        outcome, generations, usage = run(hipho, model(server.base_url, concurrency=1, max_retries=0))
        assert server.count() == 5 + 1
    assert outcome.errors == 0 and usage["retries"] == 0 and all(g.error is None for g in generations)
    assert arrivals[1] - arrivals[0] >= 0.9  # the date has whole seconds: 1 to 2 s ahead
    assert "rate-limited, waiting " in capsys.readouterr().err


def test_a_retry_after_beyond_max_rate_limit_wait_is_not_waited(hipho):
    with FakeOpenAI(lambda body: Fault(429, headers={"Retry-After": "3600"})) as server:
        outcome, generations, _ = run(hipho, model(server.base_url, max_rate_limit_wait=60, max_consecutive_failures=0))
        assert server.count() == 5  # the client does not retry a wait over two minutes either
    assert outcome.errors == 5 and all(g.error.startswith("HTTP 429") for g in generations)


def test_retry_after_is_read_in_seconds_milliseconds_or_as_a_date():
    assert retry_after({"retry-after": "90"}) == 90.0
    assert retry_after({"retry-after-ms": "1500", "retry-after": "90"}) == 1.5
    in_two_minutes = retry_after({"retry-after": email.utils.formatdate(time.time() + 120, usegmt=True)})
    assert 118 <= in_two_minutes <= 120
    assert retry_after({}) is None and retry_after({"retry-after": "soon"}) is None
    assert retry_after({"retry-after": "inf"}) is None
