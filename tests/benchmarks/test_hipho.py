"""HiPhO: loading exams in the official layout, marking schemes in points, answer-level scoring."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from omegaconf import OmegaConf

from olympiad_eval.benchmarks import hipho, plugin, typed_suite
from olympiad_eval.core.records import AnswerSlot, Criterion, InputError, Problem, RecordError, exact
from olympiad_eval.scoring.checks import Equivalence, Verdict
from olympiad_eval.scoring.pool import run_check
from tests.support import by_rules, compose_stage, load_release, scoring, suite_scoring, typed

HIPHO = plugin("hipho")

# its module fixtures load a release once: keep its tests on one test worker
pytestmark = pytest.mark.xdist_group("hipho_release")

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "data" / "sample" / "hipho"
REAL = REPO / ".." / "shared" / "data" / "hipho"
REAL_RESULTS = REPO / ".." / "shared" / "data" / "hipho_results"
SAMPLE_CFG = OmegaConf.load(REPO / "conf" / "benchmark" / "sample_hipho.yaml")
REAL_CFG = OmegaConf.create(
    {"kind": "hipho", "default_language": "en", "language_by_exam": {"CPhO_2025": "zh", "PanMechanics_2024": "zh"}}
)
SUITE = typed("hipho")


def check(jobs):
    """What the judge stage's CheckPool does, in this process."""
    return [run_check(job) for job in jobs]


def gradable_points(problem: Problem) -> float:
    return float(sum(exact(slot.points) for slot in problem.answers if hipho.scoring.gold_value(slot)))


# ---------------------------------------------------------------- criterion_points


@pytest.mark.parametrize(
    "text, points",
    [
        ("Award 0.4 pt if the answer correctly writes $f = \\mu m g \\cos\\theta$. Otherwise, award 0 pt.", 0.4),
        ("Award 1.5 pts if both values are correct.", 1.5),
        ("award 2 pt for the diagram", 2.0),
        ("Award 0.3pt if ...", 0.3),
        (
            "Award a total of 1.0 pt for the following: award 0.5 pt if the answer uses $L = \\frac{1}{2} a t^2$ "
            "and 0.5 pt if it obtains $t$.",
            1.0,
        ),
        ("Award a total of 0.8 pts for the following: award 0.1 pt for each correct entry.", 0.8),
        ("如果解答正确写出 $W = p_1 V_1 \\ln\\frac{V_1}{V_2}$，则得 2 分。否则得 0 分。", 2.0),
        ("如果解答正确，则得 0.5 分。否则得 0 分。", 0.5),
        ("如果解答正确，则得1分", 1.0),
        ("The answer is correct.", None),
        ("如果解答正确，则得分。", None),
    ],
)
def test_criterion_points(text, points):
    assert hipho.loading.criterion_points(text) == points


# ---------------------------------------------------------------- loading the sample


@pytest.fixture(scope="module")
def sample():
    return {p.id: p for p in load_release(HIPHO, SAMPLE, SAMPLE_CFG, "sample_hipho")}


def test_sample_has_five_problems_in_two_exams(sample):
    assert sorted(sample) == [
        "DemoCPhO_2025_1_1",
        "DemoCPhO_2025_2_1",
        "DemoPhO_2025_1_a",
        "DemoPhO_2025_1_b",
        "DemoPhO_2025_2_a",
    ]
    assert {p.subset for p in sample.values()} == {"DemoPhO_2025", "DemoCPhO_2025"}
    assert {p.benchmark for p in sample.values()} == {"sample_hipho"}


def test_a_question_s_cluster_is_its_exam_problem(sample):
    """What the intervals resample (`cluster_of`): the sample's two-part problem is one cluster."""
    assert {pid: HIPHO.cluster_of(problem) for pid, problem in sample.items()} == {
        "DemoCPhO_2025_1_1": "DemoCPhO_2025_1",
        "DemoCPhO_2025_2_1": "DemoCPhO_2025_2",
        "DemoPhO_2025_1_a": "DemoPhO_2025_1",
        "DemoPhO_2025_1_b": "DemoPhO_2025_1",
        "DemoPhO_2025_2_a": "DemoPhO_2025_2",
    }
    assert HIPHO.cluster_unit == "exam problem"
    unnamed = Problem(id="q7", benchmark="b", language="en", question="q", subset="X_2025")
    assert HIPHO.cluster_of(unnamed) == "q7"  # not named after its exam: its own cluster


def test_a_suite_takes_exams_by_name(sample):
    from olympiad_eval.stages.render import select

    chosen = select(list(sample.values()), typed("hipho", exams=["DemoCPhO_2025"]))
    assert [p.id for p in chosen] == ["DemoCPhO_2025_1_1", "DemoCPhO_2025_2_1"]
    with pytest.raises(
        InputError,
        match=r"^suite 'test' \(conf/suite/test.yaml or an override\): exams: 'IPhO_2025' "
        r"selects no problem of the suite \(closest: DemoPhO_2025, DemoCPhO_2025\)$",
    ):
        select(list(sample.values()), typed("hipho", exams=["DemoCPhO_2025", "IPhO_2025"]), "test")


@pytest.mark.parametrize("exam, total", [("DemoPhO_2025", 5.0), ("DemoCPhO_2025", 10.0)])
def test_sample_exam_totals(sample, exam, total):
    assert sum(p.points for p in sample.values() if p.subset == exam) == pytest.approx(total)


def test_sample_languages_follow_the_exam(sample):
    languages = {p.id: p.language for p in sample.values()}
    assert languages == {
        "DemoCPhO_2025_1_1": "zh",
        "DemoCPhO_2025_2_1": "zh",
        "DemoPhO_2025_1_a": "en",
        "DemoPhO_2025_1_b": "en",
        "DemoPhO_2025_2_a": "en",
    }


def test_sample_information_sheet(sample):
    assert sample["DemoPhO_2025_1_a"].information.startswith("Constants sheet:")
    assert "g = 9.8" in sample["DemoPhO_2025_2_a"].information
    assert sample["DemoCPhO_2025_1_1"].information == ""  # "None." means no sheet


