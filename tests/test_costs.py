"""The cost plan: its request counts against what a real run sends, its cache column against the
cache a run fills, and its token estimates against the rules it documents."""

from __future__ import annotations

import shutil

import pytest
import yaml
from hydra import compose, initialize_config_dir

from olympiad_eval.benchmarks import plugin
from olympiad_eval.cli import costs
from olympiad_eval.cli.fake_server import FakeOpenAI
from olympiad_eval.core.layout import Layout
from olympiad_eval.core.plan import read_plan
from olympiad_eval.core.records import Prompt, read_jsonl
from olympiad_eval.stages.generate import generate
from olympiad_eval.stages.judge import judge
from tests.support import CONF, ROOT, plan_yaml, render_sample

SUITES = {
    "sample_hipho": "sample_hipho",
    "sample_physelite_en": "sample_physelite",
    "sample_mathvision": "sample_mathvision",
}
FAMILIES = {"sample_hipho": "hipho", "sample_physelite_en": "physelite", "sample_mathvision": "mathvision"}


def fake_configs(conf, base_url: str) -> None:
    """A model (two seeded samples: two requests per prompt) and a judge ensemble of two, all
    served by the fake server."""
    endpoint = {
        "provider": "openai",
        "base_url": base_url,
        "api_key_env": None,
        "max_retries": 0,
        "prices": {"input": 1.0, "output": 2.0},
    }
    (conf / "model" / "fake.yaml").write_text(
        yaml.safe_dump(
            {
                **endpoint,
                "model": "fake-model",
                "samples": 2,
                "assumed_output_tokens": 50,
                "generation": {"temperature": 0, "seed": 7},
            }
        )
    )
    (conf / "judge" / "fake.yaml").write_text(
        yaml.safe_dump(
            {
                "defaults": ["llm_base", "_self_"],
                "judges": {
                    name: {**endpoint, "model": name, "assumed_output_tokens": 20} for name in ("judge-a", "judge-b")
                },
            }
        )
    )


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    """The sample's suites rendered, a conf folder with the fake model and judge, a plan of them."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("OLYMPIAD_EVAL_REQUEST_CACHE", str(tmp_path / "cache.sqlite"))
    outputs = tmp_path / "outputs"
    for suite, benchmark in SUITES.items():
        render_sample(outputs, suite, benchmark)
    conf = tmp_path / "conf"
    shutil.copytree(CONF, conf)
    plan = tmp_path / "params.yaml"
    plan.write_text(plan_yaml(SUITES, ["fake"], ["fake"], conf=conf))
    return conf, plan, outputs


def planned(conf, plan, outputs) -> dict:
    """The cost plan's rows by (stage, suite, endpoint)."""
    rows = costs.cost_plan(conf, [f"paths.plan={plan}", f"paths.outputs={outputs}"])
    return {(row.stage, row.suite, row.asks): row for row in rows}


def composed(conf, config_name: str, *overrides: str):
    with initialize_config_dir(config_dir=str(conf), version_base=None):
        return compose(config_name=config_name, overrides=list(overrides))


def run_generate(conf, outputs, suite: str) -> None:
    cfg = composed(conf, "generate", "model=fake", f"cell.suite={suite}")
    layout = Layout(outputs)
    generate(
        suite,
        "fake",
        cfg.model,
        layout.prompts(FAMILIES[suite], suite),
        layout.generations(FAMILIES[suite], suite, "fake"),
        cfg.paths.request_cache,
        layout.usage(FAMILIES[suite], suite, "fake"),
    )


def run_judge(conf, outputs, suite: str) -> None:
    cfg = composed(conf, "judge", "judge=fake", f"cell.suite={suite}", "cell.model=fake")
    layout = Layout(outputs)
    judge(
        layout.suite(FAMILIES[suite], suite),
        layout.generations(FAMILIES[suite], suite, "fake"),
        "fake",
        cfg.judge,
        layout.judgments(FAMILIES[suite], suite, "fake", "fake"),
        cfg.paths.request_cache,
    )


