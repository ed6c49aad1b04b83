"""MATH-Vision's official scorer, reimplemented: extraction and comparison on hand-written cases
(hostile ones included), and agreement with the verdicts of the five released runs."""

from __future__ import annotations

import json
import time

import pytest

from olympiad_eval.benchmarks.mathvision import official
from tests.support import shared_data

# its module fixtures load a release once: keep its tests on one test worker
pytestmark = pytest.mark.xdist_group("mathvision_released_runs")

RUNS = ["Gemini-Pro", "InternLM-XComposer2-VL", "LLaVA-v1.5-13B", "Qwen-VL-Max-CoT", "SPHINX-MoE"]


# ---------------------------------------------------------------- extraction


@pytest.mark.parametrize(
    ("response", "extracted"),
    [
        ("60", "60"),
        ("A", "a"),
        ("(C)", "c"),
        ("After some thought, the answer is B.", "b"),  # " B." at the end
        ("(D)\nbecause ...", "d"),  # "(D)\n" at the start
        ("So the total is 12.", "12"),  # a number after the last "is "
        ("Therefore, the answer is \\boxed{60}.", "60"),
        ("First \\boxed{3}, then \\boxed{\\frac{1}{4}}.", "\\frac{1}{4}"),  # the last box
        ("The answer is 4/3.\nBecause ...", "4/3"),  # "4/3." is not a canonical a/b
        ("1/3", "\\frac{1}{3}"),
        ("The final answer is $x = 45^\\circ$.", "45"),
        ("The correct answer is (E). It is ...", "e"),
        ("\\boxed{\\text{(A)}}", "a"),
        ("\\boxed{0.5}", "\\frac{1}{2}"),
        ("\\boxed{\\sqrt2}", "\\sqrt{2}"),
        ("\\boxed{\\frac12+\\sqrt3}", "\\frac{1}{2}+\\sqrt{3}"),  # fractions are fixed only next to sqrt
        ("The answer is 25\\%.", "25"),
        ("? should be replaced with 60.", "?shouldbereplacedwith60"),
    ],
)
def test_extraction(response, extracted):
    assert official.extract(response) == extracted


# ---------------------------------------------------------------- comparison


@pytest.mark.parametrize(
    ("given", "gold", "equal"),
    [
        ("A", "a", True),  # case-insensitive
        ("\\frac{1}{2}", "0.5", True),
        ("0.333", "\\frac{1}{3}", True),  # rounded to 2 decimals
        ("0.34", "\\frac{1}{3}", False),
        ("(0.5,2)", "(\\frac{1}{2},2.00)", True),  # tuples element-wise, rounded
        ("(1,2)", "(1.001,2)", False),  # 1.001 rounds to the float 1.0, printed `1.0`, not `1`
        ("(2,3)", "(2.0,3)", True),  # decimals are exact rationals: 2.0 is the integer 2, printed `2`
        ("(16,2)", "(\\frac{128}{8},2)", False),  # a quotient was a float: printed `(16.0,2)`
        ("(16.0,2)", "(\\frac{128}{8},2)", False),  # ... and the decimal 16.0 the integer 16
        ("(0.5,2)", "(\\frac{1}{2},\\frac{4}{2})", False),  # `(0.5,2.0)`
        ("16", "\\frac{128}{8}", True),  # as a number, 16.0 rounds equal to 16
        ("6", "(\\frac{6}{2})!", True),  # Python 3.8's factorial took an integral float
        ("(1,2)", "(2,1)", False),
        ("2\\sqrt{3}", "\\sqrt{12}", True),
        ("\\frac{3^{1008}-1}{3^{1009}}", "\\frac{1}{3}", True),  # exact for huge integers
        ("40\\pi/3", "$40\\pi/3$", True),  # `$` read as a space
        ("\\dfrac{1}{4}", "\\frac{1}{4}", True),
        ("\\displaystyle\\frac{1}{4}", "0.25", True),
        ("\\frac{1}{4}}.theansweris", "0.25", True),  # trailing junk ignored
        ("{4}", "4", True),
        ("45", "$45^{\\circ}$", False),  # the old lexer failed on \circ
        ("45", "45°", False),
        ("3.14", "π", False),
        ("50", "50%", False),
        ("3", "\\boxed{3}", False),
        ("23", "2\\!3", False),
        ("5", "\\text{5}", False),  # accents made symbols
        ("1000", "1,000", True),  # a thousands separator
        ("1", "1,2", False),  # a list
        ("90", "90,", False),  # a dangling comma: the old parser read on for a list
        # the old parser stopped cleanly only before a token that cannot go on an expression...
        ("3", "3}.theansweris", True),
        ("625", "625\\rightarrow626", True),
        ("1", "1triangle", True),  # its lexer read `tr` as a function name
        ("6", "3{2}", True),  # a braced number after a value multiplies
        ("201.06", "64\\pi_{2}", True),  # numbers and `\pi` took no subscript: it stopped before `_`
        ("12", "3 4_", True),
        ("0.5", "\\frac{1_2}{2}", False),  # ... and failed on one inside a group
        # ... before any other it read on, and failed where the text stopped making sense
        ("2", "2{ft.}", False),  # a braced unit with a period
        ("72", "72{squarecentimeters.}", False),
        ("105000", "105{,}000", False),
        ("2", "2\\sqrt{3", False),  # an unclosed expression after a complete one
        ("0.5", "\\frac{1}{2}\\frac{1}{", False),
        ("0.87", "\\frac{\\sqrt{3}}{2}(", False),
        ("2021", "2021+", False),  # a trailing operator
        ("1", "$1,\\!004,\\!004$", False),  # a list up to the character its lexer failed on
        ("1", "2\\frac{1}{2}", True),  # juxtaposition multiplies: no mixed fractions
        ("3", "x=3", True),  # an assignment reads as its value
        ("1", "3<4", True),  # `3 < 4` evaluated to True
        ("0.5", "50\\%", True),
        ("2", "\\log_{2}4", True),
        ("1", "\\ln(e)", False),  # printed `log(E, E)`: E is no name in `math`
        ("3", "|-3|", False),  # printed `Abs(-3)`
        ("6.28", "\\tau", True),  # `tau` is in `math`
        ("x", "x", True),  # equal strings, no value needed
        ("x", "y", False),
        ("", "", False),
        ("  ", "1", False),
    ],
)
def test_is_equal(given, gold, equal):
    assert official.is_equal(given, gold) is equal
    assert official.is_equal(gold, given) is equal  # symmetric


