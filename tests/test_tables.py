"""Golden tests: small judgments in, exact Markdown, LaTeX and CSV out."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pandas as pd
import pytest
from omegaconf import OmegaConf

from olympiad_eval.benchmarks import plugin
from olympiad_eval.core.layout import TABLE_INDEX, Layout
from olympiad_eval.core.records import InputError, Judgment, Problem, write_jsonl
from olympiad_eval.stages.aggregate import aggregate, counts

REPO = Path(__file__).resolve().parents[1]
PLAN = {
    "suites": {"hipho": "olympiad"},
    "models": ["alpha", "beta"],
    "judges": ["rule"],
    "family": {"olympiad": "hipho"},
}
BENCH = OmegaConf.create({"kind": "hipho", "exams": {"X_2025": {"gold": 3.0, "silver": 2.0, "bronze": 1.0}}})


MADE_BY = {
    "protocol": "hipho official v3 (rules only)",
    "judge_config": "rule@0123456789ab",
    "packages": "olympiad-eval 0.1.0, sympy 1.14.0",
}
MADE_BY_NOTE = (
    "\nMade by:\n- rule: hipho official v3 (rules only); judge config rule@0123456789ab; "
    "olympiad-eval 0.1.0, sympy 1.14.0\n"
)


def judged(model: str, pid: str, points: float | None, status: str = "scored", sample: int = 0, **extra) -> Judgment:
    return Judgment(
        id=pid,
        suite="hipho",
        model=model,
        judge="rule",
        sample=sample,
        language="en",
        subset="X_2025",
        status=status,
        score=None if points is None else points / 2,
        points=points,
        max_points=2.0,
        **MADE_BY,
        **extra,
    )


def write(layout: Layout, rows: dict[str, list[Judgment]]) -> None:
    for model, judgments in rows.items():
        write_jsonl(layout.judgments("hipho", "hipho", model, "rule"), judgments)


def test_hipho_tables_golden(tmp_path):
    layout = Layout(tmp_path / "outputs")
    layout.usage("hipho", "hipho", "alpha").parent.mkdir(parents=True)
    layout.usage("hipho", "hipho", "alpha").write_text(
        json.dumps({"prompt_tokens": 1000, "completion_tokens": 200, "cost_usd": 0.004})
    )
    layout.judge_usage("hipho", "hipho", "alpha", "rule").parent.mkdir(parents=True)
    layout.judge_usage("hipho", "hipho", "alpha", "rule").write_text(
        json.dumps(  # generation's and the judge's apart
            {"prompt_tokens": 300, "completion_tokens": 50, "cost_usd": 0.00125}
        )
    )
    write(
        layout,
        {
            "alpha": [
                judged("alpha", "p1", 2.0),  # its second slot's check ran past the timeout: counted, scored 0
                judged("alpha", "p2", 1.5, undecided=("slot 2: check exceeded its CPU budget of 10 s",)),
            ],
            "beta": [judged("beta", "p1", 1.0), judged("beta", "p2", None, status="judge_error")],
        },
    )
    aggregate("olympiad", BENCH, PLAN, layout)
    tables = layout.tables("olympiad")
    assert (tables / "exam_scores.md").read_text() == (
        "| suite      | model   | judge   |   X_2025 |\n"
        "|:-----------|:--------|:--------|---------:|\n"
        "| hipho      | alpha   | rule    |     3.50 |\n"
        "| hipho      | beta    | rule    |     1.00 |\n"
        "| full marks |         |         |     4.00 |\n" + MADE_BY_NOTE
    )
    assert (tables / "exam_scores.tex").read_text() == (
        "% made by "
        + MADE_BY_NOTE.split("- ", 1)[1]
        + "\\begin{tabular}{lllr}\n\\toprule\nsuite & model & judge & X\\_2025 \\\\\n\\midrule\n"
        "hipho & alpha & rule & \\textbf{3.50} \\\\\nhipho & beta & rule & \\underline{1.00} \\\\\n"
        "full marks &  &  & 4.00 \\\\\n\\bottomrule\n\\end{tabular}\n"
    )
    assert (tables / "medals.csv").read_text() == (
        "suite,model,judge,X_2025,gold,silver,bronze,protocol\n"
        "hipho,alpha,rule,gold,1,0,0,hipho official v3 (rules only)\n"
        "hipho,beta,rule,bronze,0,0,1,hipho official v3 (rules only)\n"
    )
    assert (tables / "summary.csv").read_text() == (
        "suite,model,judge,problems,samples,scored,judge errors,undecided,failed generations,refusals,truncated,"
        "score (%),95% CI low,95% CI high,generation tokens,generation cost ($),judge tokens,judge cost ($),protocol,"
        "judge config\n"
        "hipho,alpha,rule,2,1,2,0,1,0,0,0,87.5,75.0,100.0,1200,0.004,350,0.00125,hipho official v3 (rules only),"
        "rule@0123456789ab\n"
        "hipho,beta,rule,2,1,1,1,0,0,0,0,25.0,0.0,50.0,,,,,hipho official v3 (rules only),rule@0123456789ab\n"
    )
    # what the intervals resampled, under the table and above its LaTeX
    assert (
        (tables / "summary.md")
        .read_text()
        .endswith(
            "\n95% intervals:\n- 95% CI low, 95% CI high: a percentile cluster bootstrap (1,000 resamples, seed 0) "
            "that draws whole exam problems with replacement, each with all its answers (its questions, languages "
            "and samples, which are not independent)\n"
            "- hipho: 2 exam problems, 2 answers (fewer than 30: the interval is likely too narrow)\n" + MADE_BY_NOTE
        )
    )
    assert "% 95% interval: hipho: 2 exam problems, 2 answers" in (tables / "summary.tex").read_text()
    assert "95% intervals" not in (tables / "exam_scores.md").read_text()  # no interval there
    # the headline metrics, a file per cell, a few columns: the counts are the summary's
    assert json.loads(layout.metrics("olympiad", "hipho", "beta", "rule").read_text()) == {
        "score": 25.0,
        "ci_low": 0.0,
        "ci_high": 50.0,
        "ci_resampled": "2 exam problems, 2 answers",
        "coverage": 0.5,
        "protocol": "hipho official v3 (rules only)",
    }


def test_hipho_s_parts_are_resampled_with_their_exam_problem(tmp_path):
    """The summary's interval draws HiPhO's exam problems (`cluster_of`), each with all its parts:
    a model that gets a problem's parts all right or all wrong is no more certain for having three
    of them. The item bootstrap would be narrower."""
    from olympiad_eval.core.stats import cluster_bootstrap, ratio_bootstrap
    from olympiad_eval.stages.aggregate import load_judgments

    layout = Layout(tmp_path / "outputs")
    marks = {"X_2025_1_a": 2.0, "X_2025_1_b": 2.0, "X_2025_1_c": 2.0, "X_2025_2_a": 0.0, "X_2025_2_b": 0.0}
    marks |= {"X_2025_2_c": 0.0, "X_2025_3": 2.0, "X_2025_4": 0.0, "X_2025_5_a": 2.0}
    write(layout, {model: [judged(model, pid, points) for pid, points in marks.items()] for model in ("alpha", "beta")})
    aggregate("olympiad", BENCH, PLAN, layout)
    frame = load_judgments(layout, PLAN, "olympiad", cluster_of=plugin("hipho").cluster_of)
    assert frame["cluster"].tolist()[:9] == ["X_2025_1"] * 3 + ["X_2025_2"] * 3 + ["X_2025_3", "X_2025_4", "X_2025_5"]
    summary = pd.read_csv(layout.tables("olympiad") / "summary.csv").set_index("model")
    earned, clusters = list(marks.values()), frame["cluster"].tolist()[:9]
    low, high = cluster_bootstrap(earned, [2.0] * 9, clusters, seed=0)
    assert summary.loc["alpha", ["95% CI low", "95% CI high"]].tolist() == [round(low, 2), round(high, 2)]
    item_low, item_high = ratio_bootstrap(earned, [2.0] * 9, seed=0)
    assert high - low > item_high - item_low + 10  # the parts are not independent draws
    metrics = json.loads(layout.metrics("olympiad", "hipho", "alpha", "rule").read_text())
    assert metrics["ci_resampled"] == "5 exam problems, 9 answers"


def test_a_benchmark_s_clusters_default_to_its_problems(tmp_path):
    """By default a cluster is a problem: its samples are drawn together, as one."""
    from olympiad_eval.benchmarks.base import Benchmark
    from olympiad_eval.stages.aggregate import load_judgments

    layout = Layout(tmp_path / "outputs")
    rows = {m: [judged(m, "p1", 2.0, sample=s) for s in (0, 1)] + [judged(m, "p2", 0.0)] for m in ("alpha", "beta")}
    write(layout, rows)
    assert "cluster_of" not in type(plugin("mathvision")).__dict__  # the default
    assert plugin("mathvision").cluster_of(rows["alpha"][1]) == "p1"
    assert Benchmark.cluster_unit == "problem"
    frame = load_judgments(layout, PLAN, "olympiad")
    assert frame["cluster"].tolist() == ["p1", "p1", "p2"] * 2
    assert counts(frame)["problems"].tolist() == [2, 2]


def test_the_tables_index_lists_each_table_in_order_with_its_title_and_files(tmp_path):
    """The report reads the index (it never parses tables.md back)."""
    layout = Layout(tmp_path / "outputs")
    write(layout, {model: [judged(model, "p1", 2.0)] for model in ("alpha", "beta")})
    tables = aggregate("olympiad", BENCH, PLAN, layout)
    index = json.loads(layout.table_index("olympiad").read_text())
    assert [entry["name"] for entry in index["tables"]] == list(tables) and list(tables)[:2] == [
        "summary",
        "exam_scores",
    ]
    folder, listed = layout.tables("olympiad"), {TABLE_INDEX, index["all"]}
    headings = [line for line in (folder / index["all"]).read_text().splitlines() if line.startswith("## ")]
    assert headings == [f"## olympiad: {entry['title']}" for entry in index["tables"]]
    for entry in index["tables"]:
        assert entry["title"] == entry["name"].replace("_", " ")
        assert entry["files"] == {
            "csv": f"{entry['name']}.csv",
            "latex": f"{entry['name']}.tex",
            "markdown": f"{entry['name']}.md",
        }
        listed |= set(entry["files"].values())
    assert {path.name for path in folder.iterdir()} == listed


def test_samples_give_a_mean_and_a_standard_deviation(tmp_path):
    layout = Layout(tmp_path / "outputs")
    write(
        layout,
        {
            "alpha": [judged("alpha", "p1", 2.0, sample=0), judged("alpha", "p1", 1.0, sample=1)],
            "beta": [judged("beta", "p1", 0.0, sample=0), judged("beta", "p1", 0.0, sample=1)],
        },
    )
    aggregate("olympiad", BENCH, PLAN, layout)
    assert (layout.tables("olympiad") / "exam_scores_std.csv").read_text() == (
        "suite,model,judge,X_2025,protocol\nhipho,alpha,rule,0.5,hipho official v3 (rules only)\n"
        "hipho,beta,rule,0.0,hipho official v3 (rules only)\n"
    )
    assert "| hipho      | alpha   | rule    |     1.50 |" in (layout.tables("olympiad") / "exam_scores.md").read_text()


def physelite_judgment(pid, language, subject, level, score, process, details, suite=None, verdict=None):
    return Judgment(
        id=pid,
        suite=suite or f"pe_{language}",
        model="m",
        judge="ens",
        sample=0,
        language=language,
        subset=subject,
        subject=subject,
        level=level,
        status="scored",
        score=score,
        points=score,
        max_points=1.0,
        parts={"process": process},
        details=details,
        verdict=verdict or ("correct" if score == 1 else "incorrect"),
    )


def judge_said(verdict, grades, error_type=None):
    said = {"answer": {"verdict": verdict}, "process": {"steps": [{"step": "s", "grade": g} for g in grades]}}
    return said | ({"error_type": {"error_type": error_type}} if error_type else {})


PE_BENCH = {"kind": "physelite", "difficulty_bands": {"Easy": [1, 2], "Medium": [3, 5], "Hard": [6, 7]}}
PE_SUITES = {
    "pe_en": {"language": "en", "setting": "schematic", "baseline": None},
    "pe_zh": {"language": "zh", "setting": "schematic", "baseline": None},
    "pe_en_hint": {"language": "en", "setting": "schematic+hint", "baseline": "pe_en"},
    "pe_zh_hint": {"language": "zh", "setting": "schematic+hint", "baseline": "pe_zh"},
}
BOTH = "Optics; Mechanics"  # a problem with two subjects counts under each


def physelite_cells():
    """Two settings of one benchmark: the schematic baseline on p1 and p2, and a hint variant on p1
    only. Judges A and B each grade steps; error types come with some verdicts."""
    return {
        "pe_en": [
            # correct: its error type (a judge's slip) is not classified
            physelite_judgment(
                "p1", "en", "Mechanics", 2, 1.0, 1.0, (judge_said("correct", [1, 1], "algebraic_symbolic"),)
            ),
            # wrong, two judges name two types: half a response each, never two responses
            physelite_judgment(
                "p2",
                "en",
                BOTH,
                6,
                0.0,
                0.5,
                (judge_said("incorrect", [1, 0.5, 0], "numerical"), judge_said("incorrect", [0, 1], "physical_law")),
            ),
        ],
        "pe_zh": [
            physelite_judgment(
                "p1", "zh", "Mechanics", 2, 0.0, 0.75, (judge_said("incorrect", [1, 0.5], "physical_law"),)
            ),
            physelite_judgment("p2", "zh", BOTH, 6, 0.0, 0.0, (judge_said("incorrect", [0], "none"),)),
        ],
        "pe_en_hint": [
            physelite_judgment(
                "p1", "en", "Mechanics", 2, 1.0, 1.0, (judge_said("correct", [1, 1]),), suite="pe_en_hint"
            )
        ],
        "pe_zh_hint": [
            physelite_judgment(
                "p1",
                "zh",
                "Mechanics",
                2,
                0.5,
                0.5,
                (judge_said("correct", [1, 1], "none"), judge_said("incorrect", [1, 0], "geometric_visual")),
                suite="pe_zh_hint",
                verdict="split",
            )
        ],
    }


def physelite_tables(tmp_path, cells=None, suites=None):
    layout = Layout(tmp_path / "outputs")
    cells = cells or physelite_cells()
    for suite, judgments in cells.items():
        write_jsonl(layout.judgments("physelite", suite, "m", "ens"), judgments)
    plan = {
        "suites": {suite: "pe" for suite in cells},
        "models": ["m"],
        "judges": ["ens"],
        "family": {"pe": "physelite"},
    }
    aggregate(
        "pe",
        OmegaConf.create(PE_BENCH),
        plan,
        layout,
        suites={
            name: OmegaConf.create({"kind": "physelite", **config})
            for name, config in (suites or PE_SUITES).items()
            if name in cells
        },
    )
    return layout.tables("pe")


def test_physelite_tables_golden(tmp_path):
    tables = physelite_tables(tmp_path)
    # Table 3 per setting, each the mean of its zh and en suites: the 25 % baseline and the 75 % hint
    # setting are two rows, never one 50 %. The interval draws problems with both their answers: p1
    # twice is (100 + 0) / 2, p2 twice 0, one of each 25
    assert (tables / "accuracy.csv").read_text() == (
        "setting,model,judge,languages,Mechanics,Optics,Ans.,Proc.,Ans. 95% CI low,Ans. 95% CI high,protocol\n"
        "schematic,m,ens,en+zh,25.0,0.0,25.0,56.2,0.0,50.0,\n"
        "schematic+hint,m,ens,en+zh,75.0,,75.0,75.0,75.0,75.0,\n"
    )
    assert (
        "- schematic: 2 problems, 4 answers (fewer than 30: the interval is likely too narrow)\n"
        "- schematic+hint: 1 problem, 2 answers (fewer than 30"
    ) in (tables / "accuracy.md").read_text()
    assert (tables / "accuracy_by_language.csv").read_text() == (
        "setting,model,judge,Ans. en,Ans. zh,Proc. en,Proc. zh,protocol\n"
        "schematic,m,ens,50.0,0.0,75.0,37.5,\n"
        "schematic+hint,m,ens,100.0,50.0,100.0,50.0,\n"
    )
    assert (tables / "accuracy_by_difficulty.csv").read_text() == (
        "setting,model,judge,languages,Easy,Hard,protocol\nschematic,m,ens,en+zh,50.0,0.0,\nschematic+hint,m,ens,en+zh,75.0,,\n"
    )
    # Table 4 on the same problems (p1 only): the baseline's p1 answers are 100 (en) and 0 (zh), processes 1 and 0.75
    assert (tables / "extra_information.csv").read_text() == (
        "setting,baseline,judge,metric,m,protocol\n"
        "schematic+hint,schematic,ens,Answer,75.0 (+25.0),\n"
        "schematic+hint,schematic,ens,Process,75.0 (-12.5),\n"
        "schematic+hint,schematic,ens,problems compared,2,\n"
    )
    # per language, then the mean: first errors en 2, 1 and zh 2, 1; step-1 failures en 1 of 3 graded, zh 1 of 2;
    # soft failures en 1 of 3 failed steps, zh 1 of 2; the hint's en has no failed step (no soft share)
    assert (tables / "failure_analyses.csv").read_text() == (
        "setting,model,judge,languages,first error (mean step),fails at step 1 (%),complete (%),soft failures (%),"
        "last-step-only (%),judges agree (%),soft failures en (%),soft failures zh (%),protocol\n"
        "schematic,m,ens,en+zh,1.5,41.7,16.7,41.7,50.0,100.0,33.3,50.0,\n"
        "schematic+hint,m,ens,en+zh,2.0,0.0,75.0,0.0,25.0,50.0,,0.0,\n"
    )
    # step 1 wrong: en Mechanics 1 of 3 judge gradings, Optics 1 of 2; zh Mechanics 1 of 2, Optics 1 of 1
    assert (tables / "first_step_errors_by_subject.csv").read_text() == (
        "setting,model,judge,languages,Mechanics,Optics,protocol\n"
        "schematic,m,ens,en+zh,41.7,75.0,\n"
        "schematic+hint,m,ens,en+zh,0.0,,\n"
    )
    # wrong answers only, each once: en p2 (numerical + physical_law, half each), zh p1 (physical_law),
    # zh p2 (none named)
    assert (tables / "error_types.csv").read_text() == (
        "setting,model,judge,wrong answers,error: physical_law (%),error: geometric_visual (%),error: numerical (%),"
        "error: unclassified (%),protocol\n"
        "schematic,m,ens,3,50.0,0.0,16.7,33.3,\n"
        "schematic+hint,m,ens,1,0.0,100.0,0.0,0.0,\n"
    )
    summary = (tables / "summary.csv").read_text().splitlines()
    assert [line.split(",")[0] for line in summary[1:]] == ["pe_en", "pe_en_hint", "pe_zh", "pe_zh_hint"]


def test_physelite_suites_without_a_setting_are_each_their_own(tmp_path):
    """No `setting` in the suites' configs: nothing is averaged, not even zh with en."""
    tables = physelite_tables(tmp_path, suites={name: {"language": c["language"]} for name, c in PE_SUITES.items()})
    assert [line.split(",")[:4] for line in (tables / "accuracy.csv").read_text().splitlines()[1:]] == [
        ["pe_en", "m", "ens", "en"],
        ["pe_en_hint", "m", "ens", "en"],
        ["pe_zh", "m", "ens", "zh"],
        ["pe_zh_hint", "m", "ens", "zh"],
    ]
    assert not (tables / "extra_information.csv").exists()