def test_the_plan_counts_exactly_the_requests_a_run_sends_and_then_finds_them_cached(workspace):
    conf, plan, outputs = workspace
    with FakeOpenAI() as server:
        fake_configs(conf, server.base_url)
        before = planned(conf, plan, outputs)  # nothing generated, nothing cached
        for suite in SUITES:
            sent = server.count()
            run_generate(conf, outputs, suite)
            row = before[("generate", suite, "fake")]
            assert server.count() - sent == len(row.to_send) == row.requests > 0 and row.cached == 0, suite

        after_generation = planned(conf, plan, outputs)  # the responses are in the cache: judge tasks exact
        for suite in SUITES:
            generation = after_generation[("generate", suite, "fake")]
            assert generation.cached == generation.requests and not generation.to_send
            judges = [after_generation[("judge", suite, name)] for name in ("judge-a", "judge-b")]
            sent = server.count()
            run_judge(conf, outputs, suite)
            assert server.count() - sent == sum(len(row.to_send) for row in judges), suite
            assert all(row.counted == "exact" and row.cached == 0 for row in judges)
            # before the responses existed: the same or more (HiPhO's answer slots, counted as if all missed)
            bounds = [before[("judge", suite, name)] for name in ("judge-a", "judge-b")]
            assert all(bound.counted.startswith("at most") for bound in bounds)
            assert [bound.requests for bound in bounds] >= [row.requests for row in judges], suite

        again = planned(conf, plan, outputs)
    assert all(row.cached == row.requests and not row.to_send for row in again.values())
    # the fake model boxes one answer: HiPhO's two-slot problem gets one slot judged, not the bound's two
    hipho = ("judge", "sample_hipho", "judge-a")
    assert before[hipho].requests > after_generation[hipho].requests
    assert after_generation[("judge", "sample_physelite_en", "judge-a")].requests == 6  # 3 answers x (verdict, process)
    assert after_generation[("judge", "sample_mathvision", "judge-a")].requests == 0  # scored by rules alone


def test_the_total_line_sums_the_rows_and_the_costs_follow_the_prices(workspace):
    conf, plan, outputs = workspace
    fake_configs(conf, "http://127.0.0.1:9/v1")  # never asked: a plan sends nothing
    rows = costs.cost_plan(conf, [f"paths.plan={plan}", f"paths.outputs={outputs}"])
    frame = costs.table(rows)
    total = frame.iloc[-1]
    assert total["stage"] == "total" and total["to send"] == sum(len(row.to_send) for row in rows)
    assert total["requests"] == sum(row.requests for row in rows)
    generation = next(row for row in rows if row.stage == "generate" and row.suite == "sample_hipho")
    assert generation.requests == 5 * 2  # five prompts x two samples
    tokens, output, cost = (sum(values) for values in zip(*generation.to_send.values()))
    assert output == 10 * 50 and cost == pytest.approx((tokens * 1.0 + output * 2.0) / 1e6)


def test_the_sample_plan_asks_offline_models_only_and_sends_nothing(capsys, monkeypatch, tmp_path):
    """`python -m olympiad_eval.cli.costs` on the bundled plan (reference and demo, the rule judge)."""
    monkeypatch.chdir(ROOT)
    outputs, plan = tmp_path / "outputs", read_plan(ROOT / "params.yaml")
    for suite, benchmark in plan["suites"].items():
        render_sample(outputs, suite, benchmark)
    prompts = sum(
        len(read_jsonl(Layout(outputs).prompts(plan["family"][plan["suites"][s]], s), Prompt)) for s in plan["suites"]
    )
    assert costs.main([f"paths.outputs={outputs}", "--csv", str(tmp_path / "costs.csv")]) == 0
    printed = capsys.readouterr().out
    assert "| total    |" in printed and "counted: exact where every response is known" in printed
    total = (tmp_path / "costs.csv").read_text().splitlines()[-1]
    assert plan["models"] == ["reference", "demo"] and plan["judges"] == ["rule"]
    assert total == f"total,,,,,{prompts * 2},0,0,0,0,0.0,exact"  # every prompt x 2 models, answered offline


