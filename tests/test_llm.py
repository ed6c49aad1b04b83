"""The request engine: retries through injected faults, limits, images, accounting."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import io
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
    OpenAIEndpoint,
    RateLimiter,
    Reply,
    RequestCache,
    complete_all,
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
        expected_retries = sum(tries - 1 for tries in responder.seen.values())
        assert usage["retries"] == expected_retries == 5 * len(Flaky.FAULTS)
        assert server.count() == usage["answered"] + expected_retries
        # the retry counts are kept with the replies: a rerun reports the same, sending nothing
        _, again, usage_again = run(hipho, model(server.base_url, timeout=0.5))
        assert server.count() == usage["answered"] + expected_retries
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
