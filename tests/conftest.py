"""Shared fixtures (a fake OpenAI server, rendered sample suites) and the order tests run in; the
helpers they use are in tests/support.py."""

from __future__ import annotations

import pytest

from olympiad_eval.fake_server import FakeOpenAI
from tests.support import ROOT, render_sample


@pytest.fixture
def fake_openai():
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def render_suite(tmp_path, monkeypatch):
    """Fetch and render a sample suite into tmp_path/outputs, with Hydra overrides of the suite;
    returns the outputs folder."""
    monkeypatch.chdir(ROOT)  # configs name bundled data relative to the repository
    return lambda suite, benchmark, *overrides: render_sample(tmp_path / "outputs", suite, benchmark, *overrides)


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
