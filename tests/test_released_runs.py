"""Re-scoring a released MATH-Vision run through the pipeline's own stages (fetch, render, a
`replay` model, the rule judge with the official protocol, aggregate) reproduces its published
accuracies digit for digit: overall, per level, per subject and per subject x level, as
`<MODEL>_result.json` prints them."""

from __future__ import annotations

import csv
import json

import pytest
from omegaconf import OmegaConf

from olympiad_eval.fetch import fetch
from olympiad_eval.generate import generate
from olympiad_eval.judging import judge
from olympiad_eval.render import render
from olympiad_eval.tables import aggregate, judgment_path
from tests.support import compose_stage, shared_data

# its module fixtures load a release once: keep its tests on one test worker
pytestmark = pytest.mark.xdist_group("released_runs")

RUN = "SPHINX-MoE"


def published(result: dict, key: str) -> float:
    return float(result[key].split("=")[1].rstrip("%"))


@pytest.fixture(scope="module")
def rescored(tmp_path_factory):
    root, outputs = shared_data("mathvision"), tmp_path_factory.mktemp("released") / "outputs"
    bench = compose_stage("fetch", ["benchmark=mathvision", f"benchmark.source.path={root}",
                                    "benchmark.require_figures=false"]).benchmark
    fetch("mathvision", bench, outputs / "problems" / "mathvision")
    suite = compose_stage("render", ["suite=mathvision", "cell.benchmark=mathvision"]).suite
    render("mathvision", suite, "mathvision", outputs / "problems/mathvision/problems.jsonl", outputs / "suites/mathvision")
    replay = OmegaConf.create({"provider": "replay", "path": str(root / "outputs" / f"{RUN}.jsonl")})
    generations = outputs / "generations/mathvision" / f"{RUN}.jsonl"
    generate("mathvision", RUN, replay, outputs / "suites/mathvision/prompts.jsonl", generations, outputs / "cache.sqlite")
    rule = compose_stage("judge", ["judge=rule", "cell.suite=mathvision", f"cell.model={RUN}"]).judge
    judge(outputs / "suites/mathvision", generations, "rule", rule, judgment_path(outputs, "mathvision", RUN, "rule"),
          outputs / "cache.sqlite")
    plan = {"suites": {"mathvision": "mathvision"}, "models": [RUN], "judges": ["rule"]}
    aggregate("mathvision", bench, plan, outputs, outputs / "tables", outputs / "metrics.json")
    result = json.loads((root / "outputs" / f"{RUN}_result.json").read_text(encoding="utf-8"))
    return outputs, result


def test_the_released_accuracy_is_reproduced_through_the_tables(rescored):
    outputs, result = rescored
    score = json.loads((outputs / "metrics.json").read_text())["mathvision"][RUN]["rule"]
    assert score["scored"] == score["problems"] == 3040
    assert abs(score["score"] - published(result, "-all")) <= 0.1


def test_the_released_accuracy_per_level_is_reproduced(rescored):
    outputs, result = rescored
    [row] = list(csv.DictReader(open(outputs / "tables" / "accuracy.csv", encoding="utf-8")))
    for level in range(1, 6):
        assert abs(float(row[f"level {level}"]) - published(result, f"-level{level}")) <= 0.1, level


def released(result: dict, key: str) -> str:
    """`"537/3040=17.66%"` -> "17.66": the accuracy as the official evaluation printed it."""
    return result[key].split("=")[1].rstrip("%")


def test_every_released_accuracy_is_printed_digit_for_digit(rescored):
    outputs, result = rescored
    tables = outputs / "tables"
    [overall] = list(csv.DictReader(open(tables / "accuracy.csv", encoding="utf-8")))
    [subjects] = list(csv.DictReader(open(tables / "accuracy_by_subject.csv", encoding="utf-8")))
    crossed = {row["subject"]: row for row in csv.DictReader(open(tables / "accuracy_by_subject_and_level.csv",
                                                                  encoding="utf-8"))}
    ours = {"-all": overall["overall"]}
    ours |= {f"-level{level}": overall[f"level {level}"] for level in range(1, 6)}
    ours |= {subject: subjects[subject] for subject in crossed}
    for subject, row in crossed.items():
        ours |= {f"{subject}_level{level}": row[f"level {level}"] for level in range(1, 6) if row[f"level {level}"]}
        ours |= {f"-level{level}_{subject}": row[f"level {level}"] for level in range(1, 6) if row[f"level {level}"]}
    assert set(ours) == set(result)  # every published key, nothing else
    assert {key: ours[key] for key in result} == {key: released(result, key) for key in result}
