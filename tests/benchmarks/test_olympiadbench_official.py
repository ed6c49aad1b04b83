"""OlympiadBench's official scorer (`olympiadbench.official`, its judge run in the protocol's pinned
environment by the check workers): the official examples file in full, each step of the official
judge, and each reading of sympy 1.12's LaTeX parser that decides verdicts, with the verdicts the
official `AutoScoringJudge` gives (each case was checked against it, run with sympy 1.12 and antlr
4.11, by `bench/olympiadbench_official_agreement.py`'s driver). The environment is built on first use
(`scoring.environments`); every check here goes through one pool of its workers."""

from __future__ import annotations

import json

import pytest

from olympiad_eval.benchmarks.olympiadbench import official, official_judge
from olympiad_eval.scoring.checks import ProtocolCheck, Verdict
from olympiad_eval.scoring.pool import CheckPool
from tests.support import shared_data


@pytest.fixture(scope="module")
def judged():
    """The verdict of a check, from workers of the official environment (one pool for the module)."""
    with CheckPool(workers=2, cpu_seconds=30) as pool:
        yield lambda check: pool.check_many([check])[0]


# eval/scoring_examples.json of github OpenBMB/OlympiadBench, commit 61bf12a (MIT licence,
# Copyright (c) OpenBMB): every GT, answer, precision (None where the file has none: the default
# 1e-8) and expected verdict, in the file's order. Run as its `auto_scoring_judge.py` runs them:
# `judge(GT, answer, precision)`, a string precision read by `float`.
EXAMPLES = [
    ("x=1", "x=1", None, True),
    ("x=1", "1", None, True),
    ("x=1", "x=2", None, False),
    ("a_{n} =2 n    +1", "2n+    1", None, True),
    ("a_{n} =2 n    +1", "a_n=2n+1", None, True),
    ("$I_{\\max }=\\frac{q_{0}}{\\sqrt{2 L C}}$", "\\frac{ q_{0} }{ \\sqrt{2 C L}  }", None, True),
    ("\\Phi (x,y)=\\frac{x+1}{2y}", "\\Phi (x,    y)=\\frac{x}{2y} + \\frac{1}{2y}", None, True),
    ("(-\\infty,1]\\cup[10,+\\infty)", "c \\in \\left(-\\infty, 1\\right]\\cup[10,+\\infty)", None, True),
    ("$\\boxed{[-4/2, 0.5]}$", "[-2, \\frac{1}{2}]", None, True),
    (
        "(\\frac{\\sqrt{2}v^2_0}{g}-\\frac{v^2_0}{5\\pi g},\\frac{\\sqrt{2}v^2_0}{g}+\\frac{v^2_0}{4g},"
        "-\\frac{v^2_0}{5\\pi g})",
        "(\\frac{v^2_0 \\sqrt{2}}{g}-\\frac{v^2_0}{5g\\pi },\\frac{\\sqrt{2}v^2_0}{g}+\\frac{v^2_0}{4g},"
        "-\\frac{v^2_0}{5g \\pi})",
        None,
        True,
    ),
    ("(2,1),(3,1)", "(3,1),(2,1)", None, True),
    ("x^2+y^2=1", "\\boxed{x^{2}+y^{2}=1}", None, True),
    ("x^2+y^2=1", "\\boxed{x^{2}=1-y^2}", None, True),
    ("x^2+y^2=1", "\\boxed{1-x^{2}-y^{2}=0}", None, True),
    ("x^2+y^2=1", "\\boxed{x^{2}-y^{2}=1}", None, False),
    ("x^2+y^2=1", "\\boxed{x^{2}+y^{2}=2}", None, False),
    ("0.64N", "\\boxed{0.64N}", None, True),
    ("0.64N", "\\boxed{\\frac{16}{25}N}", None, True),
    ("0.64N", "0.6400 N", None, True),
    ("0.64N", "0.64", None, False),
    ("0.6", "\\boxed{\\frac{3}{5}}", None, True),
    ("0.6", "60%", None, True),
    ("\\cos \\theta_1", "\\cos \\theta _1", None, True),
    (
        "\\boxed{n_{\\gamma}(\\nu)=A \\frac{R_{\\odot}^{2}}{d_{\\odot}^{2}} \\frac{2 \\pi}{c^{2}} \\nu^{2} "
        "e^{\\frac{-h \\nu}{ k_{\\mathrm{B}} T_{\\mathrm{s}}}}}",
        "\\boxed{n_{\\gamma}(\\nu) = \\frac{2 \\pi A R_{\\odot}^2}{d_{\\odot}^2} \\left( \\frac{\\nu^2}{c^2} \\right) "
        "e^{ \\frac{-h \\nu}{k_B T_s}}}",
        None,
        True,
    ),
    ("\\frac{(n-1)!}{k!} \\frac{n}{(n-k)!}", "\\frac{n!}{k!(n-k)!}", None, True),
    ("7.8\\times 10^2", "780", None, True),
    ("\\Delta p\\approx -\\frac{\\hbar \\omega_{L}}{c}", "-\\frac{\\omega_{L} \\hbar}{c}", None, True),
    (
        "a = +\\frac{1}{2} \\hbar \\omega_{L}^{\\prime} \\frac{v}{c}",
        "\\frac{1}{2} \\hbar \\omega_{L}^{\\prime} \\frac{v}{c}",
        None,
        True,
    ),
    ("\\cos ^{10}(\\frac{\\pi}{10})", "0.6054", "1e-4", True),
    ("\\sqrt[3]{\\frac{5}{12}}", "(\\frac{5}{12})^{\\frac{1}{3}}", None, True),
    ("\\sqrt[3]{\\frac{5}{12}}, -\\sqrt[3]{\\frac{5}{12}}", "y = \\pm \\sqrt[3]{\\frac{5}{12}}", None, True),
    ("7 \\times 10^{35}", "7.1 \\cdot 10^{35}", 1e34, True),
    ("7 \\times 10^{35}", "7.1 \\cdot 10^{35}", [1e33], False),
    ("7 \\times 10^{35}, 0.002", "0.001, 7.1 \\cdot 10^{35}", [1e34, 1e-3], True),
    ("0.003, 5.233", "0.002, 5.234", 1e-3, True),
    ("10^{10^{10^{10}}}", "10^{10}", None, False),
]


