"""The real releases, through the configs users run (conf/benchmark/hipho.yaml, mathvision*.yaml).

They read ../shared/data in place and skip where it is absent.
"""

from __future__ import annotations

import csv

import pytest

from olympiad_eval.core.records import Problem, read_jsonl
from olympiad_eval.stages.fetch import fetch
from olympiad_eval.stages.render import render
from tests.support import compose_stage, shared_data

# its module fixtures load a release once: keep its tests on one test worker
pytestmark = pytest.mark.xdist_group("real_releases")

CHINESE_PROMPT = "你正在参加高中物理竞赛"
ENGLISH_PROMPT = "You are participating in a high school physics Olympiad exam."


def fetched(benchmark: str, release, out, *overrides: str) -> list[Problem]:
    cfg = compose_stage("fetch", [f"benchmark={benchmark}", f"benchmark.source.path={release}", *overrides]).benchmark
    return fetch(benchmark, cfg, out)


@pytest.fixture(scope="module")
def hipho(tmp_path_factory):
    out = tmp_path_factory.mktemp("hipho") / "problems"
    return fetched("hipho", shared_data("hipho"), out), out


def test_hipho_loads_every_problem_and_every_exam_adds_up_to_its_full_marks(hipho):
    problems, _ = hipho
    assert len(problems) == 235
    exams = compose_stage("fetch", ["benchmark=hipho"]).benchmark.exams
    for exam in {p.subset for p in problems}:  # fetch checked these sums; restate the check here
        total = sum(p.points for p in problems if p.subset == exam)
        assert total == pytest.approx(exams[exam].full_marks), exam


def test_hipho_config_transcribes_the_papers_table_3():
    rows = {row["row"]: row for row in csv.DictReader(open(shared_data("hipho_results", "hipho_table3_exam_meta.csv")))}
    exams = compose_stage("fetch", ["benchmark=hipho"]).benchmark.exams
    for exam in rows["gold_threshold"]:
        if exam == "row":
            continue
        for ours, theirs in (
            ("full_marks", "full_mark_model"),
            ("full_marks_human", "full_mark_human"),
            ("gold", "gold_threshold"),
            ("silver", "silver_threshold"),
            ("bronze", "bronze_threshold"),
        ):
            assert exams[exam][ours] == float(rows[theirs][exam]), (exam, ours)


@pytest.mark.parametrize("suite,zh_exams", [("hipho", {"CPhO_2025", "PanMechanics_2024"}), ("hipho_en", set())])
def test_hipho_prompts_are_in_each_exams_official_language(hipho, tmp_path, suite, zh_exams):
    problems, out = hipho
    cfg = compose_stage("render", [f"suite={suite}", "cell.benchmark=hipho"]).suite
    prompts = {p.id: p for p in render(suite, cfg, "hipho", out / "problems.jsonl", tmp_path / suite)}
    for problem in problems:
        text = prompts[problem.id].messages[-1]["content"][0]["text"]
        assert text.startswith(CHINESE_PROMPT if problem.subset in zh_exams else ENGLISH_PROMPT), problem.id
        images = [part for part in prompts[problem.id].messages[-1]["content"] if part["type"] == "image"]
        assert sorted(image["sha256"] for image in images) == sorted(figure.sha256 for figure in problem.figures)
    assert sum(len(p.figures) for p in problems) == 281  # every figure reference reaches a prompt


def test_mathvision_testmini_loads_304_problems_with_their_images(tmp_path):
    problems = fetched("mathvision_testmini", shared_data("mathvision"), tmp_path / "out")
    assert len(problems) == 304 and all(len(p.figures) == 1 for p in problems)
    assert {p.level for p in problems} == {1, 2, 3, 4, 5} and len({p.subject for p in problems}) == 16


def test_mathvision_test_loads_3040_problems_and_repairs_the_form_feed(tmp_path):
    # The shared copy holds only testmini's images: load the answer key without the others.
    problems = fetched("mathvision", shared_data("mathvision"), tmp_path / "out", "benchmark.require_figures=false")
    assert len(problems) == 3040 and sum(bool(p.figures) for p in problems) == 304
    by_id = {p.id: p for p in problems}
    assert by_id["2830"].answers[0].value == "\\frac{36}{13}"
    assert not any("\x0c" in p.question + p.answers[0].value + "".join(p.choices) for p in problems)
    stored = read_jsonl(tmp_path / "out" / "problems.jsonl", Problem)
    assert [p.origin for p in stored[:2]] == ["data/test.jsonl:1", "data/test.jsonl:2"]