def test_physelite_two_suites_of_one_setting_and_language_are_refused(tmp_path):
    suites = {**PE_SUITES, "pe_en_hint": {**PE_SUITES["pe_en_hint"], "setting": "schematic"}}
    with pytest.raises(InputError, match="suites pe_en, pe_en_hint are all setting 'schematic' in language 'en'"):
        physelite_tables(tmp_path, suites=suites)


def test_physelite_variant_whose_baseline_is_not_in_the_plan_is_refused(tmp_path):
    cells = {name: judgments for name, judgments in physelite_cells().items() if name != "pe_zh"}
    with pytest.raises(
        InputError, match="suite 'pe_zh_hint' names baseline 'pe_zh', which is not a suite of this benchmark"
    ):
        physelite_tables(tmp_path, cells=cells)


def test_physelite_variant_is_compared_in_its_own_language(tmp_path):
    suites = {**PE_SUITES, "pe_zh_hint": {**PE_SUITES["pe_zh_hint"], "baseline": "pe_en"}}
    with pytest.raises(InputError, match=r"suite 'pe_zh_hint' \(zh\) names baseline 'pe_en' \(en\)"):
        physelite_tables(tmp_path, suites=suites)


def test_physelite_rule_judge_tables_have_no_step_analyses(tmp_path):
    """The bundled plan's rule judge: no process score, no steps, no error types; no Table 4 without variants."""
    cells = {
        suite: [dataclasses.replace(j, details=(), parts={}) for j in judgments]
        for suite, judgments in physelite_cells().items()
        if "hint" not in suite
    }
    tables = physelite_tables(tmp_path, cells=cells)
    assert sorted(p.stem for p in tables.glob("*.csv")) == [
        "accuracy",
        "accuracy_by_difficulty",
        "accuracy_by_language",
        "summary",
    ]
    assert (tables / "accuracy.csv").read_text().splitlines()[1] == "schematic,m,ens,en+zh,25.0,0.0,25.0,,0.0,50.0,"


