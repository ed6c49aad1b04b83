"""The benchmark contract: which modules are benchmarks, how a config's `kind` finds one, and
what typing a suite against its benchmark's schema refuses."""

from __future__ import annotations

import sys
import textwrap

import pytest
from omegaconf import OmegaConf

from olympiad_eval.benchmarks import PARTS, Benchmark, known_kinds, plugin, typed_suite
from olympiad_eval.core.records import InputError

# A benchmark outside the package, complete but for a tolerance: its Scoring keeps the contract's
# rel_tol, which has no default.
OUTSIDE = """
from dataclasses import dataclass, field
from olympiad_eval.benchmarks import Scoring as BaseScoring, Suite as BaseSuite

PROTOCOL_VERSIONS = {"official": 1}
PARTS = ()


@dataclass
class Scoring(BaseScoring):
    pass


@dataclass
class Suite(BaseSuite):
    scoring: Scoring = field(default_factory=Scoring)


def load(root, cfg, benchmark): return []
def template_fields(problem, suite): return "default", {}
def figures(problem, suite): return []
def reference(problem, suite): return ""
def rule_checks(problem, response, scoring): return []
def rule_score(problem, response, scoring, verdicts): return None
def judge_tasks(problem, response, scoring): return []
def judge_tasks_after_rules(problem, response, rules, scoring): return []
def judge_tasks_after_rules_at_most(problem, response, scoring): return []
def combine(problem, rules, replies, scoring): return rules
def tables(frame, cfg): return {}
"""


@pytest.fixture
def outside(tmp_path, monkeypatch):
    """The module `outside_bench` on the import path (`kind: outside_bench.bench`)."""
    package = tmp_path / "outside_bench"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "bench.py").write_text(textwrap.dedent(OUTSIDE))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "outside_bench.bench"
    for name in ("outside_bench.bench", "outside_bench"):
        sys.modules.pop(name, None)


def test_the_packages_benchmarks_meet_the_contract_and_its_helpers_are_not_benchmarks():
    assert known_kinds() == [
        "hipho",
        "mathvision",
        "olympiadbench",
        "physelite",
    ]  # not hipho_evalscope, mathvision_official
    for kind in known_kinds():
        assert isinstance(plugin(kind), Benchmark)
        assert all(hasattr(plugin(kind), part) for part in PARTS)


@pytest.mark.parametrize("kind", ["hypho", "../etc/passwd", "hipho_evalscope"])
def test_a_kind_that_names_no_benchmark_lists_the_known_ones(kind):
    with pytest.raises(
        InputError,
        match=r"kind .*; known kinds: hipho, mathvision, olympiadbench, physelite$|"
        r"is not a benchmark module: it lacks ",
    ):
        plugin(kind)


def test_a_helper_module_is_refused_naming_what_it_lacks():
    with pytest.raises(InputError, match=r"'mathvision_official' .* lacks PARTS, PROTOCOL_VERSIONS, Suite, combine, "):
        plugin("mathvision_official")


def test_a_benchmark_outside_the_package_is_found_by_its_dotted_name(outside):
    assert plugin(outside).PROTOCOL_VERSIONS == {"official": 1}


def test_a_benchmark_that_states_no_tolerance_fails_when_its_suite_is_composed(outside):
    """The contract's `rel_tol` has no default: a new benchmark never scores numbers exactly by omission."""
    with pytest.raises(
        InputError,
        match=r"^suite 'new' \(conf/suite/new.yaml or an override\): scoring.rel_tol "
        r"must be set",
    ):
        typed_suite("new", OmegaConf.create({"kind": outside}))
    typed = typed_suite("new", OmegaConf.create({"kind": outside, "scoring": {"rel_tol": 0.01}}))
    assert (typed.scoring.rel_tol, typed.scoring.protocol, typed.figure_placement) == (0.01, "official", "markers")


def test_a_typed_suite_holds_plain_values_with_the_schemas_defaults():
    typed = typed_suite("s", OmegaConf.create({"kind": "physelite", "figures": "schematic+process"}))
    assert type(typed.figures) is str and typed.figures == "schematic+process"
    assert (typed.figure_placement, typed.hint.mode, typed.scoring.rel_tol, typed.scoring.process) == (
        "after_text",
        "none",
        0.05,
        True,
    )


def test_a_suite_without_a_kind_is_refused():
    with pytest.raises(InputError, match=r"suite 's' .*: `kind` \(its benchmark's kind\) must be set"):
        typed_suite("s", OmegaConf.create({"language": "en"}))
