"""The parts of the report's index: the plan's run metadata, each benchmark's charts, the links to
its cells and to the flips between the plan's models."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pandas as pd

from olympiad_eval.benchmarks import plugin
from olympiad_eval.core.layout import Layout
from olympiad_eval.core.records import read_suite_info
from olympiad_eval.report import html
from olympiad_eval.report.cell import GIT_COMMIT_NOTE, MARKS, received_pairs
from olympiad_eval.report.charts import Bar, bar_chart
from olympiad_eval.report.html import attr, relative, text


def run_metadata(plan: dict, layout: Layout, seen) -> str:
    """The plan, what made each of its cells' judgments, and when their replies were received."""
    pairs = [
        ("models", ", ".join(map(str, plan.get("models") or []))),
        ("judges", ", ".join(map(str, plan.get("judges") or []))),
        ("suites", ", ".join(f"{suite} ({benchmark})" for suite, benchmark in sorted(plan["suites"].items()))),
    ]
    protocols = sorted({(judge, protocol, config) for (_, _, judge), (protocol, config, _) in seen.made_by.items()})
    pairs += [(f"judge {judge}", f"{protocol}; config {config}") for judge, protocol, config in protocols]
    packages = sorted({packages for _, _, packages in seen.made_by.values()})
    pairs.append(("package versions", "; ".join(packages) or "not recorded"))
    pairs += received_pairs(plan, layout, sorted(plan["suites"]))
    pairs.append(("git commit", GIT_COMMIT_NOTE))
    pairs.append(("model settings, tokens and cost", "on each cell's pages, and in each benchmark's summary table"))
    return html.metadata(pairs)


def benchmark_charts(
    plan: dict, layout: Layout, benchmark: str, suites: list[str], tables: list[dict]
) -> Iterator[str]:
    """Score per cell with its 95% interval, score per subset, and the benchmark's own charts (its
    `report_charts`, from its tables)."""
    bars = []
    for suite in suites:
        for judge in plan.get("judges") or []:
            for model in plan.get("models") or []:
                path = layout.metrics(benchmark, suite, model, judge)
                if path.is_file():
                    metric = json.loads(path.read_text(encoding="utf-8"))
                    bars.append(
                        Bar(
                            f"{suite} / {judge}",
                            str(model),
                            float(metric["score"]),
                            _float(metric.get("ci_low")),
                            _float(metric.get("ci_high")),
                        )
                    )
    yield bar_chart(f"{benchmark}: score per model, with its 95% interval", "%", bars)
    subsets = layout.plot(benchmark, "subsets")
    if subsets.is_file():
        frame = pd.read_csv(subsets, keep_default_na=False, na_values=[""])
        yield bar_chart(
            f"{benchmark}: score per subset",
            "%",
            [
                Bar(str(row["subset"]), str(row["cell"]), float(row["score (%)"]))
                for row in frame.to_dict("records")
                if pd.notna(row["score (%)"])
            ],
        )
    suites = [suite for suite, owner in plan["suites"].items() if owner == benchmark]
    if suites:  # the benchmark's kind, as its rendered suites record it (a family is named, not a kind)
        hook = plugin(read_suite_info(layout.suite_info(suites[0])).kind).report_charts
        frames = {
            table["name"]: pd.read_csv(
                layout.tables(benchmark) / table["files"]["csv"], keep_default_na=False, na_values=[""]
            )
            for table in tables
        }
        for chart in hook(frames):
            yield bar_chart(
                f"{benchmark}: {chart.title}",
                chart.unit,
                [Bar(label, series, float(value)) for label, series, value in chart.bars],
                chart.stacked,
            )


def _float(value) -> float | None:
    return None if value is None else float(value)


def cell_links(plan: dict, layout: Layout, suites: list[str], seen) -> Iterator[str]:
    items = []
    for suite in suites:
        for model in plan.get("models") or []:
            page = layout.report_cell(suite, model) / "index.html"
            counts = seen.statuses.get((suite, model), {})
            said = ", ".join(f"{counts[s]} {MARKS[s]}" for s in MARKS if counts.get(s))
            items.append(
                f'<li><a class="cell-link" href="{attr(relative(page, layout.report()))}">'
                f"{text(suite)} \u00d7 {text(model)}</a> {text(said)}</li>"
            )
    if items:
        yield (
            '<h3>Cells: every problem, its responses and judgments</h3>\n<ul class="cells">\n'
            + "\n".join(items)
            + "\n</ul>"
        )


def flips_links(layout: Layout, suites: list[str], seen) -> Iterator[str]:
    items = [
        f'<li><a class="flips-link" href="{attr(relative(layout.report_compare(suite) / page, layout.report()))}">'
        f"{text(suite)}: {text(first)} \u2192 {text(second)}, judge {text(judge)}</a>: {count} flipped</li>"
        for (suite, judge, first, second), (page, count) in sorted(seen.flips.items())
        if suite in suites
    ]
    if items:
        yield '<h3>Flips between the plan\'s models</h3>\n<ul class="flips">\n' + "\n".join(items) + "\n</ul>"