@pytest.mark.parametrize(
    "pid, schemes",
    [
        ("DemoPhO_2025_1_a", [4, 3]),  # two alternative schemes
        ("DemoPhO_2025_1_b", [3]),  # with an "Award a total of" criterion
        ("DemoPhO_2025_2_a", []),  # marking: []
        ("DemoCPhO_2025_1_1", [3]),  # Chinese criteria
        ("DemoCPhO_2025_2_1", [3]),
    ],
)
def test_sample_schemes_add_up_to_the_problem_points(sample, pid, schemes):
    problem = sample[pid]
    assert [len(scheme) for scheme in problem.marking] == schemes
    for scheme in problem.marking:
        assert sum(c.points for c in scheme) == pytest.approx(problem.points)


def test_sample_total_criterion_counts_once(sample):
    points = [c.points for c in sample["DemoPhO_2025_1_b"].marking[0]]
    assert points == [0.4, 0.6, 1.0]


def test_sample_answer_slots(sample):
    slots = sample["DemoPhO_2025_1_b"].answers
    assert [(s.value, s.kind, s.unit, s.points) for s in slots] == [
        ("\\boxed{$a = 3.20$}", "Numerical Value", "m/s^2", 1.0),
        ("\\boxed{$t = 0.790$}", "Numerical Value", "s", 1.0),
    ]
    assert sample["DemoCPhO_2025_2_1"].answers[0].unit is None  # [null]


def test_sample_figures(sample):
    shared = sample["DemoPhO_2025_1_a"].figures
    assert [f.name for f in shared] == ["image_question/DemoPhO_2025_1_a_1.png"]
    assert shared[0].mime == "image/png" and len(shared[0].sha256) == 64
    assert sample["DemoPhO_2025_1_b"].figures[0].sha256 == shared[0].sha256  # same file, same hash
    assert len(sample["DemoPhO_2025_2_a"].figures) == 1  # present although the text never says [figure1]
    assert sample["DemoCPhO_2025_1_1"].figures == ()


# ---------------------------------------------------------------- loading edge cases


def item(pid="X_2025_1", **overrides) -> dict:
    data = {
        "id": pid,
        "context": "",
        "question": "q",
        "marking": [["Award 1.0 pt if right."]],
        "answer": ["\\boxed{$1$}"],
        "answer_type": ["Numerical Value"],
        "unit": ["m"],
        "points": [1.0],
        "field": "Mechanics",
        "source": "X_2025",
        "image_question": [],
    }
    data.update(overrides)
    return {k: v for k, v in data.items() if v is not ...}  # `...` removes a field


def load_exam(tmp_path, *items, name="X_2025", information="None."):
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    path = data / f"{name}.json"
    path.write_text(json.dumps([{"information": information}, *items], ensure_ascii=False), encoding="utf-8")
    return path, load_release(HIPHO, tmp_path, OmegaConf.create({"default_language": "en"}), "x")


@pytest.mark.parametrize("marking", [..., [], None])
def test_no_marking_means_no_scheme(tmp_path, marking):
    _, [problem] = load_exam(tmp_path, item(marking=marking))
    assert problem.marking == ()


def test_flat_marking_list_is_one_scheme(tmp_path):
    flat = ["Award 0.4 pt if a.", "Award 0.6 pt if b."]
    _, [problem] = load_exam(tmp_path, item(marking=flat))
    assert [[c.points for c in scheme] for scheme in problem.marking] == [[0.4, 0.6]]
    assert problem.marking[0][1].text == "Award 0.6 pt if b."


def test_alternative_schemes_are_each_checked(tmp_path):
    schemes = [["Award 1.0 pt if a."], ["Award 0.5 pt if b.", "Award 0.5 pt if c."]]
    _, [problem] = load_exam(tmp_path, item(marking=schemes))
    assert [len(s) for s in problem.marking] == [1, 2]


def test_unit_list_shorter_than_answers_leaves_units_none(tmp_path):
    _, [problem] = load_exam(
        tmp_path,
        item(
            answer=["\\boxed{$1$}", "\\boxed{$2$}", "\\boxed{$3$}"],
            answer_type=["Numerical Value", "Expression"],
            unit=["m"],
            points=[0.5, 0.25, 0.25],
            marking=[["Award 1.0 pt if all."]],
        ),
    )
    assert [(s.unit, s.kind) for s in problem.answers] == [("m", "Numerical Value"), (None, "Expression"), (None, "")]
    assert problem.points == 1.0


def test_missing_unit_and_answer_type_fields(tmp_path):
    _, [problem] = load_exam(tmp_path, item(unit=..., answer_type=...))
    assert problem.answers[0].unit is None and problem.answers[0].kind == ""


def test_information_and_source(tmp_path):
    _, [problem] = load_exam(tmp_path, item(source=...), information="  Constants: g = 9.8  ")
    assert problem.information == "Constants: g = 9.8"
    assert problem.subset == "X_2025"  # the file stem when `source` is absent


def expect_error(tmp_path, record, field, *items, match=None):
    with pytest.raises(RecordError) as caught:
        load_exam(tmp_path, *items)
    error = caught.value
    path = str(tmp_path / "data" / "X_2025.json")
    assert (error.path, error.record, error.field) == (path, record, field)
    assert path in str(error) and f"record {record}" in str(error) and f"'{field}'" in str(error)
    if match:
        assert match in str(error)


def test_criterion_without_points_names_file_record_and_field(tmp_path):
    bad = item("X_2025_2", marking=[["Award 0.5 pt if a.", "Give credit for b."]])
    expect_error(tmp_path, "X_2025_2", "marking[0][1]", item("X_2025_1"), bad, match="Give credit for b.")


def test_criterion_without_points_in_second_scheme(tmp_path):
    bad = item(marking=[["Award 1.0 pt if a."], ["则得 1 分", "no points here"]])
    expect_error(tmp_path, "X_2025_1", "marking[1][1]", bad)


