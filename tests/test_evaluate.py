"""The evaluate stage's logic (a model's cells of one benchmark): each part of a cell made only when
what made it changed, a part that fails recorded but not stamped while the other suites go on, and
what the plan no longer has removed from the model's folders."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from olympiad_eval.cli.fake_server import JUDGE_MARKER, FakeOpenAI, Fault, default_responder
from olympiad_eval.core.layout import Layout
from olympiad_eval.llm.transport import EndpointError
from olympiad_eval.stages.evaluate import Outcome, evaluate
from olympiad_eval.stages.generate import generate_cell
from olympiad_eval.stages.judge import judge_cell
from tests.support import ROOT, compose_stage

BENCHMARK = "sample_physelite"
SUITES = ("sample_physelite_en", "sample_physelite_zh")


def plan(judges=("rule",), suites=SUITES, models=("demo",)) -> dict:
    return {
        "suites": {suite: BENCHMARK for suite in suites},
        "benchmarks": [BENCHMARK],
        "family": {BENCHMARK: "physelite"},
        "models": list(models),
        "judges": list(judges),
    }


def judge_configs(names, **changed) -> dict:
    return {
        name: OmegaConf.merge(compose_stage("judge", [f"judge={name}", "cell.suite=x", "cell.model=y"]).judge, changed)
        for name in names
    }


def run(layout: Layout, the_plan: dict, model: str = "demo", model_cfg: dict | None = None, **judge_changes):
    cfg = compose_stage(
        "evaluate",
        [f"model={model}", f"cell.benchmark={BENCHMARK}", f"paths.outputs={layout.root}",
         f"paths.request_cache={layout.root.parent / 'cache.sqlite'}"],
    )  # fmt: skip
    if model_cfg is not None:
        cfg.model = OmegaConf.create(model_cfg)
    return evaluate(the_plan, layout, BENCHMARK, model, cfg, judge_configs(the_plan["judges"], **judge_changes), ROOT)


def made(outcome) -> set[str]:
    return {part.name for part in outcome.made if part.summary is not None}


def files(layout: Layout, model: str = "demo") -> dict[str, bytes]:
    folders = (
        layout.cells(BENCHMARK, model),
        layout.report_cell(BENCHMARK, model=model),
        layout.stamp(BENCHMARK, model=model),
    )
    return {
        path.relative_to(layout.root).as_posix(): path.read_bytes()
        for folder in folders
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


@pytest.fixture
def rendered(render_suite) -> Layout:
    for suite in SUITES:
        outputs = render_suite(suite, BENCHMARK)
    return Layout(outputs)


def test_a_second_run_makes_nothing_and_leaves_every_byte(rendered):
    first = run(rendered, plan())
    every = (
        {f"{s} x demo" for s in SUITES} | {f"{s} x demo x rule" for s in SUITES} | {f"{s} x demo pages" for s in SUITES}
    )
    assert made(first) == every and first.failures == []
    before = files(rendered)
    assert {path.split("/")[0] for path in before} == {"cells", "report", "stamps"}
    again = run(rendered, plan())
    assert made(again) == set() and again.summary() == "0 parts made, 6 up to date, 0 failed"
    assert files(rendered) == before


def test_an_edited_judge_redoes_its_judgments_and_the_pages_never_the_generations(rendered):
    run(rendered, plan())
    generations = {s: rendered.generations(BENCHMARK, s, "demo").read_bytes() for s in SUITES}
    edited = run(rendered, plan(), check_cpu_seconds=11)
    assert made(edited) == {f"{s} x demo x rule" for s in SUITES} | {f"{s} x demo pages" for s in SUITES}
    assert {s: rendered.generations(BENCHMARK, s, "demo").read_bytes() for s in SUITES} == generations


def test_a_judge_added_makes_its_own_judgments_and_the_pages(rendered):
    run(rendered, plan())
    added = run(rendered, plan(judges=("rule", "scripted")))
    assert made(added) == {f"{s} x demo x scripted" for s in SUITES} | {f"{s} x demo pages" for s in SUITES}
    assert rendered.judgments(BENCHMARK, SUITES[0], "demo", "scripted").is_file()


def test_an_output_changed_by_hand_is_made_again(rendered):
    run(rendered, plan())
    judgments = rendered.judgments(BENCHMARK, SUITES[1], "demo", "rule")
    original = judgments.read_bytes()
    judgments.write_bytes(original.replace(b'"scored"', b'"judge_error"', 1))
    # judged again, to the same bytes: the pages, made from those bytes, still hold
    assert made(run(rendered, plan())) == {f"{SUITES[1]} x demo x rule"}
    assert judgments.read_bytes() == original


def test_what_the_plan_dropped_is_removed_from_the_model_s_folders(rendered):
    run(rendered, plan(judges=("rule", "scripted")))
    kept = SUITES[0]
    run(rendered, plan(judges=("rule",), suites=(kept,)))
    for folder in (rendered.cells(BENCHMARK, "demo"), rendered.report_cell(BENCHMARK, model="demo")):
        assert [path.name for path in folder.iterdir()] == [kept]
    assert [path.name for path in rendered.stamp(BENCHMARK, model="demo").iterdir()] == [kept]
    assert [path.name for path in rendered.judgments(BENCHMARK, kept, "demo").iterdir()] == ["rule"]
    stamps = sorted(path.name for path in rendered.stamp(BENCHMARK, kept, "demo").iterdir())
    assert stamps == ["generate.json", "judge-rule.json", "report.json"]


def test_a_failed_generation_is_recorded_unstamped_and_the_other_suites_go_on(rendered, tmp_path):
    """A replayed model whose recordings lack one problem of the Chinese suite: that cell's requests
    fail, so its generations are written (errors, never answers) but not stamped, and its judging
    and pages wait for the rerun; the English suite is made whole."""
    recordings = tmp_path / "replay"
    recordings.mkdir()
    for suite in SUITES:
        lines = (ROOT / f"data/replay/demo/{suite}.jsonl").read_text(encoding="utf-8").splitlines()
        kept = lines[:-1] if suite.endswith("_zh") else lines
        (recordings / f"{suite}.jsonl").write_text("\n".join(kept) + "\n", encoding="utf-8")
    replay = {"provider": "replay", "path": f"{recordings}/{{suite}}.jsonl", "samples": 1}
    outcome = run(rendered, plan(), model_cfg=replay)
    [failure] = outcome.failures
    assert failure.startswith(f"{SUITES[1]} x demo: 1 of ") and "no recorded response for id" in failure
    assert made(outcome) == {f"{SUITES[0]} x demo", f"{SUITES[0]} x demo x rule", f"{SUITES[0]} x demo pages"} | {
        f"{SUITES[1]} x demo"
    }
    failed = rendered.generations(BENCHMARK, SUITES[1], "demo")
    assert sum(json.loads(line).get("error") is not None for line in failed.read_text().splitlines()) == 1
    assert not rendered.stamp(BENCHMARK, SUITES[1], "demo", "generate").exists()
    assert not rendered.judgments(BENCHMARK, SUITES[1], "demo", "rule").exists()
    # the recordings made whole, the rerun makes the failed cell alone
    (recordings / f"{SUITES[1]}.jsonl").write_bytes((ROOT / f"data/replay/demo/{SUITES[1]}.jsonl").read_bytes())
    rerun = run(rendered, plan(), model_cfg=replay)
    assert rerun.failures == [] and {part.split(" x ")[0] for part in made(rerun)} == {SUITES[1]}


def test_each_part_s_stamp_names_its_own_code_so_that_a_page_edit_judges_nothing(rendered, monkeypatch):
    import olympiad_eval.stages.evaluate as stage

    run(rendered, plan())
    real = stage.part_code
    monkeypatch.setattr(stage, "part_code", lambda *a: real(*a) + ("# edited\n" if a[-1] == "report" else ""))
    assert made(run(rendered, plan())) == {f"{s} x demo pages" for s in SUITES}


def test_the_stage_s_code_list_is_used_while_it_still_names_every_file_as_it_is(rendered, tmp_path):
    from olympiad_eval.core.code import part_list
    from olympiad_eval.stages.evaluate import part_code

    listed = rendered.code("physelite", part_list("judge"))
    listed.parent.mkdir(parents=True, exist_ok=True)
    fresh = part_code(rendered, ROOT, "physelite", "judge")  # no list yet: listed here
    assert "src/olympiad_eval/stages/judge.py" in fresh and "src/olympiad_eval/stages/evaluate.py" in fresh
    listed.write_text(fresh, encoding="utf-8")
    assert part_code(rendered, ROOT, "physelite", "judge") == fresh
    stale = fresh.replace(fresh[:32], "0" * 32, 1)  # a file's hash that is no longer its hash
    listed.write_text(stale, encoding="utf-8")
    assert part_code(rendered, ROOT, "physelite", "judge") == fresh
    assert Path(ROOT / "src/olympiad_eval/stages/judge.py").is_file()


# ---------------------------------------------------------------- generating and judging at once

HIPHO = "sample_hipho"  # the official protocol: every marking criterion asked of the LLM judge, no rules needed


def endpoint(server: FakeOpenAI, model: str, **extra) -> dict:
    return {"base_url": server.base_url, "model": model, "api_key_env": None, "max_retries": 0, **extra}


def hipho_run(layout: Layout, server: FakeOpenAI, cache: Path, judge_url: str | None = None, **model) -> Outcome:
    """The HiPhO sample's cell of a fake model, judged by the rules and by a fake LLM judge, both on `server`."""
    the_plan = {**plan(judges=("rule", "gpt-4o")), "suites": {HIPHO: HIPHO}, "benchmarks": [HIPHO]}
    the_plan["family"] = {HIPHO: "hipho"}
    cfg = compose_stage(
        "evaluate",
        ["model=gpt-4o", f"cell.benchmark={HIPHO}", f"paths.outputs={layout.root}", f"paths.request_cache={cache}"],
    )
    cfg.model = OmegaConf.create({"provider": "openai", **endpoint(server, "fake-model", **model)})
    judges = judge_configs(["rule", "gpt-4o"])
    judges["gpt-4o"].judges["gpt-4o"] = OmegaConf.create(
        endpoint(server, "fake-judge", concurrency=4) | ({"base_url": judge_url} if judge_url else {})
    )
    the_plan["models"] = ["gpt-4o"]
    return evaluate(the_plan, layout, HIPHO, "gpt-4o", cfg, judges, ROOT)


