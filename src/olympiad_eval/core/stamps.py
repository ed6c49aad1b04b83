"""What made each part of a cell, so that a stage that makes many parts redoes only those whose inputs
changed: the evaluate stage (one DVC stage per model and benchmark family) generates, judges and
writes the pages of every suite of its family, and DVC reruns it whole when any of them changes.

A part's stamp holds two digests: of everything it reads (its code, the config values it uses, the
bytes of each input file) and of everything it wrote. The part is up to date when its stamp exists,
its inputs give the same digest and its outputs are still there with the same bytes; so a stamp
never vouches for an output that was edited, removed or replaced (`dvc checkout` of another run),
nor for one made from other inputs. A stamp is written after its outputs, atomically: a part killed
half way has none, and is made again (its requests come from the request cache).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from olympiad_eval.core.records import InputError, write_json

_BLOCK = 1 << 20


def digest_of(path: Path) -> str | None:
    """The SHA-256 of a file's bytes, or of a folder's files (their names relative to it and their
    bytes, in name order; temporary files of an atomic write left out); None where nothing is there."""
    if path.is_file():
        return _file_digest(path)
    if not path.is_dir():
        return None
    digest = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file() and not _temporary(p)):
        digest.update(file.relative_to(path).as_posix().encode() + b"\0" + _file_digest(file).encode() + b"\n")
    return digest.hexdigest()


def _temporary(path: Path) -> bool:
    return path.name.startswith(".") and path.name.endswith(".tmp")


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(_BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


def inputs_digest(code: str, config: Any, files: Mapping[str, Path]) -> str:
    """The digest of what a part reads: its code list's text, the config values it uses (plain data)
    and each input file or folder by name (a missing one counts as missing, never as empty)."""
    data = {"code": code, "config": config, "files": {name: digest_of(Path(path)) for name, path in files.items()}}
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()


def outputs_digest(outputs: Iterable[Path]) -> str | None:
    """The digest of a part's outputs, or None where one of them is missing."""
    digests = [digest_of(Path(path)) for path in outputs]
    if None in digests:
        return None
    return hashlib.sha256("\n".join(digests).encode()).hexdigest()  # type: ignore[arg-type]


def up_to_date(stamp: Path, inputs: str, outputs: Iterable[Path]) -> bool:
    """Whether the part stamped at `stamp` was made from these inputs and its outputs are unchanged."""
    recorded = _read(stamp)
    if recorded is None or recorded.get("inputs") != inputs:
        return False
    made = outputs_digest(outputs)
    return made is not None and recorded.get("outputs") == made


def write_stamp(stamp: Path, inputs: str, outputs: Iterable[Path]) -> None:
    """Record that the part's outputs, as they are now, were made from `inputs`."""
    made = outputs_digest(outputs)
    if made is None:
        missing = [str(path) for path in outputs if digest_of(Path(path)) is None]
        raise InputError(f"{stamp}: a part is stamped before its outputs are written: {', '.join(missing)}")
    stamp.parent.mkdir(parents=True, exist_ok=True)
    write_json(stamp, {"inputs": inputs, "outputs": made})


def _read(stamp: Path) -> dict | None:
    """A stamp's record; None where there is none or it is unreadable (a part then is made again)."""
    try:
        recorded = json.loads(stamp.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return recorded if isinstance(recorded, dict) else None


@dataclass(frozen=True)
class Part:
    """One part of a cell: where its stamp is, the digest of what it reads, and what it writes."""

    stamp: Path
    inputs: str
    outputs: tuple[Path, ...]

    def up_to_date(self) -> bool:
        return up_to_date(self.stamp, self.inputs, self.outputs)

    def done(self) -> None:
        write_stamp(self.stamp, self.inputs, self.outputs)


@dataclass(frozen=True)
class Made:
    """What a part did: its summary line (None where it was up to date and left alone), and why the
    stage must fail where it must (its outputs, written as data, are then not stamped)."""

    name: str  # the cell and part, as the log names them ("sample_hipho x demo x rule")
    summary: str | None
    failure: str | None = None


def most_common(reasons: Iterable[str], shown: int = 3) -> str:
    """The most frequent reasons (of a part's failed requests or judgments), with their counts."""
    return "; ".join(f"{reason} ({count}x)" for reason, count in Counter(reasons).most_common(shown))
