"""The output layout: each path spelled once, folders of a name by leaving its last fields out, and the
files the fetch and render stages write where the layout says."""

from __future__ import annotations

import pytest

from olympiad_eval.core import layout
from olympiad_eval.core.layout import Layout, spelled
from olympiad_eval.core.records import InputError


def test_a_cell_s_generation_and_each_judge_are_folders_of_their_own_under_its_family(tmp_path):
    outputs = Layout(tmp_path)
    # by position a cell is (family, suite, model, judge)
    assert outputs.generated("f", "s", "m") == tmp_path / "cells/f/s/m/generation"  # its generate stage's
    assert outputs.generations("f", "s", "m") == tmp_path / "cells/f/s/m/generation/generations.jsonl"
    assert outputs.usage("f", "s", "m") == tmp_path / "cells/f/s/m/generation/usage.json"
    assert outputs.judged("f", "s", "m", "j") == tmp_path / "cells/f/s/m/judges/j"  # each judge stage's
    assert outputs.judgments("f", "s", "m", "j") == tmp_path / "cells/f/s/m/judges/j/judgments.jsonl"
    assert outputs.coverage("f", "s", "m", "j") == tmp_path / "cells/f/s/m/judges/j/coverage.json"
    assert outputs.cells("f") == tmp_path / "cells/f"  # what a benchmark of the family aggregates
    # its pages stage's: the pages, and each problem's status beside them
    assert outputs.report_cell("f", "s", "m") == tmp_path / "report/cells/f/s/m"
    assert outputs.statuses("f", "s", "m") == tmp_path / "statuses/f/s/m.json"
    # what the check stage records of a model for a suite, and of a judge
    assert outputs.model_record("s", "m") == tmp_path / "plan/models/m/s.yaml"
    assert outputs.judge_record("j") == tmp_path / "plan/judges/j.yaml"
    # the problems are named by their benchmark: where they were (a prompt names its figures' paths)
    assert outputs.problems("b") == tmp_path / "problems/b"
    assert outputs.prompts("f", "s") == tmp_path / "suites/f/s/prompts.jsonl"
    assert outputs.table_index("b") == tmp_path / "tables/b/index.json"
    assert outputs.metrics("b") == tmp_path / "metrics/b"  # a file per cell in it:
    assert outputs.metrics("b", "s", "m", "j") == tmp_path / "metrics/b/s/m/j.json"
    assert outputs.plot("b", "scores") == tmp_path / "plots/b/scores.csv"
    assert outputs.report() == tmp_path / "report"
    assert outputs.comparison("s", "a-vs-b") == tmp_path / "comparisons/s/a-vs-b"
    assert outputs.comparison_index() == tmp_path / "comparisons/index.html"


def test_fields_left_out_at_the_end_name_the_folder_of_every_such_path():
    assert spelled("judgments", family="f") == "cells/f"
    assert spelled("judgments", family="f", model="m", suite="s") == "cells/f/s/m/judges"
    assert spelled("judgments") == "cells"
    assert spelled("prompts", family="f") == "suites/f"


@pytest.mark.parametrize(
    "name,fields,words",
    [
        ("judgments", {"family": "f", "model": "m"}, "model given after a field left out"),
        ("tables", {"suite": "s"}, "has no field suite"),
        ("tabels", {}, "no output path named 'tabels'"),
    ],
)
def test_a_path_that_names_nothing_is_refused(name, fields, words):
    with pytest.raises(KeyError, match=words):
        spelled(name, **fields)


def test_every_path_has_its_method_and_the_method_spells_it(tmp_path):
    outputs = Layout(tmp_path)
    for name in layout.PATTERNS:
        fields = {field: f"{field}-1" for field in layout.fields_of(name)}
        assert getattr(outputs, name)(**fields) == tmp_path / spelled(name, **fields), name


def test_fetch_and_render_write_the_files_the_layout_names(render_suite):
    outputs = Layout(render_suite("sample_hipho", "sample_hipho"))
    assert outputs.problem_records("sample_hipho").is_file() and outputs.prompts("hipho", "sample_hipho").is_file()


@pytest.mark.parametrize("name", ["../../../../elsewhere/x", "a/b", "..", "a\0b", "-rf", "x.", "", "/abs"], ids=repr)
@pytest.mark.parametrize("path,field", [("generations", "model"), ("judgments", "judge"), ("prompts", "suite")])
def test_a_name_that_is_no_plain_file_name_makes_no_path(tmp_path, path, field, name):
    fields = {key: "ok" for key in layout.fields_of(path)} | {field: name}
    with pytest.raises(InputError, match=rf"^{field} .* is not a name that can become a path"):
        getattr(Layout(tmp_path), path)(**fields)
    assert list(tmp_path.iterdir()) == []
