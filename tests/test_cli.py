"""The `olympiad-eval` command: pyproject.toml's script names it, every subcommand has its help,
and each one does its work through the command line (`python -m olympiad_eval.cli`, the module the
script runs), its output checked against what it reads."""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from olympiad_eval.cli import __main__ as cli
from olympiad_eval.core.layout import Layout
from olympiad_eval.core.plan import read_plan
from olympiad_eval.llm.cache import Reply, RequestCache
from olympiad_eval.scoring.checks import Verdict
from olympiad_eval.scoring.verdicts import Verdicts, store_path
from olympiad_eval.stages.aggregate import aggregate
from olympiad_eval.stages.generate import generate
from olympiad_eval.stages.judge import judge
from tests.support import ROOT, compose_stage, headline_metrics, render_sample


def olympiad_eval(*args: str, cwd: Path = ROOT, **env: str) -> subprocess.CompletedProcess:
    """The command as the installed script runs it: `olympiad_eval.cli.__main__.main`."""
    return subprocess.run(
        [sys.executable, "-m", "olympiad_eval.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src"), **env},
    )


def test_the_project_script_names_the_command_line():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    module, _, function = scripts["olympiad-eval"].partition(":")
    assert getattr(importlib.import_module(module), function) is cli.main


def test_every_command_has_its_help(capsys):
    done = olympiad_eval("--help")
    assert done.returncode == 0
    listed = re.findall(r"^    (\w+)", done.stdout.partition("positional arguments:")[2], re.M)
    assert listed == list(cli.COMMANDS)
    assert listed == ["check", "plan", "costs", "leaderboard", "compare", "report", "cache", "environments", "recover"]
    for name in cli.COMMANDS:
        with pytest.raises(SystemExit) as exit:
            cli.main([name, "--help"])
        assert exit.value.code == 0, name
        assert capsys.readouterr().out.startswith(f"usage: olympiad-eval {name} [-h]"), name


def test_check_passes_the_bundled_plan_and_names_a_misspelt_model_with_the_closest(tmp_path):
    done = olympiad_eval("check")
    assert done.returncode == 0, done.stderr
    assert "params.yaml: models 2, judges 1, benchmarks 5, suites 6; every name is a config of conf/" in done.stdout
    plan = tmp_path / "params.yaml"
    plan.write_text((ROOT / "params.yaml").read_text(encoding="utf-8").replace("  - demo\n", "  - gtp-4o\n"))
    done = olympiad_eval("check", "--plan", str(plan))
    assert done.returncode == 2
    assert f"model 'gtp-4o' (model=gtp-4o, from {plan} or the command line): there is no conf/model/gtp-4o.yaml" in (
        done.stderr
    )
    assert "did you mean 'gpt-4o'?" in done.stderr


def test_plan_check_says_the_pipelines_are_current():
    done = olympiad_eval("plan", "--check")
    assert (done.returncode, done.stderr) == (0, "")


def test_costs_names_the_stage_that_renders_a_missing_suite(tmp_path):
    done = olympiad_eval("costs", f"paths.outputs={tmp_path / 'nothing'}")
    assert done.returncode == 2
    assert (
        "render it first, offline and free (dvc repro pipelines/hipho/render/dvc.yaml:render@sample_hipho)"
        in done.stderr
    )


def test_recover_outside_a_dvc_repository_says_so(tmp_path):
    done = olympiad_eval("recover", cwd=tmp_path)
    assert done.returncode == 2 and "is not a DVC repository" in done.stderr


def test_report_prints_the_index_or_says_how_to_make_it(tmp_path):
    done = olympiad_eval("report", "--outputs", str(tmp_path / "outputs"))
    assert done.returncode == 2 and "no report at" in done.stderr and "`dvc repro` writes it" in done.stderr
    index = Layout(tmp_path / "outputs").report_index()
    index.parent.mkdir(parents=True)
    index.write_text("<html></html>", encoding="utf-8")
    done = olympiad_eval("report", "--outputs", str(tmp_path / "outputs"))
    assert (done.returncode, done.stdout) == (0, f"{index.resolve()}\n")