def test_criteria_not_adding_up_are_an_error(tmp_path):
    bad = item(marking=[["Award 0.4 pt if a.", "Award 0.4 pt if b."]])
    expect_error(tmp_path, "X_2025_1", "marking[0]", bad, match="add up to 0.8 points, the problem has 1")


def test_flat_list_not_adding_up_is_an_error(tmp_path):
    expect_error(tmp_path, "X_2025_1", "marking[0]", item(marking=["Award 2 pt if a."]))


@pytest.mark.parametrize("field", ["id", "question", "answer", "points"])
def test_missing_required_field(tmp_path, field):
    record = "?" if field == "id" else "X_2025_1"
    expect_error(tmp_path, record, field, item(**{field: ...}))


def test_points_not_parallel_to_answers(tmp_path):
    expect_error(tmp_path, "X_2025_1", "points", item(points=[0.5, 0.5]))


def test_points_not_a_number(tmp_path):
    expect_error(tmp_path, "X_2025_1", "points[0]", item(points=["one"]))


def test_exam_without_information_element(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "X_2025.json").write_text(json.dumps([item()]), encoding="utf-8")
    with pytest.raises(RecordError, match="information"):
        load_release(HIPHO, tmp_path, OmegaConf.create({}), "x")


def test_exam_file_with_bad_json(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "X_2025.json").write_text('[{"information": "None."}, {"id": ', encoding="utf-8")
    with pytest.raises(RecordError) as caught:
        load_release(HIPHO, tmp_path, OmegaConf.create({}), "x")
    assert caught.value.path == str(data / "X_2025.json") and caught.value.field == "(json)"


# ---------------------------------------------------------------- rendering helpers


# Every wrapping of a gold answer seen in the release: (as released, official text, value, reference answer)
GOLDS = [
    ("\\boxed{$a = 3.20$}", "$a = 3.20$", "a = 3.20", "a = 3.20"),
    ("\\boxed{B}", "B", "B", "B"),  # no `$`
    ("\\boxed{$[1.21, 1.25]$}", "$[1.21, 1.25]$", "[1.21, 1.25]", "1.23"),  # a range: its midpoint answers it
    (
        "\\boxed{$[5.21 \\times 10^{-1}, 5.28 \\times 10^{-1}]$}",
        "$[5.21 \\times 10^{-1}, 5.28 \\times 10^{-1}]$",
        "[5.21 \\times 10^{-1}, 5.28 \\times 10^{-1}]",
        "0.5245",
    ),
    ("\\boxed{[0.94, 0.96] for $R_1$}", "[0.94, 0.96] for $R_1$", "[0.94, 0.96] for R_1", "0.95"),  # labelled range
    ("\\boxed{[10^{10.5}, 10^{11.5}]}", "[10^{10.5}, 10^{11.5}]", "[10^{10.5}, 10^{11.5}]", "1.73925e+11"),
    (
        "\\boxed{$\\gamma = \\sqrt{\\dfrac{C}{2\\kappa}}}$",
        "\\gamma = \\sqrt{\\dfrac{C}{2\\kappa}}",  # `$` left outside
        "\\gamma = \\sqrt{\\dfrac{C}{2\\kappa}}",
        "\\gamma = \\sqrt{\\dfrac{C}{2\\kappa}}",
    ),
    (
        "\\boxed{$\\omega^2 = \\frac{k}{m}$",
        "$\\omega^2 = \\frac{k}{m}$",
        "\\omega^2 = \\frac{k}{m}",  # never closed
        "\\omega^2 = \\frac{k}{m}",
    ),
    ("$\\boxed{3.2}$", "3.2", "3.2", "3.2"),  # a box inside `$`
    ("v = \\boxed{$3.2$} m/s", "$3.2$", "3.2", "3.2"),  # text outside the box
    (
        "\\boxed{Segment 1: slope = $\\rho S$}",
        "Segment 1: slope = $\\rho S$",
        "Segment 1: slope = \\rho S",
        "Segment 1: slope = \\rho S",
    ),  # text inside the box
    ("\\boxed{$x = 1$}, \\boxed{$y = 2$}", "$x = 1$, $y = 2$", "x = 1, y = 2", "x = 1, y = 2"),  # two boxes, one slot
    ("\\boxed{\\boxed{7}}", "\\boxed{7}", "\\boxed{7}", "\\boxed{7}"),  # a box in a box is one answer
    ("$2.5$", "$2.5$", "2.5", "2.5"),  # no box
    ("", "", "", ""),  # open-ended
]


@pytest.mark.parametrize("value, text, gold, answer", GOLDS)
def test_gold_text_value_and_reference_answer(value, text, gold, answer):
    slot = AnswerSlot(value)
    assert (hipho.scoring.gold_text(slot), hipho.scoring.gold_value(slot), hipho.scoring.reference_answer(slot)) == (
        text,
        gold,
        answer,
    )


@pytest.mark.parametrize("value, text, gold, answer", GOLDS)
def test_the_rule_check_accepts_the_reference_answer_of_every_wrapping(value, text, gold, answer):
    problem = Problem(id="P", benchmark="x", language="en", question="q", answers=(AnswerSlot(value),))
    result = by_rules(HIPHO, problem, HIPHO.reference(problem, SUITE), check)
    assert result.slots[0]["correct"] is bool(gold)


def test_reference(sample):
    problem = sample["DemoPhO_2025_1_b"]
    assert HIPHO.reference(problem, SUITE).endswith("<answer>\n[\\boxed{a = 3.20}, \\boxed{t = 0.790}]\n</answer>")


@pytest.mark.parametrize("prompt_language, expected", [(None, "zh"), ("en", "en")])
def test_template_fields(sample, prompt_language, expected):
    suite = typed("hipho", prompt_language=prompt_language)
    key, fields = HIPHO.template_fields(sample["DemoCPhO_2025_1_1"], suite)
    assert key == expected
    assert fields["information"] == "None."
    assert fields["question"] == sample["DemoCPhO_2025_1_1"].question


# ---------------------------------------------------------------- scoring


