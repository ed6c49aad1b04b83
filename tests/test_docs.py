"""Every command that README.md and docs/*.md show is parsed against the real command lines and
configs: a page cannot keep a command, option, config name, module or file that a change renamed.

The commands are the lines of a fenced `bash`/`sh`/`shell`/`console` block, the `$ `-prompted
lines of any other block, and the inline code that starts with `python`, `python3`, `dvc`,
`olympiad-eval` or `pip`; a line is split at `&&`, `||`, `;` and `|`. Each is checked as far as can be done in a
moment, without running anything that writes or sends:

- `python -m olympiad_eval.<...>` (and `tests.<...>`): the module has a command line, and its own
  argparse parser parses the arguments shown (in this process: the parser is stopped as soon as it
  has parsed); a module without a parser takes exactly the arguments listed in `WITHOUT_PARSER`.
- `olympiad-eval COMMAND ...`: the package's own command line (`olympiad_eval.cli.__main__`, the
  script pyproject.toml installs) parses it, the command's arguments included.
- `python stages/<stage>.py OVERRIDES`: the config names chosen are files of their groups
  (`stages.runner.check_config_names`, as the stage itself checks them) and the overrides compose
  with the stage's config (a key that does not exist fails, as it would in the stage).
- `python bench/<script>.py ARGS`: the script's argparse parser parses the arguments.
- `python -m pytest ARGS`: the paths exist. `python -c CODE`: the code compiles.
- `dvc ...`: DVC's own parser parses it (the subcommand and its options); a target
  `pipelines/<family>/<stage>/dvc.yaml:<stage>@<key>` names a file and one of its stages, and `-S FILE:KEY=...`
  a file that exists.
- `pip install -e ".[EXTRA]"`: pyproject.toml declares the extra.
- Other programs (`cat`, `git`, `export`, ...; `NOT_CHECKED`) are not run, and one this test does
  not know fails until it is taught; the paths they name are checked with every path below.

Beside the commands: every path a page names exists (`conf/...`, `src/...`, `docs/...`, `bench/...`
from the repository's root; `benchmarks/...`, `scoring/...` and the other rooms of the package from
`src/olympiad_eval/`), every dotted name (`olympiad_eval.x.y`) imports,
every local link and its heading anchor resolves, and the package's map in docs/layout.md names
every module of the package and nothing that does not exist.

Placeholders: a `<name>` or `...` in a path or a value stands for what the reader fills in, and
is not checked. A fenced block right after the line `<!-- illustrative -->` (its config names are
examples, such as `model=a,b,c`) is checked for its programs, scripts, modules and options, not for
its config names. Use it sparingly: a command a reader can run as shown is better.

A failure names the page, the line and the command.
"""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import importlib
import importlib.util
import io
import logging
import re
import runpy
import shlex
import sys
import tomllib
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

ILLUSTRATIVE = "<!-- illustrative -->"
SHELL_BLOCKS = {"bash", "sh", "shell", "console"}
COMMAND_STARTS = ("python ", "python3 ", "dvc ", "pip ", "olympiad-eval ")
# Programs a page may show that are not this project's to check (their paths are, with all paths).
NOT_CHECKED = {".", "source", "cat", "cd", "export", "git", "ls", "mv", "cp", "rm", "mkdir", "unzip", "apt-get", "ruff"}
# Modules run with `python -m` that have no argparse parser: the argument lists each takes.
WITHOUT_PARSER = {
    "tests.test_protocol_versions": {()},
}
# Files a page asks the reader to write (a model of their own, a smoke-test suite): not in the repository.
WRITTEN_BY_THE_READER = {"conf/model/my-model.yaml", "conf/suite/hipho_smoke.yaml"}
# What a path a page names may start with, and where it is looked for.
PATH = re.compile(
    r"(?<![\w./~$-])((?:conf|src|docs|bench|stages|tests|pipelines|data/sample|data/replay|\.ci|\.dvc/plots"
    r"|olympiad_eval|benchmarks|scoring|core|llm|report|cli)/[^\s`'\"()\[\]{},;:|#]*)"
)
ROOMS = {"benchmarks", "scoring", "core", "llm", "report", "cli", "stages"}
DOTTED = re.compile(r"(?<![\w./-])((?:olympiad_eval|tests)(?:\.[A-Za-z_]\w*)+)")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


