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
"""

from __future__ import annotations

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
    "problems": "problems/{benchmark}",
    "problem_records": f"problems/{{benchmark}}/{PROBLEM_RECORDS}",
    "suite": "suites/{suite}",
    "prompts": f"suites/{{suite}}/{PROMPTS}",
    "suite_info": f"suites/{{suite}}/{SUITE_INFO}",
    "generations": "generations/{family}/{suite}/{model}.jsonl",
    "usage": "usage/{family}/{suite}/{model}.json",
    "judgments": "judgments/{family}/{suite}/{model}/{judge}.jsonl",
    "coverage": "coverage/{family}/{suite}/{model}/{judge}.json",
    # a judge cell's tokens and cost, beside its model's generation usage (`usage/.../<model>.json`)
    "judge_usage": "usage/{family}/{suite}/{model}/{judge}.json",
    "tables": "tables/{benchmark}",
    "table_index": f"tables/{{benchmark}}/{TABLE_INDEX}",
    "metrics": "metrics/{benchmark}/{suite}/{model}/{judge}.json",
    "plots": "plots/{benchmark}",
    "plot": "plots/{benchmark}/{plot}.csv",
    # The report: the root stage writes its index, assets and side-by-side pages; each suite x model
    # cell's own stage (in its family's pipeline) writes that cell's folder, so that adding a model
    # rewrites no other cell's file.
    "report": "report",
    "report_index": "report/index.html",
    "report_assets": "report/assets",
    "report_compare": "report/compare/{suite}",
    "report_cell": "report/cells/{suite}/{model}",
    # Written on demand by `python -m olympiad_eval.cli.compare`, not by a DVC stage: one folder per
    # comparison of two cells (or per judge agreement) of a suite, and a page listing them all.
    "comparison": "comparisons/{suite}/{comparison}",
    "comparison_index": "comparisons/index.html",
}
_FIELD = re.compile(r"\{(\w+)\}")


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
    """The paths of a run's outputs under one folder (`paths.outputs`)."""

    def __init__(self, root: str | Path = OUTPUTS):
        self.root = Path(root)

    def _path(self, name: str, **fields: str) -> Path:
        return self.root / spelled(name, **fields)

    # per benchmark
    def problems(self, benchmark: str) -> Path:
        return self._path("problems", benchmark=benchmark)

    def problem_records(self, benchmark: str) -> Path:
        return self._path("problem_records", benchmark=benchmark)

    def tables(self, benchmark: str) -> Path:
        return self._path("tables", benchmark=benchmark)

    def table_index(self, benchmark: str) -> Path:
        return self._path("table_index", benchmark=benchmark)

    def metrics(
        self, benchmark: str, suite: str | None = None, model: str | None = None, judge: str | None = None
    ) -> Path:
        """A cell's headline metrics; with the cell left out, the benchmark's folder of them."""
        cell = {name: value for name, value in (("suite", suite), ("model", model), ("judge", judge)) if value}
        return self._path("metrics", benchmark=benchmark, **cell)

    def plots(self, benchmark: str) -> Path:
        return self._path("plots", benchmark=benchmark)

    def plot(self, benchmark: str, plot: str) -> Path:
        return self._path("plot", benchmark=benchmark, plot=plot)

    # per suite
    def suite(self, suite: str) -> Path:
        return self._path("suite", suite=suite)

    def prompts(self, suite: str) -> Path:
        return self._path("prompts", suite=suite)

    def suite_info(self, suite: str) -> Path:
        return self._path("suite_info", suite=suite)

    # per cell: suite x model (x judge), under the suite's benchmark family
    def generations(self, family: str, suite: str, model: str) -> Path:
        return self._path("generations", family=family, suite=suite, model=model)

    def usage(self, family: str, suite: str, model: str) -> Path:
        return self._path("usage", family=family, suite=suite, model=model)

    def judgments(self, family: str, suite: str, model: str, judge: str) -> Path:
        return self._path("judgments", family=family, suite=suite, model=model, judge=judge)

    def coverage(self, family: str, suite: str, model: str, judge: str) -> Path:
        return self._path("coverage", family=family, suite=suite, model=model, judge=judge)

    def judge_usage(self, family: str, suite: str, model: str, judge: str) -> Path:
        return self._path("judge_usage", family=family, suite=suite, model=model, judge=judge)

    # the report
    def report(self) -> Path:
        return self._path("report")

    def report_index(self) -> Path:
        return self._path("report_index")

    def report_assets(self) -> Path:
        return self._path("report_assets")

    def report_compare(self, suite: str | None = None) -> Path:
        """A suite's side-by-side pages; with no suite, the folder of every suite's."""
        return self._path("report_compare", **({"suite": suite} if suite else {}))

    def report_cell(self, suite: str, model: str) -> Path:
        return self._path("report_cell", suite=suite, model=model)

    # on demand (olympiad_eval.cli.compare)
    def comparison(self, suite: str, comparison: str) -> Path:
        return self._path("comparison", suite=suite, comparison=comparison)

    def comparison_index(self) -> Path:
        return self._path("comparison_index")


# ---------------------------------------------------------------- a cell's family, from the plan


def family_of_benchmark(plan: dict, benchmark: str, plan_path: str | Path) -> str:
    """The family whose pipeline holds a benchmark (`plan` as `stage.read_plan` joins it)."""
    family = plan["family"].get(benchmark)
    if family is None:
        raise InputError(
            f"{plan_path}: benchmark '{benchmark}' is in no pipeline of the plan: add it under "
            "pipelines.<its kind>.benchmarks (benchmark: the folder its release is read from)"
        )
    return family


def family_of_suite(plan: dict, suite: str, plan_path: str | Path) -> str:
    """The family whose folders hold a suite's cells: its benchmark's."""
    benchmark = plan["suites"].get(suite)
    if benchmark is None:
        raise InputError(
            f"{plan_path}: suite '{suite}' is in no pipeline of the plan: add it under "
            "pipelines.<its benchmark's kind>.suites (suite: its benchmark)"
        )
    return family_of_benchmark(plan, benchmark, plan_path)
