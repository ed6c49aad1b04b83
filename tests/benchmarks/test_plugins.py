"""The benchmark contract: which packages are benchmarks, how a config's `kind` finds one (inside the
package or out), what the contract checks of what a benchmark returns, and what typing a suite
against its benchmark's schema refuses. `toy_plugin` is a benchmark from outside the package."""

from __future__ import annotations

import json
import re
import sys
import textwrap
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from olympiad_eval import benchmarks
from olympiad_eval.benchmarks import known_kinds, plugin, typed_suite
from olympiad_eval.benchmarks.base import Benchmark, ContractError, Score
from olympiad_eval.core.layout import Layout
from olympiad_eval.core.plan import read_plan
from olympiad_eval.core.records import InputError, Judgment, read_jsonl
from olympiad_eval.stages.aggregate import aggregate
from olympiad_eval.stages.fetch import fetch
from olympiad_eval.stages.generate import generate
from olympiad_eval.stages.judge import judge
from olympiad_eval.stages.render import render
from tests.support import ROOT, compose_stage

TOY = "tests.benchmarks.toy_plugin"


def test_the_packages_benchmarks_are_its_subpackages_each_named_as_its_kind():
    folder = Path(benchmarks.__file__).parent
    assert known_kinds() == sorted(path.parent.name for path in folder.glob("*/__init__.py"))  # not the kit's modules
    assert set(known_kinds()) >= set(read_plan(ROOT / "params.yaml")["families"])  # the bundled plan's families
    for kind in known_kinds():
        bench = plugin(kind)
        assert isinstance(bench, Benchmark) and bench.name == kind and bench.protocol_versions


@pytest.mark.parametrize("kind", ["hypho", "../etc/passwd", "release", "hipho_evalscope"])
def test_a_kind_that_names_no_benchmark_lists_the_known_ones(kind):
    known = re.escape(", ".join(known_kinds()))
    with pytest.raises(InputError, match=rf"kind .*; known kinds: {known}$|is not a benchmark: it has no `BENCHMARK`"):
        plugin(kind)


def test_a_module_that_is_not_a_benchmark_is_refused_naming_what_it_needs():
    with pytest.raises(InputError, match=r"'olympiad_eval.benchmarks.hipho.evalscope' .* has no `BENCHMARK`, an "
                       "instance of a subclass of olympiad_eval.benchmarks.base.Benchmark"):  # fmt: skip
        plugin("olympiad_eval.benchmarks.hipho.evalscope")


def test_a_benchmark_outside_the_package_is_found_by_its_dotted_name():
    toy = plugin(TOY)
    assert (toy.name, toy.protocol_versions, toy.score_parts) == ("toy", {"official": 1}, ())
    assert toy.judge_tasks(None, "", None) == [] and toy.report_sections(None, None) is None  # the defaults


def test_a_benchmark_missing_a_part_cannot_be_made():
    class Half(Benchmark):
        name = "half"
        protocol_versions = {"official": 1}

        def load(self, root, cfg, benchmark, store):
            return []

    with pytest.raises(TypeError, match="abstract methods figures, reference, rule_checks, rule_score, tables"):
        Half()


