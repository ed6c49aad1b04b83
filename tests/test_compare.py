"""Comparing two runs and judges' agreement: each statistic against a value worked by hand or
printed in a textbook, flips and refusals on hand-written judgments, and the command end to end on
the sample's two models."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from math import comb

import pytest
from omegaconf import OmegaConf

from olympiad_eval.cli.compare import (
    MDE,
    Cell,
    Clustering,
    category_counts,
    clustering,
    cohen_kappa,
    compare_runs,
    fleiss_kappa,
    judge_agreement,
    mcnemar,
    paired_bootstrap,
    parse_cell,
    read_cell,
    samples_shown,
    sign_flip_test,
)
from olympiad_eval.core.layout import Layout
from olympiad_eval.core.records import InputError, Judgment, read_jsonl, write_jsonl
from tests.support import ROOT, compose_stage

# ---------------------------------------------------------------- McNemar


def test_mcnemar_exact_on_a_known_table():
    # b = 10, c = 2: 2 * P(Bin(12, 1/2) <= 2) = 2 * (1 + 12 + 66) / 4096
    assert mcnemar(10, 2) == (pytest.approx(0.0386, abs=5e-5), "McNemar, exact binomial")
    assert mcnemar(10, 2)[0] == pytest.approx(79 / 2048)
    assert mcnemar(2, 10)[0] == mcnemar(10, 2)[0]  # two-sided
    assert mcnemar(3, 3)[0] == 1.0  # capped at 1
    assert mcnemar(0, 0) == (1.0, "McNemar, no discordant pairs")


def test_mcnemar_from_25_discordant_pairs_on_is_the_continuity_corrected_chi_square():
    # b = 30, c = 10: (|30 - 10| - 1)^2 / 40 = 9.025, and P(chi2(1) > 9.025) = 2 * P(Z > 3.004) = 0.00266
    p, method = mcnemar(30, 10)
    assert method == "McNemar, chi-square with continuity correction"
    assert p == pytest.approx(0.002663, abs=1e-6)
    assert mcnemar(13, 11)[1] == "McNemar, exact binomial"  # 24 discordant pairs: still exact


# ---------------------------------------------------------------- the paired sign-flip test


def test_the_sign_flip_test_enumerates_every_flip_of_a_few_differences():
    # +-1 +-2 +-3 gives 6, 4, 2, 0, 0, -2, -4, -6: |sum| >= 6 in 2 of 8
    assert sign_flip_test([1, 2, 3], resamples=10, seed=0) == (0.25, "sign-flip permutation, exact (all 8 flips)")
    assert sign_flip_test([0, 1, 0, 2, 3], resamples=10, seed=0)[0] == 0.25  # no difference, no flip
    # four +1 and one -1: the sum of 5 signs is 2k - 5; |2k - 5| >= 3 for k in {0, 1, 4, 5}: 12 of 32
    assert sign_flip_test([1, 1, 1, 1, -1], resamples=10, seed=0)[0] == 0.375
    # sums equal on paper but not in floats (0.1 + 0.2 against 0.3) still count as reaching
    assert sign_flip_test([0.1, 0.2, -0.3], resamples=10, seed=0)[0] == sign_flip_test([1, 2, -3], 10, 0)[0]
    assert sign_flip_test([0, 0], resamples=10, seed=0) == (1.0, "sign-flip permutation, no differences")


def test_past_20_differences_the_sign_flip_test_draws_seeded_random_flips():
    differences = [1.0] * 15 + [-1.0] * 7  # 22: random flips. Exactly, the sum 2k - 22 of k ~ Bin(22, 1/2)
    exact = 2 * sum(comb(22, k) for k in range(8)) / 2**22  # reaches |8| for k <= 7 or k >= 15: 0.1338
    p, method = sign_flip_test(differences, resamples=20_000, seed=3)
    assert method == "sign-flip permutation, 20000 random flips, seed 3"
    assert p == pytest.approx(exact, abs=0.01)
    assert sign_flip_test(differences, 20_000, 3) == (p, method)  # the seed fixes it
    # never 0: the observed flip counts (1 + 0) / (1 + 999)
    assert sign_flip_test([1.0] * 25, resamples=999, seed=0)[0] == pytest.approx(0.001)


# ---------------------------------------------------------------- the paired bootstrap


def test_the_paired_bootstrap_is_fixed_by_its_seed():
    gained = [1, 0, -1, 1, 1, 0, 1, 0, -1, 1]  # B - A per problem, each worth 1
    first = paired_bootstrap(gained, [1] * 10, resamples=2000, seed=7)
    assert paired_bootstrap(gained, [1] * 10, resamples=2000, seed=7) == first
    assert paired_bootstrap(gained, [1] * 10, resamples=2000, seed=8) != first
    low, high = first
    assert low < 30 < high  # the observed difference, 100 * 3 / 10
    # every resample of problems that all gained their whole worth gains 100%
    assert paired_bootstrap([2, 1], [2, 1], resamples=50, seed=0) == (100.0, 100.0)


# ---------------------------------------------------------------- kappas


def test_cohen_kappa_of_the_textbook_table():
    # 50 items: both yes 20, yes/no 5, no/yes 10, both no 15: agreement 0.7, chance 0.5 * 0.6 + 0.5 * 0.4 = 0.5
    first = ["yes"] * 20 + ["yes"] * 5 + ["no"] * 10 + ["no"] * 15
    second = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa(first, second) == pytest.approx(0.4)
    assert cohen_kappa(["a", "b"], ["a", "b"]) == 1.0
    assert math.isnan(cohen_kappa(["a", "a"], ["a", "a"]))  # chance agreement 1: nothing to say


FLEISS_TEXTBOOK = [  # 10 subjects, 14 raters, 5 categories (Fleiss' kappa's worked example): kappa 0.210
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def test_fleiss_kappa_of_the_textbook_table():
    assert fleiss_kappa(FLEISS_TEXTBOOK) == pytest.approx(0.2099, abs=1e-4)
    assert category_counts([["a", "b", "b"], ["c", "c", "c"]]) == [[1, 2, 0], [0, 0, 3]]
    assert fleiss_kappa(category_counts([["a", "a", "a"], ["b", "b", "b"]])) == 1.0
    with pytest.raises(ValueError, match="the same number"):
        fleiss_kappa([[1, 2], [1, 1]])


# ---------------------------------------------------------------- two cells from hand-written judgments

SUITE, FAMILY = "s", "f"


def judgment(
    problem: str,
    model: str,
    points: float | None,
    max_points: float = 1.0,
    sample: int = 0,
    judge: str = "rule",
    status: str = "scored",
    protocol: str = "hipho official v3 (rules only)",
    details: tuple = (),
    verdict: str | None = None,
) -> Judgment:
    score = None if points is None else points / max_points
    return Judgment(
        id=problem,
        suite=SUITE,
        model=model,
        judge=judge,
        sample=sample,
        language="en",
        subset="exam",
        status=status,
        score=score,
        points=points,
        max_points=max_points,
        details=details,
        verdict=verdict,
        protocol=protocol,
        judge_config=f"{judge}@1",
        packages="olympiad-eval 0.1.0",
    )


def cell(layout: Layout, text: str, judgments: list[Judgment]):
    """Write the judgments where the cell's file is, and read it back as the command does."""
    parsed = parse_cell(text)
    write_jsonl(layout.judgments(FAMILY, SUITE, parsed.model, parsed.judge), judgments)
    return read_cell(layout, FAMILY, SUITE, parsed)


