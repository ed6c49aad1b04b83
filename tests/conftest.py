"""Shared fixtures: the repository's root, the real data beside it, and a fake OpenAI server."""

from __future__ import annotations

from pathlib import Path

import pytest

from olympiad_eval.fake_server import FakeOpenAI

ROOT = Path(__file__).resolve().parents[1]
CONF = ROOT / "conf"
SHARED_DATA = ROOT.parent / "shared" / "data"


def shared_data(*parts: str) -> Path:
    """A path under ../shared/data, or skip the test with the reason."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"real benchmark data not available at {path}")
    return path


@pytest.fixture
def fake_openai():
    with FakeOpenAI() as server:
        yield server


def compose_stage(config_name: str, overrides: list[str]):
    """A stage's config, composed as its command line would compose it."""
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(CONF), version_base=None):
        return compose(config_name=config_name, overrides=overrides)


def render_sample(outputs: Path, suite: str, benchmark: str) -> Path:
    """Fetch and render a sample suite into `outputs` (run from the repository's root); returns it."""
    from olympiad_eval.fetch import fetch
    from olympiad_eval.render import render

    bench_cfg = compose_stage("fetch", [f"benchmark={benchmark}"]).benchmark
    fetch(benchmark, bench_cfg, outputs / "problems" / benchmark)
    suite_cfg = compose_stage("render", [f"suite={suite}", f"cell.benchmark={benchmark}"]).suite
    render(suite, suite_cfg, benchmark, outputs / "problems" / benchmark / "problems.jsonl", outputs / "suites" / suite)
    return outputs


@pytest.fixture
def render_suite(tmp_path, monkeypatch):
    """Fetch and render a sample suite into tmp_path/outputs; returns the outputs folder."""
    monkeypatch.chdir(ROOT)  # configs name bundled data relative to the repository
    return lambda suite, benchmark: render_sample(tmp_path / "outputs", suite, benchmark)