def test_physelite_difficulty_bands_come_from_the_config(tmp_path):
    global PE_BENCH
    saved, PE_BENCH = PE_BENCH, {**PE_BENCH, "difficulty_bands": {"Easy": [1, 3], "Medium": [4, 5], "Hard": [6, 7]}}
    try:
        tables = physelite_tables(tmp_path)
    finally:
        PE_BENCH = saved
    assert (tables / "accuracy_by_difficulty.csv").read_text().splitlines()[
        0
    ] == "setting,model,judge,languages,Easy,Hard,protocol"


def test_the_aggregate_stage_reads_the_plans_suites_as_render_composes_them():
    from hydra import initialize_config_dir

    from olympiad_eval.core.plan import read_plan
    from olympiad_eval.stages.runner import suite_configs

    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base=None):
        suites = suite_configs(read_plan(REPO / "params.yaml"), "sample_physelite")
    assert {name: (s.language, s.setting, s.baseline) for name, s in suites.items()} == {
        "sample_physelite_en": ("en", "schematic", None),
        "sample_physelite_zh": ("zh", "schematic", None),
    }


def test_mathvision_tables_golden(tmp_path):
    def row(pid, subject, level, score):
        return Judgment(
            id=pid,
            suite="mv",
            model="m",
            judge="rule",
            sample=0,
            language="en",
            subset=subject,
            subject=subject,
            level=level,
            status="scored",
            score=score,
            points=score,
            max_points=1.0,
        )

    layout = Layout(tmp_path / "outputs")
    write_jsonl(
        layout.judgments("mathvision", "mv", "m", "rule"),
        [
            row("1", "algebra", 1, 1.0),
            row("2", "algebra", 2, 0.0),
            row("3", "counting", 1, 1.0),
            row("4", "counting", 1, 0.0),
        ],
    )
    plan = {"suites": {"mv": "mathv"}, "models": ["m"], "judges": ["rule"], "family": {"mathv": "mathvision"}}
    aggregate("mathv", OmegaConf.create({"kind": "mathvision"}), plan, layout)
    tables = layout.tables("mathv")
    assert (
        tables / "accuracy.csv"
    ).read_text() == "suite,model,judge,overall,level 1,level 2,protocol\nmv,m,rule,50.0,66.67,0.0,\n"
    assert (
        tables / "accuracy_by_subject.csv"
    ).read_text() == "suite,model,judge,algebra,counting,protocol\nmv,m,rule,50.0,50.0,\n"
    assert (tables / "accuracy_by_subject_and_level.csv").read_text() == (
        "suite,model,judge,subject,level 1,level 2,protocol\nmv,m,rule,algebra,100.0,0.0,\nmv,m,rule,counting,50.0,,\n"
    )
    assert (tables / "accuracy.md").read_text() == (
        "| suite   | model   | judge   |   overall |   level 1 |   level 2 |\n"
        "|:--------|:--------|:--------|----------:|----------:|----------:|\n"
        "| mv      | m       | rule    |     50.00 |     66.67 |      0.00 |\n"
        "\nMade by:\n- rule: not recorded (judged before protocols had versions)\n"
    )


