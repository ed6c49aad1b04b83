"""Shared fixtures (a private request cache for every test, a fake OpenAI server, rendered sample
suites) and the order tests run in; the helpers they use are in tests/support.py."""

from __future__ import annotations

import os

import huggingface_hub
import pytest
from huggingface_hub import constants as hf_constants

from olympiad_eval.cli.fake_server import FakeOpenAI
from tests.support import REQUEST_CACHE_VARIABLE, ROOT, render_sample


@pytest.fixture(scope="session", autouse=True)
def session_request_cache(tmp_path_factory):
    """No test writes to the user's own request cache (by default in the user's cache folder):
    fixtures that outlive a test (a module's clones) see this session's; each test its own (below)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(REQUEST_CACHE_VARIABLE, str(tmp_path_factory.mktemp("request-cache") / "requests.sqlite"))
        yield


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch):
    """Retries wait a hundredth of a second in the tests' own processes, not the half second and more
    of the clients' backoff: what is retried, how often and what becomes of it is unchanged (a stage
    run as its own process keeps the real waits)."""
    import openai._base_client

    from olympiad_eval.llm import transport

    monkeypatch.setattr(transport, "FIRST_RETRY_WAIT", 0.01)
    monkeypatch.setattr(openai._base_client, "INITIAL_RETRY_DELAY", 0.01)


@pytest.fixture(scope="session", autouse=True)
def shared_environments():
    """The pinned environments of protocols that need their own packages (OlympiadBench's official
    scorer) are built once, in the user's cache folder as found when the session starts, and shared
    by every test and fresh clone, including those that move the user's cache folder elsewhere."""
    from olympiad_eval.core.config import user_cache
    from olympiad_eval.scoring.environments import FOLDER_VARIABLE

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(FOLDER_VARIABLE, os.environ.get(FOLDER_VARIABLE) or user_cache("environments"))
        yield


@pytest.fixture(autouse=True)
def private_request_cache(session_request_cache, tmp_path_factory, monkeypatch):
    """A fresh request cache for each test, so that no test is served another's replies (a fake
    server's port, which names its model in every request key, can come round again)."""
    path = tmp_path_factory.mktemp("request-cache") / "requests.sqlite"
    monkeypatch.setenv(REQUEST_CACHE_VARIABLE, str(path))
    return path


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


@pytest.fixture
def offline(monkeypatch):
    """HF_HUB_OFFLINE=1 set after huggingface_hub was imported (its constant stays False, as it
    would in a process that set the variable late), and every snapshot_download recorded; a call
    that could reach the network fails the test instead of trying."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hf_constants, "HF_HUB_OFFLINE", False)
    real = huggingface_hub.snapshot_download
    calls = []

    def recorded(**kwargs):
        calls.append(kwargs)
        if kwargs.get("local_files_only") is not True:
            pytest.fail(f"snapshot_download would go online: {kwargs}")
        return real(**kwargs)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", recorded)
    return calls
