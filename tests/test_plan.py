"""The generated pipeline files: committed as generated, each stage listing the code it runs."""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

import yaml

from olympiad_eval.cli import plan
from olympiad_eval.core import code as code_module
from olympiad_eval.core.code import write_code_lists
from olympiad_eval.core.plan import pipeline_file, read_plan
from tests.support import ROOT

SRC = ROOT / "src"


def test_the_committed_pipeline_files_are_the_generated_ones():
    assert plan.stale(ROOT) == []


def deps_of(path: Path, stage: str) -> set[str]:
    stages = yaml.safe_load(path.read_text(encoding="utf-8"))["stages"]
    return set((stages[stage].get("do") or stages[stage])["deps"])


def test_each_family_s_stages_run_its_own_benchmark_and_no_other():
    """Benchmarks are imported by name: a family's stages that reach the registry run that family's
    benchmark package (and what it imports, mathcheck for one), never another's; the check stage,
    which lists every family's code, depends on it, and each stage on its script's code list."""
    families = read_plan(ROOT / "params.yaml")["families"]
    for family in families:
        others = {f"src/olympiad_eval/benchmarks/{other}" for other in families if other != family}
        for stage in ("fetch", "render", "judge", "pages", "aggregate", "report"):
            code = set(code_module.code_of(f"stages/{stage}.py", ROOT, family))
            assert f"src/olympiad_eval/benchmarks/{family}" in code, (family, stage)
            assert not code & others, (family, stage, code & others)
            assert not [dep for dep in code if dep.startswith(f"src/olympiad_eval/benchmarks/{family}/")]  # one folder
        generation = code_module.code_list("stages/generate.py", ROOT, family)  # what makes a cell's generations
        assert "src/olympiad_eval/stages/generate.py" in generation and "benchmarks/" not in generation
        assert f"src/olympiad_eval/benchmarks/{family}" in deps_of(ROOT / "dvc.yaml", "check")
        for stage in ("fetch", "render", "generate", "judge", "pages", "aggregate"):
            deps = deps_of(ROOT / pipeline_file(family, stage), stage)
            assert f"outputs/code/{family}/{stage}.txt" in deps and not [d for d in deps if d.endswith(".py")]
    assert "src/olympiad_eval/scoring/mathcheck.py" in code_module.code_of("stages/render.py", ROOT, "hipho")
    root_report = deps_of(ROOT / "dvc.yaml", "report")  # every family's: their code lists
    assert {f"outputs/code/{family}/report.txt" for family in families} <= root_report
    assert not [dep for dep in root_report if dep.endswith(".py")]


def test_a_code_list_names_each_file_a_stage_runs_with_its_hash(tmp_path):
    """What a family's stages depend on: the check stage writes, per script, every file it runs (a
    benchmark folder file by file, without bytecode; the report's viewer assets, which its code
    reads), each with the MD5 of its bytes."""
    root = tmp_path / "repo"
    for name in ("src", "stages", "conf", "pipelines"):
        shutil.copytree(ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "params.yaml", root / "params.yaml")
    (root / "src/olympiad_eval/benchmarks/hipho/__pycache__").mkdir()
    (root / "src/olympiad_eval/benchmarks/hipho/__pycache__/x.pyc").write_bytes(b"bytecode")
    write_code_lists(root, "hipho", root / "outputs")
    folder = root / "outputs" / "code" / "hipho"
    assert sorted(path.stem for path in folder.iterdir()) == sorted(
        ["fetch", "render", "generate", "judge", "pages", "aggregate", "report"]  # the root report's too
    )
    lines = (folder / "pages.txt").read_text(encoding="utf-8").splitlines()
    listed = dict(reversed(line.split("  ", 1)) for line in lines)
    assert "src/olympiad_eval/benchmarks/hipho/scoring.py" in listed and "stages/pages.py" in listed
    assert "src/olympiad_eval/report/assets/viewer.js" in listed  # the pages' script: code the report reads
    assert not [name for name in listed if "__pycache__" in name or "benchmarks/physelite" in name]
    scoring = root / "src/olympiad_eval/benchmarks/hipho/scoring.py"
    assert listed["src/olympiad_eval/benchmarks/hipho/scoring.py"] == hashlib.md5(scoring.read_bytes()).hexdigest()
    before = {path.name: path.read_bytes() for path in folder.iterdir()}
    scoring.write_text(scoring.read_text(encoding="utf-8") + "\n# an edit\n", encoding="utf-8")
    write_code_lists(root, "hipho", root / "outputs")
    changed = {path.stem for path in folder.iterdir() if path.read_bytes() != before[path.name]}
    # not the generations' code: generating runs no benchmark
    assert changed == {"fetch", "render", "judge", "pages", "aggregate", "report"}


def test_code_dependencies_follow_imports_inside_functions():
    code = code_module.code_of("stages/render.py", ROOT, "hipho")
    assert code[0] == "stages/render.py" and code[1:] == sorted(code[1:])
    # hipho's scoring imports expressions inside a function (sympy only where a range needs it)
    assert "src/olympiad_eval/scoring/expressions.py" in code
    assert "src/olympiad_eval/stages/judge.py" not in code and "src/olympiad_eval/stages/aggregate.py" not in code