class Timeline:
    """A responder that notes when each request arrives, and whether a judge or the model was asked."""

    def __init__(self):
        self.arrivals: list[tuple[float, bool]] = []

    def __call__(self, body: dict):
        self.arrivals.append((time.perf_counter(), JUDGE_MARKER in json.dumps(body["messages"])))
        return default_responder(body)


def test_a_new_cell_is_judged_while_it_is_generated_and_to_the_same_bytes_as_after(render_suite, tmp_path):
    timeline = Timeline()
    streamed = Layout(render_suite(HIPHO, HIPHO))
    with FakeOpenAI(timeline, latency=0.15) as server:
        outcome = hipho_run(streamed, server, tmp_path / "cache.sqlite", concurrency=1)  # one generation at a time
        assert outcome.failures == [] and len(made(outcome)) == 4  # generations, two judges, pages
        generated = [at for at, judged in timeline.arrivals if not judged]
        judged = [at for at, is_judge in timeline.arrivals if is_judge]
        assert len(generated) == 5 and judged and min(judged) < max(generated)  # judging began before the last reply

        # the same cell generated, then judged, one after the other (every reply from the request cache)
        after = tmp_path / "after"
        shutil.copytree(streamed.root / "suites", after / "outputs" / "suites")
        sequential = Layout(after / "outputs")
        code = "the same code"
        sent = server.count()
        generate_cell(sequential, HIPHO, HIPHO, "gpt-4o", outcome_model(server), code, tmp_path / "cache.sqlite", 0.0)
        judge = judge_configs(["gpt-4o"])["gpt-4o"]
        judge.judges["gpt-4o"] = OmegaConf.create(endpoint(server, "fake-judge", concurrency=4))
        judge_cell(sequential, HIPHO, HIPHO, "gpt-4o", "gpt-4o", judge, code, tmp_path / "cache.sqlite", 1.0)
        assert server.count() == sent
    cell = lambda layout: layout.judgments(HIPHO, HIPHO, "gpt-4o")  # noqa: E731  the cell's judges' folder
    for name in ("judgments.jsonl", "coverage.json", "usage.json", "conversations.jsonl"):
        assert (cell(sequential) / "gpt-4o" / name).read_bytes() == (cell(streamed) / "gpt-4o" / name).read_bytes()


