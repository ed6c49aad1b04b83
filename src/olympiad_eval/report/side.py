"""A problem across the plan's models: its side-by-side pages, and what lists the models.

Sharded so that adding a model writes its own files and the few that list the models, never the
side-by-side pages themselves (at PhysElite's size there are 23,172 of them):

- `write_side_pages` (each suite's render stage, `stages/render.py`): a page per problem with its own text,
  figures and gold answers, and a place for the columns. It reads the suite alone.
- each cell's pages (its pages stage's) hold its model's columns (`cell.py`: the response, the
  extracted answers typeset, each judge's verdict, a sample's cost and timing) as data files of its
  own folder, `side/<shard>.js`, a shard of `html.SHARD` problems each in the suite's order, and
  beside the folder each problem's status in the cell (`layout.statuses`);
- `write_suite` (the root stage): per suite, `models.js` (the plan's models, their cells' folders
  and colours), which the viewer reads to load each model's shard into the page; `outcomes.js`
  (each problem's status per model, as the cells' pages stages wrote them), which each cell's index
  reads for its "models disagree" filter; and the flips between the plan's first model and each
  other, as the comparison command (`olympiad_eval.cli.compare`) finds them, from the plan's own
  cells (the stage's dependencies).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from olympiad_eval.core.layout import Layout
from olympiad_eval.core.outcomes import Cell, Judged, flips_table, outcome
from olympiad_eval.core.records import Judgment, Problem, Prompt, atomic_dir, iter_jsonl
from olympiad_eval.report import html
from olympiad_eval.report.cell import (
    GIT_COMMIT_NOTE,
    Cursor,
    Figures,
    need,
    question_html,
    read_statuses,
    received_pairs,
    suite_kind,
)
from olympiad_eval.report.charts import model_colours
from olympiad_eval.report.html import attr, relative, text

MODELS_FILE, OUTCOMES_FILE = "models.js", "outcomes.js"
# A problem's status in a model's cell as one letter of `outcomes.js` ("-": no judgment).
LETTERS = {"correct": "c", "partial": "p", "wrong": "w", "judge-error": "e", "failed": "f"}


@dataclass
class Seen:
    """What the index shows of the root's pass over the plan's cells."""

    made_by: dict = field(default_factory=dict)  # (suite, model, judge) -> (protocol, judge config, packages)
    statuses: dict = field(default_factory=dict)  # (suite, model) -> Counter of problem statuses
    flips: dict = field(default_factory=dict)  # (suite, judge, A, B) -> (page, number of flips)


def flips_page(judge: str, first: str, second: str) -> str:
    return f"flips__{first}__vs__{second}__{judge}.html"


# ---------------------------------------------------------------- the side-by-side pages (a suite's stage)


def write_side_pages(layout: Layout, family: str, suite: str) -> Path:
    """A page per problem of the suite: the problem's own text with its figures where its prompt
    puts them and its gold answers, then each model's column, filled in by the viewer. The pages
    name no model: which models there are is the root's `models.js`."""
    folder = layout.report_side(suite)
    folder.parent.mkdir(parents=True, exist_ok=True)
    kind = suite_kind(layout, family, suite)
    prompts = need(layout.prompts(family, suite), suite)
    ids = [prompt.id for prompt in iter_jsonl(prompts, Prompt)]
    with atomic_dir(folder) as staging:
        os.chmod(staging, 0o755)
        figures = Figures(layout.root, staging)
        problems = Cursor(iter_jsonl(need(layout.suite(family, suite) / "problems.jsonl", suite), Problem))
        for number, prompt in enumerate(iter_jsonl(prompts, Prompt)):
            problem = next(iter(problems.take(prompt.id)), None)
            neighbours = (ids[number - 1] if number else None, ids[number + 1] if number + 1 < len(ids) else None)
            html.write_page(
                staging / f"{html.page_slug(prompt.id)}.html",
                f"{prompt.id} \u00b7 {suite} \u00b7 side by side",
                relative(layout.report_assets(), folder),
                _side_page(layout, suite, kind, prompt, problem, figures, folder, neighbours),
                maths=True,
                lang=prompt.language or "en",
                scripts=[relative(layout.report_compare(suite) / MODELS_FILE, folder)],
                body={
                    "page": "side",
                    "problem": prompt.id,
                    "shard": html.shard(number),
                    "root": relative(layout.report(), folder) + "/",
                },
            )
    return folder