def test_mathvision_evalscope_tables_say_so_and_leave_out_what_evalscope_excludes(tmp_path):
    """Numbers of suite `mathvision_evalscope` are labelled as evalscope-protocol numbers in every
    table and in the cell's metrics; a response evalscope excludes (the rules' judge error there)
    is out of the accuracy, as out of evalscope's mean, and still counted in the summary."""
    made_by = {
        "protocol": "mathvision evalscope v4 (rules only)",
        "judge_config": "rule@0123456789ab",
        "packages": "olympiad-eval 0.1.0",
    }

    def row(pid, level, score, status="scored"):
        return Judgment(
            id=pid,
            suite="mve",
            model="m",
            judge="rule",
            sample=0,
            language="en",
            subset="algebra",
            subject="algebra",
            level=level,
            status=status,
            score=score,
            points=score,
            max_points=1.0,
            **made_by,
        )

    layout = Layout(tmp_path / "outputs")
    write_jsonl(
        layout.judgments("mathvision", "mve", "m", "rule"),
        [row("1", 1, 1.0), row("2", 1, 0.0), row("3", 1, None, "judge_error"), row("4", 2, 1.0)],
    )
    plan = {"suites": {"mve": "mathv"}, "models": ["m"], "judges": ["rule"], "family": {"mathv": "mathvision"}}
    aggregate("mathv", OmegaConf.create({"kind": "mathvision"}), plan, layout)
    tables = layout.tables("mathv")
    assert (tables / "accuracy.csv").read_text() == (
        "suite,model,judge,overall,level 1,level 2,protocol\n"
        "mve,m,rule,66.67,50.0,100.0,mathvision evalscope v4 (rules only)\n"
    )
    for name in ("accuracy", "accuracy_by_subject", "accuracy_by_subject_and_level", "summary"):
        assert "mathvision evalscope v4 (rules only)" in (tables / f"{name}.md").read_text(), name
        assert "mathvision evalscope v4 (rules only)" in (tables / f"{name}.csv").read_text(), name


