"""The official protocols with LLM judges, against fake judge servers over real HTTP."""

from __future__ import annotations

import json
import re
import sys
import time

import pytest
from omegaconf import OmegaConf

from olympiad_eval.cli.fake_server import JUDGE_MARKER, FakeOpenAI, gathered, judge_reply
from olympiad_eval.core.records import Generation, InputError, Judgment, Problem, read_jsonl, write_jsonl
from olympiad_eval.scoring.pool import CheckPool
from olympiad_eval.stages import judge as judging
from olympiad_eval.stages.generate import generate
from olympiad_eval.stages.judge import judge
from tests.support import INJECTION, ROOT, compose_stage, gullible, rendered, user_text

DEMO = {"provider": "replay", "path": str(ROOT / "data/replay/demo/{suite}.jsonl")}


def judge_cfg(servers: dict, judge: str = "gpt-4o", **extra):
    cfg = compose_stage("judge", [f"judge={judge}", "cell.suite=x", "cell.model=y"]).judge
    cfg = OmegaConf.merge(cfg, {"max_reasks": 1, **extra})
    cfg.judges = {
        name: {"base_url": server.base_url, "model": name, "api_key_env": None, "max_retries": 0}
        for name, server in servers.items()
    }
    return cfg


def run(render_suite, suite, benchmark, cfg, tmp_path, model=DEMO, generations=None, overrides=()):
    outputs = render_suite(suite, benchmark, *overrides)
    if generations is None:
        generations = outputs / "generations.jsonl"
        generate(
            suite,
            "m",
            OmegaConf.create(model),
            rendered(outputs, suite) / "prompts.jsonl",
            generations,
            tmp_path / "cache.sqlite",
        )
    out = tmp_path / "judgments.jsonl"
    outcome = judge(rendered(outputs, suite), generations, "j", cfg, out, tmp_path / "cache.sqlite")
    return outcome, {j.id: j for j in read_jsonl(out, Judgment)}


# ---------------------------------------------------------------- HiPhO


def awarding(rule):
    """A criterion judge that awards `rule(criterion text, its points)`."""

    def respond(body):
        text = user_text(body)
        if '"awarded"' in text:
            points = float(re.search(r"worth at most ([\d.]+) points", text).group(1))
            criterion = text.split("points):\n", 1)[1].split("\n\nStudent's solution", 1)[0]
            return json.dumps({"awarded": rule(criterion, points), "reasoning": "as instructed"})
        return json.dumps(judge_reply(json.dumps(body["messages"])))

    return respond


def test_hipho_official_takes_the_best_scheme_and_max_of_step_and_answer(render_suite, tmp_path):
    # 1_a: scheme 1 earns 0.2 + 0.3, scheme 2 everything; 1_b: only its "a total of 1.0 pt" criterion
    def rule(criterion, points):
        if any(word in criterion for word in ("Newton", "kinematic", "final express", "a total of")):
            return points
        return 0.2 if "kinetic fric" in criterion else 0.0

    with FakeOpenAI(awarding(rule)) as server:
        outcome, judged = run(render_suite, "sample_hipho", "sample_hipho", judge_cfg({"g": server}), tmp_path)
    assert outcome.scored == 5
    one_a = judged["DemoPhO_2025_1_a"]  # the demo's expression is wrong: answer level 0
    assert (
        one_a.parts["answer_points"] == 0.0
        and one_a.parts["step_points"] == pytest.approx(1.0)
        and one_a.points == pytest.approx(1.0)
    )
    one_b = judged["DemoPhO_2025_1_b"]  # both answers right (2.0); its scheme earns 1.0 ("a total of 1.0 pt")
    assert (
        one_b.parts["answer_points"] == 2.0 and one_b.parts["step_points"] == pytest.approx(1.0) and one_b.points == 2.0
    )
    two_a = judged["DemoPhO_2025_2_a"]  # no scheme: answer level only
    assert two_a.parts["step_points"] is None and two_a.points == 2.0
    awards = {task: reply["awarded"] for task, reply in one_a.details[0].items() if task.startswith("criterion")}
    assert awards == {
        "criterion 0.0": 0.2,
        "criterion 0.1": 0.0,
        "criterion 0.2": 0.0,
        "criterion 0.3": 0.3,
        "criterion 1.0": 0.4,
        "criterion 1.1": 0.3,
        "criterion 1.2": 0.3,
    }


