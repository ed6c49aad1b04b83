"""Fetch: read a benchmark release and normalise it into problem records.

Output: `<out>/problems.jsonl` and `<out>/figures/<sha256>.<ext>`, each figure stored once by
content hash, so a figure that did not change never makes a later stage rerun.
"""

from __future__ import annotations

import inspect
import logging
import os
import re
import unicodedata
from pathlib import Path

from olympiad_eval.benchmarks import plugin
from olympiad_eval.benchmarks.release import FigureStore
from olympiad_eval.core.records import InputError, Problem, RecordError, atomic_dir, write_jsonl

FIGURES = "figures"  # the folder of a fetch's figures, beside its problems.jsonl


def resolve_source(source, benchmark: str) -> Path:
    """The local directory holding the release in its official layout.

    `source.type` is one of:

    - `local`: `path`, a directory.
    - `hub`: a Hugging Face Hub repository, `repo_id` at `revision` (required; a 40-hex commit sha
      pins it, a branch or tag is accepted with a warning), optional `repo_type` ("dataset"),
      `allow_patterns` (a list), `cache_dir` (Hugging Face's own cache when unset) and `subdir`
      (where the official layout sits inside the repository). Offline (`HF_HUB_OFFLINE=1`) it is
      read from the cache only.
    - `modelscope`: a ModelScope dataset, `repo_id` at `revision` (required), optional
      `cache_dir` and `subdir`; needs `pip install modelscope`.
    """
    kind = _source_field(source, "type")
    resolvers = {"hub": _hub_snapshot, "local": _local_directory, "modelscope": _modelscope_snapshot}
    if kind not in resolvers:
        raise InputError(
            f"benchmark '{benchmark}': source.type '{kind}' is not supported; "
            f"known types: {', '.join(sorted(resolvers))}"
        )
    return resolvers[kind](source, benchmark)


def _source_field(source, name: str):
    """A field of the source config (a DictConfig or a dict), None when absent or empty."""
    value = source.get(name)
    return None if value is None or (isinstance(value, str) and not value.strip()) else value


def _local_directory(source, benchmark: str) -> Path:
    path = _source_field(source, "path")
    if path is None:
        raise InputError(
            f"benchmark '{benchmark}': source.path is missing: a 'local' source names the release's directory"
        )
    root = Path(path)
    if not root.is_dir():
        raise InputError(f"benchmark '{benchmark}': source.path '{root}' is not a directory")
    return root


def _required_field(source, name: str, benchmark: str) -> str:
    value = _source_field(source, name)
    if value is None:
        raise InputError(f"benchmark '{benchmark}': source.{name} is missing: a '{source.get('type')}' source needs it")
    return str(value)


def _pinned_revision(source, benchmark: str) -> str:
    """`source.revision`, required: a remote release must name the version it reads."""
    revision = _source_field(source, "revision")
    if revision is None:
        raise InputError(
            f"benchmark '{benchmark}': source.revision is missing: a '{source.get('type')}' source must be pinned, "
            "best to a commit sha (40 hex digits), so that every run reads the same release"
        )
    return str(revision)


def _is_commit_sha(revision: str) -> bool:
    return re.fullmatch(r"[0-9a-f]{40}", revision) is not None


def _warn_unpinned(benchmark: str, repository: str, revision: str, resolved: str | None) -> None:
    commit = f" (now commit {resolved})" if resolved and _is_commit_sha(resolved) and resolved != revision else ""
    logging.getLogger(__name__).warning(
        "benchmark '%s': source.revision '%s' of %s is a branch or tag%s, not a pinned commit: the release "
        "it names can change between runs; set source.revision to a 40-hex commit sha",
        benchmark,
        revision,
        repository,
        commit,
    )


