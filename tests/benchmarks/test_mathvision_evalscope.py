"""MATH-Vision's evalscope protocol: each case with the verdict and the answer evalscope 1.14.1 itself
gave (measured by `bench/mathvision_evalscope_agreement.py`'s driver, which runs evalscope's
`math_vision` adapter on the response). The bench checks every released response and a few hundred
adversarial ones; these pin the tricky readings here, without evalscope."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from olympiad_eval.benchmarks import plugin
from olympiad_eval.benchmarks.mathvision import evalscope as mathvision_evalscope
from olympiad_eval.core.records import AnswerSlot
from olympiad_eval.scoring.checks import Verdict
from olympiad_eval.scoring.pool import CheckPool, run_check
from tests.support import by_rules, load_release, scoring

MATHVISION = plugin("mathvision")

pytestmark = pytest.mark.xdist_group("mathvision_release")

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample" / "mathvision"


@pytest.fixture(scope="module")
def sample():
    cfg = OmegaConf.load(SAMPLE.parents[2] / "conf" / "benchmark" / "sample_mathvision.yaml")
    return {p.id: p for p in load_release(MATHVISION, SAMPLE, cfg, "sample_mathvision")}


def in_process(jobs):
    """The checks as a check worker runs them (`mathcheck._check`), in this process."""
    return [run_check(job) for job in jobs]


def score(problem, response):
    return by_rules(MATHVISION, problem, response, in_process, protocol="evalscope")


def result_scoring():
    return scoring(MATHVISION, protocol="evalscope")


# Problem 1: options 13/18/26/40/21 cm, gold C. evalscope reads the last "ANSWER:" that a label
# follows, else the last capital letter of the whole response; never the option's text.
@pytest.mark.parametrize(
    "pid, response, read, correct",
    [
        ("1", "So the answer is \\boxed{C}.\nANSWER: D", "D", False),
        ("1", "\\boxed{C}", "C", True),
        ("1", "ANSWER: D\nActually it is \\boxed{C}", "D", False),
        ("1", "ANSWER: C\nWait, that was wrong.\nANSWER: D", "D", False),
        ("1", "The format is 'ANSWER: [LETTER]'.\nANSWER: C", "C", True),
        ("1", "ANSWER: [LETTER]", "", False),
        ("1", "**ANSWER: C**", "C", True),
        ("1", "ANSWER: **C**", "C", True),
        ("1", "answer: c", "", False),
        ("1", "Answer: (C)", "C", True),
        ("1", "ANSWER: C, not D", "C", True),
        ("1", "ANSWER: C and D", "", False),
        ("1", "ANSWER: CD", "", False),
        ("1", "ANSWER: 26 cm", "", False),
        ("1", "The perimeter is 26 cm", "", False),
        ("1", "答案：C", "C", True),
        ("1", "答案：C，因为 D 不对", "D", False),
        ("1", "<think>ANSWER: D</think>\nANSWER: C", "C", True),
        ("1", "ANSWER: $\\boxed{\\text{C}}$", "C", True),
        ("1", "ANSWER: （C）", "C", True),
        ("1", "\\boxed{C} and \\boxed{D}", "D", False),
        ("1", "ANSWER: C.", "C", True),
        ("1", "ANSWER: The answer is C", "C", True),
        ("1", "ANSWER: F\nso C", "C", True),
        ("1", "", "", False),
    ],
)
def test_multiple_choice_reads_as_evalscope(sample, pid, response, read, correct):
    result = score(sample[pid], response)
    assert (result.extracted, result.score) == ((read,), 1.0 if correct else 0.0)
    assert MATHVISION.rule_checks(sample[pid], response, result_scoring()) == []  # decided in the stage


# Problem 2: gold 27; problem 4: gold \frac{3}{8}. Math-Verify's display of the whole response (all
# boxes as one set; no "ANSWER:" or Chinese phrase of its own), compared strictly: an integer gold
# takes no rounding (27.0000001 is wrong), a fraction's value is rounded to 6 digits (0.3750004 is right).
@pytest.mark.parametrize(
    "pid, response, read, correct",
    [
        ("2", "\\boxed{27}", "27", True),
        ("2", "\\boxed{26} then \\boxed{27}", "26,27", False),
        ("2", "\\boxed{27} then \\boxed{26}", "27,26", False),
        ("2", "\\boxed{27}\nANSWER: 28", "27", True),
        ("2", "ANSWER: 27", "27", True),
        ("2", "答案：27", "", False),
        ("2", "最终答案是 \\boxed{27}", "27", True),
        ("2", "答案为27。", "", False),
        ("2", "\\boxed{27.0000001}", "27.0000001", False),
        ("2", "\\boxed{27.000001}", "27.000001", False),
        ("2", "\\boxed{27.00001}", "27.00001", False),
        ("2", "\\boxed{27.0000004}", "27.0000004", False),
        ("2", "\\boxed{26.9999996}", "26.9999996", False),
        ("2", "\\boxed{27\\%}", "27\\%", True),
        ("2", "27%", "27%", True),
        ("2", "\\boxed{2.7e1}", "2.7e1", True),
        ("2", "\\boxed{2.7E1}", "2.7E1", True),
        ("2", "\\boxed{27 \\text{ cm}}", "27", True),
        ("2", "\\boxed{x = 27}", "x = 27", True),
        ("2", "\\boxed{27", "", False),
        ("2", "<think>\\boxed{28}</think>\\boxed{27}", "27", True),
        ("2", "The top brick is 27.", "27", True),
        ("2", "", "", False),
        ("2", "\\boxed{27, 27}", "27, 27", True),
        ("4", "\\boxed{0.375}", "0.375", True),
        ("4", "\\boxed{\\dfrac{6}{16}}", "\\frac{6}{16}", True),
        ("4", "\\boxed{0.3750004}", "0.3750004", True),
        ("4", "\\boxed{0.375001}", "0.375001", False),
        ("4", "\\boxed{0.37}", "0.37", False),
        ("4", "\\boxed{3/8}", "\\frac{3}{8}", True),
        ("4", "\\boxed{37.5\\%}", "37.5\\%", True),
    ],
)
def test_free_form_reads_and_compares_as_evalscope(sample, pid, response, read, correct):
    pytest.importorskip("math_verify", reason="the evalscope protocol checks free-form answers with math-verify")
    result = score(sample[pid], response)
    assert (result.extracted, result.score, result.unscorable) == ((read,), 1.0 if correct else 0.0, "")


def test_a_gold_math_verify_cannot_parse_leaves_the_response_unscored(sample):
    """evalscope excludes such a response from its mean; the rules cannot score it (a judge error)."""
    pytest.importorskip("math_verify", reason="the evalscope protocol checks free-form answers with math-verify")
    problem = dataclasses.replace(sample["2"], answers=(AnswerSlot(value="\\x0crac{1}{2}", kind="Free Form"),))
    result = score(problem, "\\boxed{1}")
    assert result.unscorable.startswith("evalscope excludes the response: Math-Verify cannot parse the gold")


def test_a_check_that_overruns_is_not_matched_and_on_record(sample):
    """As every protocol's (v3): evalscope would wait 30 s, then exclude the response."""
    timed_out = Verdict(None, "check exceeded its CPU budget of 10 s")
    result = MATHVISION.rule_score(sample["2"], "\\boxed{27}", result_scoring(), [timed_out])
    assert (result.score, result.unscorable, result.undecided) == (0.0, "", ("check exceeded its CPU budget of 10 s",))


def test_the_free_form_check_runs_in_the_check_workers(sample):
    """A benchmark's own check crosses to a worker by name and comes back with the answer it read."""
    pytest.importorskip("math_verify", reason="the evalscope protocol checks free-form answers with math-verify")
    jobs = [
        MATHVISION.rule_checks(sample[pid], response, result_scoring())[0]
        for pid, response in (("2", "so \\boxed{27}"), ("4", "\\boxed{0.37}"))
    ]
    assert jobs[0].function is mathvision_evalscope.free_form_check
    with CheckPool(workers=1, cpu_seconds=60) as pool:
        assert pool.check_many(jobs) == [Verdict(True, "", "27"), Verdict(False, "", "0.37")]


def test_free_form_without_math_verify_is_refused_with_what_to_install(sample, monkeypatch):
    import importlib.util

    from olympiad_eval.core.records import InputError

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "math_verify" else real(name, *a))
    with pytest.raises(InputError, match=r"pip install 'olympiad-eval\[evalscope\]'"):
        MATHVISION.rule_checks(sample["2"], "\\boxed{27}", result_scoring())
    assert MATHVISION.rule_checks(sample["1"], "ANSWER: C", result_scoring()) == []  # multiple choice needs none
