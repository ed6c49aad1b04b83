"""A `dvc repro` killed while DVC rewrote `.dvc/tmp/rwlock` leaves it empty; `olympiad_eval.cli.recover`
repairs that, and never while a DVC process runs. Real `dvc` on a one-stage repository."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import zc.lockfile

from olympiad_eval.cli.recover import torn

BIN = Path(sys.executable).parent


def run(repo: Path, *command: str) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=repo, capture_output=True, text=True, timeout=120)


def recover(repo: Path) -> subprocess.CompletedProcess:
    return run(repo, sys.executable, "-m", "olympiad_eval.cli.recover")


@pytest.fixture
def repo(tmp_path) -> Path:
    assert run(tmp_path, str(BIN / "dvc"), "init", "--no-scm", "-q").returncode == 0
    (tmp_path / "dvc.yaml").write_text("stages:\n  hello:\n    cmd: echo hello > out.txt\n    outs: [out.txt]\n")
    (tmp_path / ".dvc/tmp").mkdir(exist_ok=True)
    return tmp_path


def test_a_torn_rwlock_stops_dvc_until_recovered(repo):
    rwlock = repo / ".dvc/tmp/rwlock"
    rwlock.write_text("")
    stuck = run(repo, str(BIN / "dvc"), "repro")
    assert stuck.returncode != 0 and "RWLock" in stuck.stderr + stuck.stdout  # the state is real: DVC is stuck

    repaired = recover(repo)
    assert repaired.returncode == 0 and "removed .dvc/tmp/rwlock" in repaired.stdout, repaired
    assert not rwlock.exists()
    resumed = run(repo, str(BIN / "dvc"), "repro")
    assert resumed.returncode == 0, resumed.stderr
    assert (repo / "out.txt").read_text() == "hello\n"


@pytest.mark.parametrize(
    "text, is_torn",
    [("", True), ('{"read": {}, "wri', True), ("\x00\x00", True), ("[]", True), ('{"read": {}, "write": {}}', False)],
)
def test_what_counts_as_torn(tmp_path, text, is_torn):
    (tmp_path / "rwlock").write_text(text)
    assert torn(tmp_path / "rwlock") is is_torn
    assert torn(tmp_path / "absent") is False


def test_a_running_dvc_keeps_its_lock_file(repo):
    rwlock = repo / ".dvc/tmp/rwlock"
    rwlock.write_text("")
    held = zc.lockfile.LockFile(str(repo / ".dvc/tmp/lock"))  # as `dvc repro` holds it while it runs
    try:
        refused = recover(repo)
    finally:
        held.close()
    assert refused.returncode == 1 and "a DVC process is running" in refused.stderr
    assert rwlock.exists() and rwlock.read_text() == ""


def test_a_readable_rwlock_is_left_alone(repo):
    rwlock = repo / ".dvc/tmp/rwlock"
    rwlock.write_text('{"read": {}, "write": {"out.txt": {"pid": 999999, "cmd": "dvc repro"}}}')
    result = recover(repo)
    assert result.returncode == 0 and "nothing to recover" in result.stdout
    assert rwlock.exists()


def test_outside_a_dvc_repository(tmp_path):
    result = recover(tmp_path)
    assert result.returncode == 2 and "not a DVC repository" in result.stderr