@pytest.mark.parametrize(
    "pid", ["DemoPhO_2025_1_a", "DemoPhO_2025_1_b", "DemoPhO_2025_2_a", "DemoCPhO_2025_1_1", "DemoCPhO_2025_2_1"]
)
def test_reference_response_earns_full_points(sample, pid):
    problem = sample[pid]
    result = by_rules(HIPHO, problem, HIPHO.reference(problem, SUITE), check)
    assert result.points == problem.points
    assert result.score == 1.0
    assert all(slot["correct"] for slot in result.slots)
    assert result.undecided == ()


def test_one_wrong_slot_loses_its_points(sample):
    response = "<think>...</think>\n<answer>\n[\\boxed{3.20}, \\boxed{0.500}]\n</answer>"
    result = by_rules(HIPHO, sample["DemoPhO_2025_1_b"], response, check)
    assert result.extracted == ("3.20", "0.500")
    assert [slot["correct"] for slot in result.slots] == [True, False]
    assert (result.points, result.score) == (1.0, 0.5)


@pytest.mark.parametrize(
    "boxes, points, score",
    [
        (["2", "5"], 4.0, 1.0),
        (["0", "5"], 3.0, 0.75),  # the wrong slot was worth 1 of 4 points
        (["2", "0"], 1.0, 0.25),
        (["0", "0"], 0.0, 0.0),
    ],
)
def test_partial_points_are_weighted_by_slot_points(boxes, points, score):
    problem = Problem(
        id="P",
        benchmark="x",
        language="en",
        question="q",
        answers=(AnswerSlot("\\boxed{$2$}", points=1.0), AnswerSlot("\\boxed{$5$}", points=3.0)),
    )
    response = "<answer>[" + ", ".join(f"\\boxed{{{b}}}" for b in boxes) + "]</answer>"
    result = by_rules(HIPHO, problem, response, check)
    assert (result.points, result.score) == (points, score)


def test_answers_outside_the_answer_block_are_not_used(sample):
    response = "<think>\\boxed{0.790}</think><answer>[\\boxed{3.20}, \\boxed{0.7}]</answer>"
    result = by_rules(HIPHO, sample["DemoPhO_2025_1_b"], response, check)
    assert result.points == 1.0


def recorded_score(problem: Problem, response: str, cfg=None):
    seen = []

    def recording_check(jobs):
        seen.extend(jobs)
        return check(jobs)

    return by_rules(HIPHO, problem, response, recording_check, **(cfg or {})), seen


TWO_SLOTS = Problem(
    id="P",
    benchmark="x",
    language="en",
    question="q",
    answers=(AnswerSlot("\\boxed{$2$}"), AnswerSlot("\\boxed{$5$}", points=3.0)),
)


@pytest.mark.parametrize("cfg", [None, {"protocol": "olympiad_eval"}])
def test_missing_boxes_fill_the_last_slots_in_our_protocol(cfg):
    """As VLMEvalKit's verifier, ours pads the missing answers in front (`get_answer_str`); ours is the default."""
    result, seen = recorded_score(TWO_SLOTS, "<answer>[\\boxed{5}]</answer>", cfg)
    assert result.extracted == ("", "5")
    assert seen == [Equivalence("5", "5")]  # the empty slot is not checked
    assert (result.points, [slot["correct"] for slot in result.slots]) == (3.0, [False, True])


def test_missing_boxes_fill_the_first_slots_in_the_evalscope_protocol():
    result, seen = recorded_score(TWO_SLOTS, "<answer>[\\boxed{2}]</answer>", {"protocol": "evalscope"})
    assert result.extracted == ("2", "")
    # evalscope checks answers with Math-Verify (hipho_evalscope.combine), never with our rules
    assert seen == [] and [slot["given"] for slot in result.slots] == ["2", ""]


def test_an_unknown_protocol_is_an_error_when_the_suite_is_composed():
    suite = compose_stage("render", ["suite=sample_hipho", "cell.benchmark=x", "suite.scoring.protocol=paper"]).suite
    with pytest.raises(
        InputError, match="scoring.protocol: 'paper' is not one of olympiad_eval, vlmevalkit, evalscope"
    ):
        typed_suite("sample_hipho", suite)


def test_the_protocol_once_called_official_names_its_new_name():
    """`official` was never the authors' code: a suite that still names it is told what it is now."""
    suite = compose_stage("render", ["suite=sample_hipho", "cell.benchmark=x", "suite.scoring.protocol=official"]).suite
    with pytest.raises(InputError, match="'official' is now called 'olympiad_eval': it is this project's"):
        typed_suite("sample_hipho", suite)


def test_one_of_three_slots_of_a_three_point_problem_is_exactly_one_point():
    problem = Problem(
        id="P",
        benchmark="x",
        language="en",
        question="q",
        answers=tuple(AnswerSlot(f"\\boxed{{{n}}}") for n in (1, 2, 3)),
    )
    result = by_rules(HIPHO, problem, "<answer>[\\boxed{1}, \\boxed{0}, \\boxed{0}]</answer>", check)
    assert result.points == 1.0 and result.score == 1 / 3


OFFICIAL = scoring(HIPHO)


def test_the_official_protocol_gives_one_of_three_slots_exactly_one_point():
    problem = Problem(
        id="P",
        benchmark="x",
        language="en",
        question="q",
        answers=tuple(AnswerSlot(f"\\boxed{{{n}}}") for n in (1, 2, 3)),
        marking=((Criterion("Award 3 pt if all.", 3.0),),),
    )
    rules = by_rules(HIPHO, problem, "<answer>[\\boxed{1}, \\boxed{0}, \\boxed{0}]</answer>", check)
    replies = {
        "g": {"criterion 0.0": {"awarded": 0.0}, "slot 1": {"equivalent": False}, "slot 2": {"equivalent": False}}
    }
    result = HIPHO.combine(problem, rules, replies, OFFICIAL)
    assert (result.points, result.parts) == (1.0, {"answer_points": 1.0, "step_points": 0.0})


