"""The request cache (every model and judge reply, outside the DVC outputs), with the rule verdicts
kept beside it (`scoring.verdicts`): where it is, how many replies it holds, and removing it.

    olympiad-eval cache status           its path, kind, replies and size
    olympiad-eval cache purge --yes      removes it: every later request is sent (and paid) again

Its path is the stages' own `paths.request_cache` (conf/common.yaml: the environment variable
OLYMPIAD_EVAL_REQUEST_CACHE, else `requests.sqlite` in the user's cache folder), or `--cache PATH`.
Purge only while no stage runs: a stage holding it open would keep writing to a removed file.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from omegaconf import OmegaConf

from olympiad_eval.cli import run_alone, say
from olympiad_eval.core import config  # noqa: F401 (registers the resolver conf/common.yaml names)
from olympiad_eval.core.records import InputError
from olympiad_eval.llm.cache import RequestCache
from olympiad_eval.scoring.verdicts import store_path

COMMON = Path("conf") / "common.yaml"
SQLITE_SIDES = ("-wal", "-shm", "-journal")  # SQLite's own files beside the database


def configured_path(common: Path = COMMON) -> Path:
    """The request cache the stages use, as conf/common.yaml resolves it here."""
    if not common.is_file():
        raise InputError(f"no {common} here: run this from the repository's root, or name the cache with --cache")
    return Path(OmegaConf.load(common).paths.request_cache).expanduser()


def files_of(path: Path) -> list[Path]:
    """The files that make the cache: a SQLite file and its journals, or a folder of replies."""
    if path.is_dir():
        return [file for file in path.rglob("*") if file.is_file()]
    return [file for file in (path, *(path.with_name(path.name + side) for side in SQLITE_SIDES)) if file.is_file()]


def size_text(size: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024


def status(path: Path) -> str:
    if not path.exists():
        return f"request cache: {path} (none yet: the first request sent creates it)\n"
    kind = "a folder of replies" if path.is_dir() else "a SQLite file"
    cache = RequestCache(path)
    try:
        replies = len(cache)
    finally:
        cache.close()
    size = sum(file.stat().st_size for file in files_of(path))
    said = f"request cache: {path} ({kind})\nreplies: {replies:,}\nsize: {size_text(size)}\n"
    verdicts = store_path(path)
    if verdicts.exists():
        kept = sum(file.stat().st_size for file in files_of(verdicts))
        said += f"rule verdicts beside it: {verdicts} ({size_text(kept)})\n"
    return said


def purge(path: Path, confirmed: bool) -> tuple[int, str]:
    if not path.exists():
        return 0, f"nothing to purge: there is no request cache at {path}\n"
    said = status(path)
    if not confirmed:
        return 1, said + "would remove it, and every later request would be sent (and paid) again: add --yes\n"
    for cache in (path, store_path(path)):  # the replies, and the rule verdicts kept beside them
        if cache.is_dir():
            shutil.rmtree(cache)
        else:
            for file in files_of(cache):
                file.unlink()
    return 0, said + f"removed {path}\n"


def configure(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    actions = parser.add_subparsers(dest="action", required=True, metavar="{status,purge}")
    status_parser = actions.add_parser("status", help="its path, kind, replies and size")
    purge_parser = actions.add_parser("purge", help="remove it (with --yes): later requests are sent again")
    purge_parser.add_argument("--yes", action="store_true", help="remove it; without, say what would be removed")
    for action in (status_parser, purge_parser):
        action.add_argument("--cache", type=Path, help="this cache, not conf/common.yaml's paths.request_cache")
    return parser


def execute(args: argparse.Namespace) -> int:
    return say(lambda: act(args, args.cache or configured_path()))


def act(args: argparse.Namespace, path: Path) -> tuple[int, str]:
    return (0, status(path)) if args.action == "status" else purge(path, args.yes)


def main(argv: list[str] | None = None) -> int:
    return run_alone("olympiad_eval.cli.cache", __doc__, configure, execute, argv)


if __name__ == "__main__":
    sys.exit(main())
