"""Judging: rules offline, an LLM judge over real HTTP, and errors kept as errors."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from dataclasses import replace

import pytest
from omegaconf import OmegaConf

from olympiad_eval.benchmarks import plugin
from olympiad_eval.benchmarks.base import ContractError, JudgeTask
from olympiad_eval.benchmarks.physelite.judging import parse_verdict
from olympiad_eval.cli.fake_server import FakeOpenAI, Fault, default_responder, gathered
from olympiad_eval.core.layout import Layout
from olympiad_eval.core.records import Generation, InputError, Judgment, Problem, read_jsonl, write_jsonl
from olympiad_eval.llm.cache import RequestCache, utc_now
from olympiad_eval.llm.transport import EndpointError
from olympiad_eval.scoring.checks import Options, Verdict
from olympiad_eval.stages.generate import generate
from olympiad_eval.stages.judge import _later_rounds, check_options, judge, judge_cell
from tests.support import ROOT, compose_stage, render_sample, rendered, suite_scoring

SUITES = [
    ("sample_hipho", "sample_hipho"),
    ("sample_mathvision", "sample_mathvision"),
    ("sample_physelite_en", "sample_physelite"),
    ("sample_physelite_zh", "sample_physelite"),
]


def generate_with(outputs, suite, name, cfg):
    out = outputs / "generations" / suite / f"{name}.jsonl"
    generate(
        suite,
        name,
        OmegaConf.create(cfg),
        rendered(outputs, suite) / "prompts.jsonl",
        out,
        outputs.parent / "cache.sqlite",
    )
    return out


def judge_with(outputs, suite, generations, judge_name="rule", cfg=None):
    cfg = (
        cfg
        if cfg is not None
        else compose_stage("judge", [f"judge={judge_name}", "cell.suite=x", "cell.model=y"]).judge
    )
    out = outputs / "judgments" / f"{suite}-{judge_name}.jsonl"
    outcome = judge(rendered(outputs, suite), generations, judge_name, cfg, out, outputs.parent / "cache.sqlite")
    return outcome, {(j.id, j.sample): j for j in read_jsonl(out, Judgment)}


@pytest.mark.parametrize("suite,benchmark", SUITES)
def test_the_reference_model_scores_full_marks_on_every_problem(render_suite, suite, benchmark):
    outputs = render_suite(suite, benchmark)
    generations = generate_with(outputs, suite, "reference", {"provider": "reference"})
    outcome, judgments = judge_with(outputs, suite, generations)
    assert outcome.scored == outcome.total > 0
    assert outcome.summary().endswith("(coverage 100.0%); no requests (rules only)")  # what it sent, as generation says
    assert all(j.score == 1.0 and j.points == j.max_points for j in judgments.values())


UNDECIDED = Verdict(None, "check exceeded its CPU budget of 10 s")


@pytest.mark.parametrize(
    "suite,benchmark",
    [
        ("sample_hipho", "sample_hipho"),
        ("sample_physelite_en", "sample_physelite"),
        ("sample_mathvision_evalscope", "sample_mathvision"),
    ],
)
def test_every_benchmark_counts_an_undecided_check_as_not_matched_and_records_it(render_suite, suite, benchmark):
    """Each benchmark's rules, given checks that could not finish: nothing earned, each check on
    record in `undecided`, and never `unscorable` (which would make the rule judge's judgment a
    judge error and fail the cell)."""
    outputs = render_suite(suite, benchmark)
    info = json.loads((rendered(outputs, suite) / "suite.json").read_text())
    bench, scoring = plugin(info["kind"]), OmegaConf.create(info["scoring"])
    reference = generate_with(outputs, suite, "reference", {"provider": "reference"})
    problems = {p.id: p for p in read_jsonl(rendered(outputs, suite) / "problems.jsonl", Problem)}
    asked = 0
    for generation in read_jsonl(reference, Generation):
        checks = bench.rule_checks(problems[generation.id], generation.response, scoring)
        if not checks:  # decided without a check (evalscope's MATH-Vision multiple choice)
            continue
        grade = bench.rule_score(problems[generation.id], generation.response, scoring, [UNDECIDED] * len(checks))
        assert (grade.points, grade.unscorable) == (0.0, ""), generation.id
        assert len(grade.undecided) == len(checks), generation.id
        assert all("check exceeded its CPU budget of 10 s" in reason for reason in grade.undecided)
        asked += len(checks)
    assert asked


def test_rules_award_each_hipho_answer_slot_its_points(render_suite):
    outputs = render_suite("sample_hipho", "sample_hipho")
    generations = generate_with(
        outputs, "sample_hipho", "demo", {"provider": "replay", "path": str(ROOT / "data/replay/demo/{suite}.jsonl")}
    )
    _, judgments = judge_with(outputs, "sample_hipho", generations)
    points = {key[0]: j.points for key, j in judgments.items()}
    # the demo model: wrong expression, two right numbers, inside the range, wrong work, right choice
    assert points == {
        "DemoPhO_2025_1_a": 0.0,
        "DemoPhO_2025_1_b": 2.0,
        "DemoPhO_2025_2_a": 2.0,
        "DemoCPhO_2025_1_1": 0.0,
        "DemoCPhO_2025_2_1": 6.0,
    }
    assert [s["correct"] for s in judgments[("DemoPhO_2025_1_b", 0)].slots] == [True, True]


# Answer slots the rules cannot decide: no official answer to compare with, however the release writes it.
OPEN_ENDED = ["", "   ", "\\boxed{}", "\\boxed{$$}", "\\boxed{$ $}", "$$"]


@pytest.mark.parametrize("gold", OPEN_ENDED)
def test_a_hipho_slot_the_rules_cannot_decide_leaves_the_response_undecided_never_a_zero(render_suite, gold):
    """With rules alone, a response to a problem with an open-ended slot is not scored: a judge error
    that says why and records it in `undecided`, so that coverage drops and the tables count it; the
    cell does not fail `min_coverage` for it (no rerun would change it), and the rest are scored."""
    outputs = render_suite("sample_hipho", "sample_hipho")
    suite_dir = rendered(outputs, "sample_hipho")
    problems = read_jsonl(suite_dir / "problems.jsonl", Problem)
    opened = problems[0].id
    slot = replace(problems[0].answers[0], value=gold)
    opened_problem = replace(problems[0], answers=(slot, *problems[0].answers[1:]))
    write_jsonl(suite_dir / "problems.jsonl", [opened_problem, *problems[1:]])
    generations = generate_with(outputs, "sample_hipho", "reference", {"provider": "reference"})
    outcome, judgments = judge_with(outputs, "sample_hipho", generations)
    left = judgments[(opened, 0)]
    assert left.status == "judge_error" and left.points is None
    assert left.detail.startswith("rules could not decide: answer slot 1 of") and "open-ended" in left.detail
    assert len(left.undecided) == 1 and "open-ended" in left.undecided[0]
    assert all(j.status == "scored" and j.score == 1.0 for key, j in judgments.items() if key[0] != opened)
    assert outcome.coverage == (len(problems) - 1) / len(problems) and outcome.undecided == 1
    assert outcome.left_undecided == 1 and outcome.judge_errors == 1
    assert "1 undecided checks" in outcome.summary()
    layout = Layout(outputs)  # as the judge stage judges the cell: min_coverage 1.0 is not failed by it
    layout.generations("hipho", "sample_hipho", "reference").parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(generations, layout.generations("hipho", "sample_hipho", "reference"))
    rule = compose_stage("judge", ["judge=rule", "cell.suite=x", "cell.model=y"]).judge
    cache = outputs / "c.sqlite"
    outcome, failure = judge_cell(layout, "hipho", "sample_hipho", "reference", "rule", rule, cache, 1.0)
    assert failure is None and "1 judge errors" in outcome.summary()


def test_failed_and_truncated_generations_are_counted_not_scored(render_suite, tmp_path):
    outputs = render_suite("sample_physelite_en", "sample_physelite")
    path = tmp_path / "generations.jsonl"
    write_jsonl(
        path,
        [
            Generation(
                id="PE-S-0001",
                suite="sample_physelite_en",
                model="m",
                sample=0,
                response=None,
                request_hash="a",
                error="HTTP 400: context length exceeded",
            ),
            Generation(
                id="PE-S-0002",
                suite="sample_physelite_en",
                model="m",
                sample=0,
                response="FINAL ANSWER: 1",
                request_hash="b",
                finish_reason="length",
            ),
        ],
    )
    outcome, judgments = judge_with(outputs, "sample_physelite_en", path)
    failed, truncated = judgments[("PE-S-0001", 0)], judgments[("PE-S-0002", 0)]
    assert outcome.generation_errors == 1 and failed.status == "generation_error"
    assert failed.score is None and failed.points is None and "HTTP 400" in failed.detail
    assert truncated.status == "scored" and truncated.truncated and truncated.score == 0.0


NO_PROCESS = "suite.scoring.process=false"  # PhysElite's answer verdict only: one request per response


def llm_judge_cfg(base_url: str, max_reasks: int = 2, **extra):
    cfg = compose_stage("judge", ["judge=gpt-4o", "cell.suite=x", "cell.model=y"]).judge
    return OmegaConf.merge(
        cfg,
        {
            "judges": {"gpt-4o": {"base_url": base_url, "api_key_env": None, "max_retries": 0}},
            "max_reasks": max_reasks,
            **extra,
        },
    )


def test_the_llm_judge_sees_reference_solution_and_response(render_suite, fake_openai):
    outputs = render_suite("sample_physelite_en", "sample_physelite", NO_PROCESS)
    generations = generate_with(outputs, "sample_physelite_en", "reference", {"provider": "reference"})
    outcome, judgments = judge_with(
        outputs, "sample_physelite_en", generations, "gpt-4o", llm_judge_cfg(fake_openai.base_url)
    )
    assert outcome.scored == 3 and fake_openai.count() == 3
    assert {j.verdict for j in judgments.values()} == {"correct"}
    prompt = fake_openai.requests[0]["messages"][1]["content"]
    assert "Reference Answer" in prompt and "Reference Solution" in prompt and "FINAL ANSWER:" in prompt
    # the log's line says what was sent, as generation's does; judged again, every reply comes from the cache
    cost = outcome.usage["cost_usd"]  # at conf/judge/gpt-4o.yaml's prices
    assert cost > 0 and outcome.summary().endswith(f"; 3 requests sent (0 retries), cost of this run ${cost:.4f}")
    again, _ = judge_with(outputs, "sample_physelite_en", generations, "gpt-4o", llm_judge_cfg(fake_openai.base_url))
    assert fake_openai.count() == 3
    assert again.summary().endswith(
        f"; 0 requests sent (0 retries), cost of this run $0.0000; 3 replies from the request cache, worth ${cost:.4f} "
        "when sent (not paid again)"
    )


def test_a_judge_cell_records_its_tokens_and_cost_at_its_endpoints_prices(render_suite, capfd, monkeypatch):
    """Each distinct request once (HiPhO's alternative schemes share criteria: asked once, paid
    once), costed at the judge endpoint's `prices`, shown in the progress bar, and the same from
    the request cache on a rerun."""
    from olympiad_eval.stages import judge as judging

    shown = judging.tqdm  # the bars show on a terminal only: here, as if on one
    monkeypatch.setattr(judging, "tqdm", lambda *args, **kwargs: shown(*args, **{**kwargs, "disable": False}))
    outputs = render_suite("sample_hipho", "sample_hipho")
    generations = generate_with(outputs, "sample_hipho", "reference", {"provider": "reference"})
    prices = {"judges": {"gpt-4o": {"prices": {"input": 2.0, "output": 8.0}}}}
    with FakeOpenAI() as server:
        before = utc_now()
        outcome, _ = judge_with(
            outputs, "sample_hipho", generations, "gpt-4o", OmegaConf.merge(llm_judge_cfg(server.base_url), prices)
        )
        usage = outcome.usage
        span = usage["replies_received"]  # read back on the rerun below: the same dates
        assert before <= span["first"] <= span["last"] <= utc_now()
        assert usage["requests"] == usage["answered"] == server.count() > 0
        assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
        expected = (usage["prompt_tokens"] * 2.0 + usage["completion_tokens"] * 8.0) / 1e6
        assert usage["cost_usd"] == pytest.approx(expected, abs=1e-6)
        assert f"cost=${expected:.4f}" in capfd.readouterr().err  # the progress bar's last state
        again, _ = judge_with(
            outputs, "sample_hipho", generations, "gpt-4o", OmegaConf.merge(llm_judge_cfg(server.base_url), prices)
        )
        assert server.count() == usage["requests"] and again.usage == usage


def test_a_rule_judge_cell_records_no_usage(render_suite):
    outputs = render_suite("sample_hipho", "sample_hipho")
    generations = generate_with(outputs, "sample_hipho", "reference", {"provider": "reference"})
    outcome, _ = judge_with(outputs, "sample_hipho", generations)
    assert outcome.usage["requests"] == outcome.usage["prompt_tokens"] == outcome.usage["cost_usd"] == 0
    assert "replies_received" not in outcome.usage  # no request: no dates, and the bytes of before


def test_an_ensembles_dates_span_its_sending_judges():
    from olympiad_eval.llm.usage import usage_totals
    from olympiad_eval.stages.judge import judges_usage

    early = {
        **usage_totals([], {}),
        "replies_received": {"first": "2026-01-02T00:00:00Z", "last": "2026-01-03T00:00:00Z"},
    }
    late = {
        **usage_totals([], {}),
        "replies_received": {"first": "2026-01-01T00:00:00Z", "last": "2026-01-02T12:00:00Z"},
    }
    undated = {**usage_totals([], {}), "replies_received": None}  # a cache from before dates
    offline = usage_totals([], {})
    assert judges_usage([early, late, undated, offline])["replies_received"] == {
        "first": "2026-01-01T00:00:00Z",
        "last": "2026-01-03T00:00:00Z",
    }
    assert judges_usage([undated, offline])["replies_received"] is None
    assert "replies_received" not in judges_usage([offline, offline])


def test_an_invalid_judge_reply_is_reasked_then_recorded_as_a_judge_error(render_suite):
    outputs = render_suite("sample_physelite_en", "sample_physelite", NO_PROCESS)
    generations = generate_with(outputs, "sample_physelite_en", "reference", {"provider": "reference"})
    with FakeOpenAI(lambda body: "I think it is probably right.") as server:
        outcome, judgments = judge_with(
            outputs, "sample_physelite_en", generations, "gpt-4o", llm_judge_cfg(server.base_url, max_reasks=2)
        )
        assert server.count() == 3 * 3  # one ask and two re-asks per response
    assert outcome.judge_errors == 3 and outcome.coverage == 0.0
    assert all(j.status == "judge_error" and j.score is None for j in judgments.values())


# What a judge writes around the JSON object its schema asks for: LaTeX braces, prose in braces,
# another object, a fence. Each reply must read as the bare object does, on its first ask.
AROUND_JSON = {
    "latex-before": lambda reply: f"Comparing $\\frac{{1}}{{2}}$ with \\boxed{{3}}: {reply}",
    "latex-around-a-fence": lambda reply: (
        f"The response's \\boxed{{\\dfrac{{3}}{{8}}}}:\n```json\n{reply}\n```\n$x^{{2}}$"
    ),
    "broken-json-before": lambda reply: f'{{the first step}} is sound; {{"verdict": }} {reply}',
    "another-object-before": lambda reply: f'{{"note": "no schema field here"}}\n{reply}',
}


@pytest.mark.parametrize("around", AROUND_JSON)
@pytest.mark.parametrize(
    "suite,benchmark", [("sample_physelite_en", "sample_physelite"), ("sample_hipho", "sample_hipho")]
)
def test_a_judge_reply_with_braces_before_its_json_is_read_on_the_first_ask(render_suite, around, suite, benchmark):
    outputs = render_suite(suite, benchmark)
    generations = generate_with(
        outputs, suite, "demo", {"provider": "replay", "path": str(ROOT / "data/replay/demo/{suite}.jsonl")}
    )
    read = {}
    for name, responder in {
        "bare": default_responder,
        around: lambda body: AROUND_JSON[around](default_responder(body)),
    }.items():
        with FakeOpenAI(responder) as server:
            outcome = judge(
                rendered(outputs, suite),
                generations,
                "gpt-4o",
                llm_judge_cfg(server.base_url, max_reasks=2),
                outputs / f"{name}.jsonl",
                outputs.parent / f"{name}.sqlite",
            )
            asked = server.count()
        judgments = read_jsonl(outputs / f"{name}.jsonl", Judgment)
        read[name] = asked, outcome.judge_errors, [(j.id, j.status, j.points, j.score) for j in judgments]
    assert read["bare"][1] == 0 and read["bare"][0] > 0
    assert read[around] == read["bare"]


def test_a_request_that_failed_is_not_reasked(render_suite):
    """Re-asks are for replies that broke the schema: a failed request has had its retries."""
    outputs = render_suite("sample_physelite_en", "sample_physelite", NO_PROCESS)
    generations = generate_with(outputs, "sample_physelite_en", "reference", {"provider": "reference"})
    with FakeOpenAI(lambda body: Fault(503)) as server:
        cfg = OmegaConf.merge(
            llm_judge_cfg(server.base_url, max_reasks=2),  # no breaker: each
            {"judges": {"gpt-4o": {"max_consecutive_failures": 0}}},
        )  # task's asking is tested
        outcome, judgments = judge_with(outputs, "sample_physelite_en", generations, "gpt-4o", cfg)
        assert server.count() == 3  # one ask per response, no re-ask
    assert outcome.judge_errors == 3
    assert all(j.status == "judge_error" and j.detail.startswith("judge gpt-4o: HTTP 503") for j in judgments.values())


def test_a_judge_whose_endpoint_is_down_stops_the_cell_and_writes_nothing(render_suite):
    outputs = render_suite("sample_hipho", "sample_hipho")
    generations = generate_with(outputs, "sample_hipho", "reference", {"provider": "reference"})
    with pytest.raises(
        EndpointError,
        match=r"^judge 'gpt-4o' \('gpt-4o-2024-08-06' at http://127.0.0.1:9/v1\): "
        "connection refused",
    ):
        judge_with(outputs, "sample_hipho", generations, "gpt-4o", llm_judge_cfg("http://127.0.0.1:9/v1"))
    assert not (outputs / "judgments").exists()


def scripted_judge_cfg(**replies: str):
    """conf/judge/scripted.yaml, its reply for some schemas replaced (`verdict='{...}'`)."""
    cfg = compose_stage("judge", ["judge=scripted", "cell.suite=x", "cell.model=y"]).judge
    for rule in cfg.judges.scripted.replies:
        schema = rule.when.strip('{"')
        rule.reply = replies.get(schema, rule.reply)
    return cfg


def test_a_hipho_llm_judge_cell_runs_offline_through_a_scripted_judge(render_suite):
    """HiPhO's official protocol whole (every criterion, the answers the rules missed, max(step,
    answer) in points) with no server and no key: the script's replies decide what rules left open."""
    outputs = render_suite("sample_hipho", "sample_hipho")
    demo = generate_with(
        outputs, "sample_hipho", "demo", {"provider": "replay", "path": str(ROOT / "data/replay/demo/{suite}.jsonl")}
    )
    outcome, judgments = judge_with(outputs, "sample_hipho", demo, "scripted", scripted_judge_cfg())
    assert outcome.scored == outcome.total == 5
    # no criterion met, no missed answer equivalent: the points the rules gave (see the rules' test)
    assert {key[0]: j.points for key, j in judgments.items()} == {
        "DemoPhO_2025_1_a": 0.0,
        "DemoPhO_2025_1_b": 2.0,
        "DemoPhO_2025_2_a": 2.0,
        "DemoCPhO_2025_1_1": 0.0,
        "DemoCPhO_2025_2_1": 6.0,
    }
    said = judgments[("DemoCPhO_2025_1_1", 0)].details[0]
    assert said["judge"] == "scripted" and said["slot 0"] == {
        "equivalent": False,
        "reasoning": "Scripted: not the official answer.",
    }
    assert said["criterion 0.0"] == {"awarded": 0.0, "reasoning": "Scripted: the criterion is not met."}

    equivalent = scripted_judge_cfg(equivalent='{"equivalent": true, "reasoning": "Scripted: the same."}')
    outcome, judgments = judge_with(outputs, "sample_hipho", demo, "scripted", equivalent)
    # the two answers the rules missed (a wrong expression, a wrong number) now count: full marks
    assert {key[0]: (j.points, j.parts["answer_points"]) for key, j in judgments.items()} == {
        "DemoPhO_2025_1_a": (1.0, 1.0),
        "DemoPhO_2025_1_b": (2.0, 2.0),
        "DemoPhO_2025_2_a": (2.0, 2.0),
        "DemoCPhO_2025_1_1": (4.0, 4.0),
        "DemoCPhO_2025_2_1": (6.0, 6.0),
    }
    assert len(RequestCache(outputs.parent / "cache.sqlite")) == 0  # offline replies are never stored


