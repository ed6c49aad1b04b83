"""The request engine against endpoints that send too much or say too much, through the fake server
and the real `openai` client over HTTP: a reply's size is bounded (however it is sent), a redirect
never leaves the endpoint's origin, whatever the endpoint says beside the answer reaches logs,
errors and tables as one printable line, a URL's credentials are refused and never shown, and what
was billed is counted (replies refused under `strict_model`, usage whose parts disagree)."""

from __future__ import annotations

import logging

import pytest
from omegaconf import OmegaConf

from olympiad_eval.cli.fake_server import ESCAPES, FakeOpenAI, bad_usage, escapes, huge, other_model, redirect
from olympiad_eval.core.records import InputError
from olympiad_eval.core.secrets import shown_url
from olympiad_eval.llm.cache import RequestCache
from olympiad_eval.llm.providers import OpenAIProvider, check_config
from olympiad_eval.llm.transport import EndpointError, reply_limit
from olympiad_eval.report.html import without_secrets
from tests.support import generate_sample


def model(base_url: str, **extra):
    return OmegaConf.create(
        {
            "provider": "openai",
            "base_url": base_url,
            "model": "fake-model",
            "api_key_env": None,
            "concurrency": 4,
            "max_retries": 2,
            "timeout": 20,
            **extra,
        }
    )


@pytest.fixture
def hipho(render_suite):
    return render_suite("sample_hipho", "sample_hipho")


def cached(outputs) -> int:
    cache = RequestCache(outputs.parent / "cache.sqlite")
    try:
        return len(cache)
    finally:
        cache.close()


# ---------------------------------------------------------------- size


@pytest.mark.parametrize("how", ["sized", "chunked", "gzip"])
def test_a_reply_beyond_its_bound_is_refused_in_one_line_never_retried_nor_cached(hipho, how):
    """However the body comes (its Content-Length saying its size, chunks of unknown size, a few kB
    of gzip that unpack to megabytes), no more than the bound is read: each request a failed one,
    asked once, stored nowhere."""
    with FakeOpenAI(huge(2, how)) as server:
        outcome, generations, usage = generate_sample(hipho, model(server.base_url, generation={"max_tokens": 1000}))
        assert server.count() == 5  # not retried
    bound = reply_limit(None, {"max_tokens": 1000})
    assert bound < 2_000_000 and outcome.errors == 5 and usage["failed"] == 5
    for generation in generations:
        assert generation.response is None and "\n" not in generation.error
        assert generation.error.startswith(f"reply refused: larger than its bound of {bound} bytes")
        assert "max_reply_bytes" in generation.error
    assert cached(hipho) == 0


def test_the_bound_is_derived_from_max_tokens_unless_max_reply_bytes_sets_it(hipho):
    assert reply_limit(None, {"max_tokens": 1000}) < reply_limit(None, {"max_tokens": 8000})
    assert reply_limit(None, {"max_completion_tokens": 1000}) == reply_limit(None, {"max_tokens": 1000})
    assert reply_limit(None, {}) > reply_limit(None, {"max_tokens": 100_000})  # none: the longest outputs
    assert reply_limit(5_000_000, {"max_tokens": 10}) == 5_000_000
    with FakeOpenAI(huge(0.5)) as server:  # 500 kB: inside what 16k tokens may hold, beyond a set bound
        outcome, _, _ = generate_sample(hipho, model(server.base_url, generation={"max_tokens": 16000}))
        assert outcome.errors == 0
        outcome, generations, _ = generate_sample(
            hipho, model(server.base_url, max_reply_bytes=100_000), name="bounded"
        )
    assert outcome.errors == 5 and generations[0].error.startswith("reply refused: larger than its bound of 100000")


@pytest.mark.parametrize("value", [0, -1, 1.5, "big"])
def test_max_reply_bytes_must_be_a_positive_integer(value):
    with pytest.raises(InputError, match="max_reply_bytes"):
        OpenAIProvider.check(model("http://127.0.0.1:9/v1", max_reply_bytes=value), "model 'm'")