def test_flips_and_differences_of_two_models(tmp_path):
    layout = Layout(tmp_path)
    a = cell(
        layout,
        "m1/rule",
        [
            judgment("1", "m1", 1),
            judgment("2", "m1", 1),
            judgment("3", "m1", 0),
            judgment("4", "m1", 1, max_points=2),
            judgment("10", "m1", None, status="judge_error"),
        ],
    )
    b = cell(
        layout,
        "m2/rule",
        [
            judgment("1", "m2", 0),
            judgment("2", "m2", 1),
            judgment("3", "m2", 1),
            judgment("4", "m2", 2, max_points=2),
            judgment("10", "m2", 1),
        ],
    )
    result = compare_runs(SUITE, a, b, resamples=500, seed=0)
    flips = result.tables["flips"]
    assert list(flips["id"]) == ["1", "3", "4", "10"]  # natural order; problem 2 did not change
    assert list(flips["change"]) == ["right → wrong", "wrong → right", "wrong → right", "wrong → right"]
    assert list(flips["unscored"]) == ["", "", "", "A: 1 judge error"]
    measures = result.tables["difference"].set_index("measure")
    # points: A 3 of 6, B 5 of 6; right: A 2 of 5 (1, 2), B 4 of 5 (2, 3, 4, 10)
    assert measures.loc["score (%)", ["A", "B", "B - A"]].tolist() == [50.0, 83.33, 33.33]
    assert measures.loc["right (%)", ["A", "B", "B - A"]].tolist() == [40.0, 80.0, 40.0]
    assert measures.loc["right (%)", ["A ahead", "B ahead"]].tolist() == [1, 3]
    assert measures.loc["right (%)", "p"] == mcnemar(1, 3)[0] == 0.625
    # point differences -1, +1, +1, +1: |sum| = 2 is reached by 10 of the 16 flips
    assert measures.loc["score (%)", "p"] == 0.625
    assert result.tables["runs"]["judge errors"].tolist() == [1, 0]
    assert result.tables["runs"]["samples"].tolist() == ["1 (sample 0)", "1 (sample 0)"]  # a count, then which
    assert result.name == "m1__rule-vs-m2__rule" and result.settings == {"resamples": 500, "seed": 0}


