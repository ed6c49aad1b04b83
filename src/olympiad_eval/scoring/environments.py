"""Pinned Python environments of their own, for protocols whose checks must run other versions of
packages than the project's (OlympiadBench's official scorer: sympy 1.12 with its antlr 4.11 parser,
where this project pins sympy 1.14 and antlr 4.9.3, which hydra needs). A check of such a protocol
names its environment (`checks.ProtocolCheck.environment`) and the check workers run there
(`pool.CheckPool`), loading the protocol's module by its file; a benchmark lists the environments
its protocols use (`Benchmark.environments`), which `olympiad-eval environments` lists, builds
ahead of time and checks.

An environment is built once per machine from its requirements file (every package pinned with its
hash: `pip install --require-hashes --no-deps --only-binary :all:`), in a virtual environment of this
interpreter under the user's cache folder, named by the requirements' hash (a changed pin is a new
folder). A file lock serialises concurrent first uses (several stages, test workers); `ready.json`,
written last, marks a finished build, so an interrupted one is redone, never half used. Building
needs the package index pip is configured with (a few MB of wheels, half a minute), or a folder of
those wheels (`find_links`: no index at all; `olympiad-eval environments download DIR` fills one);
`OLYMPIAD_EVAL_ENVIRONMENTS` moves every environment to another folder (one shared by a cluster's
machines).
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from olympiad_eval.core.config import user_cache
from olympiad_eval.core.records import InputError

FOLDER_VARIABLE = "OLYMPIAD_EVAL_ENVIRONMENTS"  # where environments are built (default: the user's cache folder)
READY = "ready.json"  # written last by a build: its absence marks a folder never built, or an interrupted build
PIN = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)")  # `sympy==1.12 --hash=...`

log = logging.getLogger(__name__)


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

    def pins(self) -> list[tuple[str, str]]:
        """(package, version) of each line of the requirements, in their order."""
        lines = self.requirements.read_text(encoding="utf-8").splitlines()
        return [(found.group(1), found.group(2)) for line in lines for found in [PIN.match(line)] if found]

    def packages_text(self) -> str:
        return ", ".join(f"{name} {version}" for name, version in self.pins())

    def state(self) -> str:
        """`ready`, `not built`, or `unfinished` (a build that was interrupted: the next use redoes it)."""
        venv = self.folder()
        return "ready" if (venv / READY).exists() else "unfinished" if venv.exists() else "not built"

    def python(self) -> Path:
        """The environment's interpreter, building the environment on first use."""
        if not (self.folder() / READY).exists():
            self.build()
        return _python_of(self.folder())

    def build(self, find_links: Path | None = None, again: bool = False) -> Path:
        """Build the environment unless it is ready (`again`: build it anew), from the package index pip
        is configured with or, with `find_links`, from that folder of wheels alone (no index)."""
        venv = self.folder()
        with _locked(venv.with_name(venv.name + ".lock")):
            if again or not (venv / READY).exists():  # another process may have built it meanwhile
                source = f"the wheels in {find_links} (no index)" if find_links else "the package index"
                log.info(
                    "building the environment %s (%s) in %s from %s: once per machine, half a minute",
                    self.name,
                    self.packages_text(),
                    venv,
                    source,
                )
                self._build(venv, find_links)
        return venv

    def _build(self, venv: Path, find_links: Path | None) -> None:
        shutil.rmtree(venv, ignore_errors=True)  # what an interrupted build left
        pip = [str(_python_of(venv)), "-m", "pip", "install", *_PIP_QUIET, *_source(find_links)]
        for step in (
            [sys.executable, "-m", "venv", str(venv)],
            [*pip, "--require-hashes", "--no-deps", "--only-binary", ":all:", "-r", str(self.requirements)],
        ):
            _run(step, f"the environment '{self.name}' ({self.requirements}) could not be built in {venv}")
        (venv / READY).write_text(json.dumps({"requirements": self.requirements.read_text()}))

    def download(self, folder: Path, find_links: Path | None = None) -> None:
        """The environment's wheels, checked against their hashes, into `folder`: what `build` needs
        on a machine without the index (`find_links`: from another folder of wheels)."""
        folder.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "pip", "download", *_PIP_QUIET, *_source(find_links)]
        command += ["--require-hashes", "--no-deps", "--only-binary", ":all:", "-d", str(folder)]
        _run([*command, "-r", str(self.requirements)], f"the wheels of '{self.name}' could not be downloaded")

    def verify(self) -> tuple[int, list[str]]:
        """(files checked, problems): the environment is ready, built from the requirements as they
        are now, has each pinned package at its version, and every file of those packages has the
        sha256 its wheel's RECORD gives (pip checked each wheel's own hash when it installed it)."""
        venv, problems = self.folder(), []
        if not (venv / READY).exists():
            return 0, [f"{venv}: {self.state()}: `olympiad-eval environments build` builds it"]
        built = json.loads((venv / READY).read_text()).get("requirements")
        if built != self.requirements.read_text():
            problems.append(f"{venv / READY}: built from other requirements than {self.requirements}")
        checked, sites = 0, [str(site) for site in _site_packages(venv)]
        for name, version in self.pins():
            found = [dist for dist in metadata.distributions(name=name, path=sites) if dist.version == version]
            if not found or found[0].files is None:
                problems.append(f"{venv}: {name} {version} is not installed")
                continue
            for file in found[0].files:  # its RECORD's rows that have a hash (not RECORD itself, nor .pyc files)
                if file.hash is None or file.hash.mode != "sha256":
                    continue
                checked += 1
                path = Path(found[0].locate_file(file))
                if not path.is_file():
                    problems.append(f"{path}: missing ({name} {version})")
                elif _record_hash(path) != file.hash.value:
                    problems.append(f"{path}: its sha256 is not the one {name} {version}'s wheel records")
        return checked, problems


_PIP_QUIET = ("--disable-pip-version-check", "--no-input", "--quiet")


def _source(find_links: Path | None) -> list[str]:
    """pip's options for where packages come from: its configured index, or a folder of wheels alone."""
    return ["--no-index", "--find-links", str(Path(find_links).resolve())] if find_links else []


def _run(command: list[str], failed: str) -> None:
    try:
        subprocess.run(command, check=True, capture_output=True, text=True)
    except (subprocess.CalledProcessError, OSError) as error:
        said = " ".join((getattr(error, "stderr", "") or str(error)).strip().splitlines()[-3:])
        raise InputError(
            f"{failed}: {said}; an environment is built once, from the package index pip is configured with; "
            f"without one, `olympiad-eval environments download DIR` on a machine that has it, then "
            f"`olympiad-eval environments build --find-links DIR` here (or set {FOLDER_VARIABLE} to a folder "
            "of environments built on this machine)"
        ) from None


def _python_of(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _site_packages(venv: Path) -> list[Path]:
    return [*venv.glob("lib/python*/site-packages"), venv / "Lib" / "site-packages"]


def _record_hash(path: Path) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(path.read_bytes()).digest()).rstrip(b"=").decode()


@contextlib.contextmanager
def _locked(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