def test_an_outside_benchmark_s_module_is_its_family_s_code(tmp_path):
    """A benchmark from outside the package (a dotted `kind`) is listed by its file."""
    root = copy_of_the_plan(tmp_path)
    (root / "conf" / "benchmark" / "toy.yaml").write_text("kind: tests.benchmarks.toy_plugin\n", encoding="utf-8")
    (root / "tests" / "benchmarks").mkdir(parents=True)
    for name in ("__init__.py", "benchmarks/__init__.py", "benchmarks/toy_plugin.py"):
        shutil.copy(ROOT / "tests" / name, root / "tests" / name)
    params = (root / "params.yaml").read_text(encoding="utf-8")
    (root / "params.yaml").write_text(
        params.replace("pipelines:\n", "pipelines:\n  toy:\n    benchmarks: {toy: data/toy}\n    suites: {}\n"),
        encoding="utf-8",
    )
    code = code_module.code_of("stages/fetch.py", root, "toy")
    assert "tests/benchmarks/toy_plugin.py" in code
    assert not [path for path in code if path.startswith("src/olympiad_eval/benchmarks/") and path.count("/") > 3]


# The rooms that run a stage or a command; below them, the kit they share (core, scoring, llm) and
# the benchmarks (the test below keeps the kit and the benchmarks from importing upwards).
STAGE_ROOMS = ("olympiad_eval.stages", "olympiad_eval.report", "olympiad_eval.cli")


def stage_modules() -> set[str]:
    """Every module of the rooms that run a stage or a command."""
    return {
        ".".join(path.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")
        for room in STAGE_ROOMS
        for path in (SRC / Path(*room.split("."))).rglob("*.py")
    }


def test_no_import_runs_from_a_benchmark_or_the_shared_kit_up_to_a_stage_module():
    imported = set().union(*(code_module.imported(script, SRC) for script in ROOT.glob("stages/*.py")))
    assert {
        "olympiad_eval.stages.fetch",
        "olympiad_eval.stages.judge",
        "olympiad_eval.report",
    } <= imported & stage_modules()
    kit = [
        path
        for folder in ("core", "scoring", "llm", "benchmarks")
        for path in (SRC / "olympiad_eval" / folder).rglob("*.py")
    ]
    for path in sorted(kit):
        reached = code_module.reached([path], SRC)
        assert not reached & stage_modules(), (path.relative_to(SRC).as_posix(), sorted(reached & stage_modules()))


def copy_of_the_plan(tmp_path: Path) -> Path:
    for name in ("src", "stages", "pipelines", "conf"):
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
    for family in read_plan(ROOT / "params.yaml")["families"]:  # the template's render stage of each family
        assert f"pipelines/{family}/render/dvc.yaml differs from the generated one: run `olympiad-eval plan`" in said
        assert f"pipelines/{family}/judge/dvc.yaml differs" not in said  # no conf/prompt there
    # the new family's every stage: a dvc.yaml each
    for stage in ("fetch", "render", "generate", "judge", "pages", "aggregate"):
        assert f"pipelines/newbench/{stage}/dvc.yaml differs from the generated one: run `olympiad-eval plan`" in said
    # the root report's too: it depends on every family's report code list, the new family's among them
    assert "dvc.yaml differs from the generated one: run `olympiad-eval plan`" in said.splitlines()

    assert plan.main([]) == 0 and plan.main(["--check"]) == 0
    assert "conf/prompt" not in (root / "pipelines/newbench/render/dvc.yaml").read_text(encoding="utf-8")
    assert "- outputs/code/newbench/report.txt" in (root / "dvc.yaml").read_text(encoding="utf-8")


def test_a_pipeline_of_a_family_the_plan_no_longer_has_is_named(tmp_path):
    root = copy_of_the_plan(tmp_path)
    (root / "pipelines/old/judge").mkdir(parents=True)
    (root / "pipelines/old/judge/dvc.yaml").write_text("stages: {}\n", encoding="utf-8")
    (root / "pipelines/hipho/dvc.yaml").write_text("stages: {}\n", encoding="utf-8")  # a family's one file of before
    assert plan.stale(root) == [
        "pipelines/hipho/dvc.yaml is no pipeline file of the template (one dvc.yaml per stage, "
        "pipelines/<family>/<stage>/dvc.yaml): remove it and its dvc.lock",
        "pipelines/old/judge/dvc.yaml is a pipeline of a family that params.yaml no longer has: remove its folder",
    ]


def test_a_family_s_pipeline_is_a_dvc_yaml_per_stage_each_with_the_template_s_head():
    """DVC rewrites a stage's whole lock after it runs: a lock per stage of a family keeps that to the
    entries of one kind of stage. Each file has the template's head (and its `vars`), one stage, and
    runs from the repository's root."""
    template = (ROOT / "pipelines/templates/family.yaml").read_text(encoding="utf-8")
    names = list(yaml.safe_load(template)["stages"])
    pipelines = plan.family_pipeline(template, ROOT, "hipho")
    assert list(pipelines) == names
    for stage, text in pipelines.items():
        data = yaml.safe_load(text)
        assert list(data["stages"]) == [stage] and data["vars"] == ["../../../params.yaml"]
        assert text.startswith(f"# The {stage} stages of the hipho pipeline.")
        assert not re.search(r"<(root|stage|family|code[ :]|path [a-z])", text), text  # every marker filled
        assert (data["stages"][stage].get("do") or data["stages"][stage])["wdir"] == "../../.."
