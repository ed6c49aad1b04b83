"""The pinned environments of third-party scorers (`scoring.environments`) and the command that
lists, builds and checks them (`cli.environments`): built from a folder of wheels with no package
index, as on an air-gapped machine. The wheel is made here, so the test needs no network."""

from __future__ import annotations

import base64
import hashlib
import logging
import re
import subprocess
import zipfile
from pathlib import Path

import pytest

from olympiad_eval.cli import environments as command
from olympiad_eval.core.records import InputError
from olympiad_eval.scoring.environments import FOLDER_VARIABLE, Environment

VALUE = "42 from the wheel"


def record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def make_wheel(folder: Path) -> Path:
    """A pure-Python wheel of one module, `oe_toy` 1.0, laid out as pip writes one."""
    files = {
        "oe_toy.py": f"VALUE = {VALUE!r}\n".encode(),
        "oe_toy-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: oe-toy\nVersion: 1.0\n",
        "oe_toy-1.0.dist-info/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = "".join(f"{name},{record_hash(data)},{len(data)}\n" for name, data in files.items())
    files["oe_toy-1.0.dist-info/RECORD"] = (record + "oe_toy-1.0.dist-info/RECORD,,\n").encode()
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / "oe_toy-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return wheel


@pytest.fixture
def toy(tmp_path, monkeypatch) -> tuple[Environment, Path]:
    """An environment pinning the toy wheel by its hash, built under tmp_path; and the folder holding
    the wheel. Any package index pip would ask is one that answers nothing."""
    wheel = make_wheel(tmp_path / "wheels")
    requirements = tmp_path / "requirements.txt"
    requirements.write_text(f"oe-toy==1.0 --hash=sha256:{hashlib.sha256(wheel.read_bytes()).hexdigest()}\n")
    module = tmp_path / "toy_judge.py"
    module.write_text("import oe_toy\n\n\ndef value():\n    return oe_toy.VALUE\n")
    monkeypatch.setenv(FOLDER_VARIABLE, str(tmp_path / "environments"))
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")  # refused at once: no index to fall back on
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "")
    return Environment("toy", requirements, module), wheel.parent


def test_an_environment_builds_from_a_folder_of_wheels_with_no_index_and_checks_its_hashes(toy, tmp_path, caplog):
    environment, wheels = toy
    assert environment.state() == "not built"
    carried = tmp_path / "carried"  # as taken to an air-gapped machine: `download DIR`, then `build --find-links DIR`
    command.download({environment: ["toy"]}, carried, find_links=wheels)
    assert [path.name for path in carried.iterdir()] == ["oe_toy-1.0-py3-none-any.whl"]
    with caplog.at_level(logging.INFO, logger="olympiad_eval.scoring.environments"):
        said = command.build({environment: ["toy"]}, find_links=carried, again=False)
        python = environment.python()  # ready: not built again
    assert said == f"toy: built in {environment.folder()}\n"
    [line] = [record.getMessage() for record in caplog.records if "building the environment" in record.getMessage()]
    assert "toy (oe-toy 1.0)" in line and str(environment.folder()) in line and f"the wheels in {carried}" in line
    assert environment.state() == "ready"
    done = subprocess.run([python, "-c", "import oe_toy; print(oe_toy.VALUE)"], capture_output=True, text=True)
    assert done.stdout.strip() == VALUE
    code, said = command.check({environment: ["toy"]})
    # the module, the wheel's metadata and what pip adds (INSTALLER, REQUESTED): as many as pip records
    assert code == 0 and re.fullmatch(r"toy: \d+ files of oe-toy 1\.0 checked: every file matches\n", said), said
    installed = next(environment.folder().glob("lib/python*/site-packages/oe_toy.py"))
    installed.write_text("VALUE = 'changed'\n")
    code, said = command.check({environment: ["toy"]})
    assert code == 1 and f"{installed}: its sha256 is not the one oe-toy 1.0's wheel records" in said


def test_a_build_that_finds_no_wheel_says_how_to_build_without_an_index(toy, tmp_path):
    environment, _ = toy
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError) as raised:
        environment.build(find_links=empty)
    said = str(raised.value)
    assert "the environment 'toy'" in said and "could not be built" in said
    assert "olympiad-eval environments download DIR" in said and "build --find-links DIR" in said
    assert environment.state() == "unfinished"  # no ready.json: the next use builds it again


def test_the_command_lists_the_benchmarks_environments_with_their_state(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv(FOLDER_VARIABLE, str(tmp_path))
    assert command.main(["list"]) == 0
    listed = capsys.readouterr().out
    [row] = [line for line in listed.splitlines() if line.startswith("olympiadbench-official")]
    assert "not built" in row and "sympy 1.12" in row and "olympiadbench" in row and str(tmp_path) in row
    assert command.main(["check", "--name", "olympiadbench-official"]) == 1
    assert "not built: `olympiad-eval environments build` builds it" in capsys.readouterr().out
    assert command.main(["build", "--name", "nothing-so-named"]) == 2
    assert "no environment nothing-so-named; the benchmarks' environments: olympiadbench-official" in (
        capsys.readouterr().err
    )