def test_judges_and_criteria_add_up_exactly():
    problem = Problem(
        id="P",
        benchmark="x",
        language="en",
        question="q",
        answers=(AnswerSlot("\\boxed{1}", points=0.7),),
        marking=((Criterion("a", 0.1), Criterion("b", 0.2), Criterion("c", 0.4)),),
    )
    rules = by_rules(HIPHO, problem, "<answer>[\\boxed{0}]</answer>", check)
    awarded = {f"criterion 0.{c}": {"awarded": points} for c, points in enumerate((0.1, 0.2, 0.0))}
    replies = {judge: {**awarded, "slot 0": {"equivalent": False}} for judge in ("g", "h", "k")}
    result = HIPHO.combine(problem, rules, replies, OFFICIAL)
    assert (result.points, result.parts["step_points"]) == (0.3, 0.3)  # not 0.2999997 from a ratio rounded to 6 digits
    assert result.score == 3 / 7


def test_decimal_slot_points_add_up_exactly():
    problem = Problem(
        id="P",
        benchmark="x",
        language="en",
        question="q",
        answers=tuple(AnswerSlot(f"\\boxed{{{n}}}", points=p) for n, p in ((1, 0.1), (2, 0.2), (3, 0.4))),
    )
    result = by_rules(HIPHO, problem, HIPHO.reference(problem, SUITE), check)
    assert (result.points, result.score, problem.points) == (
        0.7,
        1.0,
        0.7,
    )  # 0.1 + 0.2 + 0.4 is 0.7000000000000001 in floats


def test_open_ended_slot_is_left_to_judges():
    seen = []

    def recording_check(jobs):
        seen.extend(jobs)
        return check(jobs)

    problem = Problem(
        id="P",
        benchmark="x",
        language="en",
        question="q",
        answers=(AnswerSlot("", kind="Open-Ended"), AnswerSlot("\\boxed{$2$}")),
    )
    result = by_rules(HIPHO, problem, "<answer>[\\boxed{a sketch}, \\boxed{2}]</answer>", recording_check)
    assert [job.gold for job in seen] == ["2"]
    assert result.points == 1.0
    assert [slot["correct"] for slot in result.slots] == [False, True]


WRONG_OR_MISSING = [
    "<answer>[\\boxed{0}, \\boxed{0}, \\boxed{0}]</answer>",
    "<answer>[\\boxed{0}]</answer>",
    "no answer",
]


@pytest.mark.parametrize("suite", ["sample_hipho", "sample_hipho_evalscope"])
def test_the_slots_a_judge_may_be_asked_about_are_at_most_those_with_an_official_answer(sample, suite):
    """The cost plan's bound before a response exists: every slot with an official answer (of a
    problem without marking schemes, in evalscope's protocol), never fewer than the rules leave."""
    settings = suite_scoring(suite)
    for problem in sample.values():
        bound = [task.key for task in HIPHO.judge_tasks_after_rules_at_most(problem, "a response", settings)]
        answered = [index for index, slot in enumerate(problem.answers) if hipho.scoring.gold_value(slot)]
        expected = [] if settings.protocol == "evalscope" and problem.marking else answered
        assert bound == [f"slot {index}" for index in expected], problem.id
        for response in [HIPHO.reference(problem, SUITE), *WRONG_OR_MISSING]:
            rules = HIPHO.rule_score(problem, response, settings, check(HIPHO.rule_checks(problem, response, settings)))
            asked = [task.key for task in HIPHO.judge_tasks_after_rules(problem, response, rules, settings)]
            assert set(asked) <= set(bound), (problem.id, response)


def test_undecided_check_is_reported_not_scored(sample):
    def stuck(jobs):
        return [Verdict(None, "check exceeded its CPU budget of 10 s") for _ in jobs]

    problem = sample["DemoCPhO_2025_1_1"]
    result = by_rules(HIPHO, problem, HIPHO.reference(problem, SUITE), stuck)
    assert result.points == 0.0
    assert result.undecided == ("slot 1: check exceeded its CPU budget of 10 s",)


# ---------------------------------------------------------------- the real release (../shared/data)


@pytest.fixture(scope="module")
def real():
    if not (REAL / "data").is_dir():
        pytest.skip(f"real HiPhO data not found at {REAL.resolve()} (shared data is optional)")
    return load_release(HIPHO, REAL, REAL_CFG, "hipho")


EXAMS = {
    "APhO_2025": 45,
    "CPhO_2025": 43,
    "EuPhO_2024": 7,
    "F=MA_2024": 25,
    "IPhO_2025": 39,
    "PanMechanics_2024": 29,
    "PanPhO_2025": 47,
}


def test_real_release_loads_235_problems_over_7_exams(real):
    assert len(real) == 235
    counts = {exam: sum(1 for p in real if p.subset == exam) for exam in EXAMS}
    assert counts == EXAMS
    assert len({(p.id, p.language) for p in real}) == 235


def test_real_every_scheme_adds_up_to_its_problem(real):
    schemes = [(p, scheme) for p in real for scheme in p.marking]
    assert len(schemes) > 100
    for problem, scheme in schemes:
        assert round(sum(c.points for c in scheme), 6) == pytest.approx(problem.points), problem.id


def test_real_marking_shapes(real):
    by_id = {p.id: p for p in real}
    assert all(p.marking == () for p in real if p.subset == "F=MA_2024")  # marking absent
    for pid in ("PanPhO_2025_6_8", "PanPhO_2025_6_10", "PanPhO_2025_6_11"):  # flat lists
        assert len(by_id[pid].marking) == 1
    assert max(len(p.marking) for p in real) == 3


def test_real_short_unit_lists(real):
    problem = next(p for p in real if p.id == "PanPhO_2025_5_2")
    assert len(problem.answers) == 3
    assert [slot.unit for slot in problem.answers] == [None, None, None]