def outcome_model(server: FakeOpenAI):
    return OmegaConf.create({"provider": "openai", **endpoint(server, "fake-model", concurrency=1)})


def test_a_judge_that_cannot_serve_stops_the_generation_it_was_judging_and_nothing_is_stamped(render_suite, tmp_path):
    layout = Layout(render_suite(HIPHO, HIPHO))
    with FakeOpenAI(latency=0.3) as server:
        with pytest.raises(EndpointError, match="connection refused"):
            hipho_run(layout, server, tmp_path / "cache.sqlite", judge_url="http://127.0.0.1:9/v1", concurrency=1)
        assert server.count() < 5  # stopped after the first replies, not the cell's every request
    assert not layout.stamp(HIPHO).exists() and not layout.generations(HIPHO, HIPHO, "gpt-4o").exists()


def test_a_failed_generation_stops_its_judging_and_leaves_it_for_the_rerun(render_suite, tmp_path):
    failing = lambda body: Fault(status=400) if "friction" in json.dumps(body) else default_responder(body)  # noqa: E731
    layout = Layout(render_suite(HIPHO, HIPHO))
    with FakeOpenAI(failing) as server:
        outcome = hipho_run(layout, server, tmp_path / "cache.sqlite")
    [failure] = outcome.failures
    assert failure.startswith(f"{HIPHO} x gpt-4o: ") and made(outcome) == {f"{HIPHO} x gpt-4o"}
    assert not layout.judgments(HIPHO, HIPHO, "gpt-4o").exists()
    assert not layout.stamp(HIPHO, HIPHO, "gpt-4o", "generate").exists()
