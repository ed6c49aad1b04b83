"""The code's style and the Python it needs: ruff's lint and format check pass on every file, and
the oldest Python the package says it runs on is the one its code is written for."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib

import pytest

from tests.support import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=["lint", "format"])
def test_ruff_passes(command):
    result = subprocess.run(
        [sys.executable, "-m", "ruff", *command, "--no-cache", "."], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


def test_the_python_floor_is_the_one_the_code_and_its_linter_target():
    """`requires-python` names the oldest Python supported; ruff checks the code for that version,
    and the suite runs there (CI's interpreter is that version: `.ci/run` uses the machine's python3)."""
    floor = tuple(
        int(part) for part in re.fullmatch(r">=(\d+)\.(\d+)", PYPROJECT["project"]["requires-python"]).groups()
    )
    assert PYPROJECT["tool"]["ruff"]["target-version"] == f"py{floor[0]}{floor[1]}"
    assert sys.version_info[:2] >= floor