def test_real_parts_of_an_exam_problem_are_one_cluster(real):
    """The tables' intervals resample exam problems: the release names each question after its
    exam and problem number (IPhO_2025_1_A_1 is part A.1 of IPhO 2025's problem 1), and the parts
    of one problem share its setup. F=MA's 25 questions, numbered without parts, are each their own."""
    clusters = {}
    for problem in real:
        clusters.setdefault(HIPHO.cluster_of(problem), []).append(problem.id)
    sizes = {exam: len({c for c in clusters if c.startswith(f"{exam}_")}) for exam in EXAMS}
    assert sizes == {
        "APhO_2025": 3,
        "CPhO_2025": 7,
        "EuPhO_2024": 3,
        "F=MA_2024": 25,
        "IPhO_2025": 3,
        "PanMechanics_2024": 18,
        "PanPhO_2025": 6,
    }
    assert len(clusters) == 65 and sum(map(len, clusters.values())) == 235
    assert len(clusters["IPhO_2025_1"]) == 16 and clusters["F=MA_2024_07"] == ["F=MA_2024_07"]
    assert clusters["PanMechanics_2024_17"] == [f"PanMechanics_2024_17_{n}" for n in range(1, 5)]
    # the questions of one exam problem open with its setup: one context among a cluster's questions
    assert all(len({p.context.split("\n")[0] for p in real if HIPHO.cluster_of(p) == c}) == 1 for c in clusters)


def test_real_languages(real):
    assert {p.subset for p in real if p.language == "zh"} == {"CPhO_2025", "PanMechanics_2024"}
    assert sum(1 for p in real if p.language == "zh") == 72


def test_real_exam_totals_match_the_paper(real):
    with open(REAL_RESULTS / "hipho_table3_exam_meta.csv", newline="") as handle:
        meta = {row["row"]: row for row in csv.DictReader(handle)}["full_mark_model"]
    for exam in EXAMS:
        total = round(sum(p.points for p in real if p.subset == exam), 6)
        if exam in meta:
            assert total == pytest.approx(float(meta[exam])), exam
    assert round(sum(p.points for p in real if p.subset == "CPhO_2025"), 6) == 320


def test_real_figures_resolve(real):
    figures = [f for p in real for f in p.figures]
    assert len(figures) == 281
    assert len({f.sha256 for f in figures}) == 79
    assert all(Path(f.path).is_file() and f.mime == "image/png" for f in figures)


# ---------------------------------------------------------------- the reference answers, by rules, on the real release


def release_quirk(slot: AnswerSlot) -> str | None:
    """Why the release keeps a slot's `reference` answer from earning its points by rules, or None.
    A gold whose braces do not balance cannot be written back in a box that closes where it should."""
    gold = hipho.scoring.gold_value(slot)
    depth = 0
    for character in gold:
        depth += {"{": 1, "}": -1}.get(character, 0)
        if depth < 0:
            break
    return "the release's gold has unbalanced braces: no box can hold it" if depth else None


def test_real_exams_are_taken_by_name_and_a_limit_counts_within_them(real):
    from olympiad_eval.stages.render import select

    ipho = select(real, typed("hipho", exams=["IPhO_2025"]))
    assert len(ipho) == 39 and {p.subset for p in ipho} == {"IPhO_2025"}
    assert select(real, typed("hipho", exams=["IPhO_2025"], limit=5)) == ipho[:5]


def real_exams() -> list[str]:
    return sorted(path.stem for path in (REAL / "data").glob("*.json")) if (REAL / "data").is_dir() else []


@pytest.fixture(scope="module")
def real_suites(real):
    from olympiad_eval.stages.render import prompt_for, select

    prompts = {}
    for name in ("hipho", "hipho_en"):
        suite = typed_suite(name, compose_stage("render", [f"suite={name}", "cell.benchmark=hipho"]).suite)
        prompts[name] = [(problem, prompt_for(problem, name, suite, HIPHO)) for problem in select(real, suite)]
    return prompts


def lost_slots(problem: Problem, response: str) -> list[int]:
    result = by_rules(HIPHO, problem, response, check)
    return [
        index
        for index, (slot, checked) in enumerate(zip(problem.answers, result.slots))
        if hipho.scoring.gold_value(slot) and not checked["correct"]
    ]


@pytest.mark.parametrize("suite", ["hipho", "hipho_en"])
@pytest.mark.parametrize("exam", real_exams())
def test_real_reference_earns_every_rule_checkable_point(real_suites, suite, exam):
    rendered = [(problem, prompt) for problem, prompt in real_suites[suite] if problem.subset == exam]
    assert rendered
    for problem, prompt in rendered:
        result = by_rules(HIPHO, problem, prompt.reference, check)
        quirky = [i for i, slot in enumerate(problem.answers) if release_quirk(slot)]
        assert lost_slots(problem, prompt.reference) == quirky, problem.id
        assert exact(result.points) == exact(gradable_points(problem)) - sum(
            exact(problem.answers[i].points) for i in quirky
        )


def real_quirks() -> list:
    if not (REAL / "data").is_dir():
        return []
    return [
        pytest.param(
            problem,
            index,
            id=f"{problem.id}[{index}]",
            marks=pytest.mark.xfail(strict=True, reason=release_quirk(slot)),
        )
        for problem in load_release(HIPHO, REAL, REAL_CFG, "hipho")
        for index, slot in enumerate(problem.answers)
        if release_quirk(slot)
    ]


@pytest.mark.parametrize("problem, index", real_quirks())
def test_real_reference_misses_only_the_release_quirks(problem, index):
    assert lost_slots(problem, HIPHO.reference(problem, SUITE)) == []


def test_the_quirk_rule_finds_unbalanced_braces():
    assert release_quirk(AnswerSlot("\\boxed{$\\frac{1}{2$")) and not release_quirk(
        AnswerSlot("\\boxed{$\\frac{1}{2}$")
    )


def test_real_wrappings_that_rules_once_missed(real):
    by_id = {p.id: p for p in real}
    unclosed = by_id["CPhO_2025_7_6"].answers[0]  # "\\boxed{$\\omega^2 = ...$": never closed
    assert hipho.scoring.gold_value(unclosed).startswith("\\omega^2 =") and "boxed" not in hipho.scoring.gold_value(
        unclosed
    )
    dollar_outside = by_id["CPhO_2025_6_3"].answers[1]  # "\\boxed{$\\gamma = ...}$"
    assert "$" not in hipho.scoring.gold_text(dollar_outside)