def test_the_bootstrap_is_the_same_drawn_in_chunks(monkeypatch):
    """Resamples are drawn in chunks to bound memory; the seeded stream, so the interval, is unchanged."""
    import numpy as np
    import pandas as pd

    from olympiad_eval.core import stats
    from olympiad_eval.stages import aggregate as tables

    rng = np.random.default_rng(1)
    group = pd.DataFrame(
        {"id": [f"p{i}" for i in range(37)], "points": rng.integers(0, 2, 37).astype(float), "max_points": 1.0}
    )
    whole = tables.bootstrap_interval(group)
    monkeypatch.setattr(stats, "BOOTSTRAP_CHUNK", 37 * 3)  # three resamples per chunk: 334 chunks
    assert tables.bootstrap_interval(group) == whole


def test_judges_prose_is_not_loaded_into_the_tables_frame(tmp_path):
    """Reasons and step descriptions are for the report; the tables read only the grades."""
    from olympiad_eval.stages.aggregate import load_judgments

    said = {
        "judge": "j",
        "answer": {"verdict": "correct", "reasoning": "long prose"},
        "process": {"steps": [{"step": "prose", "grade": 1.0}], "reasoning": "more prose"},
    }
    judgment = physelite_judgment("p1", "en", "Optics", 3, 1.0, 1.0, (said,))
    write_jsonl(Layout(tmp_path).judgments("physelite", "pe_en", "m", "ens"), [judgment])
    frame = load_judgments(
        Layout(tmp_path),
        {"suites": {"pe_en": "pe"}, "models": ["m"], "judges": ["ens"], "family": {"pe": "physelite"}},
        "pe",
    )
    assert frame["details"][0] == (
        {"judge": "j", "answer": {"verdict": "correct"}, "process": {"steps": ({"grade": 1.0},)}},
    )
    assert "detail" not in frame.columns and frame["score"][0] == 1.0


