"""bench/scale.py at a CI size, so that the bench cannot rot: the whole plan runs under `dvc repro`
against the fake server, the tables count every problem, and a no-op rerun runs nothing."""

from __future__ import annotations

import importlib.util

import pandas as pd
import pytest

from tests.support import ROOT

pytestmark = pytest.mark.e2e


def load_bench():
    spec = importlib.util.spec_from_file_location("scale_bench", ROOT / "bench" / "scale.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def test_a_tiny_scale_run_completes_with_every_problem_in_the_tables(tmp_path):
    bench = load_bench()
    problems = 30
    result = bench.run(problems=problems, models=1, latency=0.01, concurrency=8, keep=tmp_path)
    [model] = result["models"]
    cells = [(suite, judge) for suite in bench.SUITES for judge in ("rule", bench.JUDGE)]
    ran = {stage["stage"] for stage in result["stages"]}
    assert {f"generate@{suite}-{model}" for suite in bench.SUITES} <= ran
    assert {f"judge@{suite}-{model}-{judge}" for suite, judge in cells} <= ran
    assert all(stage["code"] == 0 and stage["rss_mb"] > 0 for stage in result["stages"])
    assert result["noop_ran"] == []
    assert result["generation_requests"] == 2 * problems  # one per problem and language
    assert result["judge_requests"] == 2 * 2 * problems  # the answer verdict and the process, per response

    summary = pd.read_csv(tmp_path / "repo" / "outputs" / "tables" / bench.BENCHMARK / "summary.csv")
    assert len(summary) == len(cells)
    assert (summary["problems"] == problems).all() and (summary["scored"] == problems).all()
    assert (summary[["judge errors", "failed generations", "truncated"]] == 0).all().all()
    # the fake model is right exactly where the bench says; rules and the fake judge both see it
    assert (summary["score (%)"] == result["expected"][model]).all()
    accuracy = pd.read_csv(tmp_path / "repo" / "outputs" / "tables" / bench.BENCHMARK / "accuracy.csv")
    assert accuracy.loc[accuracy["judge"] == bench.JUDGE, "Proc."].notna().all()
