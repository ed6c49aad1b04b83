"""HiPhO's `protocol: vlmevalkit` (`benchmarks.hipho.vlmevalkit`): each quirk of VLMEvalKit's HiPhO
scoring, pinned with what VLMEvalKit's own functions return (probed at open-compass/VLMEvalKit
e8e78f05f3080fe28154f2130321f17951c3be94 in a worker thread, as `evaluate()` runs them). The whole
chain against VLMEvalKit's files is `bench/vlmevalkit_agreement.py`."""

from __future__ import annotations

import pytest

from olympiad_eval.benchmarks.base import Score
from olympiad_eval.benchmarks.hipho import vlmevalkit
from olympiad_eval.core.records import AnswerSlot, Criterion, Problem

pytest.importorskip("pylatexenc")


@pytest.mark.parametrize(
    ("response", "count", "slots"),
    [
        ("<answer>[\\boxed{1}, \\boxed{2}]</answer> Final: \\boxed{3}", 2, ["2", "3"]),  # a box after </answer>
        ("\\boxed {5}", 1, [None]),  # a space: no answer
        ("\\boxed{1} then \\fbox{2}", 2, ["", "1"]),  # \fbox only where no \boxed is left
        ("\\fbox{1} then \\boxed{2}", 2, [None, "2"]),
        ("\\fbox{7}", 1, [None]),
        ("\\boxed{a}", 3, ["", "", "a"]),  # padded in front
        ("no box at all", 2, ["", ""]),
        ("\\boxed{}", 1, [""]),
        ("\\boxed{2} and \\boxed{1", 1, ["2"]),  # an unclosed box is skipped
        ("\\boxed{\\frac{1}{2}}", 1, ["\\frac{1}{2}"]),
        ("$\\boxed{3}$ \\boxed{{4}}", 2, ["3", "{4}"]),
        ("\\boxed{x}\\boxed{y}", 1, ["y"]),
        ("<think>\\boxed{9}</think><answer>none</answer>", 1, ["9"]),  # the think block counts
        ("\\boxed{1, 2}", 2, ["", "1, 2"]),
    ],
)
def test_slots_are_the_last_boxes_of_the_whole_response(response, count, slots):
    assert vlmevalkit.slot_answers(response, count) == slots


@pytest.mark.parametrize(
    ("gold", "compared"),
    [
        ("\\boxed{$\\beta = 2$}", "$\\beta = 2$"),
        ("\\boxed{21.9}", "21.9"),
        ("", ""),
        ("plain text gold", "plain text gold"),
        ("\\boxed{A}, \\boxed{B}", "B"),
        ("\\boxed{$\\omega^2 = \\omega_{pe}^2 + \\gamma_e \\frac{k^2 k_B T_e}{m_e}$", None),  # CPhO_2025_7_6
    ],
)
def test_the_official_answer_is_its_last_box(gold, compared):
    assert vlmevalkit.official_answer(gold) == compared


@pytest.mark.parametrize(
    ("gold", "given", "equal"),
    [
        ("10", "13", True),
        ("10", "15", False),
        ("0.3", "0.34", True),
        ("0.3", "0.35", True),
        ("21.9", "21.96", True),
        ("100", "104", True),
        ("100", "130", True),
        ("1000", "1200", True),
        ("1.2e5", "1.25e5", True),
        ("0.002", "0.0024", True),
        ("0", "0", True),
    ],
)
def test_the_loose_numeric_step(gold, given, equal):
    """Both numbers rounded to the fewer decimals they need: gold 10 accepts 13."""
    assert vlmevalkit.equal_under_sympy(gold, given) is equal