def test_every_table_says_which_protocol_made_its_numbers(tmp_path):
    layout = Layout(tmp_path / "outputs")
    write(layout, {model: [judged(model, "p1", 2.0)] for model in ("alpha", "beta")})
    aggregate("olympiad", BENCH, PLAN, layout)
    tables = layout.tables("olympiad")
    line = "rule: hipho official v3 (rules only); judge config rule@0123456789ab; olympiad-eval 0.1.0, sympy 1.14.0"
    for name in ("summary", "exam_scores", "medals"):
        table = pd.read_csv(tables / f"{name}.csv")
        cells = table[table["model"].isin(["alpha", "beta"])]
        assert len(cells) == 2 and set(cells["protocol"]) == {"hipho official v3 (rules only)"}
        assert (tables / f"{name}.md").read_text().endswith(f"\nMade by:\n- {line}\n")
        assert (tables / f"{name}.tex").read_text().startswith(f"% made by {line}\n")
    assert (
        json.loads(layout.metrics("olympiad", "hipho", "beta", "rule").read_text())["protocol"]
        == "hipho official v3 (rules only)"
    )
    assert (tables / "tables.md").read_text().endswith(f"|\n\nMade by:\n- {line}\n")


def released(layout: Layout, benchmark: str, ids: list[str], languages=("en",)) -> None:
    """The benchmark's problems as fetch writes them: what a partial suite took a part of."""
    write_jsonl(
        layout.problem_records(benchmark),
        [
            Problem(id=pid, benchmark=benchmark, language=language, question="q")
            for pid in ids
            for language in languages
        ],
    )