def test_the_runs_table_counts_the_samples_then_names_them():
    assert [samples_shown(samples) for samples in [(0,), (0, 1, 2, 3), (0, 2)]] == [
        "1 (sample 0)",
        "4 (samples 0-3)",
        "2 (samples 0,2)",
    ]


def test_parts_of_one_exam_problem_are_paired_and_drawn_as_one(tmp_path):
    """HiPhO's clusters: exam_1_a and exam_1_b are parts of exam problem exam_1. The tests, the
    interval and the MDE see each exam problem's differences summed; McNemar's test, which takes
    problems as independent, gives way to a sign-flip test of the exam problems."""
    from olympiad_eval.benchmarks import plugin

    layout = Layout(tmp_path)
    marks_a = {"exam_1_a": 1, "exam_1_b": 1, "exam_2_a": 1, "exam_3_a": 0, "exam_4_a": 0}
    marks_b = {"exam_1_a": 0, "exam_1_b": 0, "exam_2_a": 1, "exam_3_a": 1, "exam_4_a": 0}
    a = cell(layout, "m1/rule", [judgment(p, "m1", points) for p, points in marks_a.items()])
    b = cell(layout, "m2/rule", [judgment(p, "m2", points) for p, points in marks_b.items()])
    hipho = plugin("hipho")
    clustered = compare_runs(SUITE, a, b, resamples=500, seed=0, clusters=Clustering(hipho.cluster_of, "exam problem"))
    plain = compare_runs(SUITE, a, b, resamples=500, seed=0)
    measures = clustered.tables["difference"].set_index("measure")
    assert measures.loc["score (%)", ["A", "B", "B - A"]].tolist() == [60.0, 40.0, -20.0]
    # the exam problems' differences -2, 0, +1, 0 (of 2, 1, 1, 1 points): flips of -2 and +1 all reach |-1|
    assert measures["test"].tolist() == ["sign-flip permutation of 4 exam problems, exact (all 4 flips)"] * 2
    assert measures["p"].tolist() == [1.0, 1.0]
    # MDE = 2.80 x SE; SE = 100 sqrt(4/3 ((-2 + 0.4)^2 + 0.2^2 + (1 + 0.2)^2 + 0.2^2)) / 5 = 46.65
    z = 1.959964 + 0.841621
    assert measures.loc["score (%)", MDE] == pytest.approx(z * 100 * math.sqrt(4 / 3 * 4.08) / 5, abs=0.01)
    # each problem alone: SE = 100 sqrt(5/4 (2 * 0.8^2 + 1.2^2 + 2 * 0.2^2)) / 5 = 37.42, too small
    unclustered = plain.tables["difference"].set_index("measure")
    assert unclustered.loc["score (%)", MDE] == pytest.approx(z * 100 * math.sqrt(5 / 4 * 2.8) / 5, abs=0.01)
    assert unclustered.loc["right (%)", "test"] == "McNemar, exact binomial"
    assert "4 exam problems holding the 5 problems compared" in " ".join(clustered.notes)
    assert "each problem is its own cluster (5 problems" in " ".join(plain.notes)
    # the suite's kind comes from its rendered suite.json; without it each problem is its own cluster
    assert clustering(layout, FAMILY, SUITE).note.endswith(
        "not found (the suite's render stage writes it): each problem its own cluster"
    )


