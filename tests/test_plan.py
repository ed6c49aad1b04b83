"""The generated pipeline files: committed as generated, each stage listing the code it runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from olympiad_eval.cli import plan
from tests.support import ROOT

SRC = ROOT / "src"


def test_the_committed_pipeline_files_are_the_generated_ones():
    assert plan.stale(ROOT) == []


def test_render_lists_the_modules_that_build_a_prompt_s_reference_answer():
    """A prompt's reference answer comes from `answers` and `mathcheck` (through the benchmark
    modules): editing either must rerun render."""
    for path in ROOT.glob("pipelines/*/dvc.yaml"):
        deps = yaml.safe_load(path.read_text(encoding="utf-8"))["stages"]["render"]["do"]["deps"]
        assert {
            "src/olympiad_eval/scoring/answers.py",
            "src/olympiad_eval/scoring/mathcheck.py",
            "src/olympiad_eval/benchmarks",
            "src/olympiad_eval/core/templates.py",
            "stages/render.py",
        } <= set(deps), path


def test_code_dependencies_follow_imports_inside_functions_and_benchmarks_imported_by_name():
    code = plan.code_of("stages/render.py", ROOT)
    assert code[0] == "stages/render.py" and code[1:] == sorted(code[1:])
    # render imports `benchmarks`, whose modules it loads by name; hipho imports mathcheck in a function
    assert "src/olympiad_eval/benchmarks" in code and "src/olympiad_eval/scoring/mathcheck.py" in code
    assert not [path for path in code if path.startswith("src/olympiad_eval/benchmarks/")]  # the folder, once
    assert "src/olympiad_eval/stages/judge.py" not in code and "src/olympiad_eval/stages/aggregate.py" not in code


# What every stage and benchmark shares, not a stage's: the records they read and write, and the
# checks of config values (a leaf: the test below keeps it one).
SHARED = {"olympiad_eval", "olympiad_eval.core.records", "olympiad_eval.core.config"}


def stage_modules() -> set[str]:
    """The modules whose function a stage script runs."""
    modules = set().union(*(plan.imported(script, SRC) for script in ROOT.glob("stages/*.py")))
    return modules - SHARED


def test_no_import_runs_from_a_benchmark_module_up_to_a_stage_module():
    assert {
        "olympiad_eval.stages.fetch",
        "olympiad_eval.stages.render",
        "olympiad_eval.stages.judge",
        "olympiad_eval.stages.runner",
    } <= stage_modules()
    for shared in SHARED - {"olympiad_eval"}:
        path = SRC / Path(*shared.split(".")).with_suffix(".py")
        assert not plan.reached(path, SRC) & stage_modules(), shared
    for path in sorted((SRC / "olympiad_eval" / "benchmarks").glob("*.py")):
        reached = plan.reached(path, SRC)
        assert not reached & stage_modules(), (path.name, sorted(reached & stage_modules()))


def copy_of_the_plan(tmp_path: Path) -> Path:
    for name in ("src", "stages", "pipelines"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__", "dvc.lock"))
    shutil.copy(ROOT / "params.yaml", tmp_path)
    shutil.copy(ROOT / "dvc.yaml", tmp_path)
    return tmp_path


def test_a_template_edit_or_a_new_family_makes_the_plan_stale_until_it_is_generated(tmp_path, monkeypatch, capsys):
    root = copy_of_the_plan(tmp_path)
    monkeypatch.chdir(root)
    template = root / "pipelines/templates/family.yaml"
    template.write_text(template.read_text(encoding="utf-8").replace("      - conf/prompt\n", ""), encoding="utf-8")
    params = (root / "params.yaml").read_text(encoding="utf-8")
    (root / "params.yaml").write_text(
        params.replace("pipelines:\n", "pipelines:\n  newbench:\n    benchmarks: {}\n    suites: {}\n"),
        encoding="utf-8",
    )
    assert plan.main(["--check"]) == 1
    said = capsys.readouterr().err
    for family in ("hipho", "mathvision", "olympiadbench", "physelite", "newbench"):
        assert f"pipelines/{family}/dvc.yaml differs from the generated one: run `python -m olympiad_eval.cli.plan`" in said
    assert not [line for line in said.splitlines() if line.startswith("dvc.yaml")]  # the report's is unchanged

    assert plan.main([]) == 0 and plan.main(["--check"]) == 0
    assert "conf/prompt" not in (root / "pipelines/newbench/dvc.yaml").read_text(encoding="utf-8")


def test_a_pipeline_of_a_family_the_plan_no_longer_has_is_named(tmp_path):
    root = copy_of_the_plan(tmp_path)
    (root / "pipelines/old").mkdir()
    (root / "pipelines/old/dvc.yaml").write_text("stages: {}\n", encoding="utf-8")
    assert plan.stale(root) == [
        "pipelines/old/dvc.yaml is a pipeline of a family that params.yaml no longer has: remove its folder"
    ]
