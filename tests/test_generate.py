"""Generation through the real openai client over real HTTP, and the offline providers."""

from __future__ import annotations

import base64
import os
import sqlite3
import subprocess
import sys

import pytest
from omegaconf import OmegaConf

from olympiad_eval.core.layout import Layout
from olympiad_eval.core.records import Generation, InputError, Prompt, read_jsonl
from olympiad_eval.stages.generate import generate
from tests.support import ROOT, rendered

KEY = "sk-test-" + "k" * 40


def openai_model(base_url: str, **extra) -> dict:
    return OmegaConf.create(
        {
            "provider": "openai",
            "base_url": base_url,
            "model": "fake-model",
            "api_key_env": "OE_TEST_KEY",
            "concurrency": 4,
            "max_retries": 0,
            "generation": {"temperature": 0, "max_tokens": 64},
            **extra,
        }
    )


@pytest.fixture
def hipho(render_suite):
    return render_suite("sample_hipho", "sample_hipho")


def run(outputs, model_cfg, name="m", suite="sample_hipho"):
    out = outputs / "generations" / suite / f"{name}.jsonl"
    outcome = generate(
        suite, name, model_cfg, rendered(outputs, suite) / "prompts.jsonl", out, outputs.parent / "cache.sqlite"
    )
    return outcome, read_jsonl(out, Generation), out


def test_reference_answers_with_the_gold_in_the_prompts_format(hipho):
    outcome, generations, _ = run(hipho, OmegaConf.create({"provider": "reference"}), "reference")
    prompts = {p.id: p for p in read_jsonl(hipho / "suites/hipho/sample_hipho/prompts.jsonl", Prompt)}
    assert outcome.errors == 0 and len(generations) == len(prompts) == 5
    for generation in generations:
        assert generation.response == prompts[generation.id].reference
        assert "<answer>" in generation.response and "\\boxed{" in generation.response


def test_replay_serves_recorded_responses_and_marks_missing_ones(hipho, tmp_path):
    recorded = tmp_path / "replay.jsonl"
    recorded.write_text('{"id": "DemoPhO_2025_2_a", "response": "recorded"}\n', encoding="utf-8")
    cfg = OmegaConf.create({"provider": "replay", "path": str(recorded)})
    outcome, generations, _ = run(hipho, cfg, "replayed")
    by_id = {g.id: g for g in generations}
    assert by_id["DemoPhO_2025_2_a"].response == "recorded"
    assert outcome.errors == 4
    missing = by_id["DemoPhO_2025_1_a"]
    assert missing.response is None and "no recorded response" in missing.error


def test_an_unknown_provider_stops_before_anything_is_written(hipho):
    with pytest.raises(
        InputError, match=r"^model 'm': provider must be one of openai, reference, replay, scripted, got 'opena1'$"
    ):
        run(hipho, OmegaConf.create({"provider": "opena1"}))
    assert not (hipho / "generations").exists()


def test_openai_provider_sends_every_prompt_with_its_figures(hipho, fake_openai, monkeypatch):
    monkeypatch.setenv("OE_TEST_KEY", KEY)
    outcome, generations, _ = run(hipho, openai_model(fake_openai.base_url))
    assert outcome.errors == 0 and outcome.sent == 5 == fake_openai.count()
    assert all(g.response and g.finish_reason == "stop" for g in generations)
    images = [
        part for body in fake_openai.requests for part in body["messages"][0]["content"] if part["type"] == "image_url"
    ]
    assert len(images) == 3  # the sample's HiPhO problems carry three figures
    for image in images:
        header, data = image["image_url"]["url"].split(",", 1)
        assert header == "data:image/png;base64" and base64.b64decode(data).startswith(b"\x89PNG")
    assert all(h["authorization"] == f"Bearer {KEY}" for h in fake_openai.headers)


def test_a_rerun_sends_nothing_and_writes_the_same_bytes(hipho, fake_openai, monkeypatch):
    monkeypatch.setenv("OE_TEST_KEY", KEY)
    _, _, out = run(hipho, openai_model(fake_openai.base_url))
    first = out.read_bytes()
    outcome, _, _ = run(hipho, openai_model(fake_openai.base_url))
    assert outcome.sent == 0 and fake_openai.count() == 5
    assert out.read_bytes() == first


def test_changing_a_generation_setting_sends_again(hipho, fake_openai, monkeypatch):
    monkeypatch.setenv("OE_TEST_KEY", KEY)
    run(hipho, openai_model(fake_openai.base_url))
    outcome, _, _ = run(hipho, openai_model(fake_openai.base_url, generation={"temperature": 0.5}))
    assert outcome.sent == 5 and fake_openai.count() == 10


def test_samples_are_requested_and_cached_one_by_one(hipho, fake_openai, monkeypatch):
    monkeypatch.setenv("OE_TEST_KEY", KEY)
    outcome, generations, _ = run(hipho, openai_model(fake_openai.base_url, samples=3))
    assert outcome.sent == 15 and sorted({g.sample for g in generations}) == [0, 1, 2]
    assert len({g.request_hash for g in generations}) == 15


def test_a_suite_tried_on_two_problems_then_run_whole_sends_only_the_other_three(
    render_suite, fake_openai, monkeypatch
):
    """The smoke test of docs/subsets.md: the limited suite's prompts are the whole suite's, so the request
    cache answers them when the whole suite runs (tests/test_pipeline_e2e.py runs it with DVC)."""
    monkeypatch.setenv("OE_TEST_KEY", KEY)
    outcome, generations, _ = run(
        render_suite("sample_hipho", "sample_hipho", "suite.limit=2"), openai_model(fake_openai.base_url)
    )
    assert outcome.sent == 2 == fake_openai.count() and len(generations) == 2
    outcome, generations, _ = run(render_suite("sample_hipho", "sample_hipho"), openai_model(fake_openai.base_url))
    assert outcome.sent == 3 and fake_openai.count() == 5 and len(generations) == 5