PARTIAL_NOTE = "\nPartial, not every problem:\n- partial: hipho: 2 of 3 problems (limit 2)\n"


def test_a_partial_suite_is_marked_in_every_table_and_format(tmp_path):
    layout = Layout(tmp_path / "outputs")
    released(layout, "olympiad", ["p1", "p2", "p3"])
    write(layout, {model: [judged(model, "p1", 2.0), judged(model, "p2", 1.0)] for model in ("alpha", "beta")})
    tables = aggregate(
        "olympiad", BENCH, PLAN, layout, suites={"hipho": OmegaConf.create({"kind": "hipho", "limit": 2})}
    )
    folder = layout.tables("olympiad")
    for name in tables:
        csv = pd.read_csv(folder / f"{name}.csv", keep_default_na=False)
        cells = csv["suite"] == "hipho"
        assert set(csv.loc[cells, "partial"]) == {"2 of 3 problems (limit 2)"}
        assert set(csv.loc[~cells, "partial"]) <= {""}  # the exams' full marks are no cell
        assert (folder / f"{name}.md").read_text().endswith(PARTIAL_NOTE + MADE_BY_NOTE)
        assert (
            (folder / f"{name}.tex").read_text().startswith("% partial: hipho: 2 of 3 problems (limit 2)\n% made by ")
        )
    assert (folder / "tables.md").read_text().count(PARTIAL_NOTE) == len(tables)  # after each table
    assert (
        json.loads(layout.metrics("olympiad", "hipho", "alpha", "rule").read_text())["partial"]
        == "2 of 3 problems (limit 2)"
    )  # and in each cell's headline metrics


