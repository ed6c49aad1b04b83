"""olympiad-eval: what a researcher does beside `dvc repro`, as one command.

    olympiad-eval check          the plan: every name a config, every release there, the pipelines current
    olympiad-eval plan           write the pipeline files (dvc.yaml) from the plan
    olympiad-eval costs          what the plan would send and cost, before any request
    olympiad-eval leaderboard    a row per model and experiment, a column per suite
    olympiad-eval compare        two runs compared; judges' agreement
    olympiad-eval report         the report's index (--open: in the browser)
    olympiad-eval cache          the request cache: status, purge
    olympiad-eval environments   the official scorers' pinned environments: list, build (--find-links), check
    olympiad-eval recover        after a killed `dvc repro`: DVC's torn lock file removed

Each runs in the repository's root, as the stages do. `olympiad-eval COMMAND --help` says more;
`python -m olympiad_eval.cli COMMAND` is the same, and each command's module runs alone too
(`python -m olympiad_eval.cli.costs`).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import webbrowser
from pathlib import Path

from olympiad_eval.cli import cache, compare, costs, environments, leaderboard, plan, recover
from olympiad_eval.core.layout import OUTPUTS, Layout
from olympiad_eval.core.plan import check_plan
from olympiad_eval.core.records import InputError

PLAN, CONF = Path("params.yaml"), Path("conf")


# ---------------------------------------------------------------- check


def configure_check(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("--plan", type=Path, default=PLAN, help=f"the run plan (default {PLAN})")
    return parser


def ignored_by_git(folder: str) -> bool:
    """Whether git ignores a folder (outside a git repository, or without git: no)."""
    try:
        done = subprocess.run(["git", "check-ignore", "-q", folder], capture_output=True)
    except FileNotFoundError:
        return False
    return done.returncode == 0


def execute_check(args: argparse.Namespace) -> int:
    """The checks of the plan's check stage (stages/check.py), the pipeline files generated from the
    plan, and a note for each release that a queued experiment would not see."""
    try:
        checked = check_plan(args.plan, CONF)
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    stale = plan.stale(Path.cwd()) if args.plan == PLAN else []
    for problem in stale:
        print(f"error: {problem}: run `olympiad-eval plan`", file=sys.stderr)
    for benchmark, folder in checked["releases"].items():
        if ignored_by_git(folder):
            print(
                f"note: the release of {benchmark}, {folder}, is ignored by git: `dvc exp run --queue` and "
                f"`--temp` see it only with `-C {folder}`"
            )
    counts = ", ".join(f"{key} {len(checked[key])}" for key in ("models", "judges", "benchmarks", "suites"))
    print(f"{args.plan}: {counts}; every name is a config of {CONF}/, every release folder is there")
    return 1 if stale else 0


# ---------------------------------------------------------------- report


def configure_report(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("--open", action="store_true", help="open it in the browser")
    parser.add_argument("--outputs", default=OUTPUTS, help=f"the outputs folder (default {OUTPUTS})")
    return parser


def execute_report(args: argparse.Namespace) -> int:
    index = Layout(args.outputs).report_index().resolve()
    if not index.is_file():
        print(f"error: no report at {index} yet: `dvc repro` writes it", file=sys.stderr)
        return 2
    print(index)
    if args.open and not webbrowser.open(index.as_uri()):
        print(f"error: no browser to open it: open {index.as_uri()}", file=sys.stderr)
        return 1
    return 0


# ---------------------------------------------------------------- the command line


class _Command:
    def __init__(self, summary: str, configure, execute, description: str | None = None):
        self.summary, self.configure, self.execute = summary, configure, execute
        self.description = description or summary


def _module(summary: str, module) -> _Command:
    return _Command(summary, module.configure, module.execute, module.__doc__)


COMMANDS = {
    "check": _Command(
        "check the plan: every name a config of conf/ (did you mean ...?), every release there, pipelines current",
        configure_check,
        execute_check,
    ),
    "plan": _module("write the pipeline files (dvc.yaml) from the plan and the templates", plan),
    "costs": _module("the cost plan: what the plan would send and cost, before any request", costs),
    "leaderboard": _module("a row per model (and experiment), a column per suite: score [95%% interval]", leaderboard),
    "compare": _module("two runs of a suite compared (paired tests, flips); judges' agreement", compare),
    "report": _Command("the report's index: its path, or --open it", configure_report, execute_report),
    "cache": _module("the request cache: status, purge", cache),
    "environments": _module(
        "the official scorers' pinned environments: list, build ahead of time (--find-links DIR), check", environments
    ),
    "recover": _module("remove DVC's lock file torn by a killed `dvc repro`", recover),
}


def arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="olympiad-eval", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, command in COMMANDS.items():
        sub = commands.add_parser(
            name,
            help=command.summary,
            description=command.description,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        command.configure(sub).set_defaults(execute=command.execute)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = arguments().parse_args(argv)
    sys.exit(args.execute(args))


if __name__ == "__main__":
    main()
