"""The root stage's pages of each suite: a side-by-side page per problem across every model and
judge of the plan, and the flips between the plan's first model and each other, as the comparison
command (`olympiad_eval.cli.compare`) finds them, from the plan's own cells (the stage's dependencies)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from olympiad_eval.core.layout import Layout
from olympiad_eval.core.outcomes import Cell, Judged, flips_table, outcome
from olympiad_eval.core.records import Judgment, Prompt, iter_jsonl
from olympiad_eval.report import html
from olympiad_eval.report.cell import GIT_COMMIT_NOTE, MARKS, Cursor, mean_points, need, received_pairs, status_of
from olympiad_eval.report.html import attr, maths, number, relative, text

DASH = "\u2013"


@dataclass
class Seen:
    """What the index shows of the side-by-side pass."""

    made_by: dict = field(default_factory=dict)  # (suite, model, judge) -> (protocol, judge config, packages)
    statuses: dict = field(default_factory=dict)  # (suite, model) -> Counter of problem statuses
    flips: dict = field(default_factory=dict)  # (suite, judge, A, B) -> (page, number of flips)


def flips_page(judge: str, first: str, second: str) -> str:
    return f"flips__{first}__vs__{second}__{judge}.html"


def write_suite(plan: dict, layout: Layout, suite: str, folder: Path, seen: Seen) -> None:
    benchmark = plan["suites"][suite]
    family = plan["family"][benchmark]
    models, judges = list(plan.get("models") or []), list(plan.get("judges") or [])
    final = layout.report_compare(suite)  # where the pages will be, for their links
    cells = [(model, judge) for model in models for judge in judges]
    dates = received_pairs(plan, layout, [suite])  # the same on every page of the suite
    paths = {cell: need(layout.judgments(family, suite, *cell), f"{suite} x {cell[0]} x {cell[1]}") for cell in cells}
    cursors = {cell: Cursor(iter_jsonl(path, Judgment)) for cell, path in paths.items()}
    outcomes: dict = {cell: {} for cell in cells}
    problems: list[str] = []
    for model in models:
        seen.statuses[(suite, model)] = Counter()
    for prompt in iter_jsonl(need(layout.prompts(suite), suite), Prompt):
        judged = {cell: cursor.take(prompt.id) for cell, cursor in cursors.items()}
        problems.append(prompt.id)
        for cell, judgments in judged.items():
            if judgments:
                seen.made_by.setdefault(
                    (suite, *cell), (judgments[0].protocol, judgments[0].judge_config, judgments[0].packages)
                )
                outcomes[cell][prompt.id] = _outcome(cell, paths[cell], judgments)
        for model in models:
            graded = {judge: {j.sample: j for j in judged[(model, judge)]} for judge in judges}
            seen.statuses[(suite, model)][_status(graded)] += 1
        html.write_page(
            folder / f"{html.page_slug(prompt.id)}.html",
            f"{prompt.id} \u00b7 {suite}",
            relative(layout.report_assets(), final),
            _page(layout, suite, prompt, judged, final, dates),
            maths=True,
            lang=prompt.language or "en",
        )
    for judge in judges:
        for second in models[1:]:
            _write_flips(layout, suite, judge, models[0], second, problems, outcomes, folder, final, seen, dates)


def _status(graded: dict) -> str:
    """A problem's status in a cell from its judgments alone (a judgment says when its generation
    failed), as the cell's index says it."""
    samples = {j.sample for by_sample in graded.values() for j in by_sample.values()}
    return status_of(len(samples), False, graded)


def _outcome(cell, path, judgments):
    samples = tuple(sorted({j.sample for j in judgments}))
    judged = Judged(Cell(*cell), path, (), samples, ("", "", ""))
    return outcome(judged, judgments[0].id, judgments)


