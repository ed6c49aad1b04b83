"""HiPhO's evalscope protocol: evalscope 1.14.1's criterion parsing (its bug included), its judge
requests and its per-problem ratio, on small fixed inputs (evalscope itself is not needed;
bench/evalscope_agreement.py compares with it)."""

from __future__ import annotations

import pytest

from olympiad_eval.benchmarks import hipho, plugin
from olympiad_eval.benchmarks.base import Score
from olympiad_eval.benchmarks.hipho import evalscope
from olympiad_eval.core.records import AnswerSlot, Criterion, Figure, InputError, Problem
from olympiad_eval.scoring.evalscope import completion
from tests.support import suite_scoring

HIPHO = plugin("hipho")

CFG = suite_scoring("sample_hipho_evalscope")

needs_math_verify = pytest.mark.skipif(
    __import__("importlib").util.find_spec("math_verify") is None,
    reason="the evalscope protocol's rule check needs math-verify (pip install 'olympiad-eval[evalscope]')",
)


TWO = (AnswerSlot("\\boxed{$2$}", points=1.0),)


def problem(marking=(), answers=TWO, figures=()) -> Problem:
    return Problem(
        id="P_1",
        benchmark="hipho",
        language="en",
        question="Find $x$.",
        context="A ball.",
        information="g = 9.8",
        answers=tuple(answers),
        figures=tuple(figures),
        marking=tuple(tuple(Criterion(text, points) for text, points in scheme) for scheme in marking),
    )


def rules(*given: str) -> Score:
    """The rules' score as `hipho.score` leaves it: what was extracted, slot by slot."""
    return Score(
        score=0.0,
        points=0.0,
        extracted=given,
        slots=tuple({"expected": "", "given": g, "correct": False, "points": 1.0} for g in given),
    )


# ---------------------------------------------------------------- criterion points, as evalscope parses them


@pytest.mark.parametrize(
    "text, points",
    [
        ("Award 0.4 pt if the answer writes $f = \\mu m g$. Otherwise, award 0 pt.", 0.4),
        ("Award 1.5 points if both values are correct.", 1.5),
        ("Award $0.5$ pt for the diagram", 0.5),
        ("如果解答正确，则得 2 分。否则得 0 分。", 2.0),
        ("答案错误扣 1 分", 1.0),
        # evalscope's bug, copied: "a total of" hides the total; the largest partial award wins, or nothing
        (
            "Award a total of 1.0 pt for the following: award 0.4 pt if the answer uses $L = at^2/2$ "
            "and 0.6 pt if it obtains $t$.",
            0.4,
        ),
        ("Award a total of 0.8 pts for the following: award 0.1 pt for each correct entry.", 0.1),
        ("Award a total of 2 pts if the sketch is right.", 0.0),
        ("The answer is correct.", 0.0),
    ],
)
def test_criterion_points_are_evalscopes(text, points):
    assert evalscope.criterion_points(text) == points


def test_the_official_protocol_parses_the_total_that_evalscope_misses():
    text = "Award a total of 1.0 pt for the following: award 0.4 pt if ... and 0.6 pt if ..."
    assert (hipho.loading.criterion_points(text), evalscope.criterion_points(text)) == (1.0, 0.4)


# ---------------------------------------------------------------- step level

TOTAL = "Award a total of 1.0 pt: award 0.5 pt if the speed is right, 0.5 pt if the time is right."


def test_step_requests_are_evalscopes_prompt_one_user_message_no_figures():
    figure = Figure(path="f.png", sha256="0" * 64, mime="image/png")
    p = problem([[("Award 0.5 pt if $v = gt$.", 0.5), ("得 2 分", 2.0)]], figures=[figure])
    cfg = suite_scoring("sample_hipho_evalscope", "suite.scoring.judge_figures=true")
    tasks = HIPHO.judge_tasks(p, "<think>v = gt</think>\n<answer>[\\boxed{2}]</answer>", cfg)
    assert [t.key for t in tasks] == ["criterion 0.0", "criterion 0.1"]
    (message,) = tasks[0].messages
    assert message["role"] == "user" and isinstance(message["content"], str)  # no system guard, no image
    assert message["content"].startswith("You are an expert physics competition grader.")
    # the judge sees the response without its think block, as evalscope's message model leaves it
    assert (
        "Physics Problem:\nFind $x$.\nStudent's Solution:\n<answer>[\\boxed{2}]</answer>\nGrading Criterion:\n"
        "Award 0.5 pt if $v = gt$.\nInstructions:" in message["content"]
    )
    assert "A ball." not in message["content"] and "g = 9.8" not in message["content"]  # no context, no constants
    assert message["content"].endswith('- "awarded": a number >= 0.0 and <= 0.5')
    assert tasks[1].messages[0]["content"].endswith("<= 2.0")  # evalscope writes the bound as a float


