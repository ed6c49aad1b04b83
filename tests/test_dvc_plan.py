"""Every DVC stage tracks exactly the configs Hydra composes for it: the conf files, or for a
generate and a judge stage the record of them that the check stage writes (`stages.configs`).

A conf file that a stage reads but does not track would let DVC keep a stale result when it is
edited; this guard composes each stage's config from its command, like the stage does.
"""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

import pytest
import yaml
from hydra import compose, initialize_config_dir
from hydra._internal.config_loader_impl import ConfigLoaderImpl
from hydra._internal.utils import create_config_search_path
from hydra.types import RunMode
from omegaconf import OmegaConf

from olympiad_eval.benchmarks import typed_suite
from olympiad_eval.core.layout import OUTPUTS, Layout, spelled
from olympiad_eval.core.plan import read_plan
from olympiad_eval.stages.configs import judge_record, model_record, provider_inputs, write_records
from olympiad_eval.stages.generate import check_model
from olympiad_eval.stages.judge import check_judge
from tests.support import CONF, ROOT, compose_stage


def _cells():
    from dvc.repo import Repo

    with Repo(str(ROOT)) as repo:
        return [
            (
                stage.name,  # unique across the pipelines' dvc.yaml files
                stage.cmd,
                sorted({Path(dep.def_path).as_posix() for dep in stage.params}),
                sorted({Path(dep.def_path).as_posix() for dep in stage.deps if dep not in stage.params}),
                # a stage's family (pipelines/<family>/<stage>/dvc.yaml); '' for the root's
                Path(stage.dvcfile.relpath).parent.parent.name,
                sorted(Path(out.def_path).as_posix() for out in stage.outs),  # outs, metrics and plots
            )
            for stage in repo.index.stages
        ]


STAGES = _cells()
CELLS = [cell[:4] for cell in STAGES]


def picked_files(config_name: str, overrides: list[str]) -> set[str]:
    """The files under conf/ that Hydra's defaults list loads for this command, but Hydra's own
    settings (conf/hydra/: how a stage logs), which no output depends on."""
    loader = ConfigLoaderImpl(config_search_path=create_config_search_path(str(CONF)))
    defaults = loader.compute_defaults_list(config_name=config_name, overrides=overrides, run_mode=RunMode.RUN)
    return {
        f"conf/{entry.config_path}.yaml"
        for entry in defaults.defaults
        if entry.config_path
        and (CONF / f"{entry.config_path}.yaml").is_file()
        and not entry.config_path.startswith("hydra/")
    }


def test_the_plan_has_every_stage():
    names = {name.split("@")[0] for name, *_ in CELLS}
    assert names == {"check", "fetch", "render", "generate", "judge", "pages", "aggregate", "report"}
    assert len({name for name, *_ in CELLS}) == len(CELLS)


PIPELINES = sorted(ROOT.glob("pipelines/*/*/dvc.yaml"))


def test_the_bundled_plan_puts_each_benchmark_in_the_pipeline_of_its_kind():
    plan = read_plan(ROOT / "params.yaml")
    assert sorted(plan["families"]) == sorted({path.parent.parent.name for path in PIPELINES})
    for benchmark, family in plan["family"].items():
        assert yaml.safe_load((CONF / "benchmark" / f"{benchmark}.yaml").read_text(encoding="utf-8"))["kind"] == family


# The Hydra stages but the check stage (stages/check.py), which depends on all of conf/. A generate
# stage depends on its model's record for its suite and a judge stage on its judge's record, which
# the check stage writes (tested apart, below); a pages stage reads its model's settings from the
# model's record too, and the paths of conf/common.yaml with them (conf/pages.yaml holds no value).
HYDRA_CELLS = [cell for cell in CELLS if cell[0] != "check"]
RECORDED = ("generate", "judge")
RECORDED_CELLS = [cell for cell in CELLS if cell[0].split("@")[0] in RECORDED]


def stage_of(name: str) -> str:
    return name.split("@")[0]


def records_of(name: str, cmd: str) -> set[str]:
    """The records of the check stage that a stage depends on for its config (`stages.configs`)."""
    layout, names, stage = Layout(OUTPUTS), cell_names(cmd), stage_of(name)
    if stage in ("generate", "pages"):
        return {layout.model_record(names["suite"], names["model"]).as_posix()}
    return {layout.judge_record(names["judge"]).as_posix()} if stage == "judge" else set()


