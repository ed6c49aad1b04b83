"""Providers: the contract every provider meets, the registry, and asking through the request cache."""

from __future__ import annotations

import asyncio

import pytest
from omegaconf import OmegaConf

from olympiad_eval.core.records import InputError, Prompt, RecordError
from olympiad_eval.llm.cache import Reply, RequestCache
from olympiad_eval.llm.providers import (
    PROVIDERS,
    Provider,
    ReplayProvider,
    Request,
    ScriptedProvider,
    complete_all,
    judge_provider_class,
    provider_class,
)
from olympiad_eval.llm.usage import Tally

OPENAI = {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key_env": None}


def prompt(id: str = "P1", reference: str = "\\boxed{42}") -> Prompt:
    return Prompt(
        id=id,
        suite="s",
        language="en",
        messages=({"role": "user", "content": f"Solve {id}."},),
        prompt_hash="h",
        reference=reference,
    )


def asked(provider: Provider, requests: list[Request], cache: RequestCache | None = None, tally: Tally | None = None):
    return asyncio.run(complete_all(provider, cache, requests, tally=tally))


def test_every_registered_provider_meets_the_contract_under_its_name():
    assert list(PROVIDERS) == ["openai", "reference", "replay", "scripted"]
    for name, provider in PROVIDERS.items():
        assert issubclass(provider, Provider) and provider.name == name
        assert not provider.__abstractmethods__, f"{name} leaves {set(provider.__abstractmethods__)} unimplemented"


@pytest.mark.parametrize(
    "cfg,identity",
    [
        (OPENAI, {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m"}),
        (
            {**OPENAI, "max_image_bytes": None},
            {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m"},
        ),
        (
            {**OPENAI, "max_image_bytes": 2**20},
            {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m", "max_image_bytes": 2**20},
        ),
        ({"provider": "reference", "samples": 1}, {"provider": "reference"}),
        (
            {"provider": "replay", "path": "data/replay/demo/{suite}.jsonl", "id_field": "id"},
            {"provider": "replay", "path": "data/replay/demo/{suite}.jsonl"},
        ),  # as written, not the suite's file
        (
            {"provider": "scripted", "replies": [{"when": "x", "reply": "y"}, {"reply": "z"}]},
            {"provider": "scripted", "replies": [{"when": "x", "reply": "y"}, {"when": None, "reply": "z"}]},
        ),
    ],
)
def test_the_identity_is_the_one_request_keys_were_always_made_of(cfg, identity, monkeypatch):
    """Generations record their request hashes: an identity that changed would change every output."""
    from tests.support import ROOT

    monkeypatch.chdir(ROOT)
    provider = provider_class(cfg["provider"], "model 'm'")(OmegaConf.create(cfg), "model 'm'", "sample_hipho")
    assert provider.identity() == identity


@pytest.mark.parametrize("name", ["opena1", None, ["openai"]])
def test_an_unknown_provider_is_an_input_error_naming_the_known_ones(name):
    with pytest.raises(InputError) as error:
        provider_class(name, "model 'm' (conf/model/m.yaml or an override)")
    assert str(error.value) == (
        "model 'm' (conf/model/m.yaml or an override): provider must be one of openai, "
        f"reference, replay, scripted, got {name!r}"
    )


def test_a_judge_endpoint_is_openai_unless_it_names_another():
    assert (
        judge_provider_class(OmegaConf.create({"base_url": "http://x/v1", "model": "m"}), "judges.j").name == "openai"
    )
    assert judge_provider_class(OmegaConf.create({"provider": "scripted"}), "judges.j").name == "scripted"


@pytest.mark.parametrize("name", ["reference", "replay"])
def test_a_judge_cannot_use_a_provider_that_answers_only_a_suite_s_prompts(name):
    with pytest.raises(
        InputError,
        match=rf"^judges.j: provider '{name}' answers only a suite's prompts; a judge needs "
        r"one that answers any request \(openai, scripted\)$",
    ):
        judge_provider_class(OmegaConf.create({"provider": name}), "judges.j")


def test_the_reference_answers_each_prompt_with_its_gold_offline(tmp_path):
    provider = provider_class("reference", "model 'r'")(OmegaConf.create({"provider": "reference"}), "model 'r'")
    cache, tally = RequestCache(tmp_path / "cache.sqlite"), Tally()
    replies = asked(
        provider, [Request("k1", [], {}, prompt("P1", "A")), Request("k2", [], {}, prompt("P2", "B"))], cache, tally
    )
    assert [(reply.text, reply.finish_reason) for reply in replies] == [("A", "stop"), ("B", "stop")]
    assert tally.sent == 0 and len(cache) == 0  # nothing sent, nothing stored
    cache.close()


def test_replay_answers_by_problem_id_and_sample(tmp_path):
    recorded = tmp_path / "s.jsonl"
    recorded.write_text(
        '{"id": "P1", "response": "first"}\n{"id": "P1", "sample": 1, "response": "second"}\n', encoding="utf-8"
    )
    cfg = OmegaConf.create({"provider": "replay", "path": str(tmp_path / "{suite}.jsonl")})
    replies = asked(
        ReplayProvider(cfg, "model 'r'", "s"),
        [
            Request("a", [], {}, prompt("P1"), 0),
            Request("b", [], {}, prompt("P1"), 1),
            Request("c", [], {}, prompt("P1"), 2),
        ],
    )
    assert [reply.text for reply in replies] == ["first", "second", None]
    assert replies[2].error == f"no recorded response for id P1 sample 2 in {recorded}"


def test_a_replay_file_that_is_missing_or_malformed_stops_before_any_request(tmp_path):
    cfg = OmegaConf.create({"provider": "replay", "path": str(tmp_path / "{suite}.jsonl")})
    with pytest.raises(InputError, match=r"replay file .*nope\.jsonl not found"):
        ReplayProvider(cfg, "model 'r'", "nope")
    (tmp_path / "bad.jsonl").write_text('{"id": "P1", "response": null}\n', encoding="utf-8")
    with pytest.raises(RecordError, match="response"):
        ReplayProvider(cfg, "model 'r'", "bad")


def test_a_replay_config_without_a_path_is_named_with_its_key():
    with pytest.raises(InputError, match=r"^model 'r': path \(the recorded responses.*must be set, got None$"):
        ReplayProvider.check(OmegaConf.create({"provider": "replay"}), "model 'r'")


class Counting(Provider):
    """A provider that sends, as a new one would be written: it counts what it is asked."""

    name = "counting"
    sends = True

    def __init__(self):
        super().__init__(OmegaConf.create({}), "model 'counting'")
        self.asked: list[str] = []
        self.probes = 0
        self.closed = False

    def identity(self) -> dict:
        return {"provider": self.name}

    async def probe(self) -> None:
        self.probes += 1

    async def complete(self, request: Request) -> Reply:
        self.asked.append(request.key)
        await asyncio.sleep(0.01)  # on the wire: an identical request asked meanwhile must wait for it
        if request.key.startswith("fail"):
            return Reply(error="HTTP 503: down")
        return Reply(text=f"answer to {request.key}", finish_reason="stop", usage={"prompt_tokens": 3})

    async def aclose(self) -> None:
        self.closed = True


def test_a_provider_that_sends_is_probed_once_cached_and_asked_each_request_once(tmp_path):
    cache = RequestCache(tmp_path / "cache.sqlite")
    provider, tally = Counting(), Tally()
    requests = [Request(key, [{"role": "user", "content": key}], {}) for key in ("a", "a", "fail", "b")]
    replies = asked(provider, requests, cache, tally)
    assert provider.asked == ["a", "fail", "b"] and provider.probes == 1 and provider.closed
    assert [reply.cached for reply in replies] == [False, True, False, False]  # the second "a" shared the first's reply
    assert tally.sent == 3 and len(cache) == 2  # the failure is not stored: a rerun asks it again

    again = Counting()
    replies = asked(again, requests, cache)
    assert again.asked == ["fail"] and again.probes == 1 and replies[0].text == "answer to a"

    cached = Counting()
    asked(cached, [requests[0], requests[3]], cache)
    assert cached.asked == [] and cached.probes == 0  # every reply cached: offline, never probed
    cache.close()


def test_an_openai_endpoint_whose_replies_are_all_cached_builds_no_client(tmp_path):
    """No client, nor the openai import it takes, where nothing is sent: a judge stage after judging
    ahead starts half a second sooner."""
    cfg = OmegaConf.create({"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m", "concurrency": 3})
    provider = provider_class("openai", "model 'm'")(cfg, "model 'm'")
    cache = RequestCache(tmp_path / "cache.sqlite")
    request = Request("k", [{"role": "user", "content": "x"}], {})
    cache.put("k", Reply(text="cached", finish_reason="stop", usage={}))
    [reply] = asked(provider, [request], cache)
    assert reply.text == "cached" and provider.concurrency == 3 and "endpoint" not in vars(provider)
    cache.close()


def scripted(*rules: dict) -> ScriptedProvider:
    cfg = OmegaConf.create({"provider": "scripted", "replies": list(rules)})
    ScriptedProvider.check(cfg, "judges.j")
    return ScriptedProvider(cfg, "judge 'j'")


def test_a_scripted_request_gets_the_reply_of_the_first_rule_its_text_contains(tmp_path):
    provider = scripted(
        {"when": '{"awarded"', "reply": "award"}, {"when": "Grade", "reply": "grade"}, {"reply": "anything else"}
    )
    requests = [
        Request(
            "a",
            [
                {"role": "system", "content": "Grade."},
                {
                    "role": "user",
                    "content": [{"type": "text", "text": 'Answer {"awarded": 1}'}, {"type": "image", "path": "f.png"}],
                },
            ],
            {},
        ),
        Request("b", [{"role": "user", "content": "Grade this."}], {}),
        Request("c", [{"role": "user", "content": "Solve."}], {}),
    ]
    cache = RequestCache(tmp_path / "cache.sqlite")
    replies = asked(provider, requests, cache)
    assert [reply.text for reply in replies] == ["award", "grade", "anything else"]
    assert all(reply.cached and reply.error is None for reply in replies) and len(cache) == 0  # offline: nothing stored
    cache.close()


def test_a_request_no_scripted_rule_matches_is_an_error_never_an_answer():
    [reply] = asked(
        scripted({"when": "verdict", "reply": "correct"}), [Request("a", [{"role": "user", "content": "?"}], {})]
    )
    assert reply.text is None and reply.error.startswith("no scripted reply matches the request")


@pytest.mark.parametrize(
    "replies,message",
    [
        (None, "replies must be a list of rules"),
        ([], "replies must be a list of rules"),
        (["correct"], "replies[0] must have a text `reply` and may have a text `when` (nothing else), got 'correct'"),
        ([{"reply": "a"}, {"when": 3, "reply": "b"}], "replies[1] must have a text `reply`"),
        ([{"reply": "a", "whenever": "b"}], "replies[0] must have a text `reply`"),
    ],
)
def test_a_malformed_script_is_named_with_its_key(replies, message):
    with pytest.raises(InputError) as error:
        ScriptedProvider.check(OmegaConf.create({"provider": "scripted", "replies": replies}), "judges.j")
    assert str(error.value).startswith("judges.j: ") and message in str(error.value)