def test_a_physelite_llm_judge_cell_runs_offline_through_a_scripted_judge(render_suite):
    """The answer judge's verdict is the score, whatever the rules say: every reference answer
    matches by the rules, yet a judge that calls them incorrect scores them 0."""
    outputs = render_suite("sample_physelite_en", "sample_physelite")
    generations = generate_with(outputs, "sample_physelite_en", "reference", {"provider": "reference"})
    cfg = scripted_judge_cfg(
        verdict='{"verdict": "incorrect", "reasoning": "Scripted: wrong."}',
        steps='{"steps": [{"step": "a", "grade": 1.0}, {"step": "b", "grade": 0.5}]}',
    )
    outcome, judgments = judge_with(outputs, "sample_physelite_en", generations, "scripted", cfg)
    assert outcome.scored == outcome.total == 3
    assert {(j.verdict, j.score) for j in judgments.values()} == {("incorrect", 0.0)}
    assert {j.parts["process"] for j in judgments.values()} == {0.75}


@pytest.mark.parametrize(
    "reply,verdict",
    [
        ('{"verdict": "correct", "reasoning": "ok"}', "correct"),
        ('Sure.\n{"verdict": "partially_correct", "reasoning": "one part"}', "partially_correct"),
        ('{"verdict": "right"}', None),
        ('{"verdict": "correct"', None),
        ("correct", None),
        (json.dumps(["correct"]), None),
    ],
)
def test_verdict_parsing(reply, verdict):
    parsed = parse_verdict(reply)
    assert (parsed["verdict"] if parsed else None) == verdict