def toy_release(folder):
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{"id": "1", "question": "2 + 2?", "answer": "4"}, {"id": "2", "question": "6 / 4?", "answer": "1.5"}]
    (folder / "questions.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return folder


def run_toy(tmp_path, monkeypatch, model: str = "reference") -> Layout:
    """fetch, render, generate, judge (rules) and aggregate of the toy benchmark, each stage's own
    function, with the configs a user would write for it (`kind: tests.benchmarks.toy_plugin`)."""
    layout = Layout(tmp_path / "outputs")
    bench_cfg = OmegaConf.create({"kind": TOY, "source": {"type": "local", "path": str(toy_release(tmp_path / "r"))}})
    fetch("toy", bench_cfg, layout.problems("toy"))
    suite = OmegaConf.create({"kind": TOY, "templates": {"default": {"name": "toy", "text": "{question}"}}})
    render("toy", suite, "toy", layout.problem_records("toy"), layout.suite("toy", "toy"))
    monkeypatch.chdir(tmp_path)
    generated = layout.generations("toy", "toy", model)
    model_cfg = compose_stage("generate", [f"model={model}", "cell.suite=toy"]).model
    generate(
        "toy",
        model,
        model_cfg,
        layout.prompts("toy", "toy"),
        generated,
        tmp_path / "cache",
        layout.usage("toy", "toy", model),
    )
    judge_cfg = compose_stage("judge", ["judge=rule", "cell.suite=toy", "cell.model=x"]).judge
    judge(
        layout.suite("toy", "toy"),
        generated,
        "rule",
        judge_cfg,
        layout.judgments("toy", "toy", model, "rule"),
        tmp_path / "c",
    )
    plan = {"suites": {"toy": "toy"}, "models": [model], "judges": ["rule"], "family": {"toy": "toy"}}
    aggregate("toy", bench_cfg, plan, layout, suites={"toy": suite})
    return layout


def test_a_benchmark_from_outside_runs_through_every_stage(tmp_path, monkeypatch):
    layout = run_toy(tmp_path, monkeypatch)
    judged = read_jsonl(layout.judgments("toy", "toy", "reference", "rule"), Judgment)
    assert [(j.id, j.status, j.score) for j in judged] == [("1", "scored", 1.0), ("2", "scored", 1.0)]
    assert "toy official v1 (rules only)" in (layout.tables("toy") / "tables.md").read_text()


def test_a_wrong_return_type_stops_the_stage_naming_the_benchmark_and_the_method(tmp_path, monkeypatch):
    from tests.benchmarks import toy_plugin

    class Forgetful(toy_plugin.Toy):
        def rule_score(self, problem, response, scoring, verdicts):
            super().rule_score(problem, response, scoring, verdicts)  # and forgot to return it

    monkeypatch.setattr(toy_plugin, "BENCHMARK", Forgetful())
    said = r"Forgetful \(tests.benchmarks.test_plugins\): rule_score returned None, not a Score"
    with pytest.raises(ContractError, match=r"^benchmark test_a_wrong_return_type_stops_the_stage.*" + said):
        run_toy(tmp_path, monkeypatch)


def test_a_wrong_return_type_of_any_method_is_named():
    class Loose(type(plugin(TOY))):
        def reference(self, problem, suite):
            return 42

        def rule_checks(self, problem, response, scoring):
            return [("4", "4", 0.0, None)]  # an old-style tuple

        def combine(self, problem, rules, replies, scoring):
            return Score(1.0, 1.0) if rules else None

    loose = Loose()
    with pytest.raises(ContractError, match=r"reference returned int, not a str"):
        loose.reference(None, None)
    with pytest.raises(ContractError, match=r"rule_checks returned a list of tuple, not a list of checks"):
        loose.rule_checks(None, "", None)
    with pytest.raises(ContractError, match=r"combine returned None, not a Score, or a str"):
        loose.combine(None, "", {}, None)


def test_a_benchmark_that_states_no_tolerance_fails_when_its_suite_is_composed(tmp_path, monkeypatch):
    """The contract's `rel_tol` has no default: a new benchmark never scores numbers exactly by omission."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "__init__.py").write_text("")
    (tmp_path / "outside" / "untolerant.py").write_text(textwrap.dedent("""
        from olympiad_eval.benchmarks.suites import Suite
        from tests.benchmarks.toy_plugin import Toy

        class Untolerant(Toy):
            Suite = Suite  # the contract's own, whose scoring states no tolerance

        BENCHMARK = Untolerant()
    """))  # fmt: skip
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with pytest.raises(InputError, match=r"^suite 'new' \(conf/suite/new.yaml or an override\): scoring.rel_tol "
                           "must be set"):  # fmt: skip
            typed_suite("new", OmegaConf.create({"kind": "outside.untolerant"}))
        typed = typed_suite("new", OmegaConf.create({"kind": "outside.untolerant", "scoring": {"rel_tol": 0.01}}))
        assert (typed.scoring.rel_tol, typed.scoring.protocol, typed.figure_placement) == (0.01, "official", "markers")
    finally:
        for name in ("outside.untolerant", "outside"):
            sys.modules.pop(name, None)


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