def test_a_whole_suite_changes_no_table_and_its_problems_are_not_read(tmp_path):
    """No problems file: a suite without selection options never needs one."""
    written = {}
    for name, suites in (("none", None), ("whole", {"hipho": OmegaConf.create({"kind": "hipho"})})):
        layout = Layout(tmp_path / name / "outputs")
        write(layout, {model: [judged(model, "p1", 2.0)] for model in ("alpha", "beta")})
        aggregate("olympiad", BENCH, PLAN, layout, suites=suites)
        written[name] = {path.name: path.read_bytes() for path in layout.tables("olympiad").iterdir()}
        assert "partial" not in json.loads(layout.metrics("olympiad", "hipho", "alpha", "rule").read_text())
    assert written["whole"] == written["none"]


def test_a_limit_above_the_suite_s_size_is_no_partial_run(tmp_path):
    layout = Layout(tmp_path / "outputs")
    released(layout, "olympiad", ["p1"])
    write(layout, {model: [judged(model, "p1", 2.0)] for model in ("alpha", "beta")})
    aggregate("olympiad", BENCH, PLAN, layout, suites={"hipho": OmegaConf.create({"kind": "hipho", "limit": 5})})
    assert "partial" not in (layout.tables("olympiad") / "summary.csv").read_text()


def test_a_table_whose_rows_pool_suites_names_each_partial_one(tmp_path):
    """PhysElite's tables pool a setting's zh and en suites in one row: every row names pe_en's part."""
    cells = {suite: judgments for suite, judgments in physelite_cells().items() if "hint" not in suite}
    released(Layout(tmp_path / "outputs"), "pe", ["p1", "p2", "p3"], languages=("en", "zh"))
    tables = physelite_tables(tmp_path, cells=cells, suites={**PE_SUITES, "pe_en": {**PE_SUITES["pe_en"], "limit": 2}})
    accuracy = pd.read_csv(tables / "accuracy.csv", keep_default_na=False)
    assert list(accuracy["partial"]) == ["pe_en: 2 of 3 problems (limit 2)"]
    summary = pd.read_csv(tables / "summary.csv", keep_default_na=False)
    assert dict(zip(summary["suite"], summary["partial"])) == {"pe_en": "2 of 3 problems (limit 2)", "pe_zh": ""}


def test_a_cell_whose_judgments_mix_protocols_stops_the_tables(tmp_path):
    layout = Layout(tmp_path / "outputs")
    older = {**MADE_BY, "protocol": "hipho official v1 (rules only)"}
    write(
        layout,
        {
            "alpha": [judged("alpha", "p1", 2.0), dataclasses.replace(judged("alpha", "p2", 2.0), **older)],
            "beta": [judged("beta", "p1", 1.0)],
        },
    )
    with pytest.raises(
        InputError, match=r"hipho/alpha/judges/rule/judgments\.jsonl: judgments made by 2 different protocols .*v1.*v3"
    ):
        aggregate("olympiad", BENCH, PLAN, layout)


def test_refusals_are_counted_beside_the_errors_and_score_nothing(tmp_path):
    layout = Layout(tmp_path / "outputs")
    write(
        layout,
        {
            "alpha": [judged("alpha", "p1", 2.0), dataclasses.replace(judged("alpha", "p2", 0.0), refused=True)],
            "beta": [
                dataclasses.replace(judged("beta", "p1", 0.0), refused=True),
                dataclasses.replace(judged("beta", "p2", 0.0), refused=True),
            ],
        },
    )
    tables = aggregate("olympiad", BENCH, PLAN, layout)
    summary = tables["summary"].set_index("model")
    assert summary["refusals"].to_dict() == {"alpha": 1, "beta": 2}
    assert summary["scored"].to_dict() == {"alpha": 2, "beta": 2} and summary.loc["beta", "score (%)"] == 0.0
    assert [
        json.loads(layout.metrics("olympiad", "hipho", model, "rule").read_text())["coverage"]
        for model in ("alpha", "beta")
    ] == [1.0, 1.0]  # a refusal is scored (0): the cell's coverage is whole