def test_a_criterion_without_parsed_points_is_not_asked_and_not_attainable():
    p = problem([[("Award 0.5 pt if $v = gt$.", 0.5), (TOTAL, 1.0)]], answers=[AnswerSlot("1", points=1.5)])
    assert [t.key for t in evalscope.judge_tasks(p, "r", CFG)] == ["criterion 0.0", "criterion 0.1"]
    # the "total" criterion is worth 0.5 to evalscope (its largest partial award), not 1.0
    judged = {"criterion 0.0": {"awarded": 0.5}, "criterion 0.1": {"awarded": 0.25}}
    assert evalscope.step_ratio(p, rules(""), judged) == pytest.approx(0.75 / 1.0)
    nothing = problem([[("Award 0.5 pt if $v = gt$.", 0.5), ("Award a total of 1 pt if right.", 1.0)]])
    assert [t.key for t in evalscope.judge_tasks(nothing, "r", CFG)] == ["criterion 0.0"]
    assert evalscope.step_ratio(nothing, rules(""), {"criterion 0.0": {"awarded": 0.25}}) == 0.5


def test_the_best_scheme_is_the_best_ratio_and_the_answers_do_not_count():
    p = problem(
        [
            [("Award 1 pt if a.", 1.0), ("Award 1 pt if b.", 1.0)],  # 1 of 2: ratio 0.5
            [("Award 0.6 pt if c.", 0.6)],
        ],  # 0.45 of 0.6: ratio 0.75
        answers=[AnswerSlot("\\boxed{$2$}", points=2.0)],
    )
    judged = {"criterion 0.0": {"awarded": 1.0}, "criterion 0.1": {"awarded": 0.0}, "criterion 1.0": {"awarded": 0.45}}
    score = evalscope.combine(p, rules("2"), {"g": judged})  # the right answer: no max with the answer level
    assert score.score == pytest.approx(0.75) and score.points == pytest.approx(1.5)
    two_judges = evalscope.combine(p, rules("2"), {"g": judged, "h": {**judged, "criterion 1.0": {"awarded": 0.0}}})
    assert two_judges.score == pytest.approx((0.75 + 0.5) / 2)


@pytest.mark.parametrize(
    "reply, parsed",
    [
        ('{"awarded": 0.5}', {"awarded": 0.5}),
        ('<think>hm</think> {"awarded": 0, "why": "extra keys are allowed"}', {"awarded": 0.0}),
        ('{"awarded": "0.25"}', {"awarded": 0.25}),  # pydantic's coercion of a numeric string
        ('{"awarded": 0.6}', None),  # above the criterion's points: invalid, never capped
        ('{"awarded": -0.1}', None),
        ('{"awarded": true}', None),
        ('{"awarded": 0.1} {"awarded": 0.2}', None),  # two verdicts: invalid
        ("full marks", None),
    ],
)
def test_awards_follow_evalscopes_contract(reply, parsed):
    assert evalscope.parse_awarded(0.5)(reply) == parsed


def test_an_invalid_reply_leaves_the_problem_unscored():
    p = problem([[("Award 1 pt if a.", 1.0)]])
    assert isinstance(evalscope.combine(p, rules(""), {"g": {"criterion 0.0": "judge g: invalid reply"}}), str)


# ---------------------------------------------------------------- answer level


@pytest.mark.parametrize(
    "response, graded",
    [
        ("<think>\nv = gt\n</think>\n<answer>[\\boxed{2}]</answer>", "<answer>[\\boxed{2}]</answer>"),
        ('So <think signature="s">a</think> then <think>b</think> end', "So  then <think>b</think> end"),
        ("<think>never closed", "<think>never closed"),
    ],
)
def test_evalscope_grades_the_response_without_its_first_think_block(response, graded):
    assert completion(response) == graded


def test_boxes_come_from_the_whole_response_in_order():
    text = "<think>so \\boxed{1} and \\boxed{\\frac{1}{2}}</think><answer>[\\boxed{ 3 }, \\fbox{4}]</answer> \\boxed{5"
    assert evalscope.boxed_answers(text) == ["1", "\\frac{1}{2}", "3", "4"]  # an unclosed box ends the list
    assert evalscope.gold("\\boxed{$[0.52, 0.53]$}") == "$[0.52, 0.53]$" and evalscope.gold(" A ") == "A"