# ---------------------------------------------------------------- redirects


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_to_another_origin_is_not_followed_and_not_retried(hipho, status):
    with FakeOpenAI() as elsewhere:
        with FakeOpenAI(redirect(elsewhere.base_url + "/chat/completions?key=leaked", status)) as server:
            outcome, generations, _ = generate_sample(hipho, model(server.base_url))
            assert server.count() == 5 and elsewhere.count() == 0  # once each, none elsewhere
        port = elsewhere.base_url.split(":")[2].split("/")[0]
    assert outcome.errors == 5 and cached(hipho) == 0
    for generation in generations:
        assert generation.error == (
            f"the endpoint redirects (HTTP {status}) to another origin, http://127.0.0.1:{port}: not followed; "
            "set base_url to the address that serves the requests"
        )
    assert "0 retries" in outcome.summary()


def test_a_redirect_within_the_endpoints_origin_is_followed(hipho):
    with FakeOpenAI() as server:
        server.responder = redirect(server.base_url + "/chat/completions", 307, once=True)
        outcome, generations, _ = generate_sample(hipho, model(server.base_url))
        assert server.count() == 10  # each request, then its redirected resend
    assert outcome.errors == 0 and all(g.response for g in generations)


# ---------------------------------------------------------------- what the endpoint says, shown


# The longest each field is shown, as the door cuts it (an error's body: 300 characters in its line).
SHOWN = {"model": 200, "finish_reason": 64, "error": 310}


def printable_everywhere(text: str, longest: int) -> None:
    assert "\x1b" not in text and "\r" not in text and "\x07" not in text and "\x00" not in text
    assert "\x9b" not in text and "\u202e" not in text and "\u200b" not in text
    assert "error: none" not in text.splitlines()  # no forged line
    assert max(len(line) for line in text.splitlines() or [""]) <= longest


@pytest.mark.parametrize("field_name", ["model", "finish_reason", "error"])
def test_what_an_endpoint_says_beside_the_answer_is_one_printable_line(hipho, caplog, capfd, field_name):
    """The served model's name, the finish reason and an error's body, each written with escapes
    that clear the screen and forge a log line, then 200 kB: stored, logged and counted as one line
    of escapes, cut to a sane length."""
    caplog.set_level(logging.INFO)
    with FakeOpenAI(escapes(field_name)) as server:
        _, generations, usage = generate_sample(hipho, model(server.base_url))
    written = (hipho / "generations" / "sample_hipho" / "m.jsonl").read_text(encoding="utf-8")
    shown = {
        "model": lambda: [g.served_model for g in generations] + list(usage["served_models"]),
        "finish_reason": lambda: [g.finish_reason for g in generations],
        "error": lambda: [g.error for g in generations],
    }[field_name]()
    for text in shown:
        assert text.isprintable() and len(text) <= SHOWN[field_name] + 3 and "\\x1b[2J" in text
    printable_everywhere(written, 10_000)
    out, err = capfd.readouterr()
    for text in (caplog.text, out, err):
        printable_everywhere(text, 2_000)


@pytest.mark.parametrize("case", ["listed model", "refused key"])
def test_the_probes_error_shows_the_endpoints_words_as_one_printable_line(hipho, monkeypatch, case):
    monkeypatch.setenv("OE_TEST_KEY", "not-the-servers-key")
    server = FakeOpenAI(
        models=[ESCAPES, "other"] if case == "listed model" else None,
        api_key="the-servers-key" if case == "refused key" else None,
    )
    if case == "refused key":
        server.unauthorized = {"error": {"message": ESCAPES}}
    with server, pytest.raises(EndpointError) as caught:
        generate_sample(hipho, model(server.base_url, api_key_env="OE_TEST_KEY"))
    printable_everywhere(str(caught.value), 700)
    assert "\\x1b[2J" in str(caught.value)


# ---------------------------------------------------------------- credentials in a URL

CREDENTIALED = {  # HOST: the endpoint's host and port
    "user and password": "https://alice:sk-s3cr3t@HOST/v1",
    "a key as the user": "https://sk-s3cr3t@HOST/v1",
    "a password alone": "https://:sk-s3cr3t@HOST/v1",
    "a key in the query": "https://HOST/v1?key=sk-s3cr3t",
    "a key among other query fields": "https://HOST/v1?api-version=2&api_key=sk-s3cr3t",
}


