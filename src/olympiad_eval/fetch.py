"""Fetch: read a benchmark release and normalise it into problem records.

Output: `<out>/problems.jsonl` and `<out>/figures/<sha256>.<ext>`, each figure stored once by
content hash, so a figure that did not change never makes a later stage rerun.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from olympiad_eval.benchmarks import module
from olympiad_eval.records import InputError, Figure, Problem, RecordError, atomic_dir, file_sha256, write_jsonl

MIME_BY_FORMAT = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
SUFFIX_BY_MIME = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}


def resolve_source(source, benchmark: str) -> Path:
    """The local directory holding the release in its official layout."""
    if source.type != "local":
        raise InputError(
            f"benchmark '{benchmark}': source.type '{source.type}' is not supported; use 'local' with a path"
        )
    root = Path(source.path)
    if not root.is_dir():
        raise InputError(f"benchmark '{benchmark}': source.path '{root}' is not a directory")
    return root


def load_figure(path: Path, *, release_file: str | Path, record: str, field_name: str, name: str, role: str = "") -> Figure:
    """A figure of the release, checked to be a readable image; named by its content hash."""
    if not path.is_file():
        raise RecordError(release_file, record, field_name, f"figure '{name}' not found at {path}")
    try:
        with Image.open(path) as image:
            image_format = image.format
            image.load()  # decodes every pixel: a truncated file fails here, not at a model
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as error:
        raise RecordError(release_file, record, field_name, f"figure '{name}' is not a readable image: {error}") from None
    mime = MIME_BY_FORMAT.get(image_format or "", f"image/{(image_format or 'octet-stream').lower()}")
    return Figure(sha256=file_sha256(path), path=str(path), mime=mime, name=name, role=role)


def fetch(benchmark: str, cfg, out_dir: str | Path) -> list[Problem]:
    """Load the release named by `cfg`, store its figures once, and write the problem records."""
    out_dir = Path(out_dir)
    problems = module(cfg.kind).load(resolve_source(cfg.source, benchmark), cfg, benchmark)
    if not problems:
        raise InputError(f"benchmark '{benchmark}': the release at {cfg.source.path} has no problems")
    _check_unique(problems, cfg.source.path)
    with atomic_dir(out_dir) as staging:
        stored = [_store_figures(problem, staging, out_dir) for problem in problems]
        write_jsonl(staging / "problems.jsonl", stored)
    return stored


def _check_unique(problems: list[Problem], where) -> None:
    seen: set[tuple[str, str]] = set()
    for problem in problems:
        if (problem.id, problem.language) in seen:
            raise RecordError(where, problem.id, "id", f"duplicate problem id (language {problem.language})")
        seen.add((problem.id, problem.language))


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