def test_the_check_stage_comes_first_and_tracks_the_plan_and_every_config():
    [(cmd, params, deps)] = [cell[1:4] for cell in CELLS if cell[0] == "check"]
    assert cmd == "python stages/check.py"
    assert params == ["params.yaml"] and "conf" in deps and "data/replay" in deps
    checked = Layout(OUTPUTS).plan_check().as_posix()
    recorded = [cell for cell in CELLS if records_of(cell[0], cell[1])]
    assert {stage_of(cell[0]) for cell in recorded} == {"generate", "judge", "pages"}
    assert all(records_of(name, cmd) <= set(deps) for name, cmd, _, deps in recorded)
    fetches = [cell for cell in CELLS if cell[0].startswith("fetch@")]
    assert fetches and all(checked in deps for _, _, _, deps in fetches)  # and every stage is downstream of a fetch


def tracked_by_record(name: str, path: str) -> bool:
    """A conf file whose every value is in a record that the stage depends on: its model's or judge's
    files and its stage config (tested below), never a file of another group."""
    stage = stage_of(name)
    if stage in RECORDED:
        return True  # its whole composed config is its record
    return stage == "pages" and path in ("conf/common.yaml", "conf/pages.yaml")  # in the model's record, or none


@pytest.mark.parametrize("name,cmd,params,deps", HYDRA_CELLS, ids=[cell[0] for cell in HYDRA_CELLS])
def test_every_conf_file_hydra_reads_is_tracked(name, cmd, params, deps):
    words = shlex.split(cmd)
    assert words[:2] == ["python", f"stages/{name.split('@')[0]}.py"]
    config_name, overrides = name.split("@")[0], words[2:]
    with initialize_config_dir(config_dir=str(CONF), version_base=None):
        compose(config_name=config_name, overrides=overrides)  # every name in the cell exists
    tracked_files = {p for p in params if p.startswith("conf/")}
    untracked = {
        path
        for path in picked_files(config_name, overrides)
        if path not in tracked_files
        and not any(path.startswith(d.rstrip("/") + "/") for d in deps)
        and not tracked_by_record(name, path)
    }
    assert not untracked, f"{name} reads {sorted(untracked)} but does not track them"


@pytest.mark.parametrize("name,cmd,params,deps", HYDRA_CELLS, ids=[cell[0] for cell in HYDRA_CELLS])
def test_every_cell_tracks_the_files_of_its_own_choices(name, cmd, params, deps):
    """The `${item...}` paths in dvc.yaml name the files the cell's overrides select (for a stage
    that reads a record, the record of its choices: `records_of`)."""
    choices = [word.split("=", 1) for word in shlex.split(cmd)[2:] if not word.startswith("cell.")]
    # the report reads the whole plan, no group of its own; a cell's pages their model's record
    assert choices or stage_of(name) in ("report", "pages")
    for group, choice in choices:
        if tracked_by_record(name, f"conf/{group}/{choice}.yaml"):
            assert records_of(name, cmd) <= set(deps) and records_of(name, cmd), (name, group, choice)
        else:
            assert f"conf/{group}/{choice}.yaml" in params, (name, group, choice)


def composed_record(conf: Path, stage: str, overrides: list[str]) -> str:
    """A generate or judge stage's record, as its command composes its config in `conf`."""
    with initialize_config_dir(config_dir=str(conf), version_base=None):
        cfg = compose(config_name=stage, overrides=overrides)
    if stage == "judge":
        return judge_record(cfg)
    return model_record(cfg, provider_inputs(cfg.model, cfg.cell.suite), ROOT)


@pytest.mark.parametrize("name,cmd,params,deps", RECORDED_CELLS, ids=[cell[0] for cell in RECORDED_CELLS])
def test_a_cell_s_stage_tracks_its_record_which_the_check_stage_writes_as_the_stage_composes_it(
    name, cmd, params, deps, tmp_path
):
    words, stage = shlex.split(cmd), stage_of(name)
    assert words[:2] == ["python", f"stages/{stage}.py"]
    [tracked] = records_of(name, cmd)
    assert tracked in deps and not [path for path in params if path.startswith("conf/")]
    write_records(read_plan(ROOT / "params.yaml"), CONF, Layout(tmp_path), ROOT)
    written = tmp_path / Path(tracked).relative_to(OUTPUTS)
    assert written.read_text(encoding="utf-8") == composed_record(CONF, stage, words[2:])


def test_the_pages_config_holds_no_value_its_stage_would_not_track():
    """A pages stage tracks its model's record (its settings, and the paths of conf/common.yaml in
    it), not conf/pages.yaml: a value there would change its pages with no dependency changed."""
    pages = yaml.safe_load((CONF / "pages.yaml").read_text(encoding="utf-8"))
    assert set(pages) == {"defaults", "cell"} and set(pages["cell"].values()) == {"???"}
    assert pages["defaults"] == ["common", "_self_"]