@pytest.mark.parametrize(
    ("given", "gold", "correct"),
    [
        ("13", "10", True),
        ("15", "10", False),
        ("9.9", "10", True),
        ("0.36", "0.3", False),
        ("2.4", "2", True),
        ("2.6", "2", False),
        ("1.25\\times10^{5}", "1.2\\times10^{5}", True),
        ("1.3\\times10^{5}", "1.2\\times10^{5}", False),
        ("5.2e-7", "5.21e-7", True),
        ("1e-7", "9e-7", False),
        ("0.001", "0", True),
        ("13.6", "-13.6", False),
        ("0.525", "[0.521, 0.528]", False),  # a range is a pair no number equals: the judge decides
        ("21.9 km", "21.9", False),  # `km` is no unit word
        ("255 \\, \\text{K}", "255", True),
        ("B", "B", True),
        ("b", "B", True),  # lower-cased
        ("(B)", "B", True),
        ("(A)", "A", False),  # `A` is a unit word
        ("(C)", "C", False),
        ("X = D", "D", True),
        ("X = C", "C", False),
        ("B. 10 m", "B", False),
        ("A, D", "A, D", True),
        ("D, A", "A, D", False),
        ("\\alpha = 2", "$\\beta = 2$", True),  # the left side of `=` is ignored
        ("X = 13", "10", True),
        ("\\pi", "$x = 0, \\theta = 0$ or $x = 0, \\theta = \\pi$", True),
        ("\\beta = 3", "$\\beta = 2$", False),
        ("\\dfrac{1}{2}", "\\frac{1}{2}", True),
        ("0.5", "\\frac{1}{2}", True),
        ("1/2", "\\frac{1}{2}", True),
        ("2/4", "1/2", False),
        ("3.14", "\\pi", True),
        ("\\pi", "3.1416", True),
        ("mg", "Mg", True),
        ("", "x", False),
        ("x", "", False),
        ("", "", True),
    ],
)
def test_one_slot_by_its_rules(given, gold, correct):
    """`grade` before its judge (Math-Verify never says yes in VLMEvalKit's worker threads)."""
    assert vlmevalkit.rules_match(given, gold).correct is correct


@pytest.mark.parametrize(
    ("reply", "correct"),
    [
        ("[Correct]", True),
        ("Correct", True),
        ("  [Correct]\n", True),
        ("[Correct].", False),
        ("**[Correct]**", False),
        ("[correct]", False),
        ("Correct.", False),
        ("[Correct] The answer matches.", False),
        ("[Incorrect]", False),
    ],
)
def test_the_answer_judge_must_reply_exactly_correct(reply, correct):
    assert vlmevalkit.parse_verdict(reply)["correct"] is correct


@pytest.mark.parametrize(
    ("reply", "award"),
    [
        ("\\boxed{0.4}", 0.4),
        ("\\boxed{0.125}", 0.12),  # binary rounding to 2 decimals
        ("\\boxed{0.135}", 0.14),
        ("\\boxed{1/2}", 2.0),
        ("\\boxed{\\frac{1}{2}}", 1.0),
        ("\\boxed{0.4 pt}", 0.4),
        ("\\boxed{-0.5}", -0.5),
        ("-1", 1.0),
        ("Score: 0.3", 0.3),
        ("0.25", 0.25),
        ("I give 0.3 of 0.5 points", 0.5),  # the last number
        ("Award: 0.2 pt (criterion maximum 0.5 pt)", 0.5),
        ("\\boxed{1e-1}", 0.1),
        ("Boxed{0.3}", 0.3),
        ("no number", 0.0),
        ("\\boxed{} 0.2", 0.2),
        ("\\boxed{0.1} ... \\boxed{0.2}", 0.2),
        ("\\boxed{5}", 5.0),  # no per-criterion cap
    ],
)
def test_the_award_is_the_last_number_of_the_reply(reply, award):
    assert vlmevalkit.parse_award(reply)["awarded"] == award


def problem(points: list[float], schemes: list[list[str]] | None = None, golds: list[str] | None = None) -> Problem:
    golds = golds or [f"\\boxed{{{n + 1}}}" for n in range(len(points))]
    return Problem(
        id="P",
        benchmark="hipho",
        language="en",
        question="Find it.",
        answers=tuple(AnswerSlot(value=g, points=p) for g, p in zip(golds, points)),
        marking=tuple(tuple(Criterion(text=t, points=0.0) for t in scheme) for scheme in schemes or []),
    )


def awards(*values, attempt: int = 1, scheme: int = 0) -> dict:
    return {
        vlmevalkit._criterion_key(scheme, c, attempt): {"awarded": v, "reply": f"\\boxed{{{v}}}"}
        for c, v in enumerate(values)
    }


def test_one_scheme_overflowing_every_attempt_is_rescaled():
    p = problem([1.0], [["a", "b"]])
    replies = {k: v for attempt in range(1, 5) for k, v in awards(0.8, 0.8, attempt=attempt).items()}
    step, shown = vlmevalkit.step_level(p, replies)
    assert step == 1.0 and [entry["score"] for entry in shown] == [0.5, 0.5]


