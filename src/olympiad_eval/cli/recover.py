"""Repair what a SIGKILL of `dvc repro` can leave behind in DVC's own state.

DVC rewrites `.dvc/tmp/rwlock` (which stage outputs are locked by which process) in place, by
truncating and writing the file. A kill between the two leaves it empty, and every later
`dvc repro` stops with "Unable to read RWLock-file ... JSON structure is corrupted" until the file
is removed by hand. Our outputs and the request cache are not at fault: only this file is.

`olympiad-eval recover` (or `python -m olympiad_eval.cli.recover`), run in the repository, removes
such a torn file, and only when no DVC process holds the repository's lock (`.dvc/tmp/lock`,
which `dvc repro` holds for its whole run): a live run's lock is never touched. A readable lock
file is left alone, since DVC itself releases the entries of processes that died. Exit status: 0
when nothing was wrong or it is repaired, 1 while a DVC process is running, 2 when this is not a DVC repository.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import zc.lockfile

RWLOCK = Path(".dvc/tmp/rwlock")
REPO_LOCK = Path(".dvc/tmp/lock")


def torn(rwlock: Path) -> bool:
    """Whether the lock file exists and is not a JSON object (empty, cut short, garbage)."""
    try:
        return not isinstance(json.loads(rwlock.read_text(encoding="utf-8")), dict)
    except FileNotFoundError:
        return False
    except (ValueError, UnicodeDecodeError):
        return True


def dvc_running(repo_lock: Path) -> bool:
    """Whether a DVC process holds the repository's lock, tried the way DVC takes it (zc.lockfile:
    an OS lock on the file, which dies with its process, so a killed run never holds it)."""
    try:
        lock = zc.lockfile.LockFile(str(repo_lock))
    except zc.lockfile.LockError:
        return True
    lock.close()
    return False


def recover(root: Path) -> tuple[int, str]:
    """Exit status and the one line to print, for the repository at `root`."""
    if not (root / ".dvc").is_dir():
        return 2, f"error: {root.resolve()} is not a DVC repository (no .dvc folder): run this in the repository"
    rwlock = root / RWLOCK
    if not torn(rwlock):
        return 0, "nothing to recover: DVC's lock files are readable"
    if dvc_running(root / REPO_LOCK):
        return 1, (
            f"{RWLOCK} is unreadable but a DVC process is running in this repository: "
            "let it finish (or stop it), then run this again"
        )
    rwlock.unlink()
    return 0, (
        f"removed {RWLOCK}, torn by a killed DVC process (no DVC process is running); "
        "`dvc repro` now resumes where the run stopped"
    )


def configure(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """No arguments: it repairs the repository it is run in."""
    return parser


def execute(args: argparse.Namespace) -> int:
    status, message = recover(Path.cwd())
    print(message, file=sys.stderr if status else sys.stdout)
    return status


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m olympiad_eval.cli.recover", description=__doc__.split("\n\n")[0])
    sys.exit(execute(configure(parser).parse_args(argv)))


if __name__ == "__main__":
    main()