def _subdir(snapshot: Path, source, benchmark: str, where: str) -> Path:
    """The snapshot, or the `source.subdir` inside it that holds the official layout."""
    subdir = _source_field(source, "subdir")
    if subdir is None:
        return snapshot
    if Path(subdir).is_absolute() or ".." in Path(subdir).parts:
        raise InputError(
            f"benchmark '{benchmark}': source.subdir '{subdir}' must be a relative path inside the repository"
        )
    root = snapshot / subdir
    if not root.is_dir():
        raise InputError(
            f"benchmark '{benchmark}': source.subdir '{subdir}' is not a directory in {where} ({snapshot})"
        )
    return root


def _offline_requested() -> bool:
    """HF_HUB_OFFLINE as set now: huggingface_hub reads it once, at import, so a value set later
    (a test's monkeypatch, a caller's os.environ) would otherwise be ignored."""
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE) or os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {
        "1",
        "ON",
        "YES",
        "TRUE",
    }


def _hub_snapshot(source, benchmark: str) -> Path:
    """A Hugging Face Hub repository at a pinned revision, downloaded to (or read from) the cache."""
    repo_id = _required_field(source, "repo_id", benchmark)
    revision = _pinned_revision(source, benchmark)
    repo_type = str(_source_field(source, "repo_type") or "dataset")
    patterns = _source_field(source, "allow_patterns")
    allow_patterns = (
        [str(patterns)] if isinstance(patterns, str) else None if patterns is None else [str(p) for p in patterns]
    )
    cache_dir = _source_field(source, "cache_dir")
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        raise InputError(
            f"benchmark '{benchmark}': source.type 'hub' needs the huggingface_hub package: pip install "
            "'huggingface_hub>=0.24'"
        ) from None
    offline = _offline_requested()
    repository = f"the Hugging Face {repo_type} repository '{repo_id}'"
    where = f"{repository} at revision '{revision}'"
    try:
        snapshot = snapshot_download(
            repo_id=repo_id,
            repo_type=repo_type,
            revision=revision,
            allow_patterns=allow_patterns,
            cache_dir=str(Path(cache_dir).expanduser()) if cache_dir is not None else None,
            local_files_only=offline,
        )
    except (TypeError, AttributeError, NameError):
        raise  # a bug, not a download problem
    except Exception as error:  # network, unknown repository or revision, gated, not in the offline cache, ...
        cache = f"the cache {cache_dir}" if cache_dir is not None else "the Hugging Face cache (HF_HUB_CACHE)"
        state = f"HF_HUB_OFFLINE is set and it is not in {cache}" if offline else "it could not be downloaded"
        raise InputError(
            f"benchmark '{benchmark}': cannot get {where}: {state} ({type(error).__name__}: {error}). "
            f"Check source.repo_id and source.revision. On a machine without network, download it once elsewhere "
            f"(`hf download {repo_id} --repo-type {repo_type} --revision {revision}`), copy the cache over and run "
            f"with HF_HUB_OFFLINE=1 (the cache in HF_HUB_CACHE or source.cache_dir), or use a 'local' source "
            f"with the release's directory"
        ) from error
    snapshot = Path(snapshot)
    if not _is_commit_sha(revision):
        _warn_unpinned(benchmark, repository, revision, snapshot.name)
    return _subdir(snapshot, source, benchmark, where)