def test_two_sample_sets_of_one_model(tmp_path):
    layout = Layout(tmp_path)
    judgments = [
        judgment(str(p), "m", points, sample=s)
        for p, by_sample in enumerate([(1, 1, 0), (0, 1, 1), (1, 1, 1)])
        for s, points in enumerate(by_sample)
    ]
    first, second = cell(layout, "m/rule:0", judgments), cell(layout, "m/rule:1-2", judgments)
    assert (first.samples, second.samples) == ((0,), (1, 2))
    result = compare_runs(SUITE, first, second, resamples=100, seed=0)
    # right in every sample compared: problem 0 is right in sample 0 only, problem 1 in samples 1 and 2
    assert result.tables["flips"]["change"].tolist() == ["right → wrong", "wrong → right"]
    assert result.tables["flips"]["B points"].tolist() == [0.5, 1.0]  # the mean over samples 1 and 2
    assert result.name == "m__rule__s0-vs-m__rule__s1-2"


def test_cells_and_samples_are_written_as_model_judge_and_numbers():
    assert parse_cell("demo/rule") == Cell("demo", "rule")
    assert parse_cell("demo/gpt-4o:0-3,7").samples == (0, 1, 2, 3, 7)
    assert parse_cell("demo/rule:0,2").slug == "demo__rule__s0_2"
    for bad in ("demo", "demo/rule/x", "demo/rule:3-1", "demo/rule:a"):
        with pytest.raises(InputError, match="MODEL/JUDGE|sample numbers"):
            parse_cell(bad)


def test_cells_of_different_problems_are_refused_naming_the_ids(tmp_path):
    layout = Layout(tmp_path)
    a = cell(layout, "m1/rule", [judgment(str(p), "m1", 1) for p in (1, 2, 3)])
    b = cell(layout, "m2/rule", [judgment(str(p), "m2", 1) for p in (1, 2, 4)])
    with pytest.raises(
        InputError,
        match=r"judged different problems: only in m1/rule \(.*s/m1/judges/rule/judgments.jsonl\): 3; "
        r"only in m2/rule \(.*s/m2/judges/rule/judgments.jsonl\): 4",
    ):
        compare_runs(SUITE, a, b)


def test_one_judge_under_two_protocols_is_refused_two_judges_are_compared(tmp_path):
    layout = Layout(tmp_path)
    a = cell(layout, "m1/rule", [judgment("1", "m1", 1)])
    older = cell(layout, "m2/rule", [judgment("1", "m2", 1, protocol="hipho official v2 (rules only)")])
    with pytest.raises(InputError, match="judge 'rule' judged m1/rule .* and m2/rule .* under different protocols"):
        compare_runs(SUITE, a, older)
    llm = cell(layout, "m1/llm", [judgment("1", "m1", 0, judge="llm", protocol="hipho official v3 (prompts x v1)")])
    assert compare_runs(SUITE, a, llm).tables["flips"]["change"].tolist() == ["right → wrong"]
    with pytest.raises(InputError, match="are the same run"):
        compare_runs(SUITE, a, a)


def test_a_cell_that_mixes_protocols_or_lacks_samples_is_refused(tmp_path):
    layout = Layout(tmp_path)
    with pytest.raises(InputError, match=r"s/m1/judges/rule/judgments.jsonl: judgments made by 2 different protocols"):
        cell(layout, "m1/rule", [judgment("1", "m1", 1), judgment("2", "m1", 1, protocol="other v1")])
    with pytest.raises(InputError, match="cell m2/rule has samples 0, not 1-2"):
        cell(layout, "m2/rule:0-2", [judgment("1", "m2", 1)])


# ---------------------------------------------------------------- judges' agreement


def said(verdicts: dict[str, str], **more) -> tuple:
    return tuple(
        {"judge": judge, "answer": {"verdict": verdict, "reasoning": "..."}, **more}
        for judge, verdict in verdicts.items()
    )


def test_two_judges_of_an_ensemble_agree_by_cohen_s_kappa(tmp_path):
    # j1: c c i i, j2: c i i i: agreement 3/4, chance 0.5 * 0.25 + 0.5 * 0.75 = 0.5: kappa 0.5
    pairs = [("correct", "correct"), ("correct", "incorrect"), ("incorrect", "incorrect"), ("incorrect", "incorrect")]
    judgments = [
        judgment(str(n), "m", 1, judge="duo", details=said({"j1": one, "j2": two}, process={"steps": [{"grade": 1}]}))
        for n, (one, two) in enumerate(pairs)
    ]
    judgments.append(judgment("9", "m", None, judge="duo", status="judge_error"))  # no item
    table = judge_agreement(SUITE, [cell(Layout(tmp_path), "m/duo", judgments)]).tables["agreement"]
    assert table.to_dict("records") == [
        {
            "asked": "answer (verdict)",
            "judges": "j1 + j2",
            "items": 4,
            "categories": 2,
            "all agree (%)": 75.0,
            "kappa": 0.5,
            "statistic": "Cohen's kappa",
        }
    ]