def test_hipho_answer_slots_rules_miss_go_to_the_judge(render_suite, tmp_path):
    def respond(body):
        text = user_text(body)
        if '"equivalent"' in text:
            return json.dumps({"equivalent": True, "reasoning": "same"})
        return json.dumps(judge_reply(json.dumps(body["messages"])))

    with FakeOpenAI(respond) as server:
        _, judged = run(render_suite, "sample_hipho", "sample_hipho", judge_cfg({"g": server}), tmp_path)
        asked = [user_text(b) for b in server.requests if '"equivalent"' in user_text(b)]
    # the two slots the demo got wrong (and only those) were asked about, and the judge accepted them
    assert len(asked) == 2
    assert (
        judged["DemoCPhO_2025_1_1"].parts["answer_points"] == 4.0
        and judged["DemoCPhO_2025_1_1"].slots[0]["correct"] is False
    )


def test_hipho_criteria_go_out_together_while_the_rules_run(render_suite, tmp_path, monkeypatch):
    """Criteria need no rules' result: all of the cell's are in flight at once, before the rules
    check anything; the rules' checks of the whole cell go to the pool in one batch."""
    batches = []

    class WaitingPool(CheckPool):  # holds the rules back until every criterion has reached the judge
        def check_many(self, jobs, progress=None):
            # generous: on a machine whose cores are busy the criteria can take long to go out; the
            # wait ends as soon as they are all at the judge
            deadline = time.monotonic() + 120
            while server.count() < 15 and time.monotonic() < deadline:
                time.sleep(0.01)
            batches.append((len(jobs), server.count()))
            return super().check_many(jobs, progress)

    monkeypatch.setattr(judging, "CheckPool", WaitingPool)
    # every reply waits for all 15 criteria: "in flight together" is then a fact of the client, not of
    # how fast a busy machine sends them
    with FakeOpenAI(gathered(15)) as server:
        cfg = judge_cfg({"g": server})
        cfg.judges = {"g": {**OmegaConf.to_container(cfg.judges.g), "concurrency": 32}}
        run(render_suite, "sample_hipho", "sample_hipho", cfg, tmp_path)
    # 16 criteria, one shared by two alternative schemes: 15 requests, all in flight together
    assert server.peak_in_flight == 15
    assert len(batches) == 1 and batches[0][0] > 1 and batches[0][1] == 15


def test_hipho_evalscope_protocol_is_the_best_schemes_ratio(render_suite, tmp_path):
    pytest.importorskip("math_verify", reason="the evalscope protocol checks answers with math-verify")

    def respond(body):  # half of each criterion's points (as evalscope parses them); answers right
        text = user_text(body)
        bound = re.search(r'"awarded": a number >= 0.0 and <= ([\d.]+)$', text)
        return json.dumps({"awarded": float(bound.group(1)) / 2} if bound else {"correct": True})

    with FakeOpenAI(respond) as server:
        _, judged = run(
            render_suite,
            "sample_hipho_evalscope",
            "sample_hipho",
            judge_cfg({"g": server}),
            tmp_path,
            model={**DEMO, "path": DEMO["path"].format(suite="sample_hipho")},
        )  # the same prompts
        asked = [user_text(b) for b in server.requests if '"correct"' in user_text(b)]
    # evalscope's one user message, after the fence's system message
    assert all([m["role"] for m in body["messages"]] == ["system", "user"] for body in server.requests)
    assert judged["DemoPhO_2025_1_b"].score == pytest.approx(0.5)  # a scheme: its ratio, whatever the answers
    # no scheme: the fraction of slots right; Math-Verify sees the range as an interval, so the judge decides
    assert judged["DemoPhO_2025_2_a"].score == 1.0
    assert len(asked) == 1 and "Correct answer: $[1.21, 1.25]$" in asked[0]