def test_one_scheme_asks_again_while_it_overflows():
    p = problem([1.0], [["a", "b"]])
    first = awards(0.8, 0.8)
    again = vlmevalkit.judge_tasks_next(p, "r", None, first, scoring())
    assert [task.key for task in again] == ["criterion 0.0 attempt 2", "criterion 0.1 attempt 2"]
    assert "RETRY NOTICE" in again[0].messages[1]["content"][0]["text"]  # after the fence's system message
    assert vlmevalkit.step_level(p, first | awards(0.5, 0.4, attempt=2))[0] == 0.9


def test_one_ulp_over_the_points_is_an_overflow():
    """0.1 + 0.2 > 0.3 as floats: full credit is asked again 3 times, then rescaled."""
    p = problem([0.3], [["a", "b"]])
    assert vlmevalkit.judge_tasks_next(p, "r", None, awards(0.1, 0.2), scoring())
    replies = {k: v for attempt in range(1, 5) for k, v in awards(0.1, 0.2, attempt=attempt).items()}
    assert vlmevalkit.step_level(p, replies)[0] == 0.3


def test_several_schemes_are_each_asked_once_and_an_overflow_rescaled_at_once():
    p = problem([1.0], [["a"], ["b", "c"]])
    replies = awards(0.2) | awards(1, 1, scheme=1)
    assert vlmevalkit.judge_tasks_next(p, "r", None, replies, scoring()) == []
    assert vlmevalkit.step_level(p, replies)[0] == 1.0


def test_a_failed_criterion_request_drops_the_problem():
    p = problem([1.0], [["a", "b"]])
    replies = awards(0.5) | {vlmevalkit._criterion_key(0, 1, 1): "the request failed"}
    rules = Score(score=0.0, points=0.0, extracted=("",), slots=({"correct": False, "split": None},))
    dropped = vlmevalkit.combine(p, rules, {"judge": replies}, scoring())
    assert isinstance(dropped, str) and dropped.startswith(vlmevalkit.DROPPED)


def test_the_answers_of_a_marked_problem_are_asked_after_its_step_level():
    """VLMEvalKit scores the step level first: a failed criterion request drops the problem before
    any answer is asked of the judge."""
    p = problem([1.0], [["a", "b"]])
    rules = vlmevalkit.rule_score(p, "\\boxed{7}", scoring(), [vlmevalkit.rules_match("7", "1")])
    assert vlmevalkit.judge_tasks_after_rules(p, "\\boxed{7}", rules, scoring()) == []
    done = vlmevalkit.judge_tasks_next(p, "\\boxed{7}", rules, awards(0.5, 0.2), scoring())
    assert [task.key for task in done] == ["slot 0"]
    failed = awards(0.5) | {vlmevalkit._criterion_key(0, 1, 1): "the request failed"}
    assert vlmevalkit.judge_tasks_next(p, "\\boxed{7}", rules, failed, scoring()) == []
    unmarked = problem([1.0])
    assert [t.key for t in vlmevalkit.judge_tasks_after_rules(unmarked, "\\boxed{7}", rules, scoring())] == ["slot 0"]


@pytest.mark.parametrize(
    ("response", "dropped"),
    [
        ("\\boxed {1}, \\boxed{2}", True),  # a None slot beside an answered one raises
        ("\\boxed {1}", False),  # no slot answered: 0, no judge
        ("\\boxed{1}, \\boxed{2}", False),
    ],
)
def test_a_box_it_cannot_read_beside_one_it_can_drops_the_problem(response, dropped):
    p = problem([0.5, 0.5])
    score = vlmevalkit.rule_score(p, response, scoring(), [vlmevalkit.rules_match("2", "2")] * 2)
    assert bool(score.unscorable) is dropped


def test_an_unclosed_gold_drops_an_answered_problem_only():
    p = problem([5.0], golds=["\\boxed{$\\omega^2 = 1$"])
    answered = vlmevalkit.rule_score(p, "\\boxed{1}", scoring(), [])
    assert "never closed" in answered.unscorable
    unanswered = vlmevalkit.rule_score(p, "nothing", scoring(), [])
    assert not unanswered.unscorable and unanswered.points == 0.0


def test_the_prediction_is_cut_where_its_xlsx_cuts():
    long = "x" * 40000 + "\\boxed{1}"
    assert vlmevalkit.prediction(long, {"prediction_chars": 32767}) == "x" * 32767
    assert vlmevalkit.prediction(long, {"prediction_chars": None}).endswith("\\boxed{1}")
    assert vlmevalkit.prediction("N/A", {}) == "nan"


def scoring():
    from tests.support import suite_scoring

    return suite_scoring("sample_hipho_vlmevalkit")
