"""The code a stage runs: its script and every module of this package it may import, found by
following imports (function-level ones too), with its family's benchmark where it reaches the
benchmark registry; and that code as a list of files with their hashes (the check stage writes one
per family and stage script, and the stages depend on it instead of on each file). A module that
only fills the request cache ahead of a later stage (`CACHE_ONLY`) is no stage's code.

Benchmarks are imported by name (`benchmarks.plugin(kind)`), so a script that reaches the registry
runs its family's benchmark too: that benchmark's own package (as one folder; an outside plugin's
module by its file) and what it imports. Never another family's benchmark: editing one benchmark
leaves the other families up to date."""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import re
from pathlib import Path

import yaml

from olympiad_eval.core import layout
from olympiad_eval.core.plan import read_plan
from olympiad_eval.core.records import atomic_dir

PACKAGE = "olympiad_eval"
# The benchmark registry: it imports each benchmark by name (`plugin(kind)`).
BY_NAME = f"{PACKAGE}.benchmarks"
# Modules that only fill the request cache ahead of a later stage (`stages.ahead`: the judges'
# requests, asked while a cell is generated), and write nothing any stage outputs: a stage that
# imports one does not list it, nor what only it reaches, as its code (editing the judges' code
# reruns no generation).
CACHE_ONLY = frozenset({f"{PACKAGE}.stages.ahead"})
# The pipeline templates (`olympiad-eval plan` fills them): a family's stages run the scripts of its
# commands, and the root's report runs every family's benchmark (`<code lists: stages/x.py>`).
TEMPLATES = Path("pipelines") / "templates"
_SCRIPT = re.compile(r"\bpython (stages/\w+\.py)\b")
CODE_LISTS = re.compile(r"^(?P<indent>\s*)- <code lists: stages/(?P<stage>\w+)\.py>$", re.M)
# a package's data that its code reads (the report's viewer script and style): code too
PACKAGE_DATA = {f"{PACKAGE}.report": f"src/{PACKAGE}/report/assets"}
# files under a code folder that are not code (as .dvcignore says: bytecode, a killed write's leftovers)
_NOT_CODE = re.compile(r"(^|/)(__pycache__/|\.[^/]*\.tmp$)")


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
    answers` imports the module `olympiad_eval.scoring.answers`, and the package itself). Cached: every
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


def reached(files, src: Path) -> frozenset[str]:
    """Every module of this package that running `files` may import."""
    return _reached(tuple(files), src)


@functools.cache
def _reached(files: tuple[Path, ...], src: Path) -> frozenset[str]:
    """`reached`, cached as `imported` is: the check stage follows some forty scripts and parts,
    which share most of their modules."""
    seen: set[str] = set()
    todo = [name for path in files for name in imported(path, src)]
    while todo:
        name = todo.pop()
        if name in seen or name in CACHE_ONLY:
            continue
        seen.add(name)
        todo.extend(imported(module_file(name, src), src))
    return frozenset(seen)


def benchmark_code(family: str, root: Path) -> tuple[Path, list[Path]] | None:
    """Where a family's benchmark code is (a package's folder, or an outside plugin's module file)
    and its Python files; None for a family of no benchmark yet. Its kind is read from the config of
    one of its benchmarks (a dotted path for an outside plugin), or is the family's own name."""
    kinds = {_kind(root, benchmark) for benchmark, owner in read_plan(root / "params.yaml")["family"].items()
             if owner == family} or {family}  # fmt: skip
    if len(kinds) > 1:
        raise ValueError(
            f"params.yaml: pipelines.{family} lists benchmarks of several kinds: {', '.join(sorted(kinds))}"
        )
    [kind] = kinds
    parts = (kind if "." in kind else f"{BY_NAME}.{kind}").split(".")
    for base in (root / "src", root):  # this package's benchmarks, then a plugin in the repository
        folder = base.joinpath(*parts)
        if (folder / "__init__.py").is_file():
            return folder, sorted(folder.rglob("*.py"))
        if folder.with_suffix(".py").is_file():
            return folder.with_suffix(".py"), [folder.with_suffix(".py")]
    spec = importlib.util.find_spec(".".join(parts)) if "." in kind else None  # an installed plugin
    if spec is None or spec.origin is None:
        return None
    origin = Path(spec.origin)
    return (
        (origin.parent, sorted(origin.parent.rglob("*.py"))) if spec.submodule_search_locations else (origin, [origin])
    )


def _kind(root: Path, benchmark: str) -> str:
    path = root / "conf" / "benchmark" / f"{benchmark}.yaml"
    kind = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("kind") if path.is_file() else None
    if not isinstance(kind, str):
        raise ValueError(f"{path.relative_to(root)}: `kind` must name the benchmark's module")
    return kind


def code_of(script: str, root: Path, family: str | None = None) -> list[str]:
    """The code dependencies of a stage script: itself and the files of the modules it reaches; where
    it reaches the benchmark registry, the family's benchmark (every family's where `family` is None:
    the root report); relative to `root`, sorted."""
    src = root / "src"
    modules = reached([root / script], src)
    files = {module_file(name, src) for name in modules}
    files |= {root / data for package, data in PACKAGE_DATA.items() if package in modules}
    if BY_NAME in modules:
        families = [family] if family else read_plan(root / "params.yaml")["families"]
        for code in filter(None, (benchmark_code(name, root) for name in families)):
            where, sources = code
            outside = {module_file(name, src) for name in reached(sources, src)} - set(sources)
            files |= {where, *outside}
    return [script, *sorted(_relative(path, root) for path in files)]


def code_list(script: str, root: Path, family: str) -> str:
    """The code a family's stages of `script` run: each file, with the MD5 of its bytes, a line each."""
    return listing(code_of(script, root, family), root)


def listing(names: list[str], root: Path) -> str:
    """Code files and folders (relative to `root`), as a code list: each file with its MD5, a line each."""
    lines = []
    for name in names:
        path = root / name
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for file in files:
            relative = _relative(file, root)
            if not _NOT_CODE.search(relative):
                lines.append(f"{hashlib.md5(file.read_bytes()).hexdigest()}  {relative}")
    return "\n".join(lines) + "\n"


@functools.cache
def _relative(path: Path, root: Path) -> str:
    """A dependency's path as dvc.yaml lists it: relative to the repository, or absolute outside it."""
    resolved = path.resolve()
    return resolved.relative_to(root.resolve()).as_posix() if resolved.is_relative_to(root.resolve()) else str(resolved)


def current(listed: str, root: Path) -> bool:
    """Whether a code list (`code_list`'s text) still names each file with the hash it has now: a
    file edited, removed or newly imported (the importing file is then edited) makes it stale."""
    for line in listed.splitlines():
        digest, _, name = line.partition("  ")
        path = root / name
        if not path.is_file() or hashlib.md5(path.read_bytes()).hexdigest() != digest:
            return False
    return bool(listed)


def scripts_of(template: str) -> list[str]:
    """The stage scripts a template's commands run, in order of first use."""
    return list(dict.fromkeys(_SCRIPT.findall(template)))


def listed_scripts(root: Path) -> list[str]:
    """The scripts whose code is listed per family: those of the family template's stages, and the
    root's that run every family's benchmark (`<code lists: stages/x.py>`: the root report)."""
    family = (root / TEMPLATES / "family.yaml").read_text(encoding="utf-8")
    report = (root / TEMPLATES / "report.yaml").read_text(encoding="utf-8")
    rooted = [f"stages/{m['stage']}.py" for m in CODE_LISTS.finditer(report)]
    return list(dict.fromkeys([*scripts_of(family), *rooted]))


def all_code(root: Path, family: str) -> list[str]:
    """The code of every script listed for a family (`listed_scripts`)."""
    return sorted({path for script in listed_scripts(root) for path in code_of(script, root, family)})


def write_code_lists(root: Path, family: str, outputs: Path) -> None:
    """A family's code lists, under `outputs`: one per script listed for it (`listed_scripts`), which
    its stages depend on instead of on each file."""
    folder = Path(outputs) / layout.spelled("code", family=family)
    folder.parent.mkdir(parents=True, exist_ok=True)
    lists = {Path(script).stem: code_list(script, root, family) for script in listed_scripts(root)}
    with atomic_dir(folder) as staging:
        for name, text in lists.items():
            (Path(staging) / f"{name}.txt").write_text(text, encoding="utf-8")