def _side_page(layout: Layout, suite: str, kind: str, prompt: Prompt, problem, figures, folder: Path, neighbours):
    steps = html.neighbour_links(neighbours)
    yield f"<h1>{text(prompt.id)}: every model side by side</h1>"
    yield (
        f'<p class="nav"><a href="{attr(relative(layout.report_index(), folder))}">the report</a> &middot; '
        f"suite {text(suite)}" + "".join(f" &middot; {step}" for step in steps) + "</p>"
    )
    yield from question_html(prompt, problem, figures, "", full_prompt=True)
    yield (
        '<section class="models">\n<h2>Each model: its response, the answers extracted and each judge\'s verdict</h2>\n'
        '<div id="columns" class="columns"><p class="loading">loading each model\'s column\u2026</p></div>\n'
        "<noscript><p>Each model's column is filled in by the report's script, from its cell's folder: "
        "open the cells from the report's index.</p></noscript>\n</section>"
    )
    yield html.metadata(
        [
            ("suite", suite),
            ("benchmark kind", kind),
            ("the models", "the plan's, in the report's root (compare/): each column comes from its model's cell"),
            ("what made the judgments, tokens and dates", "on each cell's page of the problem, linked from its column"),
            ("git commit", GIT_COMMIT_NOTE),
        ]
    )


# ---------------------------------------------------------------- the root: models, outcomes, flips


def write_suite(plan: dict, layout: Layout, suite: str, folder: Path, seen: Seen) -> None:
    family = plan["family"][plan["suites"][suite]]
    models, judges = list(plan.get("models") or []), list(plan.get("judges") or [])
    final = layout.report_compare(suite)  # where the pages will be, for their links
    cells = [(model, judge) for model in models for judge in judges]
    dates = received_pairs(plan, layout, [suite])  # the same on every page of the suite
    paths = {cell: need(layout.judgments(family, suite, *cell), f"{suite} x {cell[0]} x {cell[1]}") for cell in cells}
    by_model = {model: read_statuses(layout.statuses(family, suite, model)) for model in models}
    cursors = {cell: Cursor(iter_jsonl(path, Judgment)) for cell, path in paths.items()}
    outcomes: dict = {cell: {} for cell in cells}
    problems: list[str] = []
    statuses: dict[str, str] = {}
    for model in models:
        seen.statuses[(suite, model)] = Counter()
    for prompt in iter_jsonl(need(layout.prompts(family, suite), suite), Prompt):
        judged = {cell: cursor.take(prompt.id) for cell, cursor in cursors.items()}
        problems.append(prompt.id)
        for cell, judgments in judged.items():
            if judgments:
                seen.made_by.setdefault(
                    (suite, *cell), (judgments[0].protocol, judgments[0].judge_config, judgments[0].packages)
                )
                outcomes[cell][prompt.id] = _outcome(cell, paths[cell], judgments)
        letters = ""
        for model in models:
            status = by_model[model].get(prompt.id)  # none where no judge graded it: counted as failed
            seen.statuses[(suite, model)][status or "failed"] += 1
            letters += LETTERS[status] if status else "-"
        statuses[prompt.id] = letters
    folder.mkdir(parents=True, exist_ok=True)
    colours = model_colours(plan)
    listed = {
        "suite": suite,
        "models": [
            {
                "name": model,
                "cell": relative(layout.report_cell(family, suite, model), layout.report()) + "/",
                "colour": colours[model],
            }
            for model in models
        ],
        "judges": judges,
    }
    _write_data(folder / MODELS_FILE, "OE.models", listed)
    _write_data(folder / OUTCOMES_FILE, "OE.outcome", {"suite": suite, "models": models, "statuses": statuses})
    for judge in judges:
        for second in models[1:]:
            _write_flips(layout, suite, judge, models[0], second, problems, outcomes, folder, final, seen, dates)


def _write_data(path: Path, call: str, data) -> None:
    """A data file of the report: a script that hands `data` to the viewer (a page opened from disk
    may run the report's own scripts, but not read its files)."""
    path.write_text(f"{call}({json.dumps(data, ensure_ascii=False, sort_keys=True)});\n", encoding="utf-8")


def _outcome(cell, path, judgments):
    samples = tuple(sorted({j.sample for j in judgments}))
    judged = Judged(Cell(*cell), path, (), samples, ("", "", ""))
    return outcome(judged, judgments[0].id, judgments)


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
    side = layout.report_side(suite)
    rows = "\n".join(
        f'<tr><td><a href="{attr(relative(side / (html.page_slug(row["id"]) + ".html"), final))}">'
        f"{text(row['id'])}</a></td><td>{text(row['subset'])}</td>"
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
            "counts them; each problem links its side-by-side page.</p>",
            '<div class="table-wrap"><table class="flips">\n<thead><tr><th>problem</th><th>subset</th><th>A points</th>'
            "<th>B points</th><th>max points</th><th>change</th><th>unscored</th></tr></thead>\n<tbody>",
            rows,
            "</tbody>\n</table></div>",
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