@pytest.mark.parametrize(
    ("response", "answer", "options", "extracted"),
    [
        # a free-form answer followed by a braced unit: `\text` is dropped, `2{ft.}` had no value
        ("The answer is \\boxed{2\\text{ ft.}}", "2", [], "2{ft.}"),
        ("The answer is \\boxed{72 \\text{ square centimeters.}}", "72", [], "72{squarecentimeters.}"),
        # multiple choice, the extracted text an unclosed expression: never the option's value
        ("The answer is $2\\sqrt{3", "C", ["$1$", "$\\sqrt{3}$", "$2$", "$2\\sqrt{3}$", "$4$"], "2\\sqrt{3"),
        (
            "The correct answer is \\frac{1}{2}\\frac{1}{",
            "B",
            ["$\\frac{1}{4}$", "$\\frac{1}{2}$", "$1$", "$2$", "$4$"],
            "\\frac{1}{2}\\frac{1}{",
        ),
    ],
)
def test_what_the_old_parser_read_on_into_is_wrong(response, answer, options, extracted):
    """Kinds of released verdicts where the old parser failed (checked against latex2sympy2 1.9.1)
    while latex2sympy2_extended, left alone, stops early and reads the leading value."""
    assert official.verdict(response, answer, options) == (extracted, False)


def test_multiple_choice_compares_the_option_text_too():
    options = ["$30^{\\circ}$", "$\\frac{1}{2}$", "$60$", "$75$", "$90$"]
    assert official.is_correct("The answer is \\boxed{B}.", "B", options)
    assert official.is_correct("\\boxed{0.5}", "B", options)  # `$\frac{1}{2}$` read as 1/2
    assert not official.is_correct("\\boxed{30}", "A", options)  # `30^{\circ}` never had a value
    assert official.verdict("\\boxed{60}", "C", options) == ("60", True)
    assert official.verdict("\\boxed{60}", "60", []) == ("60", True)


@pytest.mark.parametrize(
    "hostile",
    [
        "\\boxed{9^{9^{9}}}",
        "\\boxed{(9^{9^{9}})!}",
        "\\boxed{\\binom{100000000}{50000000}}",
        "\\boxed{\\sqrt[9^{9^{9}}]{2}}",
        "\\boxed{10^{-9^{9^9}}}",
        "\\boxed{2^{2^{2^{2^{2^{2}}}}}}",
        "\\boxed{" + "{" * 3000 + "1" + "}" * 3000 + "}",
        "\\boxed{" + "1+" * 5000 + "1}",
        "\\boxed{(" + ",".join(["9^{9^{9}}"] * 1000) + ")}",
        "OXED{" * 200_000,
    ],
)
def test_hostile_answers_are_cheap(hostile):
    start = time.process_time()  # CPU, not wall time: a busy machine must not fail it
    assert official.is_correct(hostile, "1", []) is False
    assert official.is_correct(hostile, "B", ["1", "2", "3", "4", "5"]) is False
    assert time.process_time() - start < 5