def test_cache_status_counts_the_replies_and_purge_asks_before_removing(tmp_path):
    path = tmp_path / "requests.sqlite"
    env = {"OLYMPIAD_EVAL_REQUEST_CACHE": str(path)}
    done = olympiad_eval("cache", "status", **env)
    assert done.returncode == 0 and f"request cache: {path} (none yet" in done.stdout
    cache = RequestCache(path)
    for key in ("a", "b", "c"):
        cache.put(key, Reply(text="x", usage={}))
    cache.close()
    verdicts = Verdicts(path)  # the rule verdicts kept beside it
    verdicts.put("k", Verdict(True))
    verdicts.close()
    done = olympiad_eval("cache", "status", **env)
    assert done.returncode == 0 and f"request cache: {path} (a SQLite file)\nreplies: 3\n" in done.stdout
    assert f"rule verdicts beside it: {store_path(path)}" in done.stdout
    done = olympiad_eval("cache", "purge", **env)
    assert done.returncode == 1 and "add --yes" in done.stdout and path.is_file()
    done = olympiad_eval("cache", "purge", "--yes", **env)
    assert done.returncode == 0 and f"removed {path}" in done.stdout and not path.exists()
    assert not store_path(path).exists()


# ---------------------------------------------------------------- the leaderboard on the sample


@pytest.fixture(scope="module")
def sample_outputs(tmp_path_factory) -> Path:
    """The bundled plan run by the stages' functions: render, generate, judge (rule), aggregate."""
    outputs = tmp_path_factory.mktemp("sample") / "outputs"
    layout = Layout(outputs)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(ROOT)  # configs name the bundled data relative to the repository
        plan = read_plan(ROOT / "params.yaml")
        for suite, benchmark in plan["suites"].items():
            render_sample(outputs, suite, benchmark)
            family = plan["family"][benchmark]
            for model in plan["models"]:
                cfg = compose_stage("generate", [f"model={model}", f"cell.suite={suite}"]).model
                generations = layout.generations(family, suite, model)
                generate(suite, model, cfg, layout.prompts(family, suite), generations, outputs.parent / "cache.sqlite")
                judge_cfg = compose_stage("judge", ["judge=rule", f"cell.suite={suite}", f"cell.model={model}"]).judge
                judged = layout.judgments(family, suite, model, "rule")
                judge(
                    layout.suite(family, suite),
                    generations,
                    "rule",
                    judge_cfg,
                    judged,
                    outputs.parent / "cache.sqlite",
                )
        for benchmark in plan["benchmarks"]:
            bench_cfg = compose_stage("aggregate", [f"benchmark={benchmark}"]).benchmark
            suites = {
                suite: compose_stage("render", [f"suite={suite}", f"cell.benchmark={benchmark}"]).suite
                for suite, of in plan["suites"].items()
                if of == benchmark
            }
            aggregate(benchmark, bench_cfg, plan, layout, suites=suites)
    return outputs


def read_blocks(text: str) -> dict[tuple[str, str, str], str]:
    """{(model, judge, suite): cell} from the leaderboard's blocks, each column cut where tabulate's
    dashes under its header are, its header's lines joined (a suite's name wraps at underscores)."""
    cells = {}
    for block in text.split("\n\n"):
        lines = block.splitlines()
        rule = next((i for i, line in enumerate(lines) if re.fullmatch(r"[- ]+", line)), None)
        if rule is None:
            continue  # the notes
        spans = [match.span() for match in re.finditer(r"-+", lines[rule])]
        headers = ["".join(line[a:b].strip() for line in lines[:rule]) for a, b in spans]
        for line in lines[rule + 1 :]:
            row = [line[a:b].strip() for a, b in spans[:-1]] + [line[spans[-1][0] :].strip()]
            named = dict(zip(headers, row))
            for suite in headers[3:]:
                cells[(named["model"], named["judge"], suite)] = named[suite]
    return cells


@pytest.mark.xdist_group("cli_sample")  # one worker makes the sample run they share
def test_the_leaderboard_fits_120_characters_and_shows_the_metrics_files(sample_outputs):
    done = olympiad_eval("leaderboard", "--outputs", str(sample_outputs))
    assert done.returncode == 0, done.stderr
    assert max(map(len, done.stdout.splitlines())) <= 120
    shown = read_blocks(done.stdout)
    plan = read_plan(ROOT / "params.yaml")
    metrics = {
        (model, "rule", suite): judges["rule"]
        for benchmark in plan["benchmarks"]
        for suite, models in headline_metrics(Layout(sample_outputs), benchmark).items()
        for model, judges in models.items()
    }
    assert len(metrics) == len(plan["suites"]) * len(plan["models"])
    # a partial suite is starred: the sample's OlympiadBench suites leave out its proofs
    partial = {key for key, cell in metrics.items() if cell.get("partial") or cell["coverage"] < 1}
    assert {suite for _, _, suite in partial} == {"sample_olympiadbench", "sample_olympiadbench_current"}
    assert shown == {
        key: f"{cell['score']:.1f}{'*' * (key in partial)} [{cell['ci_low']:.1f}, {cell['ci_high']:.1f}]"
        for key, cell in metrics.items()
    }