def _page(layout: Layout, suite: str, prompt: Prompt, judged: dict, final: Path, dates: list):
    slug = html.page_slug(prompt.id)
    yield f"<h1>{text(prompt.id)} side by side</h1>"
    yield (
        f'<p class="nav"><a href="{attr(relative(layout.report_index(), final))}">the report</a> &middot; '
        f"suite {text(suite)}</p>"
    )
    yield '<section class="question">\n<h2>Question</h2>'
    for message in prompt.messages:
        content = message.get("content")
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
        for part in parts:
            if isinstance(part, dict) and part.get("type") == "text" and message.get("role") != "system":
                yield maths(part.get("text", ""))
    yield "</section>"
    rows = []
    for (model, judge), judgments in judged.items():
        page = layout.report_cell(suite, model) / "problems" / f"{slug}.html"
        points, most = mean_points(judgments)
        graded = {judge: {j.sample: j for j in judgments}}
        status = _status(graded) if judgments else "judge-error"
        verdicts = ", ".join(sorted({j.verdict for j in judgments if j.verdict is not None}))
        extracted = "; ".join(e for j in judgments[:1] for e in j.extracted)
        rows.append(
            f'<tr data-model="{attr(model)}" data-judge="{attr(judge)}" data-status="{status}">'
            f'<td><a href="{attr(relative(page, final))}">{text(model)}</a></td><td>{text(judge)}</td>'
            f"<td>{MARKS[status]}</td><td>{number(None if points is None else round(points, 4))} of "
            f"{number(most)}</td><td>{text(verdicts) or DASH}</td><td>{len(judgments)}</td>"
            f"<td>{maths(extracted, block=False) if extracted else ''}</td></tr>"
        )
    yield (
        '<table class="side-by-side">\n<thead><tr><th>model</th><th>judge</th><th>status</th><th>points</th>'
        "<th>verdict</th><th>samples</th><th>extracted (sample 0)</th></tr></thead>\n<tbody>"
    )
    yield from rows
    yield "</tbody>\n</table>"
    made = {cell: (j[0].protocol, j[0].judge_config, j[0].packages) for cell, j in judged.items() if j}
    yield html.metadata(
        [
            (f"{model} / {judge}", f"{protocol}; config {config}")
            for (model, judge), (protocol, config, _) in made.items()
        ]
        + [("package versions", next((p for _, _, p in made.values()), "not recorded"))]
        + dates
        + [("git commit", GIT_COMMIT_NOTE)]
    )


def _write_flips(
    layout: Layout,
    suite: str,
    judge: str,
    first: str,
    second: str,
    problems: list[str],
    outcomes: dict,
    folder: Path,
    final: Path,
    seen: Seen,
    dates: list,
) -> None:
    a, b = outcomes[(first, judge)], outcomes[(second, judge)]
    paired = [problem for problem in problems if problem in a and problem in b]
    table = flips_table(paired, [(a[p], b[p]) for p in paired])
    name = flips_page(judge, first, second)
    seen.flips[(suite, judge, first, second)] = (name, len(table))
    rows = "\n".join(
        f'<tr><td><a href="{attr(html.page_slug(row["id"]))}.html">{text(row["id"])}</a></td>'
        f"<td>{text(row['subset'])}</td>"
        f"<td>{row['A points']:g}</td><td>{row['B points']:g}</td><td>{row['max points']:g}</td>"
        f"<td>{text(row['change'])}</td><td>{text(row['unscored'])}</td></tr>"
        for row in table.to_dict("records")
    )
    title = f"{suite}: flips from {first} to {second} (judge {judge})"
    html.write_page(
        folder / name,
        title,
        relative(layout.report_assets(), final),
        [
            f"<h1>{text(title)}</h1>",
            f'<p class="nav"><a href="{attr(relative(layout.report_index(), final))}">the report</a></p>',
            f"<p>{len(table)} of {len(paired)} problems changed (right: every sample earned all points; "
            f"A is {text(first)}, B is {text(second)}), as <code>python -m olympiad_eval.cli.compare runs</code> "
            "counts them.</p>",
            '<table class="flips">\n<thead><tr><th>problem</th><th>subset</th><th>A points</th><th>B points</th>'
            "<th>max points</th><th>change</th><th>unscored</th></tr></thead>\n<tbody>",
            rows,
            "</tbody>\n</table>",
            html.metadata(
                [
                    ("A", f"{first}, judge {judge}"),
                    ("B", f"{second}, judge {judge}"),
                    *(
                        (f"{model} / {judge}", "; ".join(seen.made_by.get((suite, model, judge), ("not recorded",))))
                        for model in (first, second)
                    ),
                    *dates,
                    ("git commit", GIT_COMMIT_NOTE),
                ]
            ),
        ],
    )
