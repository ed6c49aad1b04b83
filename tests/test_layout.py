"""The output layout: each path spelled once, folders of a name by leaving its last fields out, and the
files the fetch and render stages write where the layout says."""

from __future__ import annotations

import pytest

from olympiad_eval.core import layout
from olympiad_eval.core.layout import Layout, spelled
from olympiad_eval.core.records import InputError


def test_a_model_s_cells_of_a_benchmark_are_one_folder_and_the_rest_under_their_benchmark_or_suite(tmp_path):
    outputs = Layout(tmp_path)
    # by position a cell is (benchmark, suite, model, judge), whatever the order in the path
    assert outputs.generations("b", "s", "m") == tmp_path / "cells/b/m/s/generations.jsonl"
    assert outputs.usage("b", "s", "m") == tmp_path / "cells/b/m/s/usage.json"
    assert outputs.judgments("b", "s", "m", "j") == tmp_path / "cells/b/m/s/judges/j/judgments.jsonl"
    assert outputs.coverage("b", "s", "m", "j") == tmp_path / "cells/b/m/s/judges/j/coverage.json"
    # the evaluate stage's outputs: a model's cells of a benchmark, their pages and their stamps
    assert outputs.cells("b", "m") == tmp_path / "cells/b/m"
    assert outputs.report_cell("b", model="m") == tmp_path / "report/cells/b/m"
    assert outputs.stamp("b", model="m") == tmp_path / "stamps/b/m"
    assert outputs.stamp("b", "s", "m", "generate") == tmp_path / "stamps/b/m/s/generate.json"
    # the problems are named by their benchmark: where they were (a prompt names its figures' paths)
    assert outputs.problems("b") == tmp_path / "problems/b"
    assert outputs.prompts("b", "s") == tmp_path / "suites/b/s/prompts.jsonl"
    assert outputs.table_index("b") == tmp_path / "tables/b/index.json"
    assert outputs.metrics("b") == tmp_path / "metrics/b"  # a file per cell in it:
    assert outputs.metrics("b", "s", "m", "j") == tmp_path / "metrics/b/s/m/j.json"
    assert outputs.plot("b", "scores") == tmp_path / "plots/b/scores.csv"
    assert outputs.report() == tmp_path / "report"
    assert outputs.comparison("s", "a-vs-b") == tmp_path / "comparisons/s/a-vs-b"
    assert outputs.comparison_index() == tmp_path / "comparisons/index.html"


def test_fields_left_out_at_the_end_name_the_folder_of_every_such_path():
    assert spelled("judgments", benchmark="b") == "cells/b"
    assert spelled("judgments", benchmark="b", model="m", suite="s") == "cells/b/m/s/judges"
    assert spelled("judgments") == "cells"
    assert spelled("prompts", benchmark="b") == "suites/b"


@pytest.mark.parametrize(
    "name,fields,words",
    [
        ("judgments", {"benchmark": "b", "suite": "s"}, "suite given after a field left out"),
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
    assert (
        outputs.problem_records("sample_hipho").is_file() and outputs.prompts("sample_hipho", "sample_hipho").is_file()
    )


@pytest.mark.parametrize("name", ["../../../../elsewhere/x", "a/b", "..", "a\0b", "-rf", "x.", "", "/abs"], ids=repr)
@pytest.mark.parametrize("path,field", [("generations", "model"), ("judgments", "judge"), ("prompts", "suite")])
def test_a_name_that_is_no_plain_file_name_makes_no_path(tmp_path, path, field, name):
    fields = {key: "ok" for key in layout.fields_of(path)} | {field: name}
    with pytest.raises(InputError, match=rf"^{field} .* is not a name that can become a path"):
        getattr(Layout(tmp_path), path)(**fields)
    assert list(tmp_path.iterdir()) == []