def _modelscope_snapshot(source, benchmark: str) -> Path:
    """A ModelScope dataset at a pinned revision, through modelscope's own snapshot_download.

    The call is modelscope's `snapshot_download(repo_id=..., repo_type="dataset", revision=...,
    cache_dir=...)` (modelscope.hub.snapshot_download; `repo_id`/`repo_type` exist in recent
    releases, older ones only downloaded models). modelscope is optional: imported only here.
    """
    repo_id = _required_field(source, "repo_id", benchmark)
    revision = _pinned_revision(source, benchmark)
    cache_dir = _source_field(source, "cache_dir")
    try:
        from modelscope.hub.snapshot_download import snapshot_download
    except ImportError:
        raise InputError(
            f"benchmark '{benchmark}': source.type 'modelscope' needs the modelscope package, which is not "
            "installed: pip install modelscope (or use a 'hub' or 'local' source)"
        ) from None
    try:
        parameters = inspect.signature(snapshot_download).parameters
    except (TypeError, ValueError):
        parameters = {"repo_id": None, "repo_type": None}
    if "repo_id" not in parameters or "repo_type" not in parameters:
        raise InputError(
            f"benchmark '{benchmark}': the installed modelscope cannot download datasets with snapshot_download "
            "(no repo_type parameter): pip install -U modelscope"
        )
    repository = f"the ModelScope dataset '{repo_id}'"
    where = f"{repository} at revision '{revision}'"
    kwargs = {"repo_id": repo_id, "repo_type": "dataset", "revision": revision}
    if cache_dir is not None:
        kwargs["cache_dir"] = str(Path(cache_dir).expanduser())
    try:
        snapshot = Path(snapshot_download(**kwargs))
    except (TypeError, AttributeError, NameError):
        raise
    except Exception as error:
        raise InputError(
            f"benchmark '{benchmark}': cannot get {where} ({type(error).__name__}: {error}). Check source.repo_id "
            f"and source.revision; on a machine without network, use a 'local' source with the release's directory"
        ) from error
    if not _is_commit_sha(revision):
        _warn_unpinned(benchmark, repository, revision, None)
    return _subdir(snapshot, source, benchmark, where)


def fetch(benchmark: str, cfg, out_dir: str | Path) -> list[Problem]:
    """Load the release named by `cfg`, its figures stored once each, and write the problem records;
    all of it or, when the release is refused, nothing."""
    out_dir = Path(out_dir)
    root = resolve_source(cfg.source, benchmark)
    bench = plugin(cfg.kind)
    with atomic_dir(out_dir) as staging:
        problems = bench.load(root, cfg, benchmark, FigureStore(staging / FIGURES, out_dir / FIGURES))
        if not problems:
            raise InputError(f"benchmark '{benchmark}': the release at {root} has no problems")
        _check_unique(problems, root)
        write_jsonl(staging / "problems.jsonl", problems)
    return problems


def _check_unique(problems: list[Problem], root: Path) -> None:
    """No two problems (of one language) share an id, nor ids that display alike (`look_alike`):
    they would be two problems that every table and page shows as one."""
    first: dict[tuple[str, str], Problem] = {}
    for problem in problems:
        earlier = first.setdefault((look_alike(problem.id), problem.language), problem)
        if earlier is problem:
            continue
        same = earlier.id == problem.id
        raise RecordError(
            root / problem.origin if problem.origin else root,
            ascii(problem.id)[1:-1] if not same else problem.id,
            "id",
            (
                f"duplicate problem id (language {problem.language}); first seen at {earlier.origin or '?'}"
                if same
                else f"id {ascii(problem.id)} looks like the id {ascii(earlier.id)} (language {problem.language}, "
                f"first seen at {earlier.origin or '?'}): equal under NFKC or but for invisible characters, "
                "they would display as one problem; give them ids that differ visibly"
            ),
        )


def look_alike(text: str) -> str:
    """What an id displays as: NFKC-normalised (a fullwidth `１` is `1`, a ligature its letters),
    without the characters that show nothing (format characters such as zero-width spaces and
    joiners, soft hyphens and bidirectional marks; control characters; the other default-ignorable
    ones, such as variation selectors), and without space at either end."""
    normal = unicodedata.normalize("NFKC", text)
    return "".join(
        char for char in normal if unicodedata.category(char) not in ("Cf", "Cc") and not _ignorable(char)
    ).strip()


def _ignorable(char: str) -> bool:
    """Unicode's default-ignorable characters that are neither format nor control characters."""
    return any(low <= ord(char) <= high for low, high in _IGNORABLE)


_IGNORABLE = ((0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F), (0x3164, 0x3164),
              (0xFE00, 0xFE0F), (0xFFA0, 0xFFA0), (0xE0100, 0xE01EF))  # fmt: skip