@pytest.mark.parametrize("gt, answer, precision, equal", EXAMPLES)
def test_the_official_examples_file_passes_in_full(gt, answer, precision, equal, judged):
    precision = 1e-8 if precision is None else float(precision) if isinstance(precision, str) else precision
    check = ProtocolCheck(official_judge.judge, (gt, answer, precision), official.ENVIRONMENT)
    assert judged(check) == Verdict(equal, "", "")


def test_the_examples_are_all_of_the_file():
    assert len(EXAMPLES) == 36 and sum(1 for *_, equal in EXAMPLES if not equal) == 6


# ------------------------------------------------------------------------------ extraction


@pytest.mark.parametrize(
    "response, language, answer",
    [
        ("Thus v = 3.\nSo the final answer is \\boxed{3}.", "en", "\\boxed{3}."),
        ("So the final answer is \\boxed{1}.\nWait.\nSo the final answer is \\boxed{2}(m). ", "en", "\\boxed{2}(m)."),
        ("So the final answer is $x=2$ \nand more text", "en", "$x=2$"),  # up to the end of its line
        ("The answer is \\boxed{5}.", "en", "The answer is \\boxed{5}."),  # no phrase: the whole response
        ("so the final answer is 4", "en", "so the final answer is 4"),  # the phrase is case-sensitive
        ("解得 x=1。\n所以最终答案是\\boxed{1}。", "zh", "\\boxed{1}。"),
        ("所以最终答案是\\boxed{1}。", "en", "所以最终答案是\\boxed{1}。"),  # each language reads its own phrase
        ("So the final answer is \\boxed{7}.", "zh", "So the final answer is \\boxed{7}."),
    ],
)
def test_the_final_answer_is_read_after_the_last_phrase_of_its_language(response, language, answer):
    assert official.extract_answer(response, language) == answer


@pytest.mark.parametrize(
    "response, language, gold, correct",
    [
        ("... So the final answer is \\boxed{12, 16}.", "en", "$12 , 16$", True),
        ("... 所以最终答案是\\boxed{16,12}(米)。", "zh", "$12 , 16$", True),
        ("no phrase, but \\boxed{3} and then \\boxed{4}", "en", "$3, 4$", True),  # every box, joined
        ("the last line's formulas count\nso $x = 3$ and $y = 4$", "en", "$3, 4$", True),
        ("So the final answer is 3.", "en", "$3$", True),
    ],
)
def test_extracted_answers_are_judged_as_the_official_pipeline_does(response, language, gold, correct, judged):
    verdict = judged(official.check(gold, official.extract_answer(response, language), 1e-8))
    assert verdict.correct is correct


# ------------------------------------------------------------------------------ tolerance


