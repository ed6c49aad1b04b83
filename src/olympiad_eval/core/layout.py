"""Where a run's outputs live: every path of every cell, spelled once.

The stage scripts, the tables, the report and the tests ask `Layout` for a path; `python -m
olympiad_eval.cli.plan` fills the pipeline templates' `<path NAME field=value ...>` markers from the
same `PATTERNS`, so the dvc.yaml files and the code cannot disagree.

A cell (a suite x model) is named by its suite and model, and lives under its benchmark family
(`cells/<family>/<suite>/<model>/`): DVC's matrix of a family's suites and the plan's models names
each generate, judge and pages stage by suite and model alone (a matrix cannot look up a suite's
benchmark), and a benchmark's aggregate depends on its family's cells, never another family's, so
that adding a model and running one family's pipeline runs no other family's cells. A cell's
generation (its generate stage's files) and each judge's folder (its judge stage's output) are
apart, so that a judge's stage never rewrites a generation.

Every name that becomes a path (a model, judge, suite, benchmark, family, ...) is one file name
(`NAME`: letters, digits, `_`, `.`, `-`; no `/`, no `..`), checked wherever a path is made from it
(`check_name`): `model=../../x` writes nothing outside the outputs. A problem id becomes a file
name only through `page_name`, which keeps an id that is a `NAME` and makes any other one safe.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import re
from pathlib import Path

from olympiad_eval.core.records import InputError

# Where the outputs are, relative to the repository (the stages' `paths.outputs` in conf/common.yaml,
# which a test checks against this).
OUTPUTS = "outputs"
# The files the fetch and render stages write into their folders, and the index of a benchmark's
# tables that the aggregate stage writes and the report reads.
PROBLEM_RECORDS = "problems.jsonl"
PROMPTS = "prompts.jsonl"
SUITE_INFO = "suite.json"
TABLE_INDEX = "index.json"

# Each path relative to the outputs folder, with its fields in braces.
PATTERNS = {
    # the check stage's outputs (stages/check.py): every fetch depends on its line, so the plan is checked
    # first; each generate stage on its model's record for its suite, each judge stage on its judge's
    # (`stages.configs`: the config as the stage composes it, and for a model the files its provider
    # reads), so that what reruns a stage is a value it reads, never a comment or a file it does not read
    "plan_check": "plan/checked.txt",
    "model_record": "plan/models/{model}/{suite}.yaml",
    "judge_record": "plan/judges/{judge}.yaml",
    "problems": "problems/{benchmark}",
    "problem_records": f"problems/{{benchmark}}/{PROBLEM_RECORDS}",
    # what a family's stage runs (the check stage writes it: `core.code.write_code_lists`): each code
    # file of one stage script with its hash; the family's stages depend on it instead of on each file
    "code": "code/{family}/{stage}.txt",
    "suite": "suites/{family}/{suite}",
    "prompts": f"suites/{{family}}/{{suite}}/{PROMPTS}",
    "suite_info": f"suites/{{family}}/{{suite}}/{SUITE_INFO}",
    # A family's cells: a benchmark's aggregate reads its family's folder (the plan picks its cells).
    "cells": "cells/{family}",
    "cell": "cells/{family}/{suite}/{model}",
    # the cell's generate stage writes its generation's folder: the generations, their usage and ...
    "generated": "cells/{family}/{suite}/{model}/generation",
    "generations": "cells/{family}/{suite}/{model}/generation/generations.jsonl",
    "usage": "cells/{family}/{suite}/{model}/generation/usage.json",
    # ... each sample's reply facts (tokens, attempts, date, the model served: `records.SampleReply`),
    # apart from the generations: like the judges' conversations, its dates and retries are facts of a run
    "sample_replies": "cells/{family}/{suite}/{model}/generation/replies.jsonl",
    # each judge stage of the cell writes its judge's folder
    "judged": "cells/{family}/{suite}/{model}/judges/{judge}",
    "judgments": "cells/{family}/{suite}/{model}/judges/{judge}/judgments.jsonl",
    # what a judge sent to its LLM judges and their raw replies, re-asks included (the report's
    # judge conversations): apart from the judgments, which the tables read whole
    "conversations": "cells/{family}/{suite}/{model}/judges/{judge}/conversations.jsonl",
    "coverage": "cells/{family}/{suite}/{model}/judges/{judge}/coverage.json",
    # a judge's tokens and cost, beside its model's generation usage (`usage`)
    "judge_usage": "cells/{family}/{suite}/{model}/judges/{judge}/usage.json",
    "tables": "tables/{benchmark}",
    "table_index": f"tables/{{benchmark}}/{TABLE_INDEX}",
    "metrics": "metrics/{benchmark}/{suite}/{model}/{judge}.json",
    "plots": "plots/{benchmark}",
    "plot": "plots/{benchmark}/{plot}.csv",
    # The report: the root stage writes its index, assets and what lists the plan's models (the flips,
    # each suite's list of models and their outcomes, `compare/`); each suite's render stage writes its
    # side-by-side pages (`side/`: the problem, into which the viewer loads each model's column);
    # each cell's pages stage (in its family's pipeline) writes that cell's folder, its columns of
    # the side-by-side pages among them, and each problem's status in the cell (`statuses`), which
    # the root reads for its counts and filters instead of walking every page: adding a model writes
    # its own files and the pages that list the models, and no other model's or suite's file.
    "report": "report",
    "report_index": "report/index.html",
    "report_assets": "report/assets",
    "report_compare": "report/compare/{suite}",
    "report_side": "report/side/{suite}",
    "report_cell": "report/cells/{family}/{suite}/{model}",
    "statuses": "statuses/{family}/{suite}/{model}.json",
    # Written on demand by `python -m olympiad_eval.cli.compare`, not by a DVC stage: one folder per
    # comparison of two cells (or per judge agreement) of a suite, and a page listing them all.
    "comparison": "comparisons/{suite}/{comparison}",
    "comparison_index": "comparisons/index.html",
}
# The order a path's fields are given in when they are given by position (`layout.judgments(family,
# suite, model, judge)`), whatever their order in the path: a cell is named (suite, model) everywhere.
FIELD_ORDER = ("benchmark", "family", "stage", "suite", "model", "judge", "plot", "comparison")
_FIELD = re.compile(r"\{(\w+)\}")

# A name that becomes a path: one file name, of letters, digits, `_`, `.` and `-`, starting with a
# letter or a digit and not ending with a dot (no `/`, no `..`, nothing a shell or a URL quotes).
NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,79}[A-Za-z0-9_-])?")
NAME_RULE = "letters, digits, '_', '.' and '-', starting with a letter or a digit, not ending with '.', at most 81"


def is_name(value) -> bool:
    return isinstance(value, str) and NAME.fullmatch(value) is not None


def check_name(kind: str, value, where: str = "") -> str:
    """`value`, where it is a name that may become a path (`NAME`); else an error naming it."""
    if is_name(value):
        return value
    raise InputError(
        f"{where + ': ' if where else ''}{kind} {value!r:.120} is not a name that can become a path ({NAME_RULE}); "
        "outputs are written under their names, so each must be one plain file name"
    )


def page_name(problem_id: str) -> str:
    """A problem's file name: its id where that is a `NAME`, else a plain form of it with a hash of
    the id (two ids never share a file; `../x` never leaves its folder)."""
    if is_name(problem_id):
        return problem_id
    plain = re.sub(r"[^A-Za-z0-9_.-]+", "_", problem_id)[:60].strip("._") or "problem"
    return f"{plain}-{hashlib.sha256(problem_id.encode()).hexdigest()[:10]}"


def fields_of(name: str) -> list[str]:
    """The fields of a path, in the order they are given by position (`FIELD_ORDER`)."""
    fields = set(_FIELD.findall(PATTERNS[name]))
    return [field for field in FIELD_ORDER if field in fields]


def spelled(name: str, **fields: str) -> str:
    """A path relative to the outputs folder. Fields left out at the end give the folder that holds
    every path of the name with those fields (`spelled("judgments", family="hipho")` is
    `cells/hipho`, where each HiPhO judgment file is); a field given after one left out names
    nothing, and is refused."""
    if name not in PATTERNS:
        raise KeyError(f"no output path named '{name}'; the names: {', '.join(PATTERNS)}")
    unknown = sorted(set(fields) - set(fields_of(name)))
    if unknown:
        raise KeyError(f"the path '{name}' ({PATTERNS[name]}) has no field {', '.join(unknown)}")
    kept = list(itertools.takewhile(lambda part: set(_FIELD.findall(part)) <= set(fields), PATTERNS[name].split("/")))
    stranded = set(fields) - set(_FIELD.findall("/".join(kept)))
    if stranded:
        raise KeyError(
            f"the path '{name}' ({PATTERNS[name]}): {', '.join(sorted(stranded))} given after a field left out"
        )
    return "/".join(part.format(**fields) for part in kept)


class Layout:
    """The paths of a run's outputs under one folder (`paths.outputs`): a method for each name of
    `PATTERNS`, taking the path's fields by position in `FIELD_ORDER`, whatever their order in the
    path (`layout.judgments(family, suite, model, judge)`, `layout.report_index()`). Fields left
    out at the end of the path (or given as None) name the folder holding every such path
    (`layout.metrics(benchmark)`: the benchmark's metrics; `layout.cells(family)`: every cell of a
    benchmark family)."""

    def __init__(self, root: str | Path = OUTPUTS):
        self.root = Path(root)

    def __getattr__(self, name: str):
        if name.startswith("_") or name not in PATTERNS:
            raise AttributeError(f"Layout has no path '{name}'; the paths: {', '.join(PATTERNS)}")
        return functools.partial(self._path, name)

    def _path(self, name: str, *values: str | None, **fields: str | None) -> Path:
        given = {**dict(zip(fields_of(name), values)), **fields}
        given = {field: value for field, value in given.items() if value is not None}
        for field, value in given.items():
            check_name(field, value)
        return self.root / spelled(name, **given)
