"""fetch from remote sources: a Hugging Face Hub snapshot (pinned revision) and ModelScope.

No network: the Hub tests build an offline Hugging Face cache by hand, in the layout
huggingface_hub itself writes (`<cache>/datasets--<org>--<name>/{blobs,refs,snapshots}`), and run
with HF_HUB_OFFLINE=1; ModelScope is replaced by a stand-in module.
"""

from __future__ import annotations

import logging
import shutil
import sys
import types
from pathlib import Path

import huggingface_hub
import pytest
from huggingface_hub import constants as hf_constants
from omegaconf import OmegaConf

from olympiad_eval.benchmarks import plugin
from olympiad_eval.core.records import InputError
from olympiad_eval.stages.fetch import fetch, resolve_source
from tests.support import HUB_COMMIT as COMMIT, HUB_REPO_ID as REPO_ID, hf_cache, load_release

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "sample" / "mathvision"
BENCHMARK = "sample_mathvision"


def benchmark_config(source: dict):
    cfg = OmegaConf.load(REPO / "conf" / "benchmark" / f"{BENCHMARK}.yaml")
    cfg.source = OmegaConf.create(source)
    return cfg


def local_config():
    return benchmark_config({"type": "local", "path": str(SAMPLE)})


def hub_config(cache: Path, revision: str | None = COMMIT, **extra):
    source = {"type": "hub", "repo_id": REPO_ID, "cache_dir": str(cache), **extra}
    if revision is not None:
        source["revision"] = revision
    return benchmark_config(source)


def fetched_bytes(cfg, out: Path) -> bytes:
    fetch(BENCHMARK, cfg, out)
    return (out / "problems.jsonl").read_bytes()


def loaded(cfg) -> list:
    """The problems the benchmark's loader reads from the resolved source (its figures stored by
    content, so that where the release sits changes nothing)."""
    return load_release(plugin(cfg.kind), resolve_source(cfg.source, BENCHMARK), cfg, BENCHMARK)


# ---------------------------------------------------------------- hub: success


def test_hub_snapshot_gives_the_same_problems_as_the_local_release(tmp_path, offline, caplog):
    cache = hf_cache(tmp_path)
    out = tmp_path / "outputs" / "problems" / BENCHMARK  # the same out dir: figure paths are under it
    expected = fetched_bytes(local_config(), out)
    figures = sorted(p.name for p in (out / "figures").iterdir())
    shutil.rmtree(out)

    with caplog.at_level(logging.WARNING, logger="olympiad_eval.stages.fetch"):
        assert fetched_bytes(hub_config(cache), out) == expected
    assert sorted(p.name for p in (out / "figures").iterdir()) == figures
    assert len(figures) == 4
    assert not [r for r in caplog.records if r.name == "olympiad_eval.stages.fetch"]  # a sha is pinned: no warning
    assert offline == [
        {
            "repo_id": REPO_ID,
            "repo_type": "dataset",
            "revision": COMMIT,
            "allow_patterns": None,
            "cache_dir": str(cache),
            "local_files_only": True,
        }
    ]


def test_resolve_source_returns_the_snapshot_directory(tmp_path, offline, caplog):
    cache = hf_cache(tmp_path)
    with caplog.at_level(logging.WARNING, logger="olympiad_eval.stages.fetch"):
        root = resolve_source(hub_config(cache).source, BENCHMARK)
    assert root == cache / f"datasets--{REPO_ID.replace('/', '--')}" / "snapshots" / COMMIT
    assert (root / "data" / "test.jsonl").read_bytes() == (SAMPLE / "data" / "test.jsonl").read_bytes()
    assert loaded(hub_config(cache)) == loaded(local_config())
    assert len(loaded(local_config())) == 4
    assert not [r for r in caplog.records if r.name == "olympiad_eval.stages.fetch"]  # a sha is pinned: no warning
    assert [call["local_files_only"] for call in offline] == [True, True]


def test_hub_branch_resolves_through_refs_with_a_warning(tmp_path, offline, caplog):
    cache = hf_cache(tmp_path, refs={"main": COMMIT, "v1.0": COMMIT})
    expected = loaded(local_config())
    for branch in ("main", "v1.0"):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="olympiad_eval.stages.fetch"):
            assert resolve_source(hub_config(cache, revision=branch).source, BENCHMARK).name == COMMIT
            assert loaded(hub_config(cache, revision=branch)) == expected
        warnings = [r for r in caplog.records if r.name == "olympiad_eval.stages.fetch"]
        assert len(warnings) == 2  # one per resolution
        for warning in warnings:
            assert warning.levelno == logging.WARNING
            message = warning.getMessage()
            assert f"'{branch}'" in message and "not a pinned commit" in message and COMMIT in message
            assert BENCHMARK in message and REPO_ID in message