@dataclass(frozen=True)
class Command:
    page: Path
    line: int
    text: str
    illustrative: bool = False

    def __str__(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}: `{self.text}`"


@dataclass(frozen=True)
class Code:
    """A piece of a page that is code: a fenced block's line or an inline code span."""

    page: Path
    line: int
    text: str


def placeholder(text: str) -> bool:
    return bool(re.search(r"<[^<>\s]*>|\.\.\.|\{[^{}]*\}", text))


# ---------------------------------------------------------------- reading the pages


def fences(page: Path) -> tuple[list[tuple[int, str, list[tuple[int, str]], bool]], list[str]]:
    """The fenced blocks of a page, each as (its first line, its info string, its lines with their
    numbers, whether it is marked illustrative), and the page's lines with the blocks blanked."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks, prose, block, previous = [], list(lines), None, ""
    for number, line in enumerate(lines, 1):
        fence = re.match(r"^ {0,3}(`{3,}|~{3,})\s*([\w+-]*)", line)
        if block is None and fence:
            block = (number, fence[2].lower(), [], previous.strip() == ILLUSTRATIVE, fence[1])
            prose[number - 1] = ""
        elif block is not None:
            prose[number - 1] = ""
            if line.strip().startswith(block[4]) and not line.strip().strip(block[4][0]):
                blocks.append(block[:4])
                block = None
            else:
                block[2].append((number, line))
        if line.strip():
            previous = line
    return blocks, prose


def inline_code(page: Path) -> list[Code]:
    """The inline code spans outside fenced blocks (a span may wrap onto the next line)."""
    _, prose = fences(page)
    text = "\n".join(prose)
    spans = []
    for match in re.finditer(r"(?<!`)`([^`]+?)`(?!`)", text):
        if "\n\n" not in match[1]:
            spans.append(Code(page, text.count("\n", 0, match.start()) + 1, " ".join(match[1].split())))
    return spans


def code_of(page: Path) -> list[Code]:
    blocks, _ = fences(page)
    return [Code(page, number, line) for _, _, lines, _ in blocks for number, line in lines] + inline_code(page)


def commands_of(page: Path) -> list[Command]:
    found = []
    blocks, _ = fences(page)
    for _, info, lines, illustrative in blocks:
        logical: list[tuple[int, str]] = []
        for number, line in lines:
            if logical and logical[-1][1].endswith("\\"):
                logical[-1] = (logical[-1][0], logical[-1][1][:-1] + " " + line.strip())
            else:
                logical.append((number, line.strip()))
        for number, line in logical:
            if line.startswith("$ "):
                line = line[2:]
            elif info not in SHELL_BLOCKS or info == "console" or not line or line.startswith("#"):
                continue
            found += [Command(page, number, part, illustrative) for part in split_line(line)]
    for span in inline_code(page):
        if span.text.startswith(COMMAND_STARTS):
            found += [Command(page, span.line, part) for part in split_line(span.text)]
    return found


def split_line(line: str) -> list[str]:
    """A shell line's commands, each as text (comments dropped)."""
    words = shlex.split(line, comments=True)
    parts, part = [], []
    for word in words:
        if word in ("&&", "||", ";", "|"):
            parts.append(part)
            part = []
        else:
            part.append(word)
    parts.append(part)
    return [shlex.join(part) for part in parts if part]


def argv_of(command: Command) -> list[str]:
    argv = shlex.split(command.text)
    while argv and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", argv[0]):  # VAR=value command ...
        argv = argv[1:]
    return argv


ALL_COMMANDS = [command for page in PAGES for command in commands_of(page)]


# ---------------------------------------------------------------- checking one command


class Refused(Exception):
    """Why a command does not hold."""


class _Parsed(Exception):
    pass