def test_a_task_awaiting_an_identical_request_leaves_its_turn_to_the_next(tmp_path):
    """HiPhO's alternative marking schemes share criteria: the second asker of a criterion waits
    for the first one's reply without holding one of the endpoint's turns, so no turn idles."""
    import asyncio

    from olympiad_eval.benchmarks.base import JudgeTask
    from olympiad_eval.stages.judge import Asker, typed_judge

    def task(key: str, text: str) -> JudgeTask:
        return JudgeTask(key=key, messages=({"role": "user", "content": text},), parse=lambda reply: {"reply": reply})

    async def ask_all(server: FakeOpenAI) -> list:
        endpoint = OmegaConf.create(
            {"base_url": server.base_url, "model": "judge", "api_key_env": None, "concurrency": 2}
        )
        cache = RequestCache(tmp_path / "cache.sqlite")
        asker = Asker("judge", endpoint, typed_judge(OmegaConf.create({"kind": "llm", "max_reasks": 0}), "j"), cache)
        try:
            return await asyncio.gather(
                *(asker.grade(t, ("P1", 0)) for t in (task("a", "shared"), task("b", "shared"), task("c", "other")))
            )
        finally:
            await asker.close()
            cache.close()

    with FakeOpenAI(gathered(2, lambda body: "ok")) as server:  # "shared" waits until "other" arrives
        replies = asyncio.run(ask_all(server))
        assert server.count() == 2 and server.peak_in_flight == 2  # "other" went out beside "shared"
    assert replies == [{"reply": "ok"}] * 3


