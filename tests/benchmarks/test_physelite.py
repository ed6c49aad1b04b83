"""PhysElite: one row per problem x language, columns mapped by the benchmark config."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from olympiad_eval.benchmarks import physelite
from olympiad_eval.mathcheck import Verdict, equivalent
from olympiad_eval.records import InputError, RecordError

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "data" / "sample" / "physelite"
CFG = OmegaConf.load(REPO / "conf" / "benchmark" / "sample_physelite.yaml")


def check(jobs):
    return [Verdict(equivalent(*job)) for job in jobs]


@pytest.fixture(scope="module")
def sample():
    return {(p.id, p.language): p for p in physelite.load(SAMPLE, CFG, "sample_physelite")}


def test_sample_has_three_problems_in_two_languages(sample):
    assert sorted(sample) == [(pid, language) for pid in ("PE-S-0001", "PE-S-0002", "PE-S-0003") for language in ("en", "zh")]


@pytest.mark.parametrize(
    "pid, answer, level, subject, roles",
    [
        ("PE-S-0001", "24 m", 2, "Mechanics", ["schematic"]),
        ("PE-S-0002", "r = \\frac{1}{B}\\sqrt{\\frac{2 m U}{q}}", 4, "Electromagnetism", ["schematic", "process"]),
        ("PE-S-0003", "280 MeV", 6, "Modern Physics", []),
    ],
)
@pytest.mark.parametrize("language", ["en", "zh"])
def test_sample_fields_are_mapped_from_the_release_columns(sample, pid, language, answer, level, subject, roles):
    problem = sample[(pid, language)]
    assert problem.answers[0].value == answer and problem.answers[0].kind == "Open"
    assert (problem.level, problem.subject, problem.subset, problem.group) == (level, subject, subject, pid)
    assert [f.role for f in problem.figures] == roles
    assert problem.solution.startswith("Step 1" if language == "en" else "第一步")


def test_sample_question_text_is_in_its_language(sample):
    assert sample[("PE-S-0001", "en")].question.startswith("A small ball is thrown")
    assert sample[("PE-S-0001", "zh")].question.startswith("如图所示")


def test_sample_figures_are_shared_between_languages(sample):
    en, zh = sample[("PE-S-0002", "en")], sample[("PE-S-0002", "zh")]
    assert en.figures == zh.figures
    assert [f.name for f in en.figures] == ["images/PE-S-0002_schematic.png", "images/PE-S-0002_process.png"]
    assert all(f.mime == "image/png" and Path(f.path).is_file() for f in en.figures)
    assert en.figures[0].sha256 != en.figures[1].sha256


def write_release(tmp_path, rows):
    shutil.copytree(SAMPLE / "images", tmp_path / "images")
    (tmp_path / "data").mkdir()
    path = tmp_path / "data" / "test.jsonl"
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def sample_rows():
    return [json.loads(line) for line in (SAMPLE / "data" / "test.jsonl").read_text(encoding="utf-8").splitlines()]


def test_renamed_columns_are_followed(tmp_path):
    rows = [{("statement" if k == "problem_text" else k): v for k, v in row.items()} for row in sample_rows()]
    write_release(tmp_path, rows)
    cfg = OmegaConf.merge(CFG, {"fields": {"text": "statement"}})
    problems = physelite.load(tmp_path, cfg, "p")
    assert len(problems) == 6
    assert problems[0].question == sample_rows()[0]["problem_text"]


@pytest.mark.parametrize("column", ["problem_id", "language", "problem_text", "problem_answer"])
def test_missing_column_names_file_line_record_and_column(tmp_path, column):
    rows = sample_rows()
    del rows[3][column]
    path = write_release(tmp_path, rows)
    with pytest.raises(RecordError) as caught:
        physelite.load(tmp_path, CFG, "p")
    assert caught.value.path == f"{path}:4"
    assert caught.value.record == ("?" if column == "problem_id" else "PE-S-0002")
    assert caught.value.field == column


def test_missing_process_image_names_its_column(tmp_path):
    rows = sample_rows()
    rows[2]["process_images"] = ["images/nope.png"]
    path = write_release(tmp_path, rows)
    with pytest.raises(RecordError) as caught:
        physelite.load(tmp_path, CFG, "p")
    assert (caught.value.path, caught.value.record, caught.value.field) == (f"{path}:3", "PE-S-0002", "process_images")


def test_missing_split_is_an_input_error():
    with pytest.raises(InputError, match="dev.jsonl not found"):
        physelite.load(SAMPLE, OmegaConf.merge(CFG, {"split": "dev"}), "p")


# ---------------------------------------------------------------- prompts and scoring


@pytest.mark.parametrize(
    "figures, roles",
    [("none", []), ("schematic", ["schematic"]), ("schematic+process", ["schematic", "process"])],
)
def test_figures_follow_the_suite(sample, figures, roles):
    chosen = physelite.figures(sample[("PE-S-0002", "en")], OmegaConf.create({"figures": figures}))
    assert [f.role for f in chosen] == roles


def test_hint_appends_the_reference_solution(sample):
    problem = sample[("PE-S-0001", "en")]
    key, plain = physelite.template_fields(problem, OmegaConf.create({"hint": False}))
    _, hinted = physelite.template_fields(problem, OmegaConf.create({"hint": True}))
    assert key == "default"
    assert plain == {"problem": problem.question}
    assert hinted["problem"] == f"{problem.question}\n\nHint (reference solution):\n{problem.solution}"


@pytest.mark.parametrize(
    "pid, response, correct",
    [
        ("PE-S-0001", "x = v_0 t\nFINAL ANSWER: 24 m", True),
        ("PE-S-0001", "FINAL ANSWER: 25 m", True),  # 4.2 % off: within PhysElite's 5 %
        ("PE-S-0001", "FINAL ANSWER: 26 m", False),
        ("PE-S-0001", "The ball lands 24 m away.", False),  # no FINAL ANSWER line
        ("PE-S-0002", "FINAL ANSWER: r = \\frac{\\sqrt{2 m U / q}}{B}", True),
        ("PE-S-0002", "FINAL ANSWER: r = \\frac{1}{B}\\sqrt{\\frac{m U}{q}}", False),
        ("PE-S-0003", "FINAL ANSWER: K_{th} = 279.7 MeV", True),
        ("PE-S-0003", "FINAL ANSWER: 270 MeV", True),  # 3.6 % off
        ("PE-S-0003", "FINAL ANSWER: 135 MeV", False),
    ],
)
def test_score(sample, pid, response, correct):
    result = physelite.score(sample[(pid, "en")], response, check, 0.05)
    assert result.score == (1.0 if correct else 0.0)
    assert result.verdict == ("correct" if correct else "incorrect")


@pytest.mark.parametrize("pid", ["PE-S-0001", "PE-S-0002", "PE-S-0003"])
def test_reference_response_is_correct(sample, pid):
    problem = sample[(pid, "zh")]
    assert physelite.score(problem, physelite.reference(problem, None), check, 0.05).score == 1.0
