"""Where a run's outputs live: every path of every cell, spelled once.

The stage scripts, the tables, the report and the tests ask `Layout` for a path; `python -m
olympiad_eval.cli.plan` fills the pipeline templates' `<path NAME field=value ...>` markers from the
same `PATTERNS`, so the dvc.yaml files and the code cannot disagree.

The files of a generation or judge cell carry their benchmark family in their path
(`generations/<family>/<suite>/<model>.jsonl`), so that a family's aggregate depends on its own
family's folders only: adding a model to the plan and running one family's pipeline runs no other
family's cells, and dropping one family's suite leaves the other families' tables up to date.
What a benchmark or a suite names already (problems, suites, tables, metrics, plots) is not moved:
the prompts name the problems' figure paths, and must keep their bytes.

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
    # the check stage's output (stages/check.py): every fetch depends on it, so the plan is checked first
    "plan_check": "plan/checked.txt",
    "problems": "problems/{benchmark}",
    "problem_records": f"problems/{{benchmark}}/{PROBLEM_RECORDS}",
    # what a family's stage runs (`python -m olympiad_eval.cli.plan --code`): each code file of one
    # stage script with its hash; the family's stages depend on it instead of on each file
    "code": "code/{family}/{stage}.txt",
    "suite": "suites/{suite}",
    "prompts": f"suites/{{suite}}/{PROMPTS}",
    "suite_info": f"suites/{{suite}}/{SUITE_INFO}",
    "generations": "generations/{family}/{suite}/{model}.jsonl",
    "usage": "usage/{family}/{suite}/{model}.json",
    # each sample's reply facts (tokens, attempts, date, the model served: `records.SampleReply`),
    # beside the judges' conversations: like theirs, its dates and retries are facts of a run
    "sample_replies": "conversations/{family}/{suite}/{model}.jsonl",
    "judgments": "judgments/{family}/{suite}/{model}/{judge}.jsonl",
    # what a judge cell sent to its LLM judges and their raw replies, re-asks included (the report's
    # judge conversations): apart from the judgments, which the tables read whole
    "conversations": "conversations/{family}/{suite}/{model}/{judge}.jsonl",
    "coverage": "coverage/{family}/{suite}/{model}/{judge}.json",
    # a judge cell's tokens and cost, beside its model's generation usage (`usage/.../<model>.json`)
    "judge_usage": "usage/{family}/{suite}/{model}/{judge}.json",
    "tables": "tables/{benchmark}",
    "table_index": f"tables/{{benchmark}}/{TABLE_INDEX}",
    "metrics": "metrics/{benchmark}/{suite}/{model}/{judge}.json",
    "plots": "plots/{benchmark}",
    "plot": "plots/{benchmark}/{plot}.csv",
    # The report: the root stage writes its index, assets and what lists the plan's models (the flips,
    # each suite's list of models and their outcomes, `compare/`); each suite's own stage writes its
    # side-by-side pages (`side/`: the problem, into which the viewer loads each model's column);
    # each suite x model cell's own stage (in its family's pipeline) writes that cell's folder, its
    # columns of the side-by-side pages among them, so that adding a model writes its own files and
    # the pages that list the models, and no other cell's or suite's file.
    "report": "report",
    "report_index": "report/index.html",
    "report_assets": "report/assets",
    "report_compare": "report/compare/{suite}",
    "report_side": "report/side/{suite}",
    "report_cell": "report/cells/{suite}/{model}",
    # Written on demand by `python -m olympiad_eval.cli.compare`, not by a DVC stage: one folder per
    # comparison of two cells (or per judge agreement) of a suite, and a page listing them all.
    "comparison": "comparisons/{suite}/{comparison}",
    "comparison_index": "comparisons/index.html",
}
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
    """The fields of a path, in the order they appear in it."""
    return _FIELD.findall(PATTERNS[name])


def spelled(name: str, **fields: str) -> str:
    """A path relative to the outputs folder. Fields left out at the end give the folder that holds
    every path of the name with those fields (`spelled("judgments", family="hipho")` is
    `judgments/hipho`, where each HiPhO judgment file is); a field given after one left out names
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
    `PATTERNS`, taking the path's fields in the order the pattern has them
    (`layout.judgments(family, suite, model, judge)`, `layout.report_index()`). Fields left out at
    the end (or given as None) name the folder holding every such path (`layout.metrics(benchmark)`:
    the benchmark's metrics; `layout.judgments(family)`: the family's judgments)."""

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