@pytest.mark.parametrize("where", CREDENTIALED)
def test_credentials_in_base_url_are_refused_pointing_to_api_key_env_and_never_shown(where):
    cfg = model(CREDENTIALED[where].replace("HOST", "api.example.com"))
    with pytest.raises(InputError) as caught:
        check_config(cfg, "model 'm' (conf/model/m.yaml)", OpenAIProvider)
    said = str(caught.value)
    assert "base_url (https://api.example.com/v1) holds a" in said and "api_key_env" in said
    assert "s3cr3t" not in said and "alice" not in said and "key=" not in said


@pytest.mark.parametrize("where", CREDENTIALED)
def test_a_urls_user_part_and_query_are_never_printed(hipho, where):
    """Where such a URL got past the check (a config read by other code), the probe's error and the
    report's settings show the URL without them."""
    url = CREDENTIALED[where].replace("https://", "http://").replace("HOST", "127.0.0.1:9")
    assert shown_url(url) == "http://127.0.0.1:9/v1"
    assert without_secrets({"base_url": url, "model": "m"}) == {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
    with pytest.raises(EndpointError) as caught:
        generate_sample(hipho, model(url))
    assert "s3cr3t" not in str(caught.value) and "('fake-model' at http://127.0.0.1:9/v1)" in str(caught.value)


# ---------------------------------------------------------------- what was billed


def test_replies_refused_under_strict_model_are_counted_in_tokens_and_cost(hipho):
    """Each attempt refused was billed: 5 requests, 2 attempts each, every one in the cost."""
    prices = {"input": 2.5, "output": 10.0}
    with FakeOpenAI(other_model("gpt-3.5-turbo-cheap-fallback")) as server:
        outcome, _, usage = generate_sample(
            hipho, model(server.base_url, max_retries=1, strict_model=True, prices=prices)
        )
        assert server.count() == 10
    with FakeOpenAI() as server:
        _, _, accepted = generate_sample(hipho, model(server.base_url, prices=prices), name="accepted")
    assert outcome.errors == 5 and usage["answered"] == 0 and usage["failed"] == 5
    assert usage["prompt_tokens"] == 2 * accepted["prompt_tokens"] > 0
    assert usage["completion_tokens"] == 2 * accepted["completion_tokens"]
    assert usage["cost_usd"] == pytest.approx(2 * accepted["cost_usd"], abs=1e-5) and usage["cost_usd"] > 0
    assert "cost of this run $0.0000" not in outcome.summary()


DISAGREEING = {
    "reasoning beyond the completion": (
        {"prompt_tokens": 10, "completion_tokens": 25, "total_tokens": 35,
         "completion_tokens_details": {"reasoning_tokens": 2_500_000}},
        "usage reasoning_tokens 2500000 exceed completion_tokens 25",
    ),
    "a total above its parts": (
        {"prompt_tokens": 10, "completion_tokens": 25, "total_tokens": 9_000_000},
        "usage total_tokens 9000000 is not prompt_tokens 10 + completion_tokens 25",
    ),
    "a total below its parts": (
        {"prompt_tokens": 10, "completion_tokens": 25, "total_tokens": 0},
        "usage total_tokens 0 is not prompt_tokens 10 + completion_tokens 25",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", DISAGREEING)
def test_usage_whose_parts_disagree_is_kept_and_flagged(hipho, caplog, case):
    figures, said = DISAGREEING[case]
    with FakeOpenAI(bad_usage(figures)) as server:
        outcome, _, usage = generate_sample(hipho, model(server.base_url))
        _, _, again = generate_sample(hipho, model(server.base_url))  # from the cache: the flag kept with each reply
    assert outcome.errors == 0 and usage == again
    assert usage["usage_mismatched"] == 5 and usage["usage_mismatch"] == said
    assert usage["prompt_tokens"] == 50 and usage["completion_tokens"] == 125  # kept as given
    assert f"5 of 5 replies reported usage whose parts disagree (the first: {said})" in caplog.text
