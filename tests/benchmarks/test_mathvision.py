"""MATH-Vision: loading the official jsonl splits, prompts fields, and rule scoring."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from olympiad_eval.benchmarks import plugin
from olympiad_eval.core.records import InputError, RecordError, iter_json_lines
from olympiad_eval.scoring.pool import run_check
from tests.support import by_rules, load_release, typed

MATHVISION = plugin("mathvision")

# its module fixtures load a release once: keep its tests on one test worker
pytestmark = pytest.mark.xdist_group("mathvision_release")

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "data" / "sample" / "mathvision"
REAL = REPO / ".." / "shared" / "data" / "mathvision"
SAMPLE_CFG = OmegaConf.load(REPO / "conf" / "benchmark" / "sample_mathvision.yaml")
SUITE = typed("mathvision", language="en")


def cfg(split: str):
    return OmegaConf.merge(SAMPLE_CFG, {"split": split})


def check(jobs):
    """The checks as a check worker runs them (evalscope's free form is a check of its own)."""
    return [run_check(job) for job in jobs]


@pytest.fixture(scope="module")
def sample():
    return {p.id: p for p in load_release(MATHVISION, SAMPLE, SAMPLE_CFG, "sample_mathvision")}


# ---------------------------------------------------------------- loading the sample


def test_sample_test_split(sample):
    assert list(sample) == ["1", "2", "3", "4"]
    assert {p.language for p in sample.values()} == {"en"}
    assert {p.benchmark for p in sample.values()} == {"sample_mathvision"}


@pytest.mark.parametrize(
    "options, expected",
    [
        ({"levels": [1]}, ["1", "3"]),
        ({"levels": [1, 3]}, ["1", "3", "4"]),
        ({"subjects": ["arithmetic", "counting"]}, ["2", "3"]),
        ({"levels": [1], "subjects": ["counting"]}, ["3"]),
    ],
)
def test_a_suite_takes_levels_and_subjects(sample, options, expected):
    from olympiad_eval.stages.render import select

    assert [p.id for p in select(list(sample.values()), typed("mathvision", language="en", **options))] == expected


@pytest.mark.parametrize(
    "options, said",
    [
        ({"levels": [1, 4]}, r"levels: 4 selects no problem of the suite \(its levels: 1, 2, 3\)$"),
        (
            {"subjects": ["metric geometry - volume"]},
            r"subjects: 'metric geometry - volume' selects no problem of the suite "
            r"\(closest: metric geometry - length, ",
        ),
    ],
)
def test_a_level_or_subject_the_release_lacks_is_refused(sample, options, said):
    from olympiad_eval.stages.render import select

    with pytest.raises(InputError, match=r"^suite 'test' \(conf/suite/test.yaml or an override\): " + said):
        select(list(sample.values()), typed("mathvision", language="en", **options), "test")


@pytest.mark.parametrize(
    "pid, answer, kind, choices, level, subject",
    [
        ("1", "C", "Multiple Choice", ("13 cm", "18 cm", "26 cm", "40 cm", "21 cm"), 1, "metric geometry - length"),
        ("2", "27", "Free Form", (), 2, "arithmetic"),
        ("3", "B", "Multiple Choice", ("2", "3", "4", "5", "6"), 1, "counting"),
        ("4", "\\frac{3}{8}", "Free Form", (), 3, "metric geometry - area"),
    ],
)
def test_sample_fields(sample, pid, answer, kind, choices, level, subject):
    problem = sample[pid]
    assert [(s.value, s.kind) for s in problem.answers] == [(answer, kind)]
    assert problem.choices == choices
    assert (problem.level, problem.subject, problem.subset) == (level, subject, subject)
    assert problem.question.endswith("<image1>")


def test_sample_figures_resolve(sample):
    for pid, problem in sample.items():
        [figure] = problem.figures
        assert figure.name == f"images/{pid}.jpg"
        assert figure.mime == "image/jpeg"
        assert Path(figure.path).is_file()
    assert len({p.figures[0].sha256 for p in sample.values()}) == 4


def test_sample_solution_null_becomes_empty(sample):
    assert sample["2"].solution == ""
    assert "26" in sample["1"].solution


def test_sample_testmini_is_a_subset(sample):
    mini = load_release(MATHVISION, SAMPLE, cfg("testmini"), "m")
    assert [p.id for p in mini] == ["1", "4"]
    assert [p.answers for p in mini] == [sample["1"].answers, sample["4"].answers]


def test_missing_split_is_an_input_error():
    with pytest.raises(InputError, match="nosuch.jsonl not found"):
        load_release(MATHVISION, SAMPLE, cfg("nosuch"), "m")


def write_release(tmp_path, rows, images=("1.jpg",)):
    (tmp_path / "data").mkdir()
    (tmp_path / "images").mkdir()
    for name in images:
        shutil.copyfile(SAMPLE / "images" / "1.jpg", tmp_path / "images" / name)
    path = tmp_path / "data" / "test.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


ROW = {
    "id": "1",
    "question": "q <image1>",
    "options": [],
    "answer": "5",
    "solution": None,
    "level": 2,
    "subject": "algebra",
    "image": "images/1.jpg",
}


@pytest.mark.parametrize("field", ["id", "question", "answer"])
def test_missing_required_field_names_file_line_record_and_field(tmp_path, field):
    row = {k: v for k, v in ROW.items() if k != field}
    path = write_release(tmp_path, [ROW | {"id": "0"}, row])
    with pytest.raises(RecordError) as caught:
        load_release(MATHVISION, tmp_path, cfg("test"), "m")
    assert caught.value.path == f"{path}:2"
    assert caught.value.record == ("?" if field == "id" else "1")
    assert caught.value.field == field


def test_missing_image_names_file_line_record_and_field(tmp_path):
    path = write_release(tmp_path, [ROW, ROW | {"id": "2", "image": "images/2.jpg"}])
    with pytest.raises(RecordError) as caught:
        load_release(MATHVISION, tmp_path, cfg("test"), "m")
    assert (caught.value.path, caught.value.record, caught.value.field) == (f"{path}:2", "2", "image")
    assert "images/2.jpg" in str(caught.value)


def test_row_without_image_has_no_figure(tmp_path):
    write_release(tmp_path, [ROW | {"image": None, "level": None}])
    [problem] = load_release(MATHVISION, tmp_path, cfg("test"), "m")
    assert problem.figures == () and problem.level is None


NOT_NUMBERS = [float("nan"), float("inf"), float("-inf")]  # NaN, Infinity, -Infinity in the jsonl


@pytest.mark.parametrize("value", NOT_NUMBERS, ids=str)
@pytest.mark.parametrize("field,row", [("answer", {}), ("question", {}), ("options", {"options": ["1", "2"]})])
def test_a_required_text_of_nan_or_infinity_is_refused_never_read_as_its_text(tmp_path, value, field, row):
    """A data frame writes NaN where a value is missing: the gold is missing, not the answer "nan"."""
    row = ROW | row
    row[field] = [row[field][0], value] if field == "options" else value
    path = write_release(tmp_path, [ROW | {"id": "0"}, row])
    with pytest.raises(RecordError) as caught:
        load_release(MATHVISION, tmp_path, cfg("test"), "m")
    assert (caught.value.path, caught.value.record, caught.value.field) == (f"{path}:2", "1", field)
    assert f"{value!r} is not a value (a missing value written as a number?): it must be set" in str(caught.value)


@pytest.mark.parametrize("value", NOT_NUMBERS, ids=str)
def test_an_optional_text_of_nan_or_infinity_is_missing(tmp_path, value):
    write_release(tmp_path, [ROW | {"solution": value, "subject": value}])
    [problem] = load_release(MATHVISION, tmp_path, cfg("test"), "m")
    assert problem.solution == "" and problem.subject == ""


# ---------------------------------------------------------------- prompts and scoring


def test_template_fields_multiple_choice(sample):
    key, fields = MATHVISION.template_fields(sample["1"], SUITE)
    assert key == "multiple_choice"
    assert fields["choices"] == "A) 13 cm\nB) 18 cm\nC) 26 cm\nD) 40 cm\nE) 21 cm"


def test_template_fields_free_form(sample):
    key, fields = MATHVISION.template_fields(sample["4"], SUITE)
    assert key == "free_form"
    assert fields["question"] == sample["4"].question


@pytest.mark.parametrize("figures, count", [("all", 1), ("none", 0)])
def test_figures_follow_the_suite(sample, figures, count):
    assert len(MATHVISION.figures(sample["1"], OmegaConf.create({"figures": figures}))) == count


@pytest.mark.parametrize(
    "pid, reference",
    [("1", "The answer is \\boxed{C}.\nANSWER: C"), ("4", "The answer is \\boxed{\\frac{3}{8}}.")],
)
def test_references(sample, pid, reference):
    assert MATHVISION.reference(sample[pid], SUITE) == reference


# evalscope's protocol: tests/benchmarks/test_mathvision_evalscope.py.


@pytest.mark.parametrize("pid", ["1", "2", "3", "4"])
def test_reference_response_scores(sample, pid):
    problem = sample[pid]
    assert by_rules(MATHVISION, problem, MATHVISION.reference(problem, SUITE), check).score == 1.0


# ---------------------------------------------------------------- the real release (../shared/data)


@pytest.fixture(scope="module")
def real_root():
    if not (REAL / "data" / "test.jsonl").is_file():
        pytest.skip(f"real MATH-Vision data not found at {REAL.resolve()} (shared data is optional)")
    return REAL


def test_real_testmini_loads_304_problems_with_their_images(real_root):
    problems = load_release(MATHVISION, real_root, cfg("testmini"), "mathvision")
    assert len(problems) == 304
    assert len({p.id for p in problems}) == 304
    assert all(len(p.figures) == 1 and Path(p.figures[0].path).is_file() for p in problems)
    assert {p.level for p in problems} == {1, 2, 3, 4, 5}
    assert len({p.subject for p in problems}) == 16
    assert all(p.answers[0].value in "ABCDE" for p in problems if p.choices)


def test_real_test_split_has_3040_rows(real_root):
    rows = [data for _, data in iter_json_lines(real_root / "data" / "test.jsonl")]
    assert len(rows) == 3040 and len({row["id"] for row in rows}) == 3040


def test_real_test_split_without_its_images_stops_at_the_first_missing_figure(real_root):
    """The shared copy holds only testmini's 304 images; load() insists on every figure."""
    with pytest.raises(RecordError) as caught:
        load_release(MATHVISION, real_root, cfg("test"), "mathvision")
    assert caught.value.path == f"{real_root / 'data' / 'test.jsonl'}:1"
    assert (caught.value.record, caught.value.field) == ("1", "image")


def test_real_test_split_loads_3040_problems_when_every_image_exists(real_root, tmp_path):
    """The same rows with a stand-in image for each (made in tmp_path; the real data is only read)."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "test.jsonl").symlink_to((real_root / "data" / "test.jsonl").resolve())
    (tmp_path / "images").mkdir()
    stand_in = (SAMPLE / "images" / "1.jpg").read_bytes()
    for _, row in iter_json_lines(real_root / "data" / "test.jsonl"):
        if row.get("image"):
            (tmp_path / row["image"]).write_bytes(stand_in)
    problems = load_release(MATHVISION, tmp_path, cfg("test"), "mathvision")
    assert len(problems) == 3040
    mini = {p.id for p in load_release(MATHVISION, real_root, cfg("testmini"), "mathvision")}
    assert mini <= {p.id for p in problems}


@pytest.mark.parametrize("protocol", ["official", "evalscope"])
def test_the_reference_scores_under_both_protocols(sample, protocol):
    for problem in sample.values():
        assert (
            by_rules(MATHVISION, problem, MATHVISION.reference(problem, SUITE), check, protocol=protocol).score == 1.0
        )


def test_the_official_protocol_is_the_default_and_reads_the_official_way(sample):
    # MATH-V's scorer takes "the answer is" phrases and the last box, not an "ANSWER:" line
    assert by_rules(MATHVISION, sample["1"], "The answer is C.", check).score == 1.0
    assert by_rules(MATHVISION, sample["1"], "Reasoning.\nANSWER: C", check).score == 0.0
    with pytest.raises(InputError, match="scoring.protocol: 'vibes' is not one of official, evalscope"):
        typed("mathvision", scoring={"protocol": "vibes"})


def test_the_report_shows_a_choice_problem_s_options_with_the_gold_and_the_chosen_one():
    from olympiad_eval.core.records import AnswerSlot, Judgment, Problem

    problem = Problem(
        id="1",
        benchmark="b",
        language="en",
        question="q",
        choices=("13 cm", "$26$ cm", "40 cm"),
        answers=(AnswerSlot("B"),),
        level=2,
        subject="metric geometry",
    )
    judgment = Judgment(
        id="1",
        suite="s",
        model="m",
        judge="rule",
        sample=0,
        language="en",
        subset="",
        status="scored",
        score=0.0,
        points=0.0,
        max_points=1.0,
        extracted=("C",),
    )
    [section] = MATHVISION.report_sections(problem, judgment)
    assert section.css == "choices" and ("level", "2") in section.facts
    [table] = section.tables
    assert table.rows == (("A", "13 cm", False, False), ("B", "$26$ cm", True, False), ("C", "40 cm", False, True))
    assert MATHVISION.report_sections(Problem(id="2", benchmark="b", language="en", question="q"), judgment) == []