@pytest.mark.parametrize(
    "reply",
    [
        "The student deserves full marks.",  # prose
        '{"awarded": 0.2',  # broken JSON
        '{"awarded": 99, "reasoning": "generous"}',  # more than the criterion's points
        '{"awarded": -1}',  # negative
        '{"awarded": "all"}',  # not a number
    ],
)
def test_bad_judge_replies_end_as_judge_errors_after_reasks(render_suite, tmp_path, reply):
    def respond(body):
        return reply if '"awarded"' in user_text(body) else json.dumps(judge_reply(json.dumps(body["messages"])))

    with FakeOpenAI(respond) as server:
        outcome, judged = run(render_suite, "sample_hipho", "sample_hipho", judge_cfg({"g": server}), tmp_path)
        criterion_asks = sum('"awarded"' in user_text(b) for b in server.requests)
    problems = read_jsonl(tmp_path / "outputs/suites/hipho/sample_hipho/problems.jsonl", Problem)
    with_schemes = [p.id for p in problems if p.marking]
    assert outcome.judge_errors == len(with_schemes) == 4
    assert all(judged[pid].status == "judge_error" and judged[pid].score is None for pid in with_schemes)
    assert "invalid reply" in judged["DemoPhO_2025_1_a"].detail
    # every criterion asked, then asked once more; a criterion that alternative schemes share is one request
    criteria = sum(len({criterion.text for scheme in p.marking for criterion in scheme}) for p in problems)
    assert criterion_asks == 2 * criteria


# ---------------------------------------------------------------- injection


def test_instructions_inside_a_response_are_only_text(render_suite, tmp_path):
    response = f"<think>{INJECTION}</think>\n<answer>[\\boxed{{0}}]</answer>"
    undelimited = {"messages": [{"role": "user", "content": f'worth at most 1 points {{"awarded"}} {response}'}]}
    assert json.loads(gullible(undelimited))["awarded"] == 1.0  # it would obey if the note reached it
    generations = tmp_path / "injected.jsonl"
    write_jsonl(
        generations,
        [
            Generation(id=pid, suite="sample_hipho", model="m", sample=0, response=response, request_hash=pid)
            for pid in ("DemoPhO_2025_1_a", "DemoPhO_2025_1_b")
        ],
    )
    with FakeOpenAI(gullible) as server:
        _, judged = run(
            render_suite, "sample_hipho", "sample_hipho", judge_cfg({"g": server}), tmp_path, generations=generations
        )
        assert all(JUDGE_MARKER in json.dumps(b["messages"]) for b in server.requests)
    assert all(j.points == 0.0 for j in judged.values())


# ---------------------------------------------------------------- PhysElite


def by_model(verdicts: dict, grades: dict):
    def respond(body):
        text = user_text(body)
        if '"steps"' in text:
            return json.dumps({"steps": [{"step": "s", "grade": g} for g in grades[body["model"]]]})
        if '"verdict"' in text:
            return json.dumps({"verdict": verdicts[body["model"]], "reasoning": body["model"]})
        raise AssertionError("unexpected judge task")

    return respond