def test_a_permanent_failure_is_an_error_record_never_an_answer(hipho, monkeypatch):
    from olympiad_eval.cli.fake_server import FakeOpenAI, Fault, default_responder

    def reject_circuit(body):
        if "A resistor network" in str(body["messages"]):
            return Fault(400, {"error": {"message": "context length exceeded", "type": "invalid_request_error"}})
        return default_responder(body)

    monkeypatch.setenv("OE_TEST_KEY", KEY)
    with FakeOpenAI(reject_circuit) as server:
        outcome, generations, _ = run(hipho, openai_model(server.base_url))
        failed = [g for g in generations if g.error]
        assert outcome.errors == len(failed) == 1
        assert failed[0].response is None and failed[0].error.startswith("HTTP 400")
        # the failure is not cached: a rerun asks again, and only for it
        outcome, _, _ = run(hipho, openai_model(server.base_url))
        assert outcome.sent == 1 and server.count() == 6


def test_the_api_key_reaches_neither_outputs_nor_cache(hipho, fake_openai, monkeypatch, tmp_path):
    monkeypatch.setenv("OE_TEST_KEY", KEY)
    _, _, out = run(hipho, openai_model(fake_openai.base_url))
    assert KEY not in out.read_text(encoding="utf-8")
    with sqlite3.connect(tmp_path / "cache.sqlite") as db:
        dump = "\n".join(db.iterdump())
    assert dump.count("INSERT") >= 5 and KEY not in dump


def test_a_missing_key_variable_is_named(hipho, fake_openai, monkeypatch):
    monkeypatch.delenv("OE_TEST_KEY", raising=False)
    with pytest.raises(Exception, match="OE_TEST_KEY"):
        run(hipho, openai_model(fake_openai.base_url))


def test_a_permanent_400_fails_the_stage_and_is_never_scored(hipho, tmp_path):
    from olympiad_eval.cli.fake_server import FakeOpenAI, Fault, default_responder
    from olympiad_eval.core.records import Judgment
    from olympiad_eval.stages.judge import judge
    from tests.support import compose_stage

    def too_long(body):
        if "A resistor network" in str(body["messages"]):
            return Fault(400, {"error": {"message": "maximum context length exceeded"}})
        return default_responder(body)

    out = Layout(hipho).generations("hipho", "sample_hipho", "gpt-4o")
    with FakeOpenAI(too_long) as server:
        command = [
            sys.executable,
            str(ROOT / "stages/generate.py"),
            "model=gpt-4o",
            "cell.suite=sample_hipho",
            f"paths.outputs={hipho}",
            f"paths.request_cache={tmp_path / 'cache.sqlite'}",
            f"model.base_url={server.base_url}",
        ]
        result = subprocess.run(
            command, cwd=ROOT, capture_output=True, text=True, env={**os.environ, "OPENAI_API_KEY": KEY}, timeout=120
        )
    assert result.returncode == 1 and "1 of 5 requests failed" in result.stderr
    assert KEY not in result.stdout + result.stderr
    [failed] = [g for g in read_jsonl(out, Generation) if g.error]
    assert failed.response is None and failed.error.startswith("HTTP 400")

    verdicts = tmp_path / "judgments.jsonl"
    rule = compose_stage("judge", ["judge=rule", "cell.suite=sample_hipho", "cell.model=gpt-4o"]).judge
    judge(hipho / "suites/hipho/sample_hipho", out, "rule", rule, verdicts, tmp_path / "cache.sqlite")
    [judged] = [j for j in read_jsonl(verdicts, Judgment) if j.id == failed.id]
    assert judged.status == "generation_error" and judged.score is None and judged.points is None


def test_where_figures_are_stored_changes_no_request(render_suite, tmp_path):
    from olympiad_eval.llm.cache import request_key

    prompts = read_jsonl(
        render_suite("sample_hipho", "sample_hipho") / "suites/hipho/sample_hipho/prompts.jsonl", Prompt
    )
    with_figure = next(p for p in prompts if len(p.messages[0]["content"]) > 1)
    moved = [
        {
            **m,
            "content": [
                {**part, "path": "elsewhere/x.png"} if part["type"] == "image" else part for part in m["content"]
            ],
        }
        for m in with_figure.messages
    ]
    assert request_key({}, moved, {}, 0) == request_key({}, with_figure.messages, {}, 0)
    assert request_key({}, moved, {}, 1) != request_key({}, with_figure.messages, {}, 0)


def test_a_cached_rerun_says_it_cost_nothing_and_what_the_cached_replies_were_worth(hipho, fake_openai, monkeypatch):
    """A rerun whose replies are all cached spends nothing: its line must not read as money spent."""
    monkeypatch.setenv("OE_TEST_KEY", KEY)
    priced = openai_model(fake_openai.base_url, prices={"input": 2.5, "output": 10.0})
    first, _, _ = run(hipho, priced)
    cost = first.usage["cost_usd"]
    assert cost > 0
    assert first.summary().endswith(f"; 5 requests sent (0 retries), cost of this run ${cost:.4f}")
    again, _, _ = run(hipho, priced)
    assert again.summary() == (
        f"5 generations, 0 failed, 0 refused; 0 requests sent (0 retries), cost of this run $0.0000; "
        f"5 replies from the request cache, worth ${cost:.4f} when sent (not paid again)"
    )
