"""Fetch: read a benchmark release and normalise it into problem records.

Output: `<out>/problems.jsonl` and `<out>/figures/<sha256>.<ext>`, each figure stored once by
content hash, so a figure that did not change never makes a later stage rerun.
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
import math
import os
import re
import shutil
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from olympiad_eval.benchmarks import module
from olympiad_eval.records import InputError, Figure, Problem, RecordError, atomic_dir, file_sha256, write_jsonl

MIME_BY_FORMAT = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
SUFFIX_BY_MIME = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}


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
        raise InputError(f"benchmark '{benchmark}': source.path is missing: a 'local' source names the release's directory")
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
        benchmark, revision, repository, commit,
    )


def _subdir(snapshot: Path, source, benchmark: str, where: str) -> Path:
    """The snapshot, or the `source.subdir` inside it that holds the official layout."""
    subdir = _source_field(source, "subdir")
    if subdir is None:
        return snapshot
    if Path(subdir).is_absolute() or ".." in Path(subdir).parts:
        raise InputError(f"benchmark '{benchmark}': source.subdir '{subdir}' must be a relative path inside the repository")
    root = snapshot / subdir
    if not root.is_dir():
        raise InputError(f"benchmark '{benchmark}': source.subdir '{subdir}' is not a directory in {where} ({snapshot})")
    return root


def _offline_requested() -> bool:
    """HF_HUB_OFFLINE as set now: huggingface_hub reads it once, at import, so a value set later
    (a test's monkeypatch, a caller's os.environ) would otherwise be ignored."""
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE) or os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "ON", "YES", "TRUE"}


def _hub_snapshot(source, benchmark: str) -> Path:
    """A Hugging Face Hub repository at a pinned revision, downloaded to (or read from) the cache."""
    repo_id = _required_field(source, "repo_id", benchmark)
    revision = _pinned_revision(source, benchmark)
    repo_type = str(_source_field(source, "repo_type") or "dataset")
    patterns = _source_field(source, "allow_patterns")
    allow_patterns = [str(patterns)] if isinstance(patterns, str) else None if patterns is None else [str(p) for p in patterns]
    cache_dir = _source_field(source, "cache_dir")
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        raise InputError(
            f"benchmark '{benchmark}': source.type 'hub' needs the huggingface_hub package: pip install 'huggingface_hub>=0.24'"
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


# Most endpoints refuse larger images; the figure is kept as released (models differ in what they
# take), and `max_image_bytes` in the model's config shrinks it when it is sent.
LARGE_FIGURE_BYTES = 20 * 1024 * 1024

# What Pillow raises on a file it cannot decode, a truncated one or a decompression bomb.
UNREADABLE_IMAGE = (UnidentifiedImageError, Image.DecompressionBombError, OSError, SyntaxError, ValueError)


def load_figure(path: Path, *, release_file: str | Path, record: str, field_name: str, name: str, role: str = "") -> Figure:
    """A figure of the release, checked to be a readable image; named by its content hash."""
    if not path.is_file():
        raise RecordError(release_file, record, field_name, f"figure '{name}' not found at {path}")
    try:
        with Image.open(path) as image:
            image_format = image.format
            image.load()  # decodes every pixel: a truncated file fails here, not at a model
    except UNREADABLE_IMAGE as error:
        raise RecordError(release_file, record, field_name, f"figure '{name}' is not a readable image: {error}") from None
    size = path.stat().st_size
    if size > LARGE_FIGURE_BYTES:
        logging.getLogger(__name__).warning(
            "%s: record %s: figure '%s' is %.1f MB; most endpoints refuse images over %d MB: set max_image_bytes "
            "in the model's config to send it shrunk", release_file, record, name, size / 2**20, LARGE_FIGURE_BYTES >> 20)
    mime = MIME_BY_FORMAT.get(image_format or "", f"image/{(image_format or 'octet-stream').lower()}")
    return Figure(sha256=file_sha256(path), path=str(path), mime=mime, name=name, role=role)


# ---------------------------------------------------------------- checked fields of a release's records
# A release's records are read by the benchmark modules through these, so that a value of the wrong
# type stops the fetch with file, record and field, instead of being silently turned into text
# (`str(["a"])`) or iterated character by character (`list("v0")`).

def release_path(name, *, root: Path, where: str | Path, record: str, field_name: str) -> Path:
    """A file the release names (`name`), relative to `root`; a name that leaves the release is refused.

    Checked on the name, not on the resolved path: a Hub snapshot's files are symlinks into its
    blob store, outside the snapshot folder, and are fine."""
    if not isinstance(name, str) or not name.strip():
        raise RecordError(where, record, field_name, f"a file name must be a non-empty string, got {name!r:.80}")
    parts = Path(name).parts
    if Path(name).is_absolute() or ".." in parts:
        raise RecordError(where, record, field_name, f"'{name}' points outside the release ({root}): only relative paths inside it are read")
    return root / name


def as_text(value, *, where: str | Path, record: str, field_name: str, required: bool = True) -> str:
    """A text field; numbers are accepted as their text (an answer `27`), lists and objects are not."""
    if value is None:
        if required:
            raise RecordError(where, record, field_name, "missing")
        return ""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise RecordError(where, record, field_name, f"expected text, got {type(value).__name__} {value!r:.80}")
    return str(value)


def as_list(value, *, where: str | Path, record: str, field_name: str) -> list:
    """A list field; null is an empty list."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise RecordError(where, record, field_name, f"expected a list, got {type(value).__name__} {value!r:.80}")
    return value


