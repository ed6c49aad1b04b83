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


UNSERVABLE = ["connection refused", "unresolvable host", "wrong key", "misnamed model"]


def unservable_endpoint(case: str, listed: list[str], listing: str) -> tuple[FakeOpenAI, str, str]:
    """An endpoint that cannot serve as `case` says: the server to start (it serves the two cases
    the probe must catch on a live server), the base URL to ask, and what the error must say.
    A misnamed model's server lists `listed`, which the error shows as `listing`; the wrong key is
    the one in the environment variable OE_TEST_KEY."""
    server = FakeOpenAI(api_key="the-servers-key" if case == "wrong key" else None,
                        models=listed if case == "misnamed model" else None)
    base_url = {"connection refused": "http://127.0.0.1:9/v1",  # the discard port: nothing listens there
                "unresolvable host": "http://no-such-host.invalid/v1"}.get(case, server.base_url)
    expected = {"connection refused": "connection refused; check that the server is running",
                "unresolvable host": "the host name does not resolve",
                "wrong key": "the endpoint refused the API key (HTTP 401: Incorrect API key provided); "
                             "check the key in the environment variable OE_TEST_KEY",
                "misnamed model": f"the endpoint does not list the model (it lists {len(listed)}: {listing}); "
                                  "check `model`, or set `probe: false`"}[case]
    return server, base_url, expected


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


def pytest_collection_modifyitems(items):
    """End-to-end tests first, the biggest shared run (an `xdist_group`) before the single ones.
    Each is a chain of `dvc repro` stages taking half a minute to four minutes; started first,
    they run beside each other while the short tests fill in around them, instead of one of them
    starting last and running alone (pyproject's addopts keep xdist to this order)."""
    def rank(item) -> int:
        if item.get_closest_marker("e2e") is None:
            return 2
        return 0 if item.get_closest_marker("xdist_group") else 1

    items.sort(key=rank)  # stable: each rank keeps the collection's order
