"""The DVC pipeline files, generated from one template each, with every stage's code
dependencies read from what its script imports.

    python -m olympiad_eval.plan            # writes them
    python -m olympiad_eval.plan --check    # says which differ from what would be written (exit 1)

`pipelines/templates/family.yaml` becomes `pipelines/<family>/dvc.yaml` for each benchmark family of
the plan (`pipelines` in params.yaml), with `<family>` replaced by its name; one file, and so one
dvc.lock, per family (DVC rewrites a whole lock after each stage it runs: one lock for a large plan
would make that rewrite the slowest part of a run). `pipelines/templates/report.yaml` becomes the
repository's own `dvc.yaml`. In both, a dependency line `- <code: stages/x.py>` becomes the script
and every module of this package it runs: the imports it reaches, through function-level imports
too, and the whole `benchmarks` package wherever it is reached, since its modules are imported by
name. A module that a stage runs but does not list would let DVC keep a stale output when the
module is edited."""

from __future__ import annotations

import ast
import functools
import re
import sys
from pathlib import Path

from olympiad_eval import layout
from olympiad_eval.stage import read_plan

PACKAGE = "olympiad_eval"
# Imported by name (`benchmarks.plugin(kind)`), so reaching the package reaches each of its modules.
BY_NAME = f"{PACKAGE}.benchmarks"
_CODE = re.compile(r"^(?P<indent>\s*)- <code: (?P<script>\S+)>$", re.M)
# `<path judgments suite=${item.suite} ...>`: an output path (see `output_path`)
_PATH = re.compile(r"<path (?P<name>[a-z_]+)(?P<fields>(?: \w+=[^\s>]+)*)>")


def module_file(name: str, src: Path) -> Path | None:
    """The file of a module of this package (a package's `__init__.py`); None for any other module."""
    if name != PACKAGE and not name.startswith(PACKAGE + "."):
        return None
    base = src.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


@functools.cache
def imported(path: Path, src: Path) -> frozenset[str]:
    """The modules of this package that a file imports, anywhere in it (`from olympiad_eval import
    answers` imports the module `olympiad_eval.answers`, and the package itself). Cached: every
    stage's script reaches most modules, and the plan has a dozen scripts to follow."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    modules = set()
    for name in names:
        # importing `a.b.c` runs `a` and `a.b` first
        parts = name.split(".")
        modules.update(
            prefix for prefix in (".".join(parts[:n]) for n in range(1, len(parts) + 1)) if module_file(prefix, src)
        )
    return frozenset(modules)


def reached(script: Path, src: Path) -> set[str]:
    """Every module of this package that running `script` may import."""
    seen: set[str] = set()
    todo = list(imported(script, src))
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(imported(module_file(name, src), src))
        if name == BY_NAME:
            todo.extend(
                f"{BY_NAME}.{path.stem}"
                for path in sorted(module_file(BY_NAME, src).parent.glob("*.py"))
                if path.stem != "__init__"
            )
    return seen


def code_of(script: str, root: Path) -> list[str]:
    """The code dependencies of a stage script: itself and the files of the modules it reaches,
    the `benchmarks` package as one folder; relative to `root`, sorted."""
    src = root / "src"
    folder = module_file(BY_NAME, src).parent
    files = set()
    for name in reached(root / script, src):
        path = module_file(name, src)
        files.add((folder if path.parent == folder else path).relative_to(root).as_posix())
    return [script, *sorted(files)]


def output_path(marker: re.Match, family: str | None) -> str:
    """A `<path NAME field=value ...>` marker as the path `layout` spells, under the outputs folder;
    in a family's pipeline the family's name fills the field `family`."""
    fields = dict(pair.split("=", 1) for pair in marker["fields"].split())
    if family is not None and "family" in layout.fields_of(marker["name"]):
        fields.setdefault("family", family)
    try:
        return f"{layout.OUTPUTS}/{layout.spelled(marker['name'], **fields)}".rstrip("/")
    except KeyError as error:
        raise ValueError(f"{marker[0]}: {error.args[0]}") from None


def fill(template: str, root: Path, family: str | None = None) -> str:
    """A template with its code lines and output paths expanded (and `<family>` named)."""
    text = _CODE.sub(lambda m: "\n".join(f"{m['indent']}- {path}" for path in code_of(m["script"], root)), template)
    text = _PATH.sub(lambda m: output_path(m, family), text)
    return text if family is None else text.replace("<family>", family)


def pipeline_files(root: Path) -> dict[Path, str]:
    """Every pipeline file the plan needs, by path, with the text it should have."""
    templates = root / "pipelines" / "templates"
    family = (templates / "family.yaml").read_text(encoding="utf-8")
    files = {root / "dvc.yaml": fill((templates / "report.yaml").read_text(encoding="utf-8"), root)}
    for name in read_plan(root / "params.yaml")["families"]:
        files[root / "pipelines" / name / "dvc.yaml"] = fill(family, root, name)
    return files


def _differs(path: Path, text: str) -> bool:
    return not path.is_file() or path.read_text(encoding="utf-8") != text


def stale(root: Path) -> list[str]:
    """What differs from the generated plan: each file that would change, and each family's
    pipeline whose family the plan no longer has."""
    files = pipeline_files(root)
    changed = [path for path, text in files.items() if _differs(path, text)]
    dropped = [path for path in (root / "pipelines").glob("*/dvc.yaml") if path not in files]
    return [f"{path.relative_to(root)} differs from the generated one" for path in changed] + [
        f"{path.relative_to(root)} is a pipeline of a family that params.yaml no longer has: remove its folder"
        for path in dropped
    ]


def main(argv: list[str]) -> int:
    root = Path.cwd()
    if argv == ["--check"]:
        problems = stale(root)
        for problem in problems:
            print(f"{problem}: run `python -m olympiad_eval.plan`", file=sys.stderr)
        return 1 if problems else 0
    for path, text in pipeline_files(root).items():
        if _differs(path, text):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