def test_three_judges_agree_by_fleiss_kappa_with_each_pair_by_cohen_s(tmp_path):
    rows = [
        {"a": "correct", "b": "correct", "c": "correct"},
        {"a": "correct", "b": "incorrect", "c": "correct"},
        {"a": "incorrect", "b": "incorrect", "c": "incorrect"},
    ]
    judgments = [judgment(str(n), "m", 1, judge="trio", details=said(row)) for n, row in enumerate(rows)]
    table = judge_agreement(SUITE, [cell(Layout(tmp_path), "m/trio", judgments)]).tables["agreement"]
    expected = fleiss_kappa(category_counts([list(row.values()) for row in rows]))
    # by hand: P_i = 1, 1/3, 1; mean 7/9; shares 5/9, 4/9: chance 41/81; kappa (7/9 - 41/81) / (40/81) = 0.55
    assert expected == pytest.approx(0.55)
    assert table["judges"].tolist() == ["a + b + c", "a vs b", "a vs c", "b vs c"]
    assert table["kappa"].tolist() == [
        0.55,
        round(cohen_kappa(["c", "c", "i"], ["c", "i", "i"]), 3),
        1.0,
        round(cohen_kappa(["c", "i", "i"], ["c", "c", "i"]), 3),
    ]
    assert table["statistic"].tolist() == ["Fleiss' kappa"] + ["Cohen's kappa"] * 3


def test_hipho_criterion_awards_are_binarised_and_slots_read_as_equivalent(tmp_path):
    def details(awards, equivalent):
        return tuple(
            {
                "judge": judge,
                "criterion 0.0": {"awarded": award},
                "criterion 0.1": {"awarded": 0.0},
                "slot 0": {"equivalent": same},
            }
            for judge, award, same in zip(("x", "y"), awards, equivalent)
        )

    judgments = [
        judgment("1", "m", 1, judge="duo", details=details((0.5, 2.0), (True, True))),
        judgment("2", "m", 1, judge="duo", details=details((0.0, 1.0), (False, True))),
    ]
    table = judge_agreement(SUITE, [cell(Layout(tmp_path), "m/duo", judgments)]).tables["agreement"]
    rows = {row["asked"]: row for row in table.to_dict("records")}
    assert rows["criterion (awarded > 0)"]["items"] == 4 and rows["criterion (awarded > 0)"]["all agree (%)"] == 75.0
    assert rows["slot (equivalent)"]["items"] == 2 and rows["slot (equivalent)"]["all agree (%)"] == 50.0


def test_two_judge_cells_of_one_model_agree_on_right_and_wrong(tmp_path):
    layout = Layout(tmp_path)
    rule = cell(layout, "m/rule", [judgment(str(n), "m", p) for n, p in enumerate([1, 1, 0, 0])])
    llm = cell(layout, "m/llm", [judgment(str(n), "m", p, judge="llm") for n, p in enumerate([1, 0, 0, 0])])
    table = judge_agreement(SUITE, [rule, llm]).tables["agreement"]
    assert table[["asked", "judges", "kappa"]].values.tolist() == [["right/wrong (score 1)", "rule + llm", 0.5]]
    other = cell(layout, "n/llm", [judgment(str(n), "n", 1, judge="llm") for n in range(4)])
    with pytest.raises(InputError, match="give cells of one model"):
        judge_agreement(SUITE, [rule, other])
    with pytest.raises(InputError, match="judged by rules only: agreement needs several judges"):
        judge_agreement(SUITE, [rule])


# ---------------------------------------------------------------- the command on the sample's two models

HIPHO = "sample_hipho"
MODELS = {
    "reference": {"provider": "reference"},
    "demo": {"provider": "replay", "path": str(ROOT / "data/replay/demo/{suite}.jsonl")},
}