def test_an_openai_judge_keys_its_requests_as_it_always_has(tmp_path, monkeypatch):
    """Its provider's identity: endpoint and model, under `openai` (replies cached before are found)."""
    import asyncio

    from olympiad_eval.benchmarks.base import JudgeTask
    from olympiad_eval.llm.cache import request_key
    from olympiad_eval.stages.judge import Asker

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    cfg = compose_stage("judge", ["judge=gpt-4o", "cell.suite=x", "cell.model=y"]).judge
    cache = RequestCache(tmp_path / "cache.sqlite")
    asker = Asker("gpt-4o", cfg.judges["gpt-4o"], cfg, cache)
    try:
        identity = {"provider": "openai", "base_url": "https://api.openai.com/v1", "model": "gpt-4o-2024-08-06"}
        assert asker.identity == identity
        task = JudgeTask(key="t", messages=({"role": "user", "content": "Grade."},), parse=lambda reply: reply)
        assert asker.key(task, 1) == request_key(identity, task.messages, {"temperature": 0}, 1)
    finally:
        asyncio.run(asker.close())
        cache.close()


def test_a_suites_scoring_switches_answer_rules_on():
    assert check_options(suite_scoring("sample_physelite_en")) == Options()  # all off
    on = suite_scoring("sample_physelite_en", "+suite.scoring.check_options.percent=true")
    assert check_options(on) == Options(percent=True)
    with pytest.raises(
        InputError,
        match=r"suite 'sample_physelite_en' .*: scoring.check_options: unknown check "
        r"option 'percents'",
    ):
        suite_scoring("sample_physelite_en", "+suite.scoring.check_options.percents=true")