@pytest.mark.parametrize(
    "error, answer_type, expected",
    [
        (None, "Numerical", 1e-8),
        ("", "Numerical", 1e-8),
        ("1e-1", "Numerical", 0.1),
        ("0", "Numerical", 0.0),  # a string "0" is a tolerance: exact
        ("5e1", "Expression", 50.0),
        ("1e-2,1e-3", "Numerical,Numerical", [1e-2, 1e-3]),
        (",1e-2", "Expression,Numerical", [1e-8, 1e-2]),  # an empty piece is the default
        ("0,", "Numerical,Expression", [0.0, 1e-8]),
        ("1e-1", "Tuple", 1e-8),  # judge.py gives a Tuple no tolerance
        ("1e-1", "Tuple,Numerical", 1e-8),
    ],
)
def test_precision_is_the_official_reading_of_error(error, answer_type, expected):
    assert official.precision(error, ["$1$"], answer_type) == expected


def test_a_tolerance_that_is_no_number_is_refused_naming_it():
    with pytest.raises(ValueError, match="'about 1'.*'\\$1\\$'"):
        official.precision("about 1", ["$1$"], "Numerical")


def test_the_gold_is_the_first_final_answer():
    assert official.gold_answer(["$a$, $b$", "$c$"]) == "$a$, $b$"
    assert official.check(["$a$", "$c$"], "a", 1e-8).args[0] == "$a$"


@pytest.mark.parametrize(
    "gold, answer, tolerance, correct",
    [
        ("$3.14$", "3.15", 1e-2, True),  # absolute: |3.15 - 3.14| <= 1e-2 * 1.01
        ("$3.14$", "3.16", 1e-2, False),
        ("$1000$", "1000.5", 1e-3, False),  # not relative to the gold
        ("$2$", "2.0000000001", 1e-8, True),  # the default tolerance
        ("$2$", "2.0001", 0.0, False),  # error "0"
    ],
)
def test_numbers_match_within_the_absolute_tolerance(gold, answer, tolerance, correct, judged):
    assert judged(official.check(gold, answer, tolerance)).correct is correct


# ------------------------------------------------------------------------------ the judge's rules
# (gold, extracted answer, precision, the official verdict), judged in judge.py's order


@pytest.mark.parametrize(
    "gold, answer, tolerance, correct",
    [
        # several answers: in any order, each matched once; counts must agree; \pm is two answers
        ("$12 , 16$", "16, 12", 1e-8, True),
        ("$1, 2$", "1", 1e-8, False),
        ("$2, -2$", "\\pm 2", 1e-8, True),
        # a tolerance per answer follows the positions of the MODEL's answers (judge.py puts them first)
        ("$2, 1$", "1.001, 2", [1e-2, 1e-8], True),
        ("$2, 1$", "2, 1.001", [1e-2, 1e-8], False),
        ("$1, 2, 3$", "3, 1, 2", [1e-8, 1e-8], False),  # a list shorter than the answers raises there: False
        # percentages: either side may be the percentage of the other
        ("$0.6$", "60", 1e-8, True),
        ("$60$", "0.6", 1e-8, True),
        ("$0.6$", "60\\%", 1e-8, False),  # "%" goes, its backslash stays: "60\\" is no number
        # intervals: same brackets, ends by expression, unions in order
        ("$(1,2]$", "[1,2]", 1e-8, False),
        ("$(0,1] \\cup (2, \\sqrt{5}]$", "(0,1] \\cup (2, \\sqrt{5}]", 1e-8, True),
        ("$(-\\infty, 1]$", "x \\in (-\\infty, 1]", 1e-8, True),
        ("$(1, 3)$", "(1, 2)", 1e-8, False),
        # tuples: in order inside, the pairs in any order
        ("$(2,1),(3,1)$", "(3,1),(2,1)", 1e-8, True),
        ("$(1,2)$", "(2,1)", 1e-8, False),
        # equations: the same up to an integer factor and the sides' order
        ("$y=2x+1$", "2x+1=y", 1e-8, True),
        ("$y=2x+1$", "2y=4x+2", 1e-8, True),
        ("$x=1$", "x=2", 1e-8, False),
        ("$y=x$", "y=2x", 1e-8, False),
        # units are not stripped: an answer carrying one is not the bare number
        ("$5$", "5 \\mathrm{~m}", 1e-8, False),
        ("$5$", "5 \\text{ m}", 1e-8, False),
        ("$0.64N$", "0.64 \\text{N}", 1e-8, False),
        # Chinese is removed: a yes/no gold is matched by any Chinese-only answer (an official quirk)
        ("能", "能", 1e-8, True),
        ("能", "不能", 1e-8, True),
        # e and pi are symbols: e^2 is no number, pi is replaced by its value
        ("$e^{2}$", "7.389056", 1e-2, False),
        ("$\\frac{\\pi}{2}$", "1.5708", 1e-4, True),
        ("$1$", "2\\frac{1}{2}", 1e-8, True),  # juxtaposition multiplies: no mixed numbers
        ("$x$", "\\sqrt{x^2}", 1e-8, False),  # symbols carry no sign
        ("$100000$", "1e5", 1e-8, True),  # Python's float reads it
        ("$3$", "\\boxed{3", 1e-8, False),  # an unclosed box
    ],
)
def test_the_official_rules(gold, answer, tolerance, correct, judged):
    assert judged(official.check(gold, answer, tolerance)) == Verdict(correct, "", answer)


