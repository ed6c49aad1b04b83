"""Re-scoring a released MATH-Vision run through the pipeline's own stages (fetch, render, a
`replay` model, the rule judge with the official protocol, aggregate) reproduces its published
accuracies digit for digit: overall, per level, per subject and per subject x level, as
`<MODEL>_result.json` prints them."""

from __future__ import annotations

import csv
import json

import pandas as pd
import pytest
from omegaconf import OmegaConf

from olympiad_eval.core.layout import Layout
from olympiad_eval.stages.aggregate import aggregate
from olympiad_eval.stages.fetch import fetch
from olympiad_eval.stages.generate import generate
from olympiad_eval.stages.judge import judge
from olympiad_eval.stages.render import render
from tests.support import compose_stage, shared_data

# its module fixtures load a release once: keep its tests on one test worker
pytestmark = pytest.mark.xdist_group("released_runs")

RUN = "SPHINX-MoE"


def published(result: dict, key: str) -> float:
    return float(result[key].split("=")[1].rstrip("%"))


@pytest.fixture(scope="module")
def rescored(tmp_path_factory):
    root, layout = shared_data("mathvision"), Layout(tmp_path_factory.mktemp("released") / "outputs")
    bench = compose_stage(
        "fetch", ["benchmark=mathvision", f"benchmark.source.path={root}", "benchmark.require_figures=false"]
    ).benchmark
    fetch("mathvision", bench, layout.problems("mathvision"))
    suite = compose_stage("render", ["suite=mathvision", "cell.benchmark=mathvision"]).suite
    render(
        "mathvision",
        suite,
        "mathvision",
        layout.problem_records("mathvision"),
        layout.suite("mathvision", "mathvision"),
    )
    replay = OmegaConf.create({"provider": "replay", "path": str(root / "outputs" / f"{RUN}.jsonl")})
    generations = layout.generations("mathvision", "mathvision", RUN)
    cache = layout.root / "cache.sqlite"
    generate("mathvision", RUN, replay, layout.prompts("mathvision", "mathvision"), generations, cache)
    rule = compose_stage("judge", ["judge=rule", "cell.suite=mathvision", f"cell.model={RUN}"]).judge
    judge(
        layout.suite("mathvision", "mathvision"),
        generations,
        "rule",
        rule,
        layout.judgments("mathvision", "mathvision", RUN, "rule"),
        cache,
    )
    plan = {
        "suites": {"mathvision": "mathvision"},
        "models": [RUN],
        "judges": ["rule"],
        "family": {"mathvision": "mathvision"},
    }
    aggregate("mathvision", bench, plan, layout)
    result = json.loads((root / "outputs" / f"{RUN}_result.json").read_text(encoding="utf-8"))
    return layout, result


def test_the_released_accuracy_is_reproduced_through_the_tables(rescored):
    layout, result = rescored
    score = json.loads(layout.metrics("mathvision", "mathvision", RUN, "rule").read_text())
    summary = pd.read_csv(layout.tables("mathvision") / "summary.csv").set_index("model")
    assert summary.loc[RUN, "scored"] == summary.loc[RUN, "problems"] == 3040 and score["coverage"] == 1.0
    assert abs(score["score"] - published(result, "-all")) <= 0.1


def test_the_released_accuracy_per_level_is_reproduced(rescored):
    layout, result = rescored
    [row] = list(csv.DictReader(open(layout.tables("mathvision") / "accuracy.csv", encoding="utf-8")))
    for level in range(1, 6):
        assert abs(float(row[f"level {level}"]) - published(result, f"-level{level}")) <= 0.1, level


def released(result: dict, key: str) -> str:
    """`"537/3040=17.66%"` -> "17.66": the accuracy as the official evaluation printed it."""
    return result[key].split("=")[1].rstrip("%")


def test_every_released_accuracy_is_printed_digit_for_digit(rescored):
    layout, result = rescored
    tables = layout.tables("mathvision")
    [overall] = list(csv.DictReader(open(tables / "accuracy.csv", encoding="utf-8")))
    [subjects] = list(csv.DictReader(open(tables / "accuracy_by_subject.csv", encoding="utf-8")))
    crossed = {
        row["subject"]: row
        for row in csv.DictReader(open(tables / "accuracy_by_subject_and_level.csv", encoding="utf-8"))
    }
    ours = {"-all": overall["overall"]}
    ours |= {f"-level{level}": overall[f"level {level}"] for level in range(1, 6)}
    ours |= {subject: subjects[subject] for subject in crossed}
    for subject, row in crossed.items():
        ours |= {f"{subject}_level{level}": row[f"level {level}"] for level in range(1, 6) if row[f"level {level}"]}
        ours |= {f"-level{level}_{subject}": row[f"level {level}"] for level in range(1, 6) if row[f"level {level}"]}
    assert set(ours) == set(result)  # every published key, nothing else
    assert {key: ours[key] for key in result} == {key: released(result, key) for key in result}