@pytest.fixture
def sample_run(render_suite):
    """The sample's HiPhO suite generated and judged by its stages' functions, both models, judge rule."""
    from olympiad_eval.stages.generate import generate
    from olympiad_eval.stages.judge import judge

    layout = Layout(render_suite(HIPHO, HIPHO))
    judge_cfg = compose_stage("judge", ["judge=rule", f"cell.suite={HIPHO}", "cell.model=x"]).judge
    cache = layout.root.parent / "cache.sqlite"
    for model, cfg in MODELS.items():
        generations = layout.generations("hipho", HIPHO, model)
        generate(HIPHO, model, OmegaConf.create(cfg), layout.prompts("hipho", HIPHO), generations, cache)
        judge(
            layout.suite("hipho", HIPHO),
            generations,
            "rule",
            judge_cfg,
            layout.judgments("hipho", HIPHO, model, "rule"),
            cache,
        )
    return layout


def command(layout: Layout, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "olympiad_eval.cli.compare", *args, "--outputs", str(layout.root)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )


def test_the_command_compares_the_sample_s_two_models(sample_run):
    done = command(sample_run, "runs", HIPHO, "reference/rule", "demo/rule")
    assert done.returncode == 0, done.stderr
    folder = sample_run.comparison(HIPHO, "reference__rule-vs-demo__rule")
    printed = (folder / "comparison.md").read_text(encoding="utf-8")
    assert done.stdout.startswith(printed)
    # the demo model misses DemoCPhO_2025_1_1 (4 points) and DemoPhO_2025_1_a (1 point) of 15
    flips = [line for line in printed.splitlines() if "right → wrong" in line]
    assert [line.split("|")[1].strip() for line in flips] == ["DemoCPhO_2025_1_1", "DemoPhO_2025_1_a"]
    assert "| score (%) | 100.00 | 66.67 |  -33.33 |" in printed
    assert "| A     | reference | rule    | 1 (sample 0) |" in printed  # one sample, never "samples 0"
    # the sample's DemoPhO_2025_1_a and _1_b are parts of one exam problem: paired and drawn as one
    assert "4 exam problems holding the 5 problems compared" in printed
    assert printed.count("sign-flip permutation of 4 exam problems, exact (all 4 flips): p = 0.5 ") == 2
    assert "10000 resamples, seed 0" in printed and "hipho olympiad_eval v5 (rules only)" in printed
    assert "MDE (80% power)" in printed and "= 2.80 x SE" in printed
    docs = (ROOT / "docs" / "comparisons.md").read_text(encoding="utf-8")
    assert printed[printed.index("## runs") : printed.index("- right:")].rstrip() in docs  # the docs show this run
    assert sorted(path.name for path in folder.iterdir()) == sorted(
        ["comparison.md", "index.json"]
        + [f"{name}.{ext}" for name in ("runs", "difference", "flips") for ext in ("md", "csv", "tex")]
    )
    assert r"\toprule" in (folder / "difference.tex").read_text(encoding="utf-8")
    page = sample_run.comparison_index().read_text(encoding="utf-8")
    assert "sample_hipho: reference/rule (A) vs demo/rule (B)" in page and "p = 0.5" not in page  # p in its column
    assert '<a href="sample_hipho/reference__rule-vs-demo__rule/comparison.md">' in page
    assert '<a href="../report/index.html">' in page

    first = {path.name: path.read_bytes() for path in folder.iterdir()}
    assert command(sample_run, "runs", HIPHO, "reference/rule", "demo/rule").returncode == 0
    assert {path.name: path.read_bytes() for path in folder.iterdir()} == first  # seeded: the same bytes


def test_bad_input_ends_in_one_line_naming_what_is_wrong(sample_run):
    cases = {
        (
            "runs",
            HIPHO,
            "demo/gpt-4o",
            "reference/rule",
        ): "no judgments of cell demo/gpt-4o on suite sample_hipho; its cells are demo/rule, reference/rule "
        "(closest: demo/rule)",
        ("runs", "sample_hiphoo", "demo/rule", "reference/rule"): "suite 'sample_hiphoo' is in no pipeline of the plan",
        ("runs", HIPHO, "demo", "reference/rule"): "cell 'demo': write it as MODEL/JUDGE",
        ("judges", HIPHO, "demo/rule"): "judged by rules only",
    }
    for args, words in cases.items():
        done = command(sample_run, *args)
        assert done.returncode == 2 and done.stdout == "", args
        assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1 and words in done.stderr, done.stderr

    demo = sample_run.judgments("hipho", HIPHO, "demo", "rule")
    write_jsonl(demo, [j for j in read_jsonl(demo, Judgment) if j.id != "DemoPhO_2025_1_b"])
    done = command(sample_run, "runs", HIPHO, "reference/rule", "demo/rule")
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "judged different problems: only in reference/rule" in done.stderr and "DemoPhO_2025_1_b" in done.stderr