def test_hub_branch_fetches_the_same_problems_as_the_local_release(tmp_path, offline):
    cache = hf_cache(tmp_path)
    out = tmp_path / "out"
    expected = fetched_bytes(local_config(), out)
    assert fetched_bytes(hub_config(cache, revision="main"), out) == expected


def test_hub_subdir_holds_the_official_layout(tmp_path, offline):
    cache = hf_cache(tmp_path, prefix="MATH-V")
    root = resolve_source(hub_config(cache, subdir="MATH-V").source, BENCHMARK)
    assert root == cache / f"datasets--{REPO_ID.replace('/', '--')}" / "snapshots" / COMMIT / "MATH-V"
    assert loaded(hub_config(cache, subdir="MATH-V")) == loaded(local_config())
    with pytest.raises(InputError, match="source.subdir 'nope' is not a directory"):
        resolve_source(hub_config(cache, subdir="nope").source, BENCHMARK)
    with pytest.raises(InputError, match="relative path inside the repository"):
        resolve_source(hub_config(cache, subdir="../..").source, BENCHMARK)


def test_hub_options_reach_snapshot_download(tmp_path, monkeypatch):
    """repo_type, allow_patterns (a list in the config) and the cache as given; no offline flag."""
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(hf_constants, "HF_HUB_OFFLINE", False)
    calls = []

    def fake(**kwargs):
        calls.append(kwargs)
        return str(SAMPLE)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake)
    cfg = hub_config(tmp_path / "cache", repo_type="model", allow_patterns=["data/*.jsonl", "images/*"])
    assert resolve_source(cfg.source, BENCHMARK) == SAMPLE
    assert calls == [
        {
            "repo_id": REPO_ID,
            "repo_type": "model",
            "revision": COMMIT,
            "allow_patterns": ["data/*.jsonl", "images/*"],
            "cache_dir": str(tmp_path / "cache"),
            "local_files_only": False,
        }
    ]
    assert type(calls[0]["allow_patterns"]) is list


# ---------------------------------------------------------------- hub: errors


def test_hub_revision_is_required(tmp_path, offline):
    cache = hf_cache(tmp_path)
    for cfg in (hub_config(cache, revision=None), hub_config(cache, revision="")):
        with pytest.raises(InputError) as caught:
            fetch(BENCHMARK, cfg, tmp_path / "out")
        assert f"benchmark '{BENCHMARK}'" in str(caught.value) and "source.revision" in str(caught.value)
    assert offline == []  # refused before any download
    assert not (tmp_path / "out").exists()


def test_hub_repo_id_is_required(tmp_path, offline):
    cfg = hub_config(tmp_path, revision=COMMIT)
    del cfg.source["repo_id"]
    with pytest.raises(InputError, match=f"benchmark '{BENCHMARK}': source.repo_id is missing"):
        resolve_source(cfg.source, BENCHMARK)


@pytest.mark.parametrize(
    "repo_id, revision",
    [
        (REPO_ID, "0123456789abcdef0123456789abcdef01234567"),  # a commit not in the cache
        (REPO_ID, "v2.0"),  # a branch or tag without refs/ in the cache
        ("someorg/not-cached", COMMIT),  # a repository not in the cache
    ],
    ids=["commit", "branch", "repo"],
)
def test_hub_release_not_in_the_offline_cache(tmp_path, offline, repo_id, revision):
    cache = hf_cache(tmp_path)
    cfg = hub_config(cache, revision=revision)
    cfg.source.repo_id = repo_id
    out = tmp_path / "out"
    with pytest.raises(InputError) as caught:
        fetch(BENCHMARK, cfg, out)
    message = str(caught.value)
    assert f"benchmark '{BENCHMARK}'" in message
    assert f"'{repo_id}'" in message and f"revision '{revision}'" in message
    assert "HF_HUB_OFFLINE" in message and "'local' source" in message
    assert isinstance(caught.value.__cause__, huggingface_hub.errors.LocalEntryNotFoundError)
    assert not out.exists()