@pytest.mark.xdist_group("cli_sample")  # one worker makes the sample run they share
def test_costs_and_compare_run_on_the_sample_through_the_command(sample_outputs):
    plan = read_plan(ROOT / "params.yaml")
    done = olympiad_eval("costs", f"paths.outputs={sample_outputs}")
    assert done.returncode == 0, done.stderr
    rows = [line.split("|")[1].strip() for line in done.stdout.splitlines() if line.startswith("| ")]
    cells = len(plan["suites"]) * len(plan["models"])
    assert (rows.count("generate"), rows.count("judge")) == (cells, cells)  # a row each, per cell
    assert "| total    |" in done.stdout
    cells = ("reference/rule", "demo/rule")
    done = olympiad_eval("compare", "runs", "sample_hipho", *cells, "--outputs", str(sample_outputs))
    assert done.returncode == 0, done.stderr
    assert "| A     | reference | rule    | 1 (sample 0) |          5 |" in done.stdout
    assert "| score (%) | 100.00 | 66.67 |  -33.33 |" in done.stdout
    comparison = Layout(sample_outputs).comparison("sample_hipho", "reference__rule-vs-demo__rule")
    assert done.stdout.startswith((comparison / "comparison.md").read_text(encoding="utf-8"))


def test_the_leaderboard_adds_each_experiment_s_rows():
    from olympiad_eval.cli.leaderboard import experiment_cells, leaderboard

    headline = {"score": 50.0, "ci_low": 10.0, "ci_high": 90.0, "coverage": 0.5, "partial": "-"}
    shown = [
        {
            "rev": "workspace",
            "experiments": None,
        },
        {
            "rev": "abc",
            "experiments": [
                {
                    "name": "bold-fig",
                    "revs": [
                        {
                            "name": "bold-fig",
                            "data": {"metrics": {"outputs/metrics/b/s/m/rule.json": {"data": headline}}},
                        }
                    ],
                }
            ],
        },
    ]
    cells = experiment_cells(json.loads(json.dumps(shown)))
    assert cells == {("bold-fig", "m", "rule", "s"): headline}
    assert re.search(r"^bold-fig\s+m\s+rule\s+50\.0\* \[10\.0, 90\.0\]$", leaderboard(cells), re.M)


def test_a_release_missing_from_an_experiment_s_copy_is_named_with_dvc_s_option_that_copies_it(tmp_path):
    """DVC itself would stop at the fetch with a bare `[Errno 2]`; the check stage, first to run, says
    where the release is missing and how to bring it (`-C`), or where to get it in the workspace."""
    from olympiad_eval.core.plan import check_releases
    from olympiad_eval.core.records import InputError

    plan = read_plan(ROOT / "params.yaml")
    plan["releases"]["sample_hipho"] = "data/releases/hipho"
    copy = tmp_path / "repo" / ".dvc" / "tmp" / "exps" / "tmpa1b2c3"
    copy.mkdir(parents=True)
    (copy / "data" / "sample").mkdir(parents=True)
    for benchmark, folder in plan["releases"].items():
        if benchmark != "sample_hipho":
            (copy / folder).mkdir(parents=True, exist_ok=True)
    with pytest.raises(InputError) as error:
        check_releases(plan, "params.yaml", here=copy)
    assert str(error.value) == (
        "params.yaml: pipelines.hipho.benchmarks.sample_hipho: the release folder 'data/releases/hipho' is not in "
        "this experiment's copy of the workspace: `dvc exp run --queue`/`--temp` runs in a copy of what git has, and "
        "git ignores it; run the experiment with `-C data/releases/hipho` (DVC copies the folder in), or in the "
        "workspace (no --queue/--temp). The 'No file hash info found ... It won't be created' warnings above it are "
        "DVC's: it checks out the outputs of every stage into the copy before any stage runs, and the stages not run "
        "yet have none (harmless)"
    )
    with pytest.raises(InputError, match=r"there is no release folder 'data/releases/hipho': get the release where "):
        check_releases(plan, "params.yaml", here=ROOT)
    check_releases(read_plan(ROOT / "params.yaml"), "params.yaml", here=ROOT)  # the bundled releases are there
