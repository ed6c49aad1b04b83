"""Command-line tools beside `dvc repro`: the pipeline files, the cost plan, comparisons, recovery, a fake server."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from olympiad_eval.core.records import InputError


def run_alone(module: str, doc: str, configure, execute, argv: list[str] | None = None) -> int:
    """A command's module run alone (`python -m olympiad_eval.cli.costs`): the subcommand's own
    arguments (`configure`) and work (`execute`), under the module's name and first paragraph."""
    parser = argparse.ArgumentParser(
        prog=f"python -m {module}",
        description=doc.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return execute(configure(parser).parse_args(argv))


def say(work: Callable[[], tuple[int, str]]) -> int:
    """A command's exit status, after it prints what `work` says (its status and text); input it
    refuses (`InputError`) is one `error:` line on stderr and status 2."""
    try:
        code, said = work()
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(said, end="")
    return code