def parsed_by_argparse(run: Callable[[], object], argv: list[str]) -> None:
    """Run an entry point whose command line is an argparse parser, stopping it as soon as the
    parser has parsed `argv` (`sys.argv[1:]`), so that nothing after the parsing runs."""
    original = argparse.ArgumentParser.parse_args

    def parse_then_stop(self, args=None, namespace=None):
        raise _Parsed(original(self, args, namespace))

    said = io.StringIO()
    with (
        mock.patch.object(argparse.ArgumentParser, "parse_args", parse_then_stop),
        mock.patch.object(sys, "argv", argv),
        contextlib.redirect_stdout(io.StringIO()),
        contextlib.redirect_stderr(said),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore", RuntimeWarning)  # runpy: the module was imported before
        try:
            run()
        except _Parsed:
            return
        except SystemExit as exit:
            if exit.code in (0, None):  # --help
                return
            raise Refused(said.getvalue().strip().splitlines()[-1] if said.getvalue().strip() else exit) from None
    raise Refused("it ran without parsing its arguments with argparse")


def check_python(argv: list[str], command: Command) -> None:
    if len(argv) < 2:
        raise Refused("no script or module")
    if argv[1] == "-c":
        compile(argv[2], "<python -c>", "exec")
    elif argv[1] == "-m":
        module, args = argv[2], argv[3:]
        if module == "venv":
            return
        if module == "pip":
            return check_pip(argv[2:])
        if module == "pytest":
            return check_pytest(args)
        if not module.startswith(("olympiad_eval.", "tests.")):
            raise Refused(f"module {module}: tests/test_docs.py does not know how to check it")
        check_module(module, args)
    elif argv[1].endswith(".py"):
        script, args = argv[1], argv[2:]
        if placeholder(script):
            return
        if not (ROOT / script).is_file():
            raise Refused(f"no script {script}")
        if script.startswith("stages/"):
            check_stage(script, args, command.illustrative)
        elif script.startswith("bench/"):
            check_bench(script, args)
        else:
            raise Refused(f"script {script}: tests/test_docs.py does not know how to check it")
    else:
        raise Refused(f"python {argv[1]}: tests/test_docs.py does not know how to check it")


def check_module(module: str, args: list[str]) -> None:
    if placeholder(module):  # `olympiad_eval.cli.<name>`: the package it is in
        module = module[: re.search(r"<|\.\.\.|\{", module).start()].rstrip(".")
        if importlib.util.find_spec(module) is None:
            raise Refused(f"no module {module}")
        return
    try:
        spec = importlib.util.find_spec(module)
    except ModuleNotFoundError:
        spec = None
    if spec is None or spec.origin is None:
        raise Refused(f"no module {module}")
    if spec.submodule_search_locations:  # `python -m package` runs its __main__
        return check_module(f"{module}.__main__", args)
    source = Path(spec.origin).read_text(encoding="utf-8")
    if "__main__" not in source:
        raise Refused(f"module {module} has no command line (no `if __name__ == '__main__'`)")
    if "ArgumentParser" in source:
        parsed_by_argparse(lambda: runpy.run_module(module, run_name="__main__"), [spec.origin, *args])
    elif tuple(args) not in WITHOUT_PARSER.get(module, set()):
        takes = " or ".join(repr(" ".join(a)) for a in sorted(WITHOUT_PARSER.get(module, set()))) or "(unknown)"
        raise Refused(f"module {module} has no argparse parser; it takes {takes} (WITHOUT_PARSER)")


def check_bench(script: str, args: list[str]) -> None:
    path = ROOT / script
    if "ArgumentParser" not in path.read_text(encoding="utf-8"):
        if args:
            raise Refused(f"{script} has no argparse parser, so it takes no arguments")
        return
    with mock.patch.object(sys, "path", [str(path.parent), *sys.path]):  # as `python bench/x.py` has it
        parsed_by_argparse(lambda: runpy.run_path(str(path), run_name="__main__"), [str(path), *args])


def check_stage(script: str, args: list[str], illustrative: bool) -> None:
    from hydra import compose, initialize_config_dir
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    from olympiad_eval.core.records import InputError
    from olympiad_eval.stages.runner import check_config_names

    if {"-h", "--help", "--hydra-help"} & set(args):
        return
    conf = ROOT / "conf"
    overrides = []
    for text in (arg for arg in args if arg not in ("-m", "--multirun")):
        if text.startswith("-"):
            raise Refused(f"option {text}: a stage takes -m (a sweep) and Hydra overrides")
        key, _, value = text.partition("=")
        if placeholder(value):  # `cell.suite=<suite>`: the key is checked, not the value
            if (conf / key.lstrip("+~")).is_dir():
                continue
            text = f"{key}=placeholder"
        overrides.append(text)
    if illustrative:  # example config names (`model=a,b`) stand in for one that exists
        overrides = [_an_existing_name(conf, text) for text in overrides]
    else:
        try:
            check_config_names(conf, overrides)
        except InputError as error:
            raise Refused(str(error)) from None
    config_name = re.search(r"config_name=\"(\w+)\"", (ROOT / script).read_text(encoding="utf-8"))
    if config_name is None:
        raise Refused(f"{script} names no Hydra config (config_name=...)")
    # a sweep's first value of each swept override stands for its jobs
    single = []
    for text in overrides:
        try:
            [override] = OverridesParser.create().parse_overrides([text])
        except HydraException as error:
            raise Refused(f"override {text}: {error}") from None
        if override.is_sweep_override():
            first = next(iter(override.sweep_string_iterator()), None)
            text = f"{override.get_key_element()}={first}"
        single.append(text)
    try:
        with initialize_config_dir(config_dir=str(conf), version_base=None):
            compose(config_name=config_name[1], overrides=single, return_hydra_config=True)
    except (HydraException, ValueError) as error:
        raise Refused(" ".join(str(error).split())[:300]) from None


def _an_existing_name(conf: Path, text: str) -> str:
    """An override choosing a config name that is not a file of its group, made to choose one that is."""
    key, _, value = text.partition("=")
    folder = conf / key.lstrip("+~")
    if not folder.is_dir() or all((folder / f"{name}.yaml").is_file() for name in value.split(",")):
        return text
    return f"{key}={sorted(folder.glob('*.yaml'))[0].stem}"


def check_pytest(args: list[str]) -> None:
    skip_next = False
    for arg in args:
        if skip_next:
            skip_next = False
        elif arg in ("-m", "-k", "-n", "-p", "--dist", "-o"):
            skip_next = True
        elif not arg.startswith("-") and not (ROOT / arg.split("::")[0]).exists():
            raise Refused(f"no test path {arg}")


def check_dvc(argv: list[str]) -> None:
    from dvc.cli import DvcParserError, parse_args

    said = io.StringIO()
    logger, handler = logging.getLogger("dvc"), logging.StreamHandler(said)  # DVC logs its parser's errors
    logger.addHandler(handler)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            args = parse_args(argv[1:])
    except (SystemExit, DvcParserError) as error:
        if isinstance(error, SystemExit) and error.code in (0, None):
            return
        lines = said.getvalue().strip().splitlines()
        raise Refused(lines[-1].strip() if lines else "DVC's parser refuses it") from None
    finally:
        logger.removeHandler(handler)
    for target in getattr(args, "targets", None) or []:
        if placeholder(target):
            continue
        path, _, stage = target.partition(":")
        if not stage and not (ROOT / path).exists():  # a stage of the root's dvc.yaml, by its name alone
            path, stage = "dvc.yaml", path
        if not (ROOT / path).exists():
            raise Refused(f"target {target}: no {path}")
        if stage and path.endswith("dvc.yaml"):
            stages = yaml.safe_load((ROOT / path).read_text(encoding="utf-8"))["stages"]
            name = stage.split("@")[0]
            if not any(fnmatch.fnmatchcase(known, name) for known in stages):
                raise Refused(f"target {target}: {path} has no stage {name} (its stages: {', '.join(stages)})")
    for setting in getattr(args, "set_param", None) or []:
        file, colon, _ = setting.partition("=")[0].rpartition(":")
        if colon and not placeholder(file) and not (ROOT / file).is_file():
            raise Refused(f"-S {setting}: no {file}")


def check_pip(argv: list[str]) -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    for arg in argv:
        wanted = re.fullmatch(r"\.\[([\w,-]+)\]", arg)
        if wanted:
            for extra in wanted[1].split(","):
                if extra not in extras:
                    raise Refused(f"pyproject.toml has no extra [{extra}] (its extras: {', '.join(extras)})")


def check(command: Command) -> None:
    argv = argv_of(command)
    if not argv:
        return
    program = argv[0]
    if program in ("python", "python3"):
        check_python(argv, command)
    elif program == "dvc":
        check_dvc(argv)
    elif program == "olympiad-eval":
        check_module("olympiad_eval.cli", argv[1:])
    elif program == "pip":
        check_pip(argv)
    elif program not in NOT_CHECKED:
        raise Refused(f"program {program}: tests/test_docs.py does not know how to check it (see NOT_CHECKED)")


# ---------------------------------------------------------------- the tests


def test_the_pages_show_commands_to_check():
    """The extraction itself: it finds the README's two commands and the docs' commands."""
    programs = {argv_of(command)[0] for command in ALL_COMMANDS}
    assert {"python", "python3", "dvc"} <= programs
    readme = [command.text for command in ALL_COMMANDS if command.page.name == "README.md"]
    assert "python -m pytest" in readme and "dvc repro" in readme
    assert len(ALL_COMMANDS) > 50


def test_every_command_shown_parses_against_the_real_command_lines_and_configs():
    refused = []
    for command in ALL_COMMANDS:
        try:
            check(command)
        except Refused as why:
            refused.append(f"{command}: {why}")
        except SyntaxError as error:
            refused.append(f"{command}: {error}")
    assert not refused, "\n" + "\n".join(refused)


def test_every_path_named_exists():
    missing = []
    for page in PAGES:
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            for match in PATH.finditer(line):
                path = match[1].rstrip(".")
                if placeholder(path) or path in WRITTEN_BY_THE_READER:
                    continue
                # from the repository's root, or a room of the package (`benchmarks/hipho/evalscope.py`)
                bases = [ROOT, ROOT / "src"] if path.startswith("olympiad_eval/") else [ROOT]
                if path.split("/")[0] in ROOMS:
                    bases.append(ROOT / "src" / "olympiad_eval")
                found = any(any(base.glob(path)) if "*" in path else (base / path).exists() for base in bases)
                if not found:
                    missing.append(f"{page.relative_to(ROOT)}:{number}: {path}")
    assert not missing, "\n" + "\n".join(missing)


def test_every_dotted_name_given_imports():
    unknown = []
    for page in PAGES:
        for code in code_of(page):
            for name in DOTTED.findall(code.text):
                why = unresolved(name)
                if why:
                    unknown.append(f"{page.relative_to(ROOT)}:{code.line}: {name}: {why}")
    assert not unknown, "\n" + "\n".join(unknown)


def unresolved(name: str) -> str | None:
    """Why a dotted name is neither a module nor an attribute of one; None when it is."""
    parts = name.split(".")
    for n in range(len(parts), 0, -1):
        module = ".".join(parts[:n])
        try:
            found = importlib.import_module(module)
        except ModuleNotFoundError as error:
            if error.name is not None and module.startswith(error.name):
                continue  # not a module: an attribute of a shorter one
            return f"importing {module} fails: {error}"
        for attribute in parts[n:]:
            if not hasattr(found, attribute):
                return f"{'.'.join(parts[:n])} has no {'.'.join(parts[n:])}"
            found = getattr(found, attribute)
        return None
    return "no such module"


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"[`*]", "", text).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    _, prose = fences(page)
    seen: dict[str, int] = {}
    for line in prose:
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading:
            name = slug(heading[1])
            count = seen.get(name, 0)
            seen[name] = count + 1
            if count:
                seen[f"{name}-{count}"] = 1
    return set(seen)