def test_a_replay_model_s_record_names_its_suite_s_recording_with_its_hash():
    """Editing one recording reruns that cell's stages alone (the check stage's record of it changes)."""
    record = yaml.safe_load(composed_record(CONF, "generate", ["model=demo", "cell.suite=sample_hipho"]))
    [line] = record["inputs"]
    digest, path = line.split("  ")
    assert path == "data/replay/demo/sample_hipho.jsonl" and len(digest) == 32
    assert (
        yaml.safe_load(composed_record(CONF, "generate", ["model=reference", "cell.suite=sample_hipho"]))["inputs"]
        == []
    )


RECORD_CASES = [("generate", f"model={model}") for model in read_plan(ROOT / "params.yaml")["models"]] + [
    ("judge", f"judge={judge}") for judge in read_plan(ROOT / "params.yaml")["judges"] + ["scripted", "gpt-4o"]
]


@pytest.mark.parametrize("stage,choice", RECORD_CASES, ids=[f"{stage}-{choice}" for stage, choice in RECORD_CASES])
def test_a_value_of_every_conf_file_a_recorded_stage_reads_is_in_its_record(stage, choice, tmp_path):
    """Its own config, its model's or judge's files (and those they extend): a value added to any of
    them changes the record, and so reruns the stages that depend on it; a comment does not."""
    overrides = [choice, "cell.suite=sample_hipho", "cell.model=demo"][: 2 if stage == "generate" else 3]
    conf = tmp_path / "conf"
    shutil.copytree(CONF, conf)
    before = composed_record(conf, stage, overrides)
    for number, path in enumerate(sorted(picked_files(stage, overrides))):
        edited = conf / Path(path).relative_to("conf")
        text = edited.read_text(encoding="utf-8")
        edited.write_text(text + "\n# a comment\n", encoding="utf-8")
        assert composed_record(conf, stage, overrides) == before, path
        edited.write_text(text + f"\nprobe_{number}: 1\n", encoding="utf-8")
        assert composed_record(conf, stage, overrides) != before, f"{path}: a value of it is not in the record"
        edited.write_text(text, encoding="utf-8")


# ---------------------------------------------------------------- the layout, in dvc.yaml and in the code


def cell_names(cmd: str) -> dict[str, str]:
    """A cell's names from its command: benchmark, suite, model and judge, as the stage reads them."""
    return {key.removeprefix("cell."): value for key, value in (word.split("=", 1) for word in shlex.split(cmd)[2:])}


def expected_paths(name: str, cmd: str, plan: dict) -> tuple[set[str], set[str]]:
    """What `olympiad_eval.core.layout` says a stage writes, and the outputs it reads (relative paths)."""
    layout, names = Layout(OUTPUTS), cell_names(cmd)
    stage = stage_of(name)
    posix = lambda paths: {path.as_posix() for path in paths}  # noqa: E731
    if stage == "check":  # the plan checked: its line, which every fetch reads, the records, the code lists
        return posix([layout.plan_check(), layout.model_record(), layout.judge_record(), layout.code()]), set()
    if stage == "report":  # the root: index, assets, side by side; it links every cell and shows their dates
        return (
            posix([layout.report_index(), layout.report_assets(), layout.report_compare()]),
            # the cells' judgments and usage, and each cell's statuses that its pages stage writes beside its pages
            {f"{OUTPUTS}/{spelled(path)}" for path in ("suite", "tables", "metrics", "plots", "cells", "statuses")},
        )
    if stage in ("fetch", "aggregate"):
        benchmark = names["benchmark"]
        if stage == "fetch":
            return {layout.problems(benchmark).as_posix()}, {layout.plan_check().as_posix()}
        writes = [
            layout.tables(benchmark),
            layout.metrics(benchmark),
            layout.plot(benchmark, "scores"),
            layout.plot(benchmark, "subsets"),
        ]
        family = plan["family"][benchmark]
        return posix(writes), posix([layout.cells(family), layout.problem_records(benchmark)])  # records, not figures
    suite = names["suite"]
    family = plan["family"][plan["suites"][suite]]
    if stage == "render":  # with the suite's side-by-side pages: they read the suite alone
        return posix([layout.suite(family, suite), layout.report_side(suite)]), posix(
            [layout.problems(names["benchmark"])]
        )
    model = names["model"]
    reads = records_of(name, cmd)
    if stage == "generate":
        return posix([layout.generated(family, suite, model)]), reads | posix([layout.prompts(family, suite)])
    if stage == "judge":
        judged = layout.judged(family, suite, model, names["judge"])
        return posix([judged]), reads | posix([layout.suite(family, suite), layout.generations(family, suite, model)])
    assert stage == "pages", name  # after every judge of the cell: its whole folder
    writes = [layout.report_cell(family, suite, model), layout.statuses(family, suite, model)]
    return posix(writes), reads | posix([layout.suite(family, suite), layout.cell(family, suite, model)])