def test_the_cells_check_options_reach_every_check(tmp_path, monkeypatch):
    """`2400%` against the gold `24 m`: wrong by default, right where the suite reads `%` as a number."""
    monkeypatch.chdir(ROOT)
    rule = compose_stage(
        "judge", ["judge=rule", "cell.suite=x", "cell.model=y", "judge.workers=1", "judge.check_cpu_seconds=60"]
    ).judge  # a busy machine: never a timeout here
    verdicts = []
    for options in ([], ["+suite.scoring.check_options.percent=true"]):
        outputs = render_sample(
            tmp_path / f"outputs{len(verdicts)}", "sample_physelite_en", "sample_physelite", *options
        )
        suite = rendered(outputs, "sample_physelite_en")
        problem = next(p for p in read_jsonl(suite / "problems.jsonl", Problem) if p.answers[0].value == "24 m")
        generations = tmp_path / "generations.jsonl"
        write_jsonl(
            generations,
            [
                Generation(
                    id=problem.id,
                    suite="sample_physelite_en",
                    model="m",
                    sample=0,
                    response="FINAL ANSWER: 2400%",
                    request_hash="h",
                )
            ],
        )
        judge(suite, generations, "rule", rule, tmp_path / "judged.jsonl", tmp_path / "cache.sqlite")
        verdicts.append(read_jsonl(tmp_path / "judged.jsonl", Judgment)[0].slots[0]["correct"])
    assert verdicts == [False, True]


