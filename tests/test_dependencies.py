"""pyproject.toml declares what the code needs: every package it imports at module level is a
dependency, one it imports only inside a function (an optional source, a protocol's checker) is
at least in an extra, each floor admits no version lacking a feature the code uses, and each
extra is spelt as its package declares it (pip 23 matches them literally: a misspelt extra only
warns, and installs without it)."""

from __future__ import annotations

import ast
import re
import sys
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.support import ROOT

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

CODE = [*sorted((ROOT / "src" / "olympiad_eval").rglob("*.py")), *sorted((ROOT / "stages").glob("*.py"))]

# Features whose first release is a dependency's floor: (dependency, the version that brought it,
# text in the code that uses it).
FEATURES = [
    ("pandas", "2.2", "include_groups="),
    ("matplotlib", "3.6", " ncols="),  # a legend's `ncols` (before 3.6: `ncol`); tqdm's `dynamic_ncols` is not it
]


# Imported where they are needed and declared nowhere: ModelScope, an optional source whose
# package the fetch stage names when it is missing (tests/test_fetch_sources.py stands in for it).
UNDECLARED = {"modelscope"}


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def declared(requirements: list[str]) -> dict[str, Requirement]:
    return {canonicalize_name(req.name): req for req in map(Requirement, requirements)}


def imported(path: Path) -> tuple[set[str], set[str]]:
    """The top-level names a module imports: in its own body (run on import), and anywhere else
    (in a function, or guarded by `try`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {name for node in tree.body for name in _names(node)}
    anywhere = {name for node in ast.walk(tree) for name in _names(node)}
    return top, anywhere - top


def _names(node: ast.AST) -> set[str]:
    if isinstance(node, ast.Import):
        return {alias.name.split(".")[0] for alias in node.names}
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        return {node.module.split(".")[0]}
    return set()


def distributions(names: set[str]) -> set[str]:
    """The installed distributions providing these import names (the standard library and ours left out)."""
    providers = metadata.packages_distributions()
    third_party = {name for name in names if name not in sys.stdlib_module_names and name != "olympiad_eval"}
    missing = sorted(name for name in third_party if name not in providers)
    assert not missing, f"imported but not installed: {missing}"
    return {canonicalize_name(dist) for name in third_party for dist in providers[name]}


def test_every_imported_package_is_declared():
    required = declared(project()["dependencies"])
    optional = {name for extra in project()["optional-dependencies"].values() for name in declared(extra)}
    at_module_level, in_functions = set(), set()
    for path in CODE:
        top, inner = imported(path)
        at_module_level |= top
        in_functions |= inner
    undeclared = distributions(at_module_level) - set(required)
    assert not undeclared, f"imported at module level but not in [project] dependencies: {sorted(undeclared)}"
    nowhere = distributions(in_functions - UNDECLARED) - set(required) - optional
    assert not nowhere, f"imported but declared nowhere: {sorted(nowhere)}"


@pytest.mark.parametrize("package,version,marker", FEATURES)
def test_each_floor_admits_only_versions_with_what_the_code_uses(package, version, marker):
    users = [path.relative_to(ROOT).as_posix() for path in CODE if marker in path.read_text(encoding="utf-8")]
    if not users:
        pytest.skip(f"no code uses {marker} any more")
    specifier = declared(project()["dependencies"])[package].specifier
    floors = [Version(spec.version) for spec in specifier if spec.operator in (">=", "==", "~=")]
    assert floors and max(floors) >= Version(version), (
        f"{package}{specifier} admits versions before {version}, which lack {marker!r} ({', '.join(users)})"
    )


def test_each_extra_is_spelt_as_its_package_declares_it():
    requirements = [
        *project()["dependencies"],
        *(r for extra in project()["optional-dependencies"].values() for r in extra),
    ]
    for requirement in map(Requirement, requirements):
        if not requirement.extras:
            continue
        provided = metadata.metadata(requirement.name).get_all("Provides-Extra") or []
        for extra in requirement.extras:
            assert extra in provided, f"{requirement}: {requirement.name} declares the extras {provided}, not {extra!r}"
            assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", extra), extra  # the normalised spelling (PEP 685)


@pytest.mark.xdist_group("grouping_check")
def test_a_group_of_tests_goes_to_one_worker(request):
    """The suite's costly runs are shared by the tests of an `xdist_group`, which loadgroup sends to
    one worker. Where a pytest and xdist pair loses the group (pytest 9.2 with xdist 3.8: the group
    is never added to the node id, pytest-xdist#1386), every group is spread over the workers, each
    worker making each shared run again, and nothing else fails: this test does."""
    if not getattr(request.config.option, "loadgroup", False):  # what xdist sets in a worker under loadgroup
        pytest.skip("not run by xdist's loadgroup")
    assert request.node.nodeid.endswith("@grouping_check"), (
        f"{request.node.nodeid}: xdist did not mark this test's group, so groups are not kept to one worker; "
        "pin pytest below the release that broke it"
    )