def test_code_in_answers_is_never_run(tmp_path):
    marker = tmp_path / "pwned"
    payload = f"__import__('os').system('touch {marker}')"
    for text in (payload, f"The answer is \\boxed{{{payload}}}", f"({payload},{payload})", f"$\\mathit{{{payload}}}$"):
        assert not official.is_correct(text, "0", [])
        assert not official.is_equal(text, "0")
    assert not marker.exists()


def test_a_megabyte_response_is_scored_quickly():
    prose = "We reason step by step, again and again. " * 25_000  # ~1 MB
    start = time.process_time()  # CPU, not wall time: a busy machine must not fail it
    assert official.is_correct(prose + "So the answer is 7.", "7", [])
    assert not official.is_correct(prose, "7", [])
    assert not official.is_correct("a" * 1_000_000, "7", [])
    assert not official.is_correct("(" + "1," * 500_000 + "1)", "(1,1)", [])
    assert time.process_time() - start < 5


# ---------------------------------------------------------------- the released runs


def read_jsonl(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def release():
    root = shared_data("mathvision")
    return root, {row["id"]: row for row in read_jsonl(root / "data" / "test.jsonl")}


# Released verdicts that the published scorer does not give. Gemini-Pro's row 3013 ("The answer is
# 4/3.", key `\frac{4}{3}`, extracted "4/3" as released) is released as wrong, but evaluate.py and
# utils.py at the release's commit, run with latex2sympy2 1.9.1, find it right: both texts print as
# `4/3`, which Python evaluates to the same number. The verdict must come from another version of
# the scorer or of the answer key; every other row of the five runs is reproduced.
RELEASE_QUIRKS = {("Gemini-Pro", "3013")}


@pytest.mark.xfail(
    strict=True,
    reason="release quirk: Gemini-Pro row 3013 ('4/3' for \\frac{4}{3}) is released "
    "as wrong, which the published scorer does not give",
)
@pytest.mark.parametrize(("run", "row_id"), sorted(RELEASE_QUIRKS))
def test_released_verdicts_the_published_scorer_does_not_give(release, run, row_id):
    root, problems = release
    [row] = [row for row in read_jsonl(root / "outputs" / f"{run}.jsonl") if row["id"] == row_id]
    problem = problems[row_id]
    assert official.verdict(row["response"], problem["answer"], problem["options"]) == (
        row["model_answer"],
        row["correct"],
    )


@pytest.mark.parametrize("run", RUNS)
def test_verdicts_of_released_runs(release, run):
    """Scored against the release's raw `test.jsonl` (as the official script read it), our
    verdicts equal the released `correct` on every row but the release quirks above, and the
    accuracy is within 0.1 points of the released `<run>_result.json`."""
    root, problems = release
    rows = read_jsonl(root / "outputs" / f"{run}.jsonl")
    ours = [
        official.is_correct(row["response"], problems[row["id"]]["answer"], problems[row["id"]]["options"])
        for row in rows
    ]
    disagreements = [
        row["id"]
        for row, verdict in zip(rows, ours)
        if verdict != row["correct"] and (run, row["id"]) not in RELEASE_QUIRKS
    ]
    agreement = 100 * (1 - len(disagreements) / len(rows))
    # `"-all": "537/3040=17.66%"`: right/total=percentage, rounded; the fraction is exact.
    result = json.loads((root / "outputs" / f"{run}_result.json").read_text(encoding="utf-8"))
    right, total = result["-all"].split("=")[0].split("/")
    official_accuracy = 100 * int(right) / int(total)
    accuracy = 100 * sum(ours) / len(rows)
    report = (
        f"{run}: agreement {agreement:.2f}% over {len(rows)} rows (disagreeing ids: {disagreements[:20]}); "
        f"accuracy {accuracy:.2f} vs official {official_accuracy:.2f} (difference {accuracy - official_accuracy:+.2f})"
    )
    print(report)
    assert int(total) == len(rows), report
    assert not disagreements, report
    assert abs(accuracy - official_accuracy) <= 0.1, report