def test_a_refusal_scores_nothing_unjudged_and_is_marked(render_suite, tmp_path):
    outputs = render_suite("sample_physelite_en", "sample_physelite", NO_PROCESS)
    path = tmp_path / "generations.jsonl"
    reference = read_jsonl(
        generate_with(outputs, "sample_physelite_en", "reference", {"provider": "reference"}), Generation
    )
    write_jsonl(
        path,
        [
            Generation(
                id="PE-S-0001",
                suite="sample_physelite_en",
                model="m",
                sample=0,
                response=None,
                request_hash="a",
                refusal="I can't help with that.",
            ),
            # filtered midway: what came is kept, but never judged (it could hold the right answer)
            Generation(
                id="PE-S-0002",
                suite="sample_physelite_en",
                model="m",
                sample=0,
                response=reference[1].response,
                request_hash="b",
                finish_reason="content_filter",
                refusal="content filter",
            ),
            reference[2],
        ],
    )
    with FakeOpenAI() as server:
        outcome, judgments = judge_with(outputs, "sample_physelite_en", path, "gpt-4o", llm_judge_cfg(server.base_url))
        assert server.count() == 1  # only the answer went to the judge
    refused, filtered = judgments[("PE-S-0001", 0)], judgments[("PE-S-0002", 0)]
    assert outcome.refusals == 2 and outcome.scored == 3 and outcome.generation_errors == 0
    for judgment in (refused, filtered):
        assert judgment.status == "scored" and judgment.refused and judgment.score == 0.0 and judgment.points == 0.0
    assert refused.detail == "refused: I can't help with that." and filtered.detail == "refused: content filter"
    lines = (outputs / "judgments" / "sample_physelite_en-gpt-4o.jsonl").read_text(encoding="utf-8").splitlines()
    assert sum('"refused":true' in line for line in lines) == 2 and sum('"refused"' in line for line in lines) == 2


