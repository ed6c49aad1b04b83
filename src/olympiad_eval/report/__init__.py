"""The report: a static folder (`outputs/report/`) that opens from disk, with no server and no
network, for auditing a run problem by problem.

- `write_cell_pages` (each cell's pages stage, in its family's pipeline): the cell's index, a row
  per problem to sort and filter, a page per problem with what each judge was asked and replied,
  the cell's columns of the side-by-side pages (`cell.py`), and each problem's status in the cell,
  which the root reads;
- `write_side` (each suite's render stage, in its family's pipeline): a side-by-side page per problem, its
  own text and figures, into which the viewer loads each model's column (`side.py`): it reads the
  suite alone, so adding a model does not rerun it;
- `write_report` (the root stage): the index of the whole plan (run metadata, every benchmark's
  tables and charts, a link per cell, the flips between the plan's models), what lists the plan's
  models for the side-by-side pages and the cells' indexes (each suite's models and their
  outcomes), and the shared assets: the viewer's own script and style (`assets/`, package data)
  and MathJax with its safe extension, copied from its installed package.

Everything that comes from a dataset or a model is escaped (`html.py`), typeset safely and shown
under a Content-Security-Policy that lets a page load the report's own files only. The output is
a function of its stage's DVC dependencies alone (sorted, no timestamps, no git state), so a rerun
on the same inputs writes the same bytes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from urllib.parse import quote

from olympiad_eval.core.layout import Layout
from olympiad_eval.core.plan import family_of_suite
from olympiad_eval.core.records import InputError, atomic_dir, atomic_file, natural_key, read_suite_info
from olympiad_eval.report import html
from olympiad_eval.report.html import attr, relative, text

__all__ = [
    "write_report",
    "write_cell_pages",
    "write_side",
    "write_comparison_index",
    "partial",
    "partial_html",
]

# The viewer's own script and style (package data), which every page names.
ASSETS = Path(__file__).parent / "assets"


def write_cell_pages(
    plan: dict, layout: Layout, suite: str, model: str, settings: dict, plan_path: str | Path = "params.yaml"
) -> Path:
    """The pages of one suite x model of the plan (`core.plan.read_plan`'s, read from `plan_path`), and
    its problems' statuses (`layout.statuses`); `settings`: the model's, as its config gives them."""
    from olympiad_eval.report.cell import write_cell

    return write_cell(_cell(plan, layout, suite, model, plan_path), settings)


def _cell(plan: dict, layout: Layout, suite: str, model: str, plan_path: str | Path):
    from olympiad_eval.report.cell import Cell

    family = family_of_suite(plan, suite, plan_path)
    if model not in (plan.get("models") or []):
        raise InputError(f"{plan_path}: model '{model}' is not among the plan's models: add it under `models`")
    return Cell(suite, plan["suites"][suite], family, model, tuple(plan.get("judges") or ()), layout)


def write_side(plan: dict, layout: Layout, suite: str, plan_path: str | Path = "params.yaml") -> Path:
    """The side-by-side pages of one suite of the plan."""
    from olympiad_eval.report.side import write_side_pages

    if suite not in (plan.get("suites") or {}):
        raise InputError(f"{plan_path}: suite '{suite}' is not among the plan's suites: add it under `suites`")
    return write_side_pages(layout, plan["family"][plan["suites"][suite]], suite)


def write_report(plan: dict, layout: Layout) -> None:
    """The root of the report: assets, what lists the plan's models per suite, then the index."""
    write_assets(layout.report_assets())
    seen = write_compare(plan, layout)
    layout.report_index().parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(layout.report_index()) as handle:
        handle.write(html.head("olympiad-eval report", relative(layout.report_assets(), layout.report()), maths=False))
        for chunk in _index(plan, layout, seen):
            handle.write(chunk + "\n")
        handle.write(html.PAGE_TAIL)


# ---------------------------------------------------------------- assets


def write_assets(folder: Path) -> None:
    """The viewer's script and style, and MathJax's SVG build (one file with every TeX extension and
    its fonts as paths, so that nothing more is loaded) with its licence."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with atomic_dir(folder) as staging:
        os.chmod(staging, 0o755)
        own = resources.files("olympiad_eval.report") / "assets"
        for name in (html.STYLE, html.SCRIPT):
            (staging / name).write_bytes((own / name).read_bytes())
        mathjax = resources.files("mathjax") / "static" / "mathjax"
        (staging / "mathjax" / "ui").mkdir(parents=True)
        for source, target in (
            ("es5/tex-svg-full.js", html.MATHJAX),
            ("es5/ui/safe.js", html.MATHJAX_SAFE),
            ("LICENSE", "mathjax/LICENSE"),
        ):
            (staging / target).write_bytes((mathjax / source).read_bytes())
        for path in staging.rglob("*"):
            os.chmod(path, 0o755 if path.is_dir() else 0o644)


# ---------------------------------------------------------------- what lists the plan's models, flips


def write_compare(plan: dict, layout: Layout):
    """Per suite: the list of the plan's models that the side-by-side pages read, each problem's
    status per model (the cells' "models disagree" filter) and the flips between the plan's first
    model and each other (per judge). Returns what the index shows of them (`side.Seen`)."""
    from olympiad_eval.report.side import Seen, write_suite

    seen = Seen()
    root = layout.report_compare()
    root.parent.mkdir(parents=True, exist_ok=True)
    with atomic_dir(root) as staging:
        os.chmod(staging, 0o755)
        for suite in sorted(plan.get("suites") or {}):
            write_suite(plan, layout, suite, staging / suite, seen)
    return seen


# ---------------------------------------------------------------- the index


def _tables(layout: Layout, benchmark: str) -> list[dict]:
    """The tables of a benchmark in the aggregate stage's order, from the index it writes."""
    index = _need(layout.table_index(benchmark), benchmark)
    return json.loads(index.read_text(encoding="utf-8"))["tables"]


def _need(path: Path, cell: str) -> Path:
    if not path.is_file():
        raise InputError(f"{path}: the plan's cell {cell} has no such file; run its stages first")
    return path


def partial(layout: Layout, family: str, suite: str) -> str | None:
    """What a rendered suite that leaves problems out took (`2 of 5 problems (limit 2)`), from
    the selection its suite.json records; None for a whole suite."""
    path = layout.suite_info(family, suite)
    taken = read_suite_info(path).selection if path.is_file() else None
    return taken.describe() if taken is not None and taken.partial else None


def partial_html(layout: Layout, family: str, suites: list[str], named: bool = False) -> list[str]:
    """A line per partial suite (of a family's `suites`) saying what it took."""
    lines = []
    for name in suites:
        took = partial(layout, family, name)
        if took is not None:
            lines.append(f'<p class="partial"><b>partial:</b> {text(name) + ": " if named else ""}{text(took)}</p>')
    return lines


def _index(plan: dict, layout: Layout, seen) -> Iterator[str]:
    """The leaderboard first (what a paper's results table shows, each score linking its cell), then
    each benchmark's charts and tables, the flips between the plan's models, the comparisons and the
    run metadata."""
    import pandas as pd  # the root's tables only: a cell's pages need not pay its import

    from olympiad_eval.report.overview import benchmark_charts, flips_links, leaderboard, run_metadata
    from olympiad_eval.report.tables import table_html

    suites = dict(plan.get("suites") or {})
    benchmarks = list(plan.get("benchmarks") or [])
    own = {b: sorted((s for s, of in suites.items() if of == b), key=natural_key) for b in benchmarks}
    flips = [chunk for benchmark in benchmarks for chunk in flips_links(layout, own[benchmark], seen)]
    yield "<h1>olympiad-eval report</h1>"
    yield (
        '<p class="nav">models '
        + text(", ".join(map(str, plan.get("models") or [])))
        + "; judges "
        + text(", ".join(map(str, plan.get("judges") or [])))
        + " &middot; "
        + " &middot; ".join(
            [f'<a href="#{attr(b)}">{text(b)}</a>' for b in benchmarks]
            + (['<a href="#flips">flips</a>'] if flips else [])
            + ['<a href="#comparisons">comparisons</a>', '<a href="#metadata">run metadata</a>']
        )
        + "</p>"
    )
    yield from leaderboard(plan, layout, seen)
    for benchmark in benchmarks:
        yield f'<section class="benchmark" id="{attr(benchmark)}"><h2>{text(benchmark)}</h2>'
        tables = _tables(layout, benchmark)
        yield from benchmark_charts(plan, layout, benchmark, own[benchmark], tables)
        for table in tables:
            csv = _need(layout.tables(benchmark) / table["files"]["csv"], benchmark)
            yield f"<h3>{text(table['title'])}</h3>"
            frame = pd.read_csv(csv, keep_default_na=False, na_values=[""])
            yield table_html(frame, (Path(layout.root.name) / csv.relative_to(layout.root)).as_posix())
        yield "</section>"
    if flips:
        yield '<h2 id="flips">Flips between the plan\'s models</h2>'
        yield from flips
    yield _comparisons_link(layout)
    yield run_metadata(plan, layout, seen)


# ---- comparisons ---------------------------------------------------------------------------
# `python -m olympiad_eval.cli.compare` writes comparisons on demand, outside the DVC pipeline, and
# rewrites their page each time. The report links that page rather than listing the comparisons
# itself: it is a DVC stage, and what it reads must be its dependencies, so a list read from a
# folder that no stage makes would change its bytes (and its dvc.lock) with whatever comparisons
# happen to be on disk, and a new comparison would not show until the report reran. The flips the
# report shows itself are those between the plan's own cells (`side.py`).


def _comparisons_link(layout: Layout) -> str:
    page = relative(layout.comparison_index(), layout.report())
    return (
        '<h2 id="comparisons">Comparisons</h2>\n'
        f'<p><a href="{attr(page)}">Comparisons of two runs and judges\' agreement</a>: flips, score '
        "differences with paired intervals and tests, kappas. <code>python -m olympiad_eval.cli.compare runs SUITE "
        "MODEL/JUDGE MODEL/JUDGE</code> or <code>... judges SUITE CELL...</code> writes one and lists it there "
        "(no page until the first).</p>"
    )


def write_comparison_index(layout: Layout) -> Path:
    """The page listing every comparison under the comparisons folder, each with its tables."""
    folder = layout.comparison_index().parent
    entries = sorted(folder.glob("*/*/index.json"), key=lambda path: (path.parent.parent.name, path.parent.name))
    back = relative(layout.report_index(), folder)
    parts = ["<h1>Comparisons</h1>", f'<p><a href="{attr(back)}">back to the report</a></p>']
    parts += [_comparison_html(index) for index in entries] or ["<p>No comparison yet.</p>"]
    with atomic_file(layout.comparison_index()) as handle:
        handle.write(html.head("olympiad-eval comparisons", relative(layout.report_assets(), folder), maths=False))
        handle.write("\n".join(parts) + "\n" + html.PAGE_TAIL)
    return layout.comparison_index()


def _comparison_html(index_path: Path) -> str:
    index = json.loads(index_path.read_text(encoding="utf-8"))
    where = index_path.parent.relative_to(index_path.parent.parent.parent).as_posix()
    parts = [
        f'<h2 id="{attr(where)}">{text(index["title"])}</h2>',
        f'<p><a href="{attr(quote(where + "/" + index["all"]))}">{text(index["all"])}</a> (Markdown); '
        "each table as .md, .csv, .tex in "
        f'<a href="{attr(quote(where))}/">{text(where)}/</a></p>',
    ]
    for table in index["tables"]:
        parts.append(f"<h3>{text(table['title'])}</h3>")
        parts.append(_comparison_table_html(index_path.parent / table["files"]["csv"]))
    parts.append(
        "<ul>\n" + "\n".join(f"<li>{text(line)}</li>" for line in index["notes"] + index["made_by"]) + "\n</ul>"
    )
    return "\n".join(parts)


def _comparison_table_html(csv: Path) -> str:
    """A comparison's table; its p-values with three significant digits, not two decimals."""
    import pandas as pd  # the root's tables only: a cell's pages need not pay its import

    frame = pd.read_csv(csv, keep_default_na=False, na_values=[""])
    formatters = {"p": lambda p: f"{p:.3g}"} if "p" in frame.columns else None
    return frame.to_html(
        index=False, na_rep="\u2013", float_format="%.2f", formatters=formatters, escape=True, border=0
    )