def test_every_local_link_resolves():
    broken = []
    for page in PAGES:
        _, prose = fences(page)
        for number, line in enumerate(prose, 1):
            for target in LINK.findall(line):
                if re.match(r"[a-z]+:", target):  # https:, mailto:
                    continue
                path, _, anchor = target.partition("#")
                linked = (page.parent / path).resolve() if path else page
                if not linked.exists():
                    broken.append(f"{page.relative_to(ROOT)}:{number}: {target}: no {path}")
                elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                    where = f"{page.relative_to(ROOT)}:{number}: {target}"
                    broken.append(f"{where}: no heading #{anchor} in {path or page.name}")
    assert not broken, "\n" + "\n".join(broken)


@pytest.mark.parametrize(
    "text, why",
    [
        ("python -m olympiad_eval.cli.compare runs sample_hipho a/rule", "the following arguments are required"),
        ("python -m olympiad_eval.cli.costs --cvs x.csv", "unrecognized arguments"),
        ("python -m olympiad_eval.cli.nope", "no module olympiad_eval.cli.nope"),
        ("python -m olympiad_eval.cli.plan --dry-run", "unrecognized arguments"),
        ("python -m tests.test_protocol_versions --all", "has no argparse parser"),
        ("python stages/render.py suite=sample_hipo cell.benchmark=sample_hipho", "did you mean 'sample_hipho'"),
        ("python stages/render.py suite=sample_hipho cell.benchmarks=sample_hipho", "Could not override"),
        ("python stages/generate.py -m model=reference,dmeo cell.suite=sample_hipho", "no conf/model/dmeo.yaml"),
        ("python bench/scale.py --stage-countz", "unrecognized arguments"),
        ("python bench/nope.py", "no script bench/nope.py"),
        ("dvc exp runn", "invalid choice"),
        ("dvc repro --glob 'pipelines/hipho/judge/dvc.yaml:judgee@x-*'", "has no stage judgee"),
        ("dvc exp run -S 'conf/suite/hiphoo.yaml:limit=5'", "no conf/suite/hiphoo.yaml"),
        ('pip install -e ".[tests]"', "no extra [tests]"),
        ("olympiad-eval leaderbord", "invalid choice: 'leaderbord'"),
        ("olympiad-eval cache purge --yes --all", "unrecognized arguments"),
        ("olympiad-eval compare runs sample_hipho a/rule", "the following arguments are required"),
        ("olympiad-eval plan --dry-run", "unrecognized arguments"),
    ],
)
def test_a_command_that_no_longer_holds_is_refused_saying_why(text, why):
    with pytest.raises(Refused, match=re.escape(why)):
        check(Command(ROOT / "README.md", 1, text))


