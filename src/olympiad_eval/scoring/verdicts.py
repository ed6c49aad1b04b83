"""Rule verdicts kept by what decides them, beside the request cache, so that a check is decided
once: by judging ahead, then by the cell's judge stage; by the rule judge, then by an LLM judge of
the same cell; by a judge stage, then by the same stage run again on other judge settings.

A verdict is a pure function of its check (every field of it), the options and the CPU seconds it
runs under (`pool.CheckPool`: a check that overruns them is undecided on every machine alike), and
the code that decides it: the module of the check's function and every module of this package that
module reaches (`core.code.reached`, read from their files), a pinned environment's requirements,
and the versions of the parsers that decide answers. Its key is the SHA-256 of all of them, so an
edit of that code, or a new parser, decides every check again. An undecided verdict (an overrun, a
crashed worker) is not kept: a check that could not finish is tried again, never remembered as one.

Like the request cache it is a memo, not a judgment of what is up to date: every judge stage runs
whole and writes what it writes; only the checks it would decide again are looked up. It lives
beside the request cache (`<name>-verdicts.sqlite` beside a `.sqlite` one; a folder
`<name>-verdicts` beside a shared folder), the same for every clone and experiment of the machine.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.util
import json
import threading
from importlib import metadata
from pathlib import Path

from olympiad_eval.core.records import InputError
from olympiad_eval.llm.cache import FolderStore, SQLiteStore
from olympiad_eval.scoring.checks import Check, Equivalence, Options, Verdict

# What decides answers beyond this package's code: their versions enter every key.
PARSERS = ("sympy", "latex2sympy2_extended", "antlr4-python3-runtime", "math-verify", "pylatexenc")


def store_path(request_cache: str | Path) -> Path:
    """Where the verdicts of a request cache are kept: a file or folder of their own beside it."""
    path = Path(request_cache)
    if path.suffix in (".sqlite", ".db"):
        return path.with_name(f"{path.stem}-verdicts{path.suffix}")
    return path.with_name(f"{path.name}-verdicts")


class Verdicts:
    """Decided verdicts by key (`verdict_key`), in a SQLite file or a folder as the request cache is kept;
    used from any thread (the judge stage runs its rules in one), one at a time."""

    def __init__(self, request_cache: str | Path):
        self.path = store_path(request_cache)
        sqlite = self.path.suffix in (".sqlite", ".db")
        self._store = SQLiteStore(self.path, any_thread=True) if sqlite else FolderStore(self.path)
        self._lock = threading.Lock()

    def get(self, key: str) -> Verdict | None:
        with self._lock:
            text = self._store.get(key)
        try:
            stored = json.loads(text) if text else None
            return None if stored is None else Verdict(bool(stored["correct"]), stored["reason"], stored["answer"])
        except (ValueError, KeyError, TypeError):  # a row cut short or edited: decided again, and overwritten
            return None

    def put(self, key: str, verdict: Verdict) -> None:
        if verdict.correct is not None:
            with self._lock:
                self._store.put(key, json.dumps(dataclasses.asdict(verdict), sort_keys=True))

    def close(self) -> None:
        with self._lock:
            self._store.close()


def verdict_key(check: Check, options: Options, cpu_seconds: float) -> str:
    """The digest of everything that decides `check`'s verdict."""
    if isinstance(check, Equivalence):
        module, what = "olympiad_eval.scoring.mathcheck", dataclasses.asdict(check)
    else:
        function = check.function
        module, what = function.__module__, {"function": function.__qualname__, "args": check.args}
        if check.environment is not None:
            what["environment"] = check.environment.requirements.read_text(encoding="utf-8")
    made = [code_version(module), type(check).__name__, what, dataclasses.asdict(options), cpu_seconds]

    return hashlib.sha256(json.dumps(made, sort_keys=True, default=repr).encode()).hexdigest()


@functools.cache
def code_version(module: str) -> str:
    """The digest of the code that decides a check of `module`: its file and every file of this
    package it reaches, with the parsers' versions. (A benchmark from outside the package: its
    module's file, and what of this package it reaches.)"""
    from olympiad_eval.core.code import module_file, reached

    src = Path(__file__).resolve().parents[2]
    own = module_file(module, src) or _outside(module)
    files = sorted({own, *(module_file(name, src) for name in reached([own], src))})
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    for name in PARSERS:
        try:
            digest.update(f"{name} {metadata.version(name)}\n".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{name} none\n".encode())
    return digest.hexdigest()


def _outside(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise InputError(f"a rule check's function is in {module}, which has no file: its code cannot be named")
    return Path(spec.origin)