def test_a_judge_that_refuses_is_reasked_then_a_judge_error_naming_the_refusal(render_suite):
    outputs = render_suite("sample_physelite_en", "sample_physelite", NO_PROCESS)
    generations = generate_with(outputs, "sample_physelite_en", "reference", {"provider": "reference"})
    with FakeOpenAI(lambda body: {"content": None, "refusal": "I won't grade this."}) as server:
        outcome, judgments = judge_with(
            outputs, "sample_physelite_en", generations, "gpt-4o", llm_judge_cfg(server.base_url, max_reasks=1)
        )
        assert server.count() == 3 * 2
    assert outcome.judge_errors == 3 and outcome.refusals == 0
    assert all("refused: I won't grade this." in j.detail for j in judgments.values())


@pytest.mark.parametrize(
    "override, message",
    [
        (
            "judge.kind=rules",
            "judge 'rule' (conf/judge/rule.yaml or an override): kind: Invalid value 'rules', expected one "
            "of [rule, llm]",
        ),
        (
            "+judge.max_reask=3",
            "judge 'rule' (conf/judge/rule.yaml or an override): max_reask: Key 'max_reask' not in 'JudgeConfig'",
        ),
        ("judge.workers=two", "workers: Value 'two' of type 'str' could not be converted to Integer"),
        ("judge.workers=0", "workers must be an integer >= 1, got 0"),
        ("+judge.rel_tol=0.05", "rel_tol: Key 'rel_tol' not in 'JudgeConfig'"),  # a suite's setting (`scoring:`)
    ],
)
def test_a_judge_config_is_typed_naming_the_key(override, message):
    """A typo, a kind outside the choices, a value of the wrong type or out of range, a scoring
    setting where only its suite may set it: one line naming the file and the key."""
    from olympiad_eval.stages.judge import check_judge

    cfg = compose_stage("judge", ["judge=rule", "cell.suite=x", "cell.model=y", override]).judge
    with pytest.raises(InputError, match=re.escape(message)):
        check_judge(cfg, "rule")