# ---------------------------------------------------------------- the answer judge sees ranges as ranges

ANSWER_JUDGE = scoring(
    HIPHO,
    prompts={
        "answer": OmegaConf.load(REPO / "conf" / "prompt" / "hipho_answer_judge.yaml"),
        "criterion": OmegaConf.load(REPO / "conf" / "prompt" / "hipho_criterion_judge.yaml"),
    },
)


def judge_messages(problem: Problem, response: str) -> dict[str, str]:
    rules = by_rules(HIPHO, problem, response, check)
    return {
        task.key: task.messages[1]["content"][0]["text"]
        for task in HIPHO.judge_tasks_after_rules(problem, response, rules, ANSWER_JUDGE)
    }


def test_the_answer_judge_is_shown_the_range_as_written():
    problem = Problem(
        id="P", benchmark="x", language="en", question="q", answers=(AnswerSlot("\\boxed{$[140, 215]$}", unit="K"),)
    )
    [text] = judge_messages(problem, "<answer>[\\boxed{100}]</answer>").values()
    assert "Official answer for this part: $[140, 215]$" in text
    assert "177.5" not in text


def test_real_every_range_slot_reaches_the_answer_judge_as_its_range(real):
    written_range = re.compile(r"\[[^\[\]]*,[^\[\]]*\]")
    ranged = [(p, i) for p in real for i, slot in enumerate(p.answers) if written_range.search(slot.value)]
    assert len(ranged) == 23
    assert all(hipho.scoring.accepted_range(p.answers[i]) for p, i in ranged)
    for problem in {p.id: p for p, _ in ranged}.values():
        wrong = "<answer>[" + ", ".join("\\boxed{-12345}" for _ in problem.answers) + "]</answer>"
        messages = judge_messages(problem, wrong)
        for index in (i for p, i in ranged if p.id == problem.id):
            [shown] = [line for line in messages[f"slot {index}"].splitlines() if line.startswith("Official answer")]
            written = written_range.search(problem.answers[index].value).group(0)
            assert written in shown, (problem.id, index)


# ---------------------------------------------------------------- figures go where their number says

_MARKER_AT_END = re.compile(r"\[figure(\d+)\]\s*$")


def figure_placements(prompt) -> list[tuple[int | None, str, str]]:
    """(the number of the marker an image follows, or None, its sha256, the caption line after it)."""
    content = prompt.messages[-1]["content"]
    found = []
    for index, part in enumerate(content):
        if part["type"] != "image":
            continue
        before = content[index - 1] if index and content[index - 1]["type"] == "text" else None
        marker = _MARKER_AT_END.search(before["text"]) if before else None
        following = content[index + 1] if index + 1 < len(content) else {}
        after = following.get("text", "").strip().split("\n")[0].strip()
        found.append((int(marker.group(1)) if marker else None, part["sha256"], after))
    return found


def test_real_every_figure_follows_the_marker_of_its_number(real_suites):
    """The same figure always follows the same number and caption within its problem, every image a
    record's text cites goes after its marker, and only the figures no marker names follow the text."""
    names = {}
    for problem, prompt in real_suites["hipho"]:
        names.update({f.sha256: f.name.rsplit("/", 1)[-1] for f in problem.figures})
        cited = {int(n) for n in re.findall(r"\[figure(\d+)\]", problem.context + problem.question)}
        placements = figure_placements(prompt)
        assert len(placements) == len(problem.figures), problem.id
        after_text = [sha for number, sha, _ in placements if number is None]
        assert len(after_text) == max(0, len(problem.figures) - len(cited)), problem.id
    numbers, captions, figures_of = {}, {}, {}
    for problem, prompt in real_suites["hipho"]:
        paper_problem = "_".join(problem.id.split("_")[:3])
        for number, sha, caption in figure_placements(prompt):
            if number is not None:
                numbers.setdefault((paper_problem, sha), set()).add(number)
            label = re.match(r"(?:Fig(?:ure)?\.?|图)\s*[A-Z]?\.?\d+[a-z]?", caption)  # "Fig. 4", "Figure A.1", "图 2a"
            if number is not None and label:
                captions.setdefault((paper_problem, sha), set()).add(label.group(0))
                figures_of.setdefault((paper_problem, label.group(0)), set()).add(names[sha])
    assert len(numbers) > 40 and len(captions) > 30
    assert {key: found for key, found in numbers.items() if len(found) > 1} == {}
    assert {key: found for key, found in captions.items() if len(found) > 1} == {}
    assert {key: found for key, found in figures_of.items() if len(found) > 1} == {}


@pytest.mark.parametrize(
    "pid, expected",
    [
        ("IPhO_2025_1_C_3", [(2, "IPhO_2025_1_c_1.png", "Fig. 2: Geometry of the measurement")]),
        (
            "IPhO_2025_2_C_3",
            [
                (1, "IPhO_2025_2_a_1.png", "Fig. 1. Artistic view of Cox's clock"),
                (4, "IPhO_2025_2_b_2.png", "Fig. 4. Simplified model of the perturbative term $P_{1}(t)$"),
                (5, "IPhO_2025_2_c_1.png", "Fig. 5. Real Cox's timepiece (without mercury)"),
                (6, "IPhO_2025_2_c_2.png", "Fig. 6. Sketch of the system modeling the timepiece"),
                (7, "IPhO_2025_2_c_3.png", ""),
            ],
        ),
    ],
)
def test_real_figures_by_number_where_the_list_skips_numbers(real_suites, pid, expected):
    [(problem, prompt)] = [(p, q) for p, q in real_suites["hipho"] if p.id == pid]
    names = {f.sha256: f.name.rsplit("/", 1)[-1] for f in problem.figures}
    assert [(number, names[sha], caption) for number, sha, caption in figure_placements(prompt)] == expected


# ---------------------------------------------------------------- tables: exact sums and the official aggregates


