"""Command-line tools beside `dvc repro`: the pipeline files, the cost plan, comparisons, recovery, a fake server."""

from __future__ import annotations

import argparse


def run_alone(module: str, doc: str, configure, execute, argv: list[str] | None = None) -> int:
    """A command's module run alone (`python -m olympiad_eval.cli.costs`): the subcommand's own
    arguments (`configure`) and work (`execute`), under the module's name and first paragraph."""
    parser = argparse.ArgumentParser(
        prog=f"python -m {module}",
        description=doc.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return execute(configure(parser).parse_args(argv))