def package_map() -> tuple[int, set[str]]:
    """The paths that the package's map in docs/layout.md names (relative to src/olympiad_eval/),
    read from its tree: each line's leading names (`fetch.py  render.py`, `hipho/  physelite/`),
    under the one folder of the line above it that is less indented."""
    page = ROOT / "docs" / "layout.md"
    blocks, _ = fences(page)
    [(start, _, lines, _)] = [block for block in blocks if block[2] and block[2][0][1] == "src/olympiad_eval/"]
    named, parents = set(), []  # (indent, folder)
    for _, line in lines[1:]:
        indent = len(line) - len(line.lstrip())
        names = []
        for word in line.split():
            if not re.fullmatch(r"[\w.]+(\.py|/)", word):
                break
            names.append(word)
        if not names:
            continue  # a description's next line
        while parents and parents[-1][0] >= indent:
            parents.pop()
        folder = parents[-1][1] if parents else ""
        named |= {folder + name for name in names}
        if len(names) == 1 and names[0].endswith("/"):
            parents.append((indent, folder + names[0]))
    return start, named


def test_the_package_map_names_every_module_and_only_modules_that_exist():
    start, named = package_map()
    package = ROOT / "src" / "olympiad_eval"
    missing = sorted(name for name in named if not (package / name).exists())
    # every room and every module of a room; a benchmark's own package is named as a folder
    kinds = {path.parent.name for path in (package / "benchmarks").glob("*/__init__.py")}
    modules = {
        path.relative_to(package).as_posix()
        for path in package.rglob("*.py")
        if path.name != "__init__.py" and not (path.parent.parent.name == "benchmarks" and path.parent.name in kinds)
    }
    rooms = {f"{path.parent.relative_to(package).as_posix()}/" for path in package.glob("*/__init__.py")}
    unnamed = sorted((modules | rooms | {f"benchmarks/{kind}/" for kind in kinds}) - named)
    assert not missing and not unnamed, (
        f"docs/layout.md:{start}: the package's map names what does not exist: {missing}; it leaves out: {unnamed}"
    )