def test_a_suite_not_rendered_is_named_with_the_stage_that_renders_it(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    assert costs.main([f"paths.outputs={tmp_path / 'nothing'}"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: suite 'sample_hipho' has not been rendered (")
    assert "render it first, offline and free (dvc repro pipelines/hipho/render/dvc.yaml:render@sample_hipho)" in error


@pytest.mark.parametrize(
    "size,tokens",
    [
        ((1024, 1024), 765),  # OpenAI's examples: 768 x 768, four tiles
        ((2048, 4096), 1105),  # fit in 2048 (1024 x 2048), short side 768 (768 x 1536): six tiles
        ((100, 100), 85 + 170),  # small images are not scaled up
        ((4000, 300), 85 + 170 * 4),  # fit in 2048: 2048 x 153.6, four tiles across
    ],
)
def test_image_tokens_follow_openai_s_high_detail_rule(size, tokens):
    assert costs.tile_tokens(*size) == tokens


def test_text_tokens_count_four_ascii_characters_or_one_other_character_a_token():
    assert costs.text_tokens("") == 0
    assert costs.text_tokens("abcd" * 10) == 10
    assert costs.text_tokens("abcde") == 2
    assert costs.text_tokens("物理竞赛") == 4
    message = {"role": "user", "content": [{"type": "text", "text": "abcd " + costs.STAND_IN}]}
    assert costs.input_tokens([message], None, response_tokens=100) == 3 + 3 + 2 + 100


def test_before_a_response_exists_shared_criteria_are_one_request_and_each_answer_slot_its_own():
    """A criterion that two alternative schemes share asks the same whatever the response says; two
    slots with the same official answer quote the response's answers, which may differ."""
    from omegaconf import OmegaConf

    from olympiad_eval.core.records import AnswerSlot, Criterion, Problem
    from tests.support import suite_scoring

    criterion = Criterion("Award 1 pt if the speed is found.", 1.0)
    problem = Problem(
        id="P",
        benchmark="b",
        language="en",
        question="q",
        marking=((criterion,), (criterion,)),
        answers=(AnswerSlot("\\boxed{2}"), AnswerSlot("\\boxed{2}")),
    )
    suite = costs.RenderedSuite("s", plugin("hipho"), suite_scoring("sample_hipho"), {"P": problem}, [])
    judge_cfg = OmegaConf.create(
        {
            "kind": "llm",
            "judges": {
                "j": {
                    "base_url": "http://127.0.0.1:9/v1",
                    "model": "m",
                    "api_key_env": None,
                    "assumed_output_tokens": 10,
                }
            },
        }
    )
    [row] = costs.plan_judging(suite, "model", {("P", 0): None}, 100, "judge", judge_cfg, None, {})
    assert (row.requests, len(row.to_send), row.counted) == (3, 3, "at most (1 of 1 responses not generated yet)")


def test_a_model_the_conf_lacks_ends_in_one_line(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    outputs = render_sample(tmp_path / "outputs", "sample_mathvision", "sample_mathvision")
    plan = tmp_path / "params.yaml"
    plan.write_text(plan_yaml({"sample_mathvision": "sample_mathvision"}, ["nosuch"], ["rule"]))
    assert costs.main([f"paths.plan={plan}", f"paths.outputs={outputs}"]) == 2
    assert capsys.readouterr().err.startswith("error: In 'generate': Could not find 'model/nosuch'")


def test_an_endpoint_that_sends_needs_an_assumed_reply_length_and_says_where():
    from omegaconf import OmegaConf

    cfg = OmegaConf.create(
        {
            "provider": "openai",
            "base_url": "https://api.example.com/v1",
            "model": "m",
            "api_key_env": None,
            "generation": {"temperature": 0},
        }
    )
    suite = costs.RenderedSuite("s", plugin("mathvision"), OmegaConf.create({}), {}, [])
    with pytest.raises(costs.InputError) as error:
        costs.plan_generation(suite, "m", cfg, None)
    assert str(error.value) == (
        "model 'm' (conf/model/m.yaml or an override): set assumed_output_tokens (the tokens a "
        "reply is assumed to take) or a max_tokens request setting, so that its cost can be "
        "planned"
    )
    with_limit = OmegaConf.merge(cfg, {"generation": {"max_tokens": 900}})
    assert costs.plan_generation(suite, "m", with_limit, None)[2] == 900  # the most a reply can be