def judgments(rows: list[tuple[str, str, float | None, float]], sample: int = 0) -> pd.DataFrame:
    """(exam, problem, points earned or None for a failure, problem points) -> the frame `tables` reads."""
    return pd.DataFrame(
        [
            {
                "suite": "s",
                "model": "m",
                "judge": "j",
                "subset": exam,
                "id": pid,
                "sample": sample,
                "points": points,
                "max_points": available,
                "status": "scored" if points is not None else "judge_error",
            }
            for exam, pid, points, available in rows
        ]
    )


TWO_EXAMS = judgments(
    [
        ("A", "a1", 2.0, 2.0),
        ("A", "a2", 0.0, 2.0),
        ("A", "a3", None, 2.0),  # 2 of 6 points; a judge error earns 0
        ("B", "b1", 1.0, 1.0),
        ("B", "b2", 0.0, 9.0),  # 1 of 10 points
    ]
)


def test_exam_score_rates_and_their_mean_over_exams():
    table = HIPHO.tables(TWO_EXAMS, OmegaConf.create({}))["exam_score_rate"]
    # A: 2/6 = 33.33%; B: 1/10 = 10%; the mean of the two rates 21.67% (pooled points would give 3/16)
    assert table.to_dict("records") == [
        {"suite": "s", "model": "m", "judge": "j", "A": 33.33, "B": 10.0, "mean over exams": 21.67}
    ]


def test_vlmevalkit_s_rate_leaves_a_problem_that_failed_out_of_the_maximum():
    table = HIPHO.tables(TWO_EXAMS, OmegaConf.create({}))["scored_score_rate"]
    # A: 2 of the 4 points of the problems scored (a3's judgment failed) = 50%; B: 1/10 = 10%
    assert table.to_dict("records") == [
        {"suite": "s", "model": "m", "judge": "j", "A": 50.0, "B": 10.0, "mean over exams": 30.0}
    ]


def test_evalscope_mean_problem_ratio_per_exam_and_overall():
    table = HIPHO.tables(TWO_EXAMS, OmegaConf.create({}))["problem_ratio"]
    # A: (1 + 0 + 0) / 3; B: (1 + 0) / 2; overall (1 + 0 + 0 + 1 + 0) / 5
    assert table.to_dict("records") == [
        {"suite": "s", "model": "m", "judge": "j", "A": 33.33, "B": 50.0, "overall": 40.0}
    ]


def test_an_exam_whose_points_add_up_exactly_to_the_cutoff_earns_the_medal():
    # 28 x 0.7 + 0.1 is 19.7 points; in floats 19.699999999999992
    frame = judgments([("X", f"p{n}", 0.7, 1.0) for n in range(28)] + [("X", "p28", 0.1, 1.0)])
    assert sum(frame["points"]) < 19.7
    tables = HIPHO.tables(frame, OmegaConf.create({"exams": {"X": {"gold": 19.7, "silver": 12.1, "bronze": 7.2}}}))
    assert tables["medals"]["X"].tolist() == ["gold"]
    assert tables["exam_scores"]["X"].tolist() == [19.7, 29.0]


def test_the_mean_over_samples_is_exact():
    # samples of 0.1 + 0.2 and 0.4 points: the mean is 0.35, not 0.35000000000000003
    frame = pd.concat(
        [
            judgments([("X", "p1", 0.1, 1.0), ("X", "p2", 0.2, 1.0)], sample=0),
            judgments([("X", "p1", 0.4, 1.0), ("X", "p2", 0.0, 1.0)], sample=1),
        ]
    )
    tables = HIPHO.tables(frame, OmegaConf.create({"exams": {"X": {"gold": 0.35}}}))
    assert tables["medals"]["X"].tolist() == ["gold"]
    assert tables["exam_scores_std"]["X"].tolist() == [0.05]


def test_the_report_shows_every_criterion_with_its_award_and_the_scheme_totals():
    from olympiad_eval.core.records import AnswerSlot, Criterion, Judgment, Problem

    problem = Problem(
        id="1",
        benchmark="b",
        language="en",
        question="q",
        answers=(AnswerSlot("x", points=3.0),),
        marking=((Criterion("A", 1.0), Criterion("B", 2.0)), (Criterion("C", 3.0),)),
    )
    common = dict(
        id="1",
        suite="s",
        model="m",
        sample=0,
        language="en",
        subset="",
        status="scored",
        score=1.0,
        points=3.0,
        max_points=3.0,
    )
    judged = Judgment(
        **common,
        judge="gpt-4o",
        parts={"answer_points": 0.0, "step_points": 3.0},
        details=(
            {
                "judge": "gpt-4o",
                "criterion 0.0": {"awarded": 1.0, "reasoning": "yes"},
                "criterion 0.1": {"awarded": 2.0, "reasoning": "yes too"},
                "criterion 1.0": {"awarded": 1.0, "reasoning": "part"},
            },
        ),
    )
    [section] = HIPHO.report_sections(problem, judged)
    assert section.css == "criteria"
    assert section.tables[0].rows == (
        ("1.1", "A", 1.0, 1.0, "yes"),
        ("1.2", "B", 2.0, 2.0, "yes too"),
        ("2.1", "C", 3.0, 1.0, "part"),
    )
    facts = dict(section.facts)
    assert facts["scheme 1"] == "3 of 3 points" and facts["scheme 2"] == "1 of 3 points"
    assert facts["winning scheme"].startswith("scheme 1") and facts["step level"].startswith("3 of 3 points")
    # rules only: every criterion shown, marked not judged; the rules' points as the answer level
    [rules] = HIPHO.report_sections(problem, Judgment(**common, judge="rule"))
    assert "not judged" in rules.title
    assert rules.tables[0].rows == (
        ("1.1", "A", 1.0, "not judged (rules only)"),
        ("1.2", "B", 2.0, "not judged (rules only)"),
        ("2.1", "C", 3.0, "not judged (rules only)"),
    )
    assert dict(rules.facts)["answer level"].startswith("3 of 3 points")
    assert dict(rules.facts)["the marking scheme"] == "3 criteria in 2 schemes"
