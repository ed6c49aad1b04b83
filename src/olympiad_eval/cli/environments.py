"""The pinned environments that third-party scorers run in (OlympiadBench's official scorer: sympy
1.12 with antlr 4.11), each built once per machine in the user's cache folder (or the folder
OLYMPIAD_EVAL_ENVIRONMENTS names) the first time a check needs it:

    olympiad-eval environments list                        each with its packages, folder and state
    olympiad-eval environments build                       build them now, from the package index
    olympiad-eval environments build --find-links DIR      from a folder of wheels alone (no index)
    olympiad-eval environments download DIR                their wheels, hash-checked, into DIR
    olympiad-eval environments check                       every installed file against its wheel's hash

For a machine without the package index (an air-gapped cluster): `download DIR` where the index is,
carry DIR over, then `build --find-links DIR` there. The environments are those of every benchmark
kind of this package and of conf/benchmark/ (`Benchmark.environments`); `--name` picks one.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

import yaml
from tabulate import tabulate

from olympiad_eval.benchmarks import known_kinds, plugin
from olympiad_eval.cli import run_alone, say
from olympiad_eval.core.records import InputError
from olympiad_eval.scoring.environments import Environment

CONF = Path("conf") / "benchmark"


def configured_kinds(conf: Path = CONF) -> list[str]:
    """The benchmark kinds of this package, and those conf/benchmark/ names (a benchmark of another
    package: `kind: mypackage.mybench`)."""
    named = []
    for path in sorted(conf.glob("*.yaml")) if conf.is_dir() else []:
        kind = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("kind")
        if isinstance(kind, str):
            named.append(kind)
    return list(dict.fromkeys([*known_kinds(), *named]))


def environments_of(kinds: list[str]) -> dict[Environment, list[str]]:
    """Each environment of these benchmark kinds, with the kinds that use it."""
    found: dict[Environment, list[str]] = {}
    for kind in kinds:
        for environment in plugin(kind).environments:
            found.setdefault(environment, []).append(kind)
    return found


def listing(found: dict[Environment, list[str]]) -> str:
    rows = [
        (env.name, env.state(), env.packages_text(), ", ".join(kinds), env.folder()) for env, kinds in found.items()
    ]
    return tabulate(rows, headers=("environment", "state", "packages", "for", "folder"), tablefmt="simple") + "\n"


def build(found, find_links: Path | None, again: bool) -> str:
    lines = []
    for env in found:
        was = env.state()
        folder = env.build(find_links, again=again)
        lines.append(f"{env.name}: {'built' if again or was != 'ready' else 'ready already'} in {folder}")
    return "\n".join(lines) + "\n"


def download(found, folder: Path, find_links: Path | None) -> str:
    for env in found:
        env.download(folder, find_links)
    wheels = sorted(path.name for path in folder.glob("*.whl"))
    return f"{folder}: {len(wheels)} wheels ({', '.join(wheels)}); `build --find-links {folder}` builds from them\n"


def check(found) -> tuple[int, str]:
    lines, failed = [], False
    for env in found:
        files, problems = env.verify()
        failed = failed or bool(problems)
        said = f"{len(problems)} problem{'s' * (len(problems) != 1)}" if problems else "every file matches"
        lines.append(f"{env.name}: {files:,} files of {env.packages_text()} checked: {said}")
        lines += [f"  {problem}" for problem in problems]
    return (1 if failed else 0), "\n".join(lines) + "\n"


def configure(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    actions = parser.add_subparsers(dest="action", required=True, metavar="{list,build,download,check}")
    listed = actions.add_parser("list", help="each environment with its packages, folder and state")
    built = actions.add_parser("build", help="build them now (once per machine)")
    built.add_argument("--find-links", type=Path, metavar="DIR", help="from this folder of wheels alone: no index")
    built.add_argument("--again", action="store_true", help="build anew even where one is ready")
    fetched = actions.add_parser(
        "download", help="their wheels, hash-checked, into a folder (for `build --find-links`)"
    )
    fetched.add_argument("folder", type=Path, metavar="DIR")
    fetched.add_argument("--find-links", type=Path, metavar="DIR", help="from this folder of wheels alone: no index")
    checked = actions.add_parser("check", help="every installed file against the hash its wheel records")
    for action in (listed, built, fetched, checked):
        action.add_argument("--name", action="append", help="only this environment (again for more)")
    return parser


def execute(args: argparse.Namespace) -> int:
    return say(lambda: act(args, chosen(environments_of(configured_kinds()), args.name)))


def chosen(found: dict, names: list[str] | None) -> dict:
    """The benchmarks' environments named (all where none is); a name of none refused."""
    if not names:
        return found
    unknown = sorted(set(names) - {env.name for env in found})
    if unknown:
        known = ", ".join(env.name for env in found) or "none"
        raise InputError(f"no environment {', '.join(unknown)}; the benchmarks' environments: {known}")
    return {env: kinds for env, kinds in found.items() if env.name in names}


def act(args: argparse.Namespace, found: dict) -> tuple[int, str]:
    if args.action == "list":
        return 0, listing(found)
    if args.action == "build":
        logging.basicConfig(level=logging.INFO, format="%(message)s")  # the line each build says itself
        return 0, build(found, args.find_links, args.again)
    if args.action == "download":
        return 0, download(found, args.folder, args.find_links)
    return check(found)


def main(argv: list[str] | None = None) -> int:
    return run_alone("olympiad_eval.cli.environments", __doc__, configure, execute, argv)


if __name__ == "__main__":
    sys.exit(main())