def test_a_judge_configs_defaults_are_its_schemas():
    from olympiad_eval.stages.judge import JudgeConfig, typed_judge

    typed = typed_judge(OmegaConf.create({"kind": "llm"}), "j")
    assert (typed.workers, typed.check_cpu_seconds, typed.max_reasks, typed.settings, typed.judges) == (
        JudgeConfig.workers,
        JudgeConfig.check_cpu_seconds,
        JudgeConfig.max_reasks,
        {},
        {},
    )
    with pytest.raises(InputError, match=r"judge 'j' .*: kind must be set"):
        typed_judge(OmegaConf.create({"workers": 2}), "j")


# ---------------------------------------------------------------- later rounds (judge_tasks_next)


class _Rounds:
    """A protocol that asks task `k` once the reply to `k-1` is in, up to `last`; or asks `again`."""

    name = "rounds"

    def __init__(self, last: int, again: bool = False):
        self.last, self.again = last, again

    def judge_tasks_next(self, problem, response, rules, replies, scoring):
        if self.again and replies:
            return [JudgeTask("t0", (), lambda text: {"x": text})]
        asked = len(replies)
        return [JudgeTask(f"t{asked}", (), lambda text: {"x": text})] if asked <= self.last else []


class _Echo:
    def __init__(self):
        self.asked = []

    async def grade(self, task, key):
        self.asked.append(task.key)
        return {"x": task.key}


def test_later_rounds_are_asked_one_after_another_until_the_protocol_asks_none():
    judged, asker = {}, _Echo()
    problem = Problem(id="p", benchmark="b", language="en", question="q")
    asyncio.run(_later_rounds(_Rounds(2), problem, "r", None, judged, asker, None, ("p", 0)))
    assert asker.asked == ["t0", "t1", "t2"] and judged == {f"t{n}": {"x": f"t{n}"} for n in range(3)}


def test_a_task_asked_again_in_a_later_round_is_a_contract_error():
    problem = Problem(id="p", benchmark="b", language="en", question="q")
    with pytest.raises(ContractError, match="judge_tasks_next asked 't0' again about problem p"):
        asyncio.run(_later_rounds(_Rounds(5, again=True), problem, "r", None, {"t0": {}}, _Echo(), None, ("p", 0)))
