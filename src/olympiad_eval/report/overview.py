"""The parts of the report's index: the navigation first (a link to every cell, with its counts,
and to the flips between the plan's models), each benchmark's charts (a bar leads to its cell's
index, filtered to it) and the plan's run metadata."""

from __future__ import annotations

import json
from collections.abc import Iterator
from urllib.parse import urlencode

import pandas as pd

from olympiad_eval.benchmarks import plugin
from olympiad_eval.core.layout import Layout
from olympiad_eval.core.records import read_suite_info
from olympiad_eval.report import html
from olympiad_eval.report.cell import GIT_COMMIT_NOTE, MARKS, received_pairs
from olympiad_eval.report.charts import Bar, bar_chart, model_colours, shade
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
    return html.metadata(pairs).replace('<section class="metadata">', '<section class="metadata" id="metadata">', 1)


def benchmark_charts(
    plan: dict, layout: Layout, benchmark: str, suites: list[str], tables: list[dict]
) -> Iterator[str]:
    """Score per cell with its 95% interval, score per subset of each suite, and the benchmark's own
    charts (its `report_charts`, from its tables). A model's bars have its colour (its judges, its
    shades) and lead to its cell's index (a subset's, filtered to that group)."""
    colours, judges = model_colours(plan), [str(judge) for judge in plan.get("judges") or []]
    bars = []
    for suite in suites:
        for judge in judges:
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
                            colour=colours.get(str(model)),
                            href=_cell_index(plan, layout, suite, str(model)),
                        )
                    )
    yield bar_chart(f"{benchmark}: score per model, with its 95% interval", "%", bars)
    subsets = layout.plot(benchmark, "subsets")
    if subsets.is_file():
        frame = pd.read_csv(subsets, keep_default_na=False, na_values=[""])
        by_suite: dict[str, list[Bar]] = {}
        for row in frame.to_dict("records"):
            if pd.isna(row["score (%)"]):
                continue
            model, judge, suite = str(row["cell"]).split(" / ", 2)  # as aggregate's plot_data names a cell
            group = str(row["subset"])
            by_suite.setdefault(suite, []).append(
                Bar(
                    group,
                    f"{model} / {judge}" if len(judges) > 1 else model,
                    float(row["score (%)"]),
                    colour=colours.get(model),
                    opacity=shade(judges.index(judge)) if judge in judges else 1.0,
                    href=_cell_index(plan, layout, suite, model, group),
                )
            )
        models = [str(model) for model in plan.get("models") or []]

        def in_plan(bar: Bar) -> tuple:  # a row's bars in the plan's order of models, then judges
            model, _, judge = bar.series.partition(" / ")
            return (
                models.index(model) if model in models else len(models),
                judges.index(judge) if judge in judges else len(judges),
            )

        for suite in sorted(by_suite, key=lambda name: suites.index(name) if name in suites else len(suites)):
            yield bar_chart(f"{suite}: score per subset", "%", sorted(by_suite[suite], key=in_plan))
    suites = [suite for suite, owner in plan["suites"].items() if owner == benchmark]
    if suites:  # the benchmark's kind, as its rendered suites record it (a family is named, not a kind)
        hook = plugin(read_suite_info(layout.suite_info(plan["family"][benchmark], suites[0])).kind).report_charts
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


def _cell_index(plan: dict, layout: Layout, suite: str, model: str, group: str | None = None) -> str:
    """A cell's index from the report's index; filtered to a group (the view in its fragment, as
    the viewer reads it)."""
    link = relative(
        layout.report_cell(plan["family"][plan["suites"][suite]], suite, model) / "index.html", layout.report()
    )
    return link + ("#" + urlencode({"group": group}) if group else "")


def cell_links(plan: dict, layout: Layout, suites: list[str], seen) -> Iterator[str]:
    """A row per suite, a column per model (its colour, as on the charts): a link to each cell's
    index with its problems' counts by status."""
    models = [str(model) for model in plan.get("models") or []]
    if not suites or not models:
        return
    colours = model_colours(plan)
    heads = "".join(
        f'<th><span class="swatch" style="background: {colours[model]}"></span>{text(model)}</th>' for model in models
    )
    rows = []
    for suite in suites:
        cells = []
        for model in models:
            page = layout.report_cell(plan["family"][plan["suites"][suite]], suite, model) / "index.html"
            counts = seen.statuses.get((suite, model), {})
            said = ", ".join(f"{counts[s]} {MARKS[s]}" for s in MARKS if counts.get(s))
            cells.append(
                f'<td><a class="cell-link" href="{attr(relative(page, layout.report()))}">'
                f'{text(suite)} \u00d7 {text(model)}</a><br><span class="counts">{text(said)}</span></td>'
            )
        rows.append(f"<tr><th>{text(suite)}</th>{''.join(cells)}</tr>")
    yield (
        '<div class="table-wrap"><table class="cells">\n'
        f"<thead><tr><th>suite</th>{heads}</tr></thead>\n<tbody>\n" + "\n".join(rows) + "\n</tbody></table></div>"
    )


def flips_links(layout: Layout, suites: list[str], seen) -> Iterator[str]:
    items = [
        f'<li><a class="flips-link" href="{attr(relative(layout.report_compare(suite) / page, layout.report()))}">'
        f"{text(suite)}: {text(first)} \u2192 {text(second)}, judge {text(judge)}</a>: {count} flipped</li>"
        for (suite, judge, first, second), (page, count) in sorted(seen.flips.items())
        if suite in suites
    ]
    if items:
        yield '<ul class="flips">\n' + "\n".join(items) + "\n</ul>"