def test_hub_network_error_names_repo_revision_and_the_offline_way(tmp_path, monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(hf_constants, "HF_HUB_OFFLINE", False)

    def unreachable(**kwargs):
        raise ConnectionError("Failed to resolve 'huggingface.co'")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", unreachable)
    with pytest.raises(InputError) as caught:
        fetch(BENCHMARK, hub_config(tmp_path / "cache"), tmp_path / "out")
    message = str(caught.value)
    assert f"benchmark '{BENCHMARK}'" in message and f"'{REPO_ID}'" in message and f"revision '{COMMIT}'" in message
    assert "Failed to resolve" in message and "HF_HUB_OFFLINE=1" in message and "'local' source" in message


# ---------------------------------------------------------------- source types


def test_unknown_source_type_lists_the_known_ones(tmp_path):
    cfg = benchmark_config({"type": "s3", "path": str(SAMPLE)})
    with pytest.raises(
        InputError,
        match=rf"benchmark '{BENCHMARK}': source.type 's3' is not supported; known types: hub, local, modelscope",
    ):
        fetch(BENCHMARK, cfg, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_local_source_without_a_path(tmp_path):
    with pytest.raises(InputError, match="source.path is missing"):
        resolve_source(OmegaConf.create({"type": "local"}), BENCHMARK)


# ---------------------------------------------------------------- modelscope


def test_modelscope_without_the_package_says_how_to_install_it(tmp_path, monkeypatch):
    for name in ("modelscope", "modelscope.hub", "modelscope.hub.snapshot_download"):
        monkeypatch.setitem(sys.modules, name, None)  # `import` fails here whether or not it is installed
    cfg = benchmark_config({"type": "modelscope", "repo_id": REPO_ID, "revision": COMMIT})
    with pytest.raises(InputError, match=f"benchmark '{BENCHMARK}'.*pip install modelscope"):
        fetch(BENCHMARK, cfg, tmp_path / "out")


def stand_in_modelscope(monkeypatch, download):
    """A `modelscope` package whose hub.snapshot_download.snapshot_download is `download`."""
    package, hub, module = (
        types.ModuleType(n) for n in ("modelscope", "modelscope.hub", "modelscope.hub.snapshot_download")
    )
    module.snapshot_download = download
    package.hub, hub.snapshot_download = hub, module
    for m in (package, hub, module):
        monkeypatch.setitem(sys.modules, m.__name__, m)


def test_modelscope_dataset_snapshot(tmp_path, monkeypatch, caplog):
    calls = []

    def snapshot_download(
        model_id=None, revision=None, cache_dir=None, local_files_only=False, repo_id=None, repo_type="model"
    ):
        calls.append({"repo_id": repo_id, "repo_type": repo_type, "revision": revision, "cache_dir": cache_dir})
        return str(SAMPLE)

    stand_in_modelscope(monkeypatch, snapshot_download)
    cfg = benchmark_config(
        {"type": "modelscope", "repo_id": REPO_ID, "revision": "master", "cache_dir": str(tmp_path / "ms")}
    )
    with caplog.at_level(logging.WARNING, logger="olympiad_eval.stages.fetch"):
        assert loaded(cfg) == loaded(local_config())
    assert calls == [
        {"repo_id": REPO_ID, "repo_type": "dataset", "revision": "master", "cache_dir": str(tmp_path / "ms")}
    ]
    assert any("'master'" in r.getMessage() and "not a pinned commit" in r.getMessage() for r in caplog.records)

    with pytest.raises(InputError, match="source.revision"):
        resolve_source(OmegaConf.create({"type": "modelscope", "repo_id": REPO_ID}), BENCHMARK)


def test_modelscope_errors_name_repo_and_revision(tmp_path, monkeypatch):
    def snapshot_download(repo_id=None, repo_type="model", revision=None, cache_dir=None):
        raise ValueError("The specified branch or tag : v9 not exist!")

    stand_in_modelscope(monkeypatch, snapshot_download)
    cfg = benchmark_config({"type": "modelscope", "repo_id": REPO_ID, "revision": "v9"})
    with pytest.raises(InputError) as caught:
        fetch(BENCHMARK, cfg, tmp_path / "out")
    message = str(caught.value)
    assert f"'{REPO_ID}'" in message and "revision 'v9'" in message and "not exist" in message


def test_modelscope_too_old_for_datasets(tmp_path, monkeypatch):
    def snapshot_download(model_id, revision="master", cache_dir=None):  # modelscope < repo_type
        raise AssertionError("not to be called")

    stand_in_modelscope(monkeypatch, snapshot_download)
    cfg = benchmark_config({"type": "modelscope", "repo_id": REPO_ID, "revision": COMMIT})
    with pytest.raises(InputError, match="pip install -U modelscope"):
        resolve_source(cfg.source, BENCHMARK)