# How sympy 1.12's `parse_latex` reads LaTeX decides the official verdicts (`official_judge` calls
# it, in the protocol's environment): one or more cases per reading, each the official verdict of
# `AutoScoringJudge().judge(answer, gold, tolerance)` run with sympy 1.12 and antlr 4.11.
@pytest.mark.parametrize(
    "gold, answer, tolerance, correct",
    [
        # the lexer has ASCII tokens only: a unicode minus, pi or times sign makes no value
        ("$-2$", "−2", 1e-8, False),
        ("$2 \\pi r$", "2 π r", 1e-8, False),
        ("$3 \\times 10^{8}$", "3×10^{8}", 1e-8, False),
        # \\log and \\ln are natural logarithms, \\lg base 10, \\log_b base b
        ("$\\ln 2$", "\\log 2", 1e-8, True),
        ("$2$", "\\log 100", 1e-8, False),
        ("$2$", "\\lg 100", 1e-8, True),
        ("$3$", "\\log_2 8", 1e-8, True),
        ("$\\log_{2} 3$", "\\frac{\\ln 3}{\\ln 2}", 1e-8, True),
        # a subscript after a superscript is parsed and dropped; after a letter exponent it is the exponent's
        ("$v^2_0$", "v_0^2", 1e-8, False),
        ("$v_0^2$", "v^2_0", 1e-8, False),
        ("$x^{a_1}$", "x^a_1", 1e-8, True),
        # a letter (subscripted or not) before a parenthesis is a function applied; after a number it multiplies
        ("$m g(h+1)$", "m g h+m g", 1e-8, False),
        ("$k(M+m)$", "k M+k m", 1e-8, False),
        ("$2 \\pi(R+r)$", "2 \\pi R+2 \\pi r", 1e-8, False),
        ("$a_{1}(x+1)$", "a_{1} x+a_{1}", 1e-8, False),
        ("$n(n+1)$", "n \\cdot (n+1)", 1e-8, False),
        ("$x^{2} y$", "x^2(y)", 1e-8, True),
        ("$t$", "t(0,4]", 1e-8, True),
        # a number is its digits: spaces and some spacing commands between them vanish
        ("$20000$", "20 000", 1e-8, True),
        ("$20000$", "20\\,000", 1e-8, False),
        ("$1000$", "1\\!000", 1e-8, True),
        ("$3.14$", "3 . 14", 1e-8, True),
        ("$0.5$", ".5", 1e-8, False),
        # e and E are letters, in any order of a product
        ("$q E$", "qE", 1e-8, True),
        ("$q E$", "Eq", 1e-8, True),
        ("$2 e B$", "2Be", 1e-8, True),
        ("$e^{2}$", "7.389", 1e-3, False),
        # x between two numbers is a times sign
        ("$3 \\times 10^{8}$", "3 x 10^{8}", 1e-8, True),
        ("$6$", "2x3", 1e-8, True),
        # after ^ comes an atom or a group: the parser stops before anything else
        ("$0.001$", "10^-3", 1e-8, False),
        ("$2^{x+1}$", "2^(x+1)", 1e-8, False),
        ("$x^{\\frac{1}{2}}$", "x^\\frac{1}{2}", 1e-8, True),
        # a fraction's argument is one digit or a group
        ("$\\frac{3}{2}$", "\\frac123", 1e-8, True),
        ("$1.5$", "\\frac32", 1e-8, True),
        # d before a letter is a differential; primes name a letter's symbol, not a command's
        ("$t d$", "dt", 1e-8, False),
        ("$x'$", "x", 1e-8, False),
        ("$\\omega'$", "\\omega", 1e-8, True),
        # an unknown command is a symbol; \\overline is the conjugate
        ("$\\frac{1}{\\tanh x}$", "\\coth x", 1e-8, False),
        ("$z$", "\\overline{\\overline{z}}", 1e-8, True),
        # a subscript names its symbol by the printed, unevaluated subscript
        ("$x_{ab}$", "x_{ba}", 1e-8, True),
        ("$x_{k-1}$", "x_{-1+k}", 1e-8, True),
        ("$T_{Air}$", "T_{irA}", 1e-8, False),
        ("$q_{0}$", "q_{00}", 1e-8, True),
        ("$x_{1}$", "x_{01}", 1e-8, False),
        # no end anchor: the leading expression is read, an operator without an operand dropped
        ("$a$", "a+", 1e-8, True),
        ("$6+4$", "6+4\\sqrt 2 \\\\", 1e-8, True),
        ("$3x$", "3x)", 1e-8, True),
        ("$a$", "\\{a\\}", 1e-8, True),
        ("$\\frac{3}{4}$", "3:4", 1e-8, True),
        ("$a=b$", "a &= b", 1e-8, False),
        # juxtaposition multiplies (no mixed numbers); the text after the boxes is not read
        ("$1$", "2\\frac{1}{2}", 1e-8, True),
        ("$x$", "\\frac{1}{2}x garbage", 1e-8, False),
    ],
)
def test_latex_is_read_as_sympys_parser_reads_it(gold, answer, tolerance, correct, judged):
    assert judged(official.check(gold, answer, tolerance)).correct is correct


