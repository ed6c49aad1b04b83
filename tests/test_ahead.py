"""Judging ahead (`stages.ahead`): while a cell is generated, the plan's LLM judges are asked the
tasks that need no rules as each reply arrives; the judge stage then finds them in the request cache
and writes the same bytes as without it. A judge that cannot serve is left to its stage."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from omegaconf import OmegaConf

from olympiad_eval.cli.fake_server import JUDGE_MARKER, FakeOpenAI, default_responder
from olympiad_eval.core.code import code_of
from olympiad_eval.core.layout import Layout
from olympiad_eval.stages.ahead import generate_judging_ahead, llm_judges
from olympiad_eval.stages.generate import generate_cell
from olympiad_eval.stages.judge import judge_cell
from tests.support import ROOT, compose_stage

SUITE, FAMILY = "sample_hipho", "hipho"


def endpoint(server: FakeOpenAI, model: str, base_url: str | None = None) -> dict:
    return {"base_url": base_url or server.base_url, "model": model, "api_key_env": None, "concurrency": 4}


def model(server: FakeOpenAI):
    return OmegaConf.create({"provider": "openai", **endpoint(server, "fake-model"), "concurrency": 1})


def judges(server: FakeOpenAI, base_url: str | None = None) -> dict:
    """The plan's judges as the generate stage composes them: the rules, and an LLM judge on `server`."""
    composed = {
        name: compose_stage("judge", [f"judge={name}", f"cell.suite={SUITE}", "cell.model=m"]).judge
        for name in ("rule", "gpt-4o")
    }
    composed["gpt-4o"].judges["gpt-4o"] = OmegaConf.create(endpoint(server, "fake-judge", base_url))
    return composed


class Timeline:
    """When each request arrived, and whether a judge sent it."""

    def __init__(self):
        self.arrivals: list[tuple[float, bool]] = []

    def __call__(self, body: dict):
        judging = JUDGE_MARKER in json.dumps(body["messages"])
        self.arrivals.append((time.perf_counter(), judging))
        # a model that answers 0 to everything: the rules miss its answers, which the judge is then asked
        return default_responder(body) if judging else "The answer is \\boxed{0}."


# The dates replies were received (the usage, the conversations): a fact of each run, kept by each cache.
DATES = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def judged(layout: Layout, judge: str) -> dict[str, bytes]:
    folder = layout.judged(FAMILY, SUITE, "m", judge)
    return {path.name: DATES.sub(b"<date>", path.read_bytes()) for path in sorted(folder.iterdir())}


def test_judges_asked_ahead_overlap_the_generation_and_their_stage_writes_the_same_bytes_sending_nothing(
    render_suite, tmp_path
):
    ahead = Layout(render_suite(SUITE, SUITE))
    timeline = Timeline()
    with FakeOpenAI(timeline, latency=0.15) as server:
        plan_judges = judges(server)
        asked = llm_judges(plan_judges)
        assert list(asked) == ["gpt-4o"]  # rules have nothing to ask ahead
        outcome, failure = generate_judging_ahead(
            ahead, FAMILY, SUITE, "m", model(server), tmp_path / "ahead.sqlite", 0.0, asked
        )
        assert failure is None and outcome.total == 5
        generated = [at for at, is_judge in timeline.arrivals if not is_judge]
        asked_ahead = [at for at, is_judge in timeline.arrivals if is_judge]
        assert len(generated) == 5 and asked_ahead and min(asked_ahead) < max(generated)  # before the last reply
        sent = server.count()
        judge_cell(ahead, FAMILY, SUITE, "m", "gpt-4o", plan_judges["gpt-4o"], tmp_path / "ahead.sqlite", 1.0)
        assert server.count() == sent  # every request was asked ahead, the answer slots the rules missed too

        # the same cell, generated then judged, each with a cache of its own
        alone = Layout(tmp_path / "alone" / "outputs")
        (alone.suite(FAMILY, SUITE)).parent.mkdir(parents=True)
        (alone.suite(FAMILY, SUITE)).symlink_to(ahead.suite(FAMILY, SUITE))
        generate_cell(alone, FAMILY, SUITE, "m", model(server), tmp_path / "alone.sqlite", 0.0)
        sent = server.count()
        judge_cell(alone, FAMILY, SUITE, "m", "gpt-4o", plan_judges["gpt-4o"], tmp_path / "alone.sqlite", 1.0)
        slots = [body for body in server.requests[sent:] if r"{\"equivalent\"" in json.dumps(body["messages"])]
        assert slots  # the sample's demo answers miss slots: the rules' tasks were asked ahead, not only the criteria
    assert judged(ahead, "gpt-4o") == judged(alone, "gpt-4o")
    assert ahead.generations(FAMILY, SUITE, "m").read_bytes() == alone.generations(FAMILY, SUITE, "m").read_bytes()


def test_a_judge_that_cannot_serve_is_left_to_its_stage_and_the_generation_goes_on(render_suite, tmp_path, caplog):
    layout = Layout(render_suite(SUITE, SUITE))
    with FakeOpenAI() as server:
        down = llm_judges(judges(server, base_url="http://127.0.0.1:9/v1"))  # nothing listens there
        outcome, failure = generate_judging_ahead(
            layout, FAMILY, SUITE, "m", model(server), tmp_path / "cache.sqlite", 0.0, down
        )
        assert failure is None and outcome.total == 5 and server.count() == 5  # the generations alone
    assert "judge 'gpt-4o' is not asked ahead" in caplog.text and "connection refused" in caplog.text
    assert layout.generations(FAMILY, SUITE, "m").is_file()


def test_a_judge_whose_config_fails_its_checks_is_not_asked_ahead(caplog):
    broken = OmegaConf.create({"kind": "llm", "judges": {}})
    assert llm_judges({"broken": broken}) == {}
    assert "judge 'broken' is not asked ahead" in caplog.text


def test_judging_ahead_is_no_code_of_the_generate_stage():
    """It writes nothing the stage outputs: editing the judges' code reruns no generation."""
    code = code_of("stages/generate.py", ROOT, "hipho")
    assert "src/olympiad_eval/stages/ahead.py" not in code and "src/olympiad_eval/stages/judge.py" not in code
    assert not [path for path in code if "benchmarks" in path]
    assert Path(ROOT / "src/olympiad_eval/stages/ahead.py").is_file()