def as_points(value, *, where: str | Path, record: str, field_name: str) -> float:
    """Points: a finite number >= 0. Text ("2"), NaN, infinities and negatives are refused: they
    would otherwise turn into a score that is silently wrong, or fail deep in a later stage."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RecordError(where, record, field_name, f"expected a number of points, got {type(value).__name__} {value!r:.80}")
    if not math.isfinite(value) or value < 0:
        raise RecordError(where, record, field_name, f"points must be a finite number >= 0, got {value!r}")
    return float(value)


def as_level(value, *, where: str | Path, record: str, field_name: str) -> int | None:
    """An integer level or difficulty (`3` or `"3"`); null when the release gives none."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise RecordError(where, record, field_name, f"expected an integer, got {type(value).__name__} {value!r:.80}")


class Fields:
    """One record of a release, read field by field with the checks above. `columns` maps our
    field names to the release's own (PhysElite's are set in its config); errors name the latter."""

    def __init__(self, item: dict, where: str | Path, columns: dict | None = None):
        self.item, self.where, self.columns = item, where, columns or {}
        raw_id = self.raw("id")
        self.record = "?" if raw_id is None else str(raw_id)  # a null id as a missing one

    def column(self, name: str) -> str:
        return self.columns.get(name, name)

    def raw(self, name: str):
        return self.item.get(self.column(name))

    def require(self, *names: str) -> None:
        for name in names:
            if self.raw(name) is None:
                raise RecordError(self.where, self.record, self.column(name), "missing")
            if name == "id":
                self._check_id()

    def _check_id(self) -> None:
        """An id is text or an integer, and not blank: records, cache keys and tables are keyed by it."""
        raw = self.raw("id")
        if isinstance(raw, bool) or not isinstance(raw, (str, int)):
            raise RecordError(self.where, self.record, self.column("id"),
                              f"expected text or an integer, got {type(raw).__name__} {raw!r:.80}")
        if not str(raw).strip():
            raise RecordError(self.where, repr(raw), self.column("id"), "empty: every problem needs an id")

    def _read(self, read, name: str, **options):
        return read(self.raw(name), where=self.where, record=self.record, field_name=self.column(name), **options)

    def text(self, name: str, required: bool = True) -> str:
        return self._read(as_text, name, required=required)

    def list(self, name: str) -> list:
        return self._read(as_list, name)

    def level(self, name: str) -> int | None:
        return self._read(as_level, name)

    def gold(self, name: str) -> str:
        """A gold answer that must not be empty (the protocol compares with it)."""
        text = self.text(name)
        if not text.strip():
            raise RecordError(self.where, self.record, self.column(name), "empty: the protocol compares responses with it")
        return text

    def path(self, name: str, root: Path, value=None) -> Path:
        """The release file the field names (or `value`, one entry of a list field)."""
        return release_path(self.raw(name) if value is None else value, root=root, where=self.where,
                            record=self.record, field_name=self.column(name))


def fetch(benchmark: str, cfg, out_dir: str | Path) -> list[Problem]:
    """Load the release named by `cfg`, store its figures once, and write the problem records."""
    out_dir = Path(out_dir)
    root = resolve_source(cfg.source, benchmark)
    problems = module(cfg.kind).load(root, cfg, benchmark)
    if not problems:
        raise InputError(f"benchmark '{benchmark}': the release at {root} has no problems")
    _check_unique(problems, root)
    with atomic_dir(out_dir) as staging:
        stored = [_store_figures(problem, staging, out_dir) for problem in problems]
        write_jsonl(staging / "problems.jsonl", stored)
    return stored


def _check_unique(problems: list[Problem], root: Path) -> None:
    first: dict[tuple[str, str], Problem] = {}
    for problem in problems:
        earlier = first.setdefault((problem.id, problem.language), problem)
        if earlier is not problem:
            raise RecordError(root / problem.origin if problem.origin else root, problem.id, "id",
                              f"duplicate problem id (language {problem.language}); first seen at {earlier.origin or '?'}")


def _store_figures(problem: Problem, staging: Path, final_dir: Path) -> Problem:
    stored = []
    for figure in problem.figures:
        name = figure.sha256 + SUFFIX_BY_MIME.get(figure.mime, Path(figure.path).suffix.lower())
        target = staging / "figures" / name
        if not target.exists():
            target.parent.mkdir(exist_ok=True)
            shutil.copyfile(figure.path, target)
        stored.append(dataclasses.replace(figure, path=(final_dir / "figures" / name).as_posix()))
    return dataclasses.replace(problem, figures=tuple(stored))