def test_a_hostile_answer_ends_by_the_timeout_through_the_check_pool():
    """`x` against a tower times x: sympy's simplify would evaluate the tower forever; the worker
    is stopped at the timeout, the check is undecided, and the checks around it get verdicts."""
    jobs = [
        official.check("$3$", "3", 1e-8),
        official.check("$x$", "10^{10^{10^{10}}} x", 1e-8),
        official.check("$10^{10^{10^{10}}}$", "10^{10}", 1e-8),
    ]
    with CheckPool(workers=2, cpu_seconds=5) as pool:  # 5 s: hundreds of times what the others need
        verdicts = pool.check_many(jobs)
    assert verdicts == [
        Verdict(True, "", "3"),
        Verdict(None, "check exceeded its CPU budget of 5 s"),
        Verdict(False, "", "10^{10}"),
    ]


# Golds of the first release that the official judge rejects even when a response answers with the
# gold itself, boxed (bench/olympiadbench_official_agreement.py lists all 52; both judges reject
# exactly these), by what goes wrong:
RELEASE_QUIRKS = {
    # several `$...$` with no comma between them (spaces, an ideographic space, "①...②"): the gold
    # reads as several answers, the boxed reference as one
    **dict.fromkeys(
        [7414, 7435, 7529, 7595, 7596, 7610, 7613, 7692, 7728, 7745, 7761, 7908, 7919, 7920, 7938, 8095, 8121, 8228],
        "$...$ pieces without commas",
    ),
    # text outside the `$...$` (a unit, "and", prose, a bare number): the gold keeps only its `$` parts
    **dict.fromkeys([1065, 1371, 1544, 1588, 1965, 2264, 5143, 5505, 8025, 8867], "text outside $...$"),
    # unbalanced `$` or braces in the gold
    **dict.fromkeys([2349, 3805, 3862, 4059, 4526, 4601, 5808, 5882, 5912, 7368, 8734, 8929], "unbalanced $ or braces"),
    # a gold of several lines: the extraction reads the answer's first line only, the gold its last
    **dict.fromkeys([4107, 7433, 7463, 8046, 8056, 8177, 8180, 8251, 8381, 8425, 8442, 8446], "several lines"),
}


def test_the_shared_release_reference_answers_pass_but_its_quirks():
    """Auto-scorable problems of the first release, each gold boxed as a model would write it: a
    spread sample and every quirk; only the quirks fail, as under the official judge."""
    rows = []
    for path in sorted(shared_data("olympiadbench", "data").glob("*.json")):
        rows += [row for row in json.loads(path.read_text(encoding="utf-8")) if row["support_auto_scoring"]]
    rows = [row for index, row in enumerate(rows) if index % 25 == 0 or row["id"] in RELEASE_QUIRKS]
    jobs = []
    for row in rows:
        language = "zh" if row["classification"].startswith(("Chinese", "Gaokao")) else "en"
        phrase = "所以最终答案是" if language == "zh" else "So the final answer is "
        response = f"{phrase}\\boxed{{{official.gold_answer(row['final_answer']).replace('$', '').strip()}}}."
        tolerance = official.precision(row["error"], row["final_answer"], row["answer_type"])
        jobs.append(official.check(row["final_answer"], official.extract_answer(response, language), tolerance))
    with CheckPool(workers=2, cpu_seconds=30) as pool:
        verdicts = pool.check_many(jobs)
    assert {row["id"] for row, verdict in zip(rows, verdicts) if not verdict.correct} == set(RELEASE_QUIRKS)