@pytest.mark.parametrize("name,cmd,params,deps,family,outs", STAGES, ids=[cell[0] for cell in STAGES])
def test_every_stage_writes_and_reads_the_paths_the_layout_spells(name, cmd, params, deps, family, outs):
    """dvc.yaml's paths come from layout.py's markers; the stages ask layout.py for the same: here
    each DVC stage's outputs and output dependencies are those the code computes for its names."""
    plan = read_plan(ROOT / "params.yaml")
    writes, reads = expected_paths(name, cmd, plan)
    stage = name.split("@")[0]
    if family:  # its script's code list, which its family's code stage writes
        reads |= {f"{OUTPUTS}/{spelled('code', family=family, stage=stage)}"}
    elif stage == "report":  # the root report: its code list in every family
        reads |= {f"{OUTPUTS}/{spelled('code', family=f, stage=stage)}" for f in plan["families"]}
    assert set(outs) == writes
    assert {dep for dep in deps if dep.startswith(f"{OUTPUTS}/")} == reads


def test_the_stages_put_their_outputs_where_dvc_yaml_says():
    assert compose_stage("fetch", ["benchmark=sample_hipho"]).paths.outputs == OUTPUTS


def overlaps(a: str, b: str) -> bool:
    return a == b or a.startswith(b + "/") or b.startswith(a + "/")


def test_no_stage_of_a_family_depends_on_another_family_s_outputs():
    """So that adding a model and running one family's pipeline runs no other family's cells, and
    dropping one family's suite leaves the other families' tables up to date."""
    outputs_by_family = {}
    for _name, _cmd, _params, _deps, family, outs in STAGES:
        outputs_by_family.setdefault(family, []).extend(outs)
    for name, _cmd, _params, deps, family, _outs in STAGES:
        if not family:  # the report: every family's
            continue
        foreign = [
            (dep, out)
            for dep in deps
            for other, outs in outputs_by_family.items()
            if other not in ("", family)
            for out in outs
            if overlaps(dep, out)
        ]
        assert not foreign, (name, foreign)


def api_key_variables(value) -> set[str]:
    if isinstance(value, dict):
        found = {value["api_key_env"]} if isinstance(value.get("api_key_env"), str) else set()
        return found.union(*(api_key_variables(item) for item in value.values()))
    return set().union(*(api_key_variables(item) for item in value)) if isinstance(value, list) else set()


# Each config group, and the stage config that picks one of its files.
GROUP_STAGES = {"benchmark": "fetch", "suite": "render", "model": "generate", "judge": "judge"}
CONFIG_FILES = [(group, path.stem) for group in GROUP_STAGES for path in sorted((CONF / group).glob("*.yaml"))]


@pytest.mark.parametrize("group,name", CONFIG_FILES, ids=[f"{group}/{name}" for group, name in CONFIG_FILES])
def test_every_config_file_composes_and_passes_its_stage_s_checks(group, name, monkeypatch):
    """Not only the plan's cells: a file no plan names yet (a real release's suite, a paid
    model) is composed as its stage would compose it, every interpolation resolved."""
    cfg = compose_stage(GROUP_STAGES[group], [f"{group}={name}"])
    resolved = OmegaConf.to_container(cfg[group], resolve=True)
    for variable in api_key_variables(resolved):  # a key is the user's to set; its variable is all we check
        monkeypatch.setenv(variable, "sk-test")
    if group == "model":
        check_model(cfg.model, name)
    elif group == "judge" and name != "llm_base":  # the base the LLM judges extend, no judge of its own
        check_judge(cfg.judge, name)
    elif group == "suite":  # typed by its benchmark's schema: every option among its choices, nothing unset
        assert typed_suite(name, cfg.suite).scoring.rel_tol >= 0


def test_every_committed_lock_entry_is_a_stage_of_the_plan():
    """DVC leaves a lock's entry for a stage the plan no longer has (a renamed stage, a model dropped):
    the committed locks hold none, so that they say exactly what made the sample's outputs."""
    from dvc.repo import Repo

    with Repo(str(ROOT)) as repo:
        staged: dict[str, set] = {}
        for stage in repo.index.stages:
            staged.setdefault((Path(stage.dvcfile.relpath).parent / "dvc.lock").as_posix(), set()).add(stage.name)
    for lock in [ROOT / "dvc.lock", *sorted(ROOT.glob("pipelines/*/*/dvc.lock"))]:
        entries = set(yaml.safe_load(lock.read_text(encoding="utf-8"))["stages"])
        assert entries == staged[lock.relative_to(ROOT).as_posix()], lock
