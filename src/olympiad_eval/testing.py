"""What the project's tests and bench scripts share, run against a checkout of the repository
(`root`): a stage's config composed as its command line composes it, a sample suite fetched and
rendered, a fresh clone for real `dvc` runs, and the plan and lock files of a clone."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import yaml

import olympiad_eval.core.config  # noqa: F401 (registers the resolvers the configs name)
from olympiad_eval.core.layout import Layout
from olympiad_eval.core.plan import read_plan


def compose_stage(config_name: str, overrides: list[str], root: Path):
    """A stage's config, composed as its command line would compose it in `root`."""
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(root / "conf"), version_base=None):
        return compose(config_name=config_name, overrides=overrides)


def render_sample(outputs: Path, suite: str, benchmark: str, *overrides: str, root: Path) -> Path:
    """Fetch and render a sample suite into `outputs` (run from the repository's root), with Hydra
    `overrides` of the suite (`suite.scoring.process=false`); returns the outputs folder."""
    from olympiad_eval.benchmarks import plugin
    from olympiad_eval.stages.fetch import fetch
    from olympiad_eval.stages.render import render

    layout = Layout(outputs)
    bench_cfg = compose_stage("fetch", [f"benchmark={benchmark}"], root).benchmark
    fetch(benchmark, bench_cfg, layout.problems(benchmark))
    suite_cfg = compose_stage("render", [f"suite={suite}", f"cell.benchmark={benchmark}", *overrides], root).suite
    folder = layout.suite(plugin(bench_cfg.kind).name, suite)  # under the benchmark's family
    render(suite, suite_cfg, benchmark, layout.problem_records(benchmark), folder)
    return outputs


def clone(target: Path, root: Path) -> Path:
    """A fresh repository at `target` holding the working tree of `root` (its files that git does
    not ignore, committed or not), committed once."""
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=root, check=True, capture_output=True, text=True
    ).stdout.split("\0")
    for name in filter(None, files):
        if (root / name).is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / name, target / name)
    for command in (
        ["git", "init", "-q"],
        ["git", "add", "-A"],
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "copy"],
    ):
        subprocess.run(command, cwd=target, check=True)
    return target


def plan_yaml(
    suites: dict[str, str],
    models: list[str],
    judges: list[str],
    root: Path,
    conf: Path | None = None,
    releases: dict[str, str] | None = None,
) -> str:
    """A params.yaml running these suites (suite: its benchmark), each benchmark in the pipeline of
    its kind (conf/benchmark/<name>.yaml) with the folder its release is read from (`releases`, or
    its config's local `source.path`, or for a release on the Hub its config file), and the other
    pipelines empty."""
    conf = conf or root / "conf"
    pipelines = {family: {"benchmarks": {}, "suites": {}} for family in read_plan(root / "params.yaml")["families"]}
    for suite, benchmark in suites.items():
        config = yaml.safe_load((conf / "benchmark" / f"{benchmark}.yaml").read_text(encoding="utf-8"))
        part = pipelines[config["kind"]]
        part["benchmarks"][benchmark] = (releases or {}).get(benchmark) or release_folder(benchmark, config)
        part["suites"][suite] = benchmark
    return yaml.safe_dump({"models": models, "judges": judges, "pipelines": pipelines}, sort_keys=False)


def release_folder(benchmark: str, config: dict) -> str:
    """What the plan names as the folder a benchmark's release is read from."""
    source = config.get("source") or {}
    return source["path"] if source.get("type") == "local" else f"conf/benchmark/{benchmark}.yaml"


def stage_name(address: str) -> str:
    """`pipelines/hipho/judge/dvc.yaml:judge@x` is `judge@x`: names are unique across the pipelines."""
    return address.rpartition(":")[2]


def lock_files(repo: Path) -> dict[str, bytes]:
    """Every dvc.lock: the root's and each family's (one per stage of its pipeline)."""
    return {
        path.relative_to(repo).as_posix(): path.read_bytes()
        for path in [repo / "dvc.lock", *sorted((repo / "pipelines").rglob("dvc.lock"))]
        if path.is_file()
    }
