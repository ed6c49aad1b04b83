"""The parts of the report's index: the leaderboard first (a row per model and judge, a column per
suite, each score linking its cell's pages, as `olympiad-eval leaderboard` prints it), each
benchmark's charts (a bar leads to its cell's index, filtered to it), the flips between the plan's
models and the plan's run metadata."""

from __future__ import annotations

import json
from collections.abc import Iterator
from urllib.parse import urlencode

import pandas as pd

from olympiad_eval.benchmarks import plugin
from olympiad_eval.core.layout import Layout
from olympiad_eval.core.records import natural_key, read_suite_info
from olympiad_eval.core.stats import PARTIAL_NOTE, SCORES_NOTE, headline_parts
from olympiad_eval.report import html, partial_html
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
    shades) and lead to its cell's index (a subset's, filtered to that group). Judges that scored a
    suite (a model, on a subset chart) alike share one row (one bar), named by them all."""
    yield bar_chart(f"{benchmark}: score per model, with its 95% interval", "%", _score_bars(plan, layout, suites))
    yield from _subset_charts(plan, layout, benchmark, suites)
    yield from _own_charts(plan, layout, benchmark, tables)


def _score_bars(plan: dict, layout: Layout, suites: list[str]) -> list[Bar]:
    """A row per suite and judge (judges alike: one row), a bar per model with its interval."""
    colours, models = model_colours(plan), [str(model) for model in plan.get("models") or []]
    bars = []
    for suite in suites:
        by_judge = {}
        for judge in map(str, plan.get("judges") or []):
            paths = [(model, layout.metrics(plan["suites"][suite], suite, model, judge)) for model in models]
            by_judge[judge] = tuple(
                (model, float(m["score"]), _float(m.get("ci_low")), _float(m.get("ci_high")))
                for model, path in paths
                if path.is_file()
                for m in [json.loads(path.read_text(encoding="utf-8"))]
            )
        bars += [
            Bar(
                f"{suite} / {named}",
                model,
                value,
                low,
                high,
                colour=colours.get(model),
                href=_cell_index(plan, layout, suite, model),
            )
            for named, scored in _alike(by_judge)
            for model, value, low, high in scored
        ]
    return bars


def _subset_charts(plan: dict, layout: Layout, benchmark: str, suites: list[str]) -> Iterator[str]:
    """Per suite, a row per subset (in the aggregate's order), a bar per model and judge (judges
    alike: one bar, each group a shade of the model's colour), from the aggregate's plot data."""
    path = layout.plot(benchmark, "subsets")
    if not path.is_file():
        return
    colours, judges = model_colours(plan), [str(judge) for judge in plan.get("judges") or []]
    models = [str(model) for model in plan.get("models") or []]
    frame = pd.read_csv(path, keep_default_na=False, na_values=[""])
    groups = list(dict.fromkeys(str(group) for group in frame["subset"]))
    scores: dict[str, dict[str, dict[str, dict[str, float]]]] = {}  # suite -> model -> judge -> subset -> score
    for row in frame.to_dict("records"):
        if not pd.isna(row["score (%)"]):
            model, judge, suite = str(row["cell"]).split(" / ", 2)  # as aggregate's plot_data names a cell
            scores.setdefault(suite, {}).setdefault(model, {}).setdefault(judge, {})[str(row["subset"])] = float(
                row["score (%)"]
            )
    for suite in sorted(scores, key=lambda name: suites.index(name) if name in suites else len(suites)):
        bars = []
        for model in sorted(scores[suite], key=lambda name: models.index(name) if name in models else len(models)):
            by_judge = {
                judge: tuple(scores[suite][model][judge].items()) for judge in judges if judge in scores[suite][model]
            }
            bars += [
                Bar(
                    group,
                    f"{model} / {named}" if len(judges) > 1 else model,
                    value,
                    colour=colours.get(model),
                    opacity=shade(place),
                    href=_cell_index(plan, layout, suite, model, group),
                )
                for place, (named, values) in enumerate(_alike(by_judge))
                for group, value in values
            ]
        yield bar_chart(f"{suite}: score per subset", "%", sorted(bars, key=lambda bar: groups.index(bar.label)))


def _own_charts(plan: dict, layout: Layout, benchmark: str, tables: list[dict]) -> Iterator[str]:
    """The benchmark's own charts of its tables (its `report_charts`)."""
    suites = [suite for suite, owner in plan["suites"].items() if owner == benchmark]
    if not suites:
        return
    # the benchmark's kind, as its rendered suites record it (a family is named, not a kind)
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


def _alike(by_judge: dict[str, tuple]) -> list[tuple[str, tuple]]:
    """The judges whose values are the same, each group once as (their names, "rule, scripted"; the
    values), in the plan's order of judges."""
    groups: dict[tuple, list[str]] = {}
    for judge, values in by_judge.items():
        if values:
            groups.setdefault(values, []).append(judge)
    return [(", ".join(named), values) for values, named in groups.items()]


def _float(value) -> float | None:
    return None if value is None else float(value)


def _cell_index(plan: dict, layout: Layout, suite: str, model: str, group: str | None = None) -> str:
    """A cell's index from the report's index; filtered to a group (the view in its fragment, as
    the viewer reads it)."""
    link = relative(
        layout.report_cell(plan["family"][plan["suites"][suite]], suite, model) / "index.html", layout.report()
    )
    return link + ("#" + urlencode({"group": group}) if group else "")


def leaderboard(plan: dict, layout: Layout, seen) -> Iterator[str]:
    """A row per model and judge (in the plan's order; judges whose every score is the same share a
    row), a column per suite under its benchmark: its score with its 95% interval and `*` for a
    partial suite, as the aggregate's headline metrics have them, linking the cell's index."""
    models, judges = [str(m) for m in plan.get("models") or []], [str(j) for j in plan.get("judges") or []]
    benchmarks = list(plan.get("benchmarks") or [])
    own = {b: sorted((s for s, of in plan["suites"].items() if of == b), key=natural_key) for b in benchmarks}
    suites = [suite for benchmark in benchmarks for suite in own[benchmark]]
    if not suites or not models:
        return
    colours = model_colours(plan)
    rows: dict[tuple, list[str]] = {}  # (model, its scores) -> the judges that gave them
    for model in models:
        for judge in judges:
            scores = tuple(_score(layout, plan["suites"][suite], suite, model, judge) for suite in suites)
            rows.setdefault((model, scores), []).append(judge)
    top = "".join(
        f'<th rowspan="2">{_breakable(b)}</th>'
        if own[b] == [b]
        else f'<th colspan="{len(own[b])}">{_breakable(b)}</th>'
        for b in benchmarks
        if own[b]
    )
    second = "".join(_breakable(s).join(("<th>", "</th>")) for b in benchmarks if own[b] != [b] for s in own[b])
    body = "\n".join(
        f'<tr><th class="model"><span class="swatch" style="background: {colours[model]}"></span>{text(model)}</th>'
        f"<td>{text(', '.join(named))}</td>"
        + "".join(_score_cell(plan, layout, suite, model, named, score, seen) for suite, score in zip(suites, scores))
        + "</tr>"
        for (model, scores), named in rows.items()
    )
    head = f'<tr><th rowspan="2">model</th><th rowspan="2">judge</th>{top}</tr><tr>{second}</tr>'
    if not second:  # every benchmark a suite of its name: one row of headers
        head = head.replace(' rowspan="2"', "").replace("<tr></tr>", "")
    yield (
        '<section id="leaderboard"><h2>Leaderboard</h2>\n<div class="table-wrap"><table class="leaderboard">\n'
        f"<thead>{head}</thead>\n<tbody>\n{body}\n</tbody></table></div>"
    )
    flagged = any(score and score[0].endswith("*") for _, scores in rows for score in scores)
    note = SCORES_NOTE + (f"; {PARTIAL_NOTE}" if flagged else "")
    yield (
        f'<p class="table-note">{text(note)} (as <code>olympiad-eval leaderboard</code> prints them); a score '
        "opens its cell: every problem with its responses, judgments and judge conversations</p>"
    )
    for benchmark in benchmarks:
        yield from partial_html(layout, plan["family"][benchmark], own[benchmark], named=True)
    yield "</section>"


def _score(layout: Layout, benchmark: str, suite: str, model: str, judge: str) -> tuple[str, str] | None:
    """A cell's score and interval as the leaderboard writes them (`headline_parts`); None where not run."""
    path = layout.metrics(benchmark, suite, model, judge)
    return headline_parts(json.loads(path.read_text(encoding="utf-8"))) if path.is_file() else None


def _score_cell(plan: dict, layout: Layout, suite: str, model: str, judges: list[str], score, seen) -> str:
    """A cell's score and interval, linking its index (its problems' counts in the link's tooltip)."""
    named = f"{suite} \u00d7 {model}, judge{'s' * (len(judges) > 1)} {', '.join(judges)}"
    if score is None:
        return f'<td class="score" title="{attr(named)}: not run yet">\u2013</td>'
    counts = seen.statuses.get((suite, model), {})
    said = ", ".join(f"{counts[s]} {MARKS[s]}" for s in MARKS if counts.get(s))
    tip = named + (f": {said} (problems, over every judge of the plan)" if said else "")
    value, interval = score
    return (
        f'<td class="score"><a class="cell-link" href="{attr(_cell_index(plan, layout, suite, model))}" '
        f'title="{attr(tip)}">{text(value)}'
        + (f' <span class="interval">{text(interval)}</span>' if interval else "")
        + "</a></td>"
    )


def _breakable(name: str) -> str:
    """A header that may wrap after an underscore (`sample_` / `physelite_en`), never inside a word."""
    return text(name).replace("_", "_<wbr>")


def flips_links(layout: Layout, suites: list[str], seen) -> Iterator[str]:
    items = [
        f'<li><a class="flips-link" href="{attr(relative(layout.report_compare(suite) / page, layout.report()))}">'
        f"{text(suite)}: {text(first)} \u2192 {text(second)}, judge {text(judge)}</a>: {count} flipped</li>"
        for (suite, judge, first, second), (page, count) in sorted(seen.flips.items())
        if suite in suites
    ]
    if items:
        yield '<ul class="flips">\n' + "\n".join(items) + "\n</ul>"