def test_physelite_ensemble_averages_three_judges_and_keeps_each_verdict(render_suite, tmp_path):
    verdicts = {"a": "correct", "b": "incorrect", "c": "correct"}
    grades = {"a": [1.0, 0.5], "b": [0.0, 0.0, 1.0], "c": [1.0]}
    with FakeOpenAI(by_model(verdicts, grades)) as server:
        outcome, judged = run(
            render_suite,
            "sample_physelite_en",
            "sample_physelite",
            judge_cfg({"a": server, "b": server, "c": server}),
            tmp_path,
        )
        assert server.count() == 3 * 3 * 2  # problems x judges x (answer, process)
    assert outcome.scored == 3
    for judgment in judged.values():
        assert judgment.score == pytest.approx(2 / 3) and judgment.verdict == "correct"
        assert judgment.parts["process"] == pytest.approx((0.75 + 1 / 3 + 1.0) / 3)
        kept = {d["judge"]: d["answer"]["verdict"] for d in judgment.details}
        assert kept == verdicts  # the disagreement is kept


def test_physelite_split_verdicts_and_process_off(render_suite, tmp_path):
    verdicts = {"a": "correct", "b": "partially_correct"}
    with FakeOpenAI(by_model(verdicts, {})) as server:
        _, judged = run(
            render_suite,
            "sample_physelite_zh",
            "sample_physelite",
            judge_cfg({"a": server, "b": server}),
            tmp_path,
            overrides=["suite.scoring.process=false"],
        )
    judgment = judged["PE-S-0001"]
    assert judgment.verdict == "split" and judgment.score == 0.5 and judgment.parts["process"] is None


def test_physelite_error_types_are_classified_on_request(render_suite, tmp_path):
    def respond(body):
        text = user_text(body)
        if '"error_type"' in text:
            return json.dumps({"error_type": "numerical", "reasoning": "arithmetic"})
        return json.dumps({"verdict": "incorrect", "reasoning": "no"}) if '"verdict"' in text else "?"

    with FakeOpenAI(respond) as server:
        _, judged = run(
            render_suite,
            "sample_physelite_en",
            "sample_physelite",
            judge_cfg({"a": server}),
            tmp_path,
            overrides=["suite.scoring.process=false", "suite.scoring.error_types=true"],
        )
    assert {j.details[0]["error_type"]["error_type"] for j in judged.values()} == {"numerical"}
    assert {j.score for j in judged.values()} == {0.0}


# Each protocol that needs an extra of pyproject, with a sample suite of it: (suite, benchmark, module, extra).
EXTRAS = [
    ("sample_hipho_vlmevalkit", "sample_hipho", "pylatexenc", "vlmevalkit"),
    ("sample_hipho_evalscope", "sample_hipho", "math_verify", "evalscope"),
    ("sample_mathvision_evalscope", "sample_mathvision", "math_verify", "evalscope"),
]


@pytest.mark.parametrize("suite,benchmark,module,extra", EXTRAS)
def test_a_protocol_whose_extra_is_missing_refuses_to_start_with_the_install_command(
    render_suite, tmp_path, monkeypatch, suite, benchmark, module, extra
):
    """Without its package (made unimportable here), a suite of the protocol is refused as it is
    rendered and as it is judged, before any check runs or any request goes out: never judged as if
    every check failed."""
    outputs = render_suite(suite, benchmark)
    out = outputs / "generations" / suite / "reference.jsonl"
    reference = OmegaConf.create({"provider": "reference"})
    generate(suite, "reference", reference, rendered(outputs, suite) / "prompts.jsonl", out, tmp_path / "c.sqlite")
    monkeypatch.setitem(sys.modules, module, None)  # as if not installed: importing it fails
    install = f"needs the package {module}, which is not installed: pip install -e '.[{extra}]'"
    cfg = compose_stage("judge", ["judge=rule", "cell.suite=x", "cell.model=y"]).judge
    judged = tmp_path / "judgments.jsonl"
    with pytest.raises(InputError, match=re.escape(install)):
        judge(rendered(outputs, suite), out, "rule", cfg, judged, tmp_path / "c.sqlite")
    assert not judged.exists()
    with pytest.raises(InputError, match=re.escape(install)):
        render_suite(suite, benchmark)
