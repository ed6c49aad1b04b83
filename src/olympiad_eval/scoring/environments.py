"""Pinned Python environments of their own, for protocols whose checks must run other versions of
packages than the project's (OlympiadBench's official scorer: sympy 1.12 with its antlr 4.11 parser,
where this project pins sympy 1.14 and antlr 4.9.3, which hydra needs). A check of such a protocol
names its environment (`checks.ProtocolCheck.environment`) and the check workers run there
(`pool.CheckPool`), loading the protocol's module by its file.

An environment is built once per machine from its requirements file (every package pinned with its
hash: `pip install --require-hashes --no-deps --only-binary :all:`), in a virtual environment of this
interpreter under the user's cache folder, named by the requirements' hash (a changed pin is a new
folder). A file lock serialises concurrent first uses (several stages, test workers); `ready.json`,
written last, marks a finished build, so an interrupted one is redone, never half used. Building
needs the package index pip is configured with (about 6 MB, half a minute); on a machine without it,
`OLYMPIAD_EVAL_ENVIRONMENTS` names a folder holding environments built elsewhere.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from olympiad_eval.core.config import user_cache
from olympiad_eval.core.records import InputError

FOLDER_VARIABLE = "OLYMPIAD_EVAL_ENVIRONMENTS"  # where environments are built (default: the user's cache folder)


@dataclass(frozen=True)
class Environment:
    """A pinned environment: its `name`, the `requirements` it is built from, and the `module` (a file
    that imports nothing of the project) whose functions its checks call."""

    name: str
    requirements: Path
    module: Path

    def folder(self) -> Path:
        digest = hashlib.sha256(self.requirements.read_bytes()).hexdigest()[:12]
        root = Path(os.environ.get(FOLDER_VARIABLE) or user_cache("environments"))
        return root / f"{self.name}-{digest}"

    def python(self) -> Path:
        """The environment's interpreter, building the environment on first use."""
        venv = self.folder()
        if not (venv / "ready.json").exists():
            with _locked(venv.with_name(venv.name + ".lock")):
                if not (venv / "ready.json").exists():  # another process may have built it meanwhile
                    self._build(venv)
        return _python_of(venv)

    def _build(self, venv: Path) -> None:
        shutil.rmtree(venv, ignore_errors=True)  # what an interrupted build left
        pip = [str(_python_of(venv)), "-m", "pip", "install", "--disable-pip-version-check", "--no-input"]
        for step in (
            [sys.executable, "-m", "venv", str(venv)],
            [*pip, "--require-hashes", "--no-deps", "--only-binary", ":all:", "-r", str(self.requirements)],
        ):
            try:
                subprocess.run(step, check=True, capture_output=True, text=True)
            except (subprocess.CalledProcessError, OSError) as error:
                said = " ".join((getattr(error, "stderr", "") or str(error)).strip().splitlines()[-3:])
                raise InputError(
                    f"the environment '{self.name}' ({self.requirements}) could not be built in {venv}: {said}; it is "
                    f"built once, from the package index; without one, set {FOLDER_VARIABLE} to a folder holding it "
                    "built elsewhere"
                ) from None
        (venv / "ready.json").write_text(json.dumps({"requirements": self.requirements.read_text()}))


def _python_of(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


@contextlib.contextmanager
def _locked(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