@needs_math_verify
def test_answer_level_rule_check_then_the_judge_for_non_empty_misses():
    slots = [
        AnswerSlot("\\boxed{$\\frac{1}{2}$}", points=3.0),
        AnswerSlot("\\boxed{$7$}", points=1.0),
        AnswerSlot("\\boxed{$B$}", points=1.0),
    ]
    p = problem(answers=slots)
    given = rules("0.5", "8", "")  # the rule matches slot 0; slot 1 goes to the judge; slot 2 is empty
    tasks = HIPHO.judge_tasks_after_rules(p, "unused", given, CFG)
    assert [t.key for t in tasks] == ["slot 1"]
    (message,) = tasks[0].messages
    assert "Question: Find $x$.\nOutput sentence: 8\nCorrect answer: $7$\n" in message["content"]
    assert message["content"].endswith('- "correct": true or false')
    assert evalscope.parse_correct('{"correct": true}') == {"correct": True}
    assert evalscope.parse_correct('{"correct": "yes"}') is None
    # unweighted: 1 of 3 slots although slot 0 holds 3 of the 5 points
    assert evalscope.combine(p, given, {"g": {"slot 1": {"correct": False}}}).score == pytest.approx(1 / 3)
    assert evalscope.combine(p, given, {"g": {"slot 1": {"correct": True}}}).score == pytest.approx(2 / 3)


@needs_math_verify
def test_math_verify_semantics_ranges_are_intervals_and_case_folds():
    assert not evalscope.rule_match("0.525", "$[0.52, 0.53]$")  # no number equals an interval
    assert evalscope.rule_match("[0.52, 0.53]", "$[0.52, 0.53]$")
    assert evalscope.rule_match("1.5e3", "1500") and evalscope.rule_match("0.3333333", "\\frac{1}{3}")
    assert evalscope.rule_match("b", "B")  # Math-Verify folds case, which the official protocol does not


@needs_math_verify
def test_a_gold_that_math_verify_cannot_parse_leaves_the_problem_out():
    p = problem(answers=[AnswerSlot("\\boxed{$2$}"), AnswerSlot("\\boxed{$\\text{}$}")])
    given = rules("3", "")
    assert evalscope.judge_tasks_after_rules(p, "r", given, CFG) == []
    why = evalscope.combine(p, given, {"g": {}})
    assert isinstance(why, str) and "evalscope excludes the problem" in why


def test_the_official_prompts_are_refused():
    official = suite_scoring("sample_hipho", "suite.scoring.protocol=evalscope")
    with pytest.raises(InputError, match="hipho_evalscope_step_judge"):
        HIPHO.judge_tasks(problem([[("Award 1 pt if a.", 1.0)]]), "r", official)


@needs_math_verify
def spin(seconds: float) -> bool:
    """CPU work for `seconds` of this process's CPU time."""
    import time

    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
    return True


def test_a_comparison_past_evalscopes_deadline_leaves_the_problem_out(monkeypatch):
    """The deadline is the child's CPU time (evalscope's is wall time): a comparison that needs more
    is left out, however idle the machine; one that waits without working is not cut short by it."""
    import time

    monkeypatch.setattr(evalscope, "MATH_DEADLINE_S", 0.5)  # evalscope's is 30 s
    with pytest.raises(evalscope.Unscorable, match="took over 0.5 s of CPU"):
        evalscope._isolated(spin, 30)  # the child ends by its CPU limit, not after 30 s
    assert evalscope._isolated(time.sleep, 1) is None  # a second of waiting costs no CPU
    assert evalscope._isolated(spin, 0.1) is True


def test_the_evalscope_protocol_reads_the_boxes_evalscope_reads():
    """evalscope takes the last boxes of the whole response without its think block; the official
    code those of the <answer> block when it has any."""
    from olympiad_eval.benchmarks.hipho.scoring import final_boxes

    response = "<think>\\boxed{9}</think> so \\boxed{1}\n<answer>[\\boxed{2}]</answer>\nrecheck: \\boxed{3}"
    assert final_boxes(response, 1, "official") == ["2"]
    assert final_boxes(response, 1, "evalscope") == ["3"]
    assert final_boxes(response, 5, "evalscope") == ["1", "2", "3"]
    assert final_boxes("<think>\\boxed{9}</think> no box after", 1, "evalscope") == []
