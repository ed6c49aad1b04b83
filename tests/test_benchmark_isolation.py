"""A benchmark is one package: editing its code leaves every other family up to date, and a benchmark
from outside the package (tests/benchmarks/toy_plugin.py) is a working fifth family with no edit
outside its own files and configs. Real `dvc` in a fresh clone of the repository."""

from __future__ import annotations

import json
import os

import pytest

from olympiad_eval.core.plan import read_plan
from tests.support import Repo, clone

pytestmark = pytest.mark.e2e


def changed_deps(repo: Repo) -> dict[str, dict[str, set[str]]]:
    """Per pipeline, each stage whose dependencies differ from its dvc.lock, with those dependencies
    (a fresh clone has no outputs: what `dvc status` says of them is left out). One `dvc status` of
    every pipeline: each call pays DVC's start and reads every lock."""
    status = json.loads(repo.dvc("status", "--json"))
    changed: dict[str, dict[str, set[str]]] = {}
    for address, changes in status.items():
        pipeline, _, stage = address.rpartition(":")
        pipeline = pipeline or "dvc.yaml"  # the root pipeline's stages go by their name alone
        deps = {
            dep
            for change in changes
            if isinstance(change, dict)
            for dep, how in change.get("changed deps", {}).items()
            if how != "deleted"  # an upstream output the fresh clone has not made yet
        }
        if deps:
            changed.setdefault(pipeline, {})[stage] = deps
    return changed


@pytest.mark.parametrize("family", read_plan("params.yaml")["families"])
def test_editing_one_benchmark_s_code_leaves_the_other_families_up_to_date(tmp_path, family):
    repo = Repo(clone(tmp_path / "repo"))
    assert changed_deps(repo) == {}  # the locks are current
    scoring = repo.path / "src" / "olympiad_eval" / "benchmarks" / family / "scoring.py"
    scoring.write_text(scoring.read_text(encoding="utf-8") + "\n# an edit\n", encoding="utf-8")
    assert changed_deps(repo) == {"dvc.yaml": {"check": {f"src/olympiad_eval/benchmarks/{family}"}}}
    repo.dvc("repro", "check")  # the plan's check, which writes every family's code lists
    changed = changed_deps(repo)
    # every other family up to date; of the root, only the report, which lists each family's report code
    assert {pipeline.split("/")[1] for pipeline in changed if pipeline != "dvc.yaml"} == {family}
    assert changed["dvc.yaml"] == {"report": {f"outputs/code/{family}/report.txt"}}
    stale = {
        name: deps for pipeline, stages in changed.items() if pipeline != "dvc.yaml" for name, deps in stages.items()
    }
    # each of the family's stages that runs its benchmark: every one but generation (prompts are rendered)
    assert {name.split("@")[0] for name in stale} == {"fetch", "render", "judge", "pages", "aggregate"}
    assert all(deps == {f"outputs/code/{family}/{name.split('@')[0]}.txt"} for name, deps in stale.items())


TOY_RELEASE = [
    {"id": "1", "question": "What is 2 + 2?", "answer": "4"},
    {"id": "2", "question": "What is 6 / 4?", "answer": "1.5"},
    {"id": "3", "question": "What is 10 % 4?", "answer": "2"},
]


def test_a_benchmark_from_outside_the_package_is_a_working_fifth_family(tmp_path):
    """Its module (`kind: tests.benchmarks.toy_plugin`), a benchmark and a suite config, a release,
    the demo model's recorded replies, and its family in params.yaml: then `python -m
    olympiad_eval.cli.plan` and `dvc repro` run it, its stages list its module as their code, and a
    rerun does nothing."""
    repo = Repo(clone(tmp_path / "repo"))
    repo.env["PYTHONPATH"] = os.pathsep.join([str(repo.path / "src"), str(repo.path)])  # the plugin's package
    repo.write("data/toy/questions.jsonl", "".join(json.dumps(row) + "\n" for row in TOY_RELEASE))
    repo.write(
        "conf/benchmark/toy.yaml", "kind: tests.benchmarks.toy_plugin\nsource:\n  type: local\n  path: data/toy\n"
    )
    repo.write(
        "conf/suite/toy.yaml",
        "kind: tests.benchmarks.toy_plugin\ntemplates:\n  default:\n    name: toy\n    text: |-\n"
        "      {question} Put the final answer in \\boxed{{}}.\n",
    )
    plan = (repo.path / "params.yaml").read_text(encoding="utf-8")
    repo.write("params.yaml", plan.replace("pipelines:\n", "pipelines:\n  toy:\n    benchmarks: {toy: data/toy}\n"
                                           "    suites: {toy: toy}\n", 1))  # fmt: skip
    demo = [
        {"id": "1", "response": "\\boxed{4}"},
        {"id": "2", "response": "\\boxed{1.4}"},
        {"id": "3", "response": "2"},
    ]
    repo.write("data/replay/demo/toy.jsonl", "".join(json.dumps(row) + "\n" for row in demo))  # the demo's replies
    repo.run("python", "-m", "olympiad_eval.cli.plan")
    assert "- tests/benchmarks/toy_plugin.py" in (repo.path / "dvc.yaml").read_text(encoding="utf-8")  # the check's

    ran = repo.repro("--recursive", "pipelines/toy")
    assert {name.split("@")[0] for name in ran} == {"fetch", "render", "generate", "judge", "pages", "aggregate"}
    listed = repo.layout.code("toy", "judge").read_text(encoding="utf-8")  # what the toy's stages run
    assert "tests/benchmarks/toy_plugin.py" in listed and "benchmarks/hipho" not in listed
    metrics = repo.metrics("toy")["toy"]
    assert {model: round(judges["rule"]["score"], 2) for model, judges in metrics.items()} == {
        "reference": 100.0,
        "demo": 33.33,
    }
    assert "toy official v1 (rules only)" in (repo.layout.tables("toy") / "tables.md").read_text(encoding="utf-8")
    assert repo.repro("--recursive", "pipelines/toy") == []
