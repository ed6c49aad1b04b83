"""A cell's pages (suite x model): its index, one row per problem to sort and filter, one page per
problem with the question, each sample's response, what every judge of the plan made of it and
what each was asked and replied (its conversation), and the cell's columns of the suite's
side-by-side pages (`side/<shard>.js`, see `side.py`).

A cell's folder is its pages stage's output (`pages@<suite>-<model>` in its family's pipeline,
`report/cells/<family>/<suite>/<model>/`), with each problem's status in the cell (`statuses`, which
the root reads): adding a model writes its cells and rewrites no other model's file. Pages are
written as the cell's files are read, a problem at a time (all are sorted by id), so that a cell of
any size never sits in memory; only its index rows and one shard of side-by-side columns do.

The judge conversations are read from the judges' `conversations` files (in the cell's folder,
a dependency of the pages stage), never from the request cache: the cache is outside DVC's view (a
clone without it, or a cache that gained replies, would change the pages with no dependency
changed), while the conversations are written from the very replies the judgments were made of.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from olympiad_eval.benchmarks import plugin
from olympiad_eval.benchmarks.base import ReportSection
from olympiad_eval.core.layout import Layout
from olympiad_eval.core.outcomes import RIGHT_FROM
from olympiad_eval.core.records import (
    Conversation,
    Generation,
    InputError,
    Judgment,
    Problem,
    Prompt,
    SampleReply,
    atomic_dir,
    file_sha256,
    iter_json_lines,
    iter_jsonl,
    natural_key,
    read_suite_info,
    write_json,
)
from olympiad_eval.report import html, partial_html
from olympiad_eval.report.html import EMPTY, answers_html, attr, facts, maths, number, relative, text

# A problem is right when it earned all its points (score 1), as the comparison command counts it.
MARKS = {"correct": "\u2713", "partial": "\u25d0", "wrong": "\u2717", "judge-error": "judge error", "failed": "failed"}
# A cell's index holds its rows in bodies of this many: the browser styles and lays out a body only
# when it is on screen (viewer.css), so a PhysElite-sized index (11,586 rows) opens as fast as a short one.
ROWS_PER_BODY = 200
# A row of a cell's index shows its extracted answers typeset, each whole (cut LaTeX does not typeset):
# as many as fit in this many characters, the first however long up to ANSWER_MOST; the others are
# counted (every one is on the problem's page), so that a PhysElite-sized index stays small.
ANSWERS_MOST, ANSWER_MOST = 120, 240


def status_label(status: str) -> str:
    """A status with its mark, said once: "\u2713 correct", but "failed", "judge error" (their mark is the word)."""
    mark = MARKS[status]
    return mark if mark.replace(" ", "-") == status else f"{mark} {status}"


class Cursor:
    """Records of a file sorted by id (as every stage writes them: by natural key), taken one id at
    a time in the prompts' order, so that a page never holds a whole cell in memory."""

    def __init__(self, records: Iterator):
        self._records = records
        self._next = next(records, None)

    def take(self, problem_id: str) -> list:
        key, taken = natural_key(problem_id), []
        while self._next is not None and natural_key(self._next.id) <= key:
            if self._next.id == problem_id:
                taken.append(self._next)
            self._next = next(self._records, None)
        return taken


def need(path: Path, cell: str) -> Path:
    if not path.is_file():
        raise InputError(f"{path}: the plan's cell {cell} has no such file; run its stages first")
    return path


@dataclass(frozen=True)
class Cell:
    """A suite x model of the plan, as its pages read it."""

    suite: str
    benchmark: str
    family: str
    model: str
    judges: tuple[str, ...]
    layout: Layout

    @property
    def name(self) -> str:
        return f"{self.suite} \u00d7 {self.model}"

    @property
    def folder(self) -> Path:
        return self.layout.report_cell(self.family, self.suite, self.model)


def status_of(samples: int, failed: bool, graded: dict[str, dict[int, Judgment]]) -> str:
    """One word for a problem in a cell, over its `samples` and every judge: `failed` where a
    sample has no response, `judge-error` where a judge could not grade one, else `correct` when
    every judgment earned all points, `wrong` when none earned any, `partial` between."""
    judgments = [judgment for by_sample in graded.values() for judgment in by_sample.values()]
    if not samples or failed or any(j.status == "generation_error" for j in judgments):
        return "failed"
    expected = samples * len(graded)
    if len(judgments) < expected or any(j.status != "scored" or j.score is None for j in judgments):
        return "judge-error"
    if all(j.score >= RIGHT_FROM for j in judgments):
        return "correct"
    return "wrong" if all(j.score <= 0 for j in judgments) else "partial"


def mean_points(judgments) -> tuple[float | None, float | None]:
    """(mean points, max points) of one judge's judgments of a problem's samples."""
    judgments = list(judgments)
    if not judgments:
        return None, None
    return sum(j.points or 0.0 for j in judgments) / len(judgments), judgments[0].max_points


def group_of(problem: Problem | None, judgment: Judgment | None) -> str:
    """What a problem is grouped by: its exam or subject (the tables' subset)."""
    for record in (problem, judgment):
        if record is not None and (record.subset or record.subject):
            return record.subset or record.subject
    return "\u2013"


# ---------------------------------------------------------------- writing a cell


def write_cell(cell: Cell, settings: dict) -> Path:
    """Write the cell's folder (index.html, problems/, figures/) atomically, then its problems'
    statuses (`write_statuses`); `settings` are the model's generation settings as its config gives
    them."""
    layout = cell.layout
    prompts = need(layout.prompts(cell.family, cell.suite), cell.name)
    generations = need(layout.generations(cell.family, cell.suite, cell.model), cell.name)
    judgments = {
        judge: need(layout.judgments(cell.family, cell.suite, cell.model, judge), f"{cell.name} x {judge}")
        for judge in cell.judges
    }
    # what each LLM judge was asked and replied; none for a rule judge, and none recorded by a judge
    # stage older than the conversations (its pages say so)
    talks = {
        judge: path
        for judge in cell.judges
        for path in [layout.conversations(cell.family, cell.suite, cell.model, judge)]
        if path.is_file()
    }
    kind = suite_kind(layout, cell.family, cell.suite)
    bench = plugin(kind)
    usage = _read_json(layout.usage(cell.family, cell.suite, cell.model))
    meta = cell_metadata(cell, settings, judgments)
    cell.folder.parent.mkdir(parents=True, exist_ok=True)
    with atomic_dir(cell.folder) as staging:
        os.chmod(staging, 0o755)
        pages = _Pages(cell, staging, bench, meta, usage, set(talks))
        problems = Cursor(
            iter_jsonl(need(layout.suite(cell.family, cell.suite) / "problems.jsonl", cell.name), Problem)
        )
        generated = Cursor(iter_jsonl(generations, Generation))
        judged = {judge: Cursor(iter_jsonl(path, Judgment)) for judge, path in judgments.items()}
        talked = {judge: Cursor(iter_jsonl(path, Conversation)) for judge, path in talks.items()}
        replies = layout.sample_replies(cell.family, cell.suite, cell.model)  # none before they were kept
        replied = Cursor(iter_jsonl(replies, SampleReply) if replies.is_file() else iter(()))
        ids = [str(row.get("id", "")) for _, row in iter_json_lines(prompts)]  # for each page's previous and next
        rows, columns, statuses = [], _Columns(staging / "side", cell.model), {}
        for number, prompt in enumerate(iter_jsonl(prompts, Prompt)):
            problem = next(iter(problems.take(prompt.id)), None)
            samples = sorted(generated.take(prompt.id), key=lambda g: g.sample)
            graded = {judge: {j.sample: j for j in cursor.take(prompt.id)} for judge, cursor in judged.items()}
            asked = {judge: {c.sample: c for c in cursor.take(prompt.id)} for judge, cursor in talked.items()}
            neighbours = (ids[number - 1] if number else None, ids[number + 1] if number + 1 < len(ids) else None)
            facts_of = {reply.sample: reply for reply in replied.take(prompt.id)}
            row, column = pages.problem(prompt, problem, samples, graded, asked, neighbours, facts_of)
            rows.append(row)
            columns.add(number, prompt.id, column)
            if any(graded.values()):  # a problem no judge graded has no status (a cell judged in part)
                statuses[prompt.id] = row.status
        columns.close()
        html.write_page(
            staging / "index.html",
            cell.name,
            relative(layout.report_assets(), cell.folder),
            _index(cell, rows, meta),
            scripts=[relative(layout.report_compare(cell.suite) / "outcomes.js", cell.folder)],
            # MathJax for the extracted answers, loaded by the viewer once the rows can be filtered
            # (parsing it first would keep a PhysElite-sized index from answering for a second more)
            body={"mathjax": f"{relative(layout.report_assets(), cell.folder)}/{html.MATHJAX}"},
        )
    write_statuses(layout.statuses(cell.family, cell.suite, cell.model), statuses)
    return cell.folder


def write_statuses(path: Path, statuses: dict[str, str]) -> None:
    """Each problem's status in the cell (as its index shows it), by id: what the root report reads of
    the cell's pages (its counts per cell, the "models disagree" filter), a small file instead of
    every page for DVC to walk."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json(path, {"statuses": statuses})


def read_statuses(path: Path) -> dict[str, str]:
    return json.loads(need(path, path.stem).read_text(encoding="utf-8"))["statuses"]


class _Columns:
    """The cell's columns of the side-by-side pages, a file per shard of `html.SHARD` problems in
    the suite's order (`side/<shard>.js`), each written when its last problem is done."""

    def __init__(self, folder: Path, model: str):
        self.folder, self.model = folder, model
        self.shard: str | None = None
        self.columns: dict[str, str] = {}

    def add(self, position: int, problem_id: str, column: str) -> None:
        shard = html.shard(position)
        if shard != self.shard:
            self.close()
            self.shard = shard
        self.columns[problem_id] = column

    def close(self) -> None:
        if self.shard is None:
            return
        self.folder.mkdir(exist_ok=True)
        data = json.dumps(self.columns, ensure_ascii=False, sort_keys=True)
        model = json.dumps(self.model, ensure_ascii=False)
        path = self.folder / f"{self.shard}.js"
        path.write_text(f"OE.column({model}, {json.dumps(self.shard)}, {data});\n", encoding="utf-8")
        self.shard, self.columns = None, {}


def suite_kind(layout: Layout, family: str, suite: str) -> str:
    return read_suite_info(need(layout.suite_info(family, suite), suite)).kind


def cell_metadata(cell: Cell, settings: dict, judgments: dict[str, Path]) -> list[tuple[str, str]]:
    """What made the cell: the model and its settings, each judge's protocol and config, package
    versions, tokens and cost, and the dates its replies were received (facts of the replies, kept
    in the usage files). No commit: the report reads nothing that its DVC dependencies do not hold,
    so that the same inputs give the same bytes (the commit that made a run is the one whose
    dvc.lock holds these files' hashes)."""
    layout = cell.layout
    pairs = [
        ("suite", cell.suite),
        ("benchmark", cell.benchmark),
        ("model", cell.model),
        # never a key: a field whose name or value looks secret is shown as hidden
        ("model settings", json.dumps(html.without_secrets(settings), sort_keys=True, ensure_ascii=False)),
    ]
    usage = _read_json(layout.usage(cell.family, cell.suite, cell.model))
    pairs.append(("generation usage", _usage_text(usage)))
    pairs.append(("generation replies received", received_text([usage])))
    packages = ""
    for judge, path in judgments.items():
        first = next(iter_jsonl(path, Judgment), None)
        if first is not None:
            pairs.append((f"judge {judge}", f"{first.protocol}; config {first.judge_config}"))
            packages = packages or first.packages
        judge_usage = _read_json(layout.judge_usage(cell.family, cell.suite, cell.model, judge))
        pairs.append((f"judge {judge} usage", _usage_text(judge_usage)))
        pairs.append((f"judge {judge} replies received", received_text([judge_usage])))
    pairs.append(("package versions", packages or "not recorded"))
    pairs.append(("git commit", GIT_COMMIT_NOTE))
    return pairs


GIT_COMMIT_NOTE = (
    "not read by the report: the commit that made these files is the one whose dvc.lock holds their "
    "hashes (git log dvc.lock pipelines/*/*/dvc.lock); so the same inputs give the same bytes"
)


def received_text(usages: list[dict]) -> str:
    """When the replies of these usage files were received (UTC): the first and the last over all
    of them. A usage file of an offline provider has no dates (it sent nothing); one whose replies
    were all cached before dates were kept, or all failed, has none to show."""
    recorded = [usage for usage in usages if usage]
    if not recorded:
        return "not recorded"
    spans = [usage["replies_received"] for usage in recorded if "replies_received" in usage]
    if not spans:
        return "offline provider: no requests" if any(usage.get("requests") for usage in recorded) else "no requests"
    dates = sorted(date for span in spans if span for date in (span.get("first"), span.get("last")) if date)
    if not dates:
        return "no dates recorded (replies cached before dates were kept, or none answered)"
    said = dates[0] if dates[0] == dates[-1] else f"first {dates[0]}, last {dates[-1]}"
    return said + " (UTC)" + ("; some cells offline or undated" if len(spans) < len(recorded) or None in spans else "")


def received_pairs(plan: dict, layout: Layout, suites: list[str]) -> list[tuple[str, str]]:
    """When the replies of these suites' cells were received, generation's and each judge's (UTC,
    the first and last over the cells), from their usage files."""
    models, judges = list(plan.get("models") or []), list(plan.get("judges") or [])
    families = {suite: plan["family"][plan["suites"][suite]] for suite in suites}
    pairs = [
        (
            "generation replies received",
            received_text([_read_json(layout.usage(families[s], s, m)) for s in suites for m in models]),
        )
    ]
    pairs += [
        (
            f"judge {judge} replies received",
            received_text([_read_json(layout.judge_usage(families[s], s, m, judge)) for s in suites for m in models]),
        )
        for judge in judges
    ]
    return pairs


def _read_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _usage_text(usage: dict) -> str:
    """What a usage file counts: the requests sent with their tokens and cost; for a provider that
    sends none (an offline one: its usage has no reply dates), the replies it made here, never
    "requests" beside "no requests"."""
    if not usage:
        return "not recorded"
    if "replies_received" not in usage:
        made = usage.get("answered", 0)
        said = [f"{usage[key]} {key}" for key in ("failed", "truncated") if usage.get(key)]
        return (
            f"no requests: an offline provider, {made} repl{'ies' if made != 1 else 'y'} made here"
            + "".join(f", {part}" for part in said)
            if made or said
            else "no requests"
        )
    keys = (
        "requests",
        "prompt_tokens",
        "completion_tokens",
        "reasoning_tokens",
        "cost_usd",
        "retries",
        "failed",
        "truncated",
    )
    return ", ".join(
        f"{key.replace('_', ' ')} {usage[key]:g}"
        if isinstance(usage[key], float)
        else f"{key.replace('_', ' ')} unknown"  # replies without a usable usage: never $0
        if usage[key] is None
        else f"{key.replace('_', ' ')} {usage[key]}"
        for key in keys
        if key in usage
    )


# ---------------------------------------------------------------- the index of a cell

STATUS_FILTERS = (
    ("all", "every problem"),
    ("wrong", "wrong"),
    ("judge-error", "judge errors"),
    ("truncated", "truncated"),
    ("undecided", "undecided rule checks"),
)
# What the status and score columns mean, said where they are (with several judges, neither is one
# judge's): a judge's own points are in its column.
STATUS_HEAD, SCORE_HEAD = "status (all judges)", "score (mean of judges)"
LEGEND = (
    "<b>status</b> and <b>score</b> are over every judge and sample: \u2713 when every judgment earned all "
    "its points, \u2717 when none earned any, \u25d0 between; the score is the mean fraction of points. "
    "Each judge's own points (mean over samples, of the most) are in its column."
)


@dataclass(frozen=True)
class Row:
    """A problem's row of the cell's index, and what its controls count."""

    group: str
    status: str
    level: int | None
    html: str  # with `{level}` where its level cell goes, dropped when no problem of the cell has one


def _index(cell: Cell, rows: list[Row], meta: list) -> Iterator[str]:
    layout = cell.layout
    levels = any(row.level is not None for row in rows)  # HiPhO's problems have none: no column of dashes
    yield f"<h1>{text(cell.name)}</h1>"
    yield (
        f'<p class="nav"><a href="{attr(relative(layout.report_index(), cell.folder))}">the report</a> &middot; '
        f"benchmark {text(cell.benchmark)}; {len(rows)} problems; judges {text(', '.join(cell.judges))}</p>"
    )
    yield from partial_html(layout, cell.family, [cell.suite])
    counts = {status: sum(1 for row in rows if row.status == status) for status in MARKS}
    yield facts(((status_label(s), n) for s, n in counts.items() if n), css="counts")
    groups = sorted({row.group for row in rows}, key=natural_key)
    yield '<div class="controls">'
    yield '<input id="search" type="search" placeholder="search ids, groups, answers" aria-label="search">'
    yield (
        '<select id="status-filter" aria-label="status">'
        + "".join(f'<option value="{v}">{label}</option>' for v, label in STATUS_FILTERS)
        + "</select>"
    )
    yield (
        '<select id="group-filter" aria-label="group"><option value="all">every group</option>'
        + "".join(f'<option value="{attr(g)}">{text(g)}</option>' for g in groups)
        + "</select>"
    )
    if len(cell.judges) > 1:
        yield (
            '<label title="the plan\'s judges gave a sample different scores">'
            '<input id="judges-disagree" type="checkbox"> judges disagree</label>'
        )
    yield (
        '<label title="the plan\'s models have different statuses on the problem (right, partly right, wrong)">'
        '<input id="models-disagree" type="checkbox"> models disagree</label>'
    )
    yield f'<span><span id="shown-count">{len(rows)}</span> of {len(rows)} shown</span>'
    yield "</div>"
    yield f'<p class="legend">{LEGEND}</p>'
    sorts = [("id", "problem"), ("group", "group")] + ([("level", "level")] if levels else [])
    sorts += [("status", STATUS_HEAD), ("score", SCORE_HEAD)]
    sorts += [(f"judge-{n}", f"judge {judge}: points") for n, judge in enumerate(cell.judges)]
    heads = "".join(f'<th data-sort="{key}">{text(label)}</th>' for key, label in sorts)
    yield (f'<table class="problems" data-levels="{int(levels)}">\n<thead><tr>{heads}<th>extracted</th></tr></thead>')
    level_cell = (lambda row: f"<td>{number(row.level)}</td>") if levels else (lambda row: "")
    for first in range(0, max(len(rows), 1), ROWS_PER_BODY):
        yield "<tbody>"
        yield from (row.html.replace("{level}", level_cell(row), 1) for row in rows[first : first + ROWS_PER_BODY])
        yield "</tbody>"
    yield "</table>"
    yield (
        '<p id="no-match" class="no-match" hidden>No problem matches <span id="no-match-view"></span>. '
        '<button type="button" id="clear-view">Show every problem</button> (clears the search and sets every '
        "filter back)</p>"
    )
    yield html.metadata(meta)


# ---------------------------------------------------------------- a problem's page


class Figures:
    """The figures of the pages of one folder (a cell's, a suite's side-by-side pages), each copied
    once into its `figures/`, checked against its sha256."""

    def __init__(self, root: Path, staging: Path):
        self.root, self.staging = root, staging  # root: the outputs folder, beside which prompts' paths start
        self.copied: dict[str, str] = {}  # sha256 -> path in the folder

    def img(self, part: dict, prefix: str) -> str:
        """The image of a prompt's image part, linked from a page `prefix` away from the folder."""
        sha = str(part.get("sha256", ""))
        if sha not in self.copied:
            source = Path(str(part.get("path", "")))
            found = next(
                (c for c in ([source] if source.is_absolute() else [source, self.root.parent / source]) if c.is_file()),
                None,
            )
            if found is None:
                raise InputError(f"figure {sha} not found at {source}")
            if file_sha256(found) != sha:
                raise InputError(f"{found}: content does not match its sha256 {sha}")
            relative_path = f"figures/{sha}{found.suffix.lower() or '.bin'}"
            (self.staging / "figures").mkdir(exist_ok=True)
            shutil.copyfile(found, self.staging / relative_path)
            os.chmod(self.staging / relative_path, 0o644)
            self.copied[sha] = relative_path
        return f'<img src="{attr(prefix + self.copied[sha])}" alt="figure {attr(sha[:12])}">'


def question_html(
    prompt: Prompt, problem: Problem | None, figures: Figures, prefix: str, full_prompt: bool = True
) -> Iterator[str]:
    """The problem's own text with the prompt's figures where the prompt places them, its gold
    answers typeset, and the whole prompt sent (instructions and all) one click away. Without a
    problem record, the prompt."""
    yield '<section class="question">\n<h2>Question</h2>'
    own = "\n\n".join(part for part in (problem.context, problem.question) if part) if problem else ""
    if own:
        yield from _parts(question_parts(own, prompt.messages), figures, prefix)
        if full_prompt:
            yield '<details class="prompt"><summary>the full prompt sent</summary>'
            yield from _messages(prompt.messages, figures, prefix, shown=False)
            yield "</details>"
    else:
        yield from _messages(prompt.messages, figures, prefix, shown=True)
    if problem is not None and problem.answers:
        rows = [(slot.value, slot.unit, slot.points) for slot in problem.answers]
        yield "<h3>Gold answers</h3>"
        yield html.table("gold", ("answer", "unit", "points"), rows, formula=("answer",))
    if problem is not None and problem.solution:
        yield f'<details class="solution"><summary>reference solution</summary>{maths(problem.solution)}</details>'
    yield "</section>"


def _messages(messages, figures: Figures, prefix: str, shown: bool) -> Iterator[str]:
    """Each message with its role; its figures as images, or (`shown` False: they are shown above)
    as a line naming them."""
    for message in messages:
        yield f'<div class="message"><p class="role">{text(message.get("role", ""))}</p>'
        parts = content_parts(message)
        yield from _parts(
            parts
            if shown
            else [
                part
                if part.get("type") != "image"
                else {"type": "note", "text": f"[figure {str(part.get('sha256', ''))[:12]}, shown above]"}
                for part in parts
            ],
            figures,
            prefix,
        )
        yield "</div>"


def _parts(parts: list[dict], figures: Figures, prefix: str) -> Iterator[str]:
    for part in parts:
        if part.get("type") == "text":
            yield maths(part.get("text", ""))
        elif part.get("type") == "image":
            yield figures.img(part, prefix)
        elif part.get("type") == "note":
            yield f'<p class="figure-note">{text(part["text"])}</p>'


def judges_disagree(graded: dict[str, dict[int, Judgment]]) -> bool:
    """Whether the plan's judges gave one of the problem's samples different scores (each judge's
    scored judgment of it; an unscored one is no verdict to disagree with)."""
    samples = {sample for by_sample in graded.values() for sample in by_sample}
    for sample in samples:
        scores = {
            round(j.score, 6)
            for by_sample in graded.values()
            for j in [by_sample.get(sample)]
            if j is not None and j.status == "scored" and j.score is not None
        }
        if len(scores) > 1:
            return True
    return False


class _Pages:
    def __init__(self, cell: Cell, staging: Path, bench, meta: list, usage: dict, talks: set[str]):
        self.cell, self.staging, self.usage, self.talks = cell, staging, usage, talks
        self.hook, self.label = bench.report_sections, bench.report_task_label
        self.replied: dict[int, SampleReply] = {}
        self.meta = html.metadata(meta)
        self.figures = Figures(cell.layout.root, staging)

    def problem(
        self,
        prompt: Prompt,
        problem: Problem | None,
        samples: list[Generation],
        graded: dict[str, dict[int, Judgment]],
        asked: dict[str, dict[int, Conversation]],
        neighbours: tuple,
        replied: dict[int, SampleReply],
    ) -> tuple[Row, str]:
        """Write the problem's page (linking the previous and next problem's); its index row and its
        column of the side-by-side page. `replied`: its samples' reply facts, by sample."""
        self.replied = replied  # read by each sample's facts, on the page and in the column
        slug = html.page_slug(prompt.id)
        first = next((j for by_sample in graded.values() for j in by_sample.values()), None)
        group, status = (
            group_of(problem, first),
            status_of(len(samples), any(g.error is not None for g in samples), graded),
        )
        truncated = any(g.finish_reason == "length" for g in samples) or any(
            j.truncated for by_sample in graded.values() for j in by_sample.values()
        )
        undecided = any(j.undecided for by_sample in graded.values() for j in by_sample.values())
        page = self.staging / "problems" / f"{slug}.html"
        layout = self.cell.layout
        where = self.cell.folder / "problems"
        budget = _Budget()
        html.write_page(
            page,
            f"{prompt.id} \u00b7 {self.cell.name}",
            relative(layout.report_assets(), where),
            self._page(prompt, problem, samples, graded, asked, status, group, where, neighbours, budget),
            maths=True,
            lang=prompt.language or "en",
        )
        level = problem.level if problem is not None else None
        row = Row(
            group,
            status,
            level,
            self._row(prompt.id, slug, group, level, status, graded, truncated, undecided),
        )
        return row, self._column(prompt.id, slug, status, samples, graded, asked)

    def _row(
        self,
        problem_id: str,
        slug: str,
        group: str,
        level: int | None,
        status: str,
        graded: dict,
        truncated: bool,
        undecided: bool,
    ) -> str:
        scores = [j.score or 0.0 for by_sample in graded.values() for j in by_sample.values()]
        score = sum(scores) / len(scores) if scores else 0.0
        extracted = next((j.extracted for by_sample in graded.values() for j in by_sample.values()), ())
        judges = "".join(f"<td>{_points_text(graded[judge])}</td>" for judge in self.cell.judges)
        by_judge = "".join(
            f' data-judge-{n}="{mean:.4g}"'
            for n, judge in enumerate(self.cell.judges)
            for mean in [_mean_score(graded[judge])]
            if mean is not None
        )
        flags = " ".join(flag for flag, on in (("truncated", truncated), ("undecided", undecided)) if on)
        data = (
            f'data-id="{attr(problem_id)}" data-status="{status}" data-group="{attr(group)}" data-score="{score:.4g}"'
            + ("" if level is None else f' data-level="{level}"')
            + (' data-truncated="1"' if truncated else "")
            + (' data-undecided="1"' if undecided else "")
            + (' data-judges-disagree="1"' if judges_disagree(graded) else "")
            + by_judge
        )
        mark = MARKS[status] + (f" {flags}" if flags else "")
        return (
            f'<tr class="problem-row" {data}><td><a href="problems/{attr(slug)}.html">{text(problem_id)}</a></td>'
            f"<td>{text(group)}</td>{{level}}<td>{mark}</td><td>{score:.2f}</td>{judges}"
            f"{_answers_cell(extracted)}</tr>"
        )

    def _page(
        self, prompt, problem, samples, graded, asked, status, group, where: Path, neighbours, budget
    ) -> Iterator[str]:
        layout = self.cell.layout
        side = layout.report_side(self.cell.suite) / f"{html.page_slug(prompt.id)}.html"
        steps = html.neighbour_links(neighbours)
        yield f"<h1>{text(prompt.id)}</h1>"
        yield (
            f'<p class="nav"><a href="../index.html">{text(self.cell.name)}</a> &middot; '
            f'<a class="side-link" href="{attr(relative(side, where))}">side by side: every model and judge</a>'
            " &middot; "
            f'<a href="{attr(relative(layout.report_index(), where))}">the report</a>'
            + "".join(f" &middot; {step}" for step in steps)
            + "</p>"
        )
        yield facts(
            [("status", status_label(status)), ("group", group), ("language", prompt.language)]
            + ([("level", str(problem.level))] if problem is not None and problem.level is not None else [])
        )
        yield from question_html(prompt, problem, self.figures, "../")
        if not samples:
            yield '<p class="error">no generation</p>'
        for generation in samples:
            yield from self._sample(
                generation,
                {judge: graded[judge].get(generation.sample) for judge in graded},
                {judge: asked.get(judge, {}).get(generation.sample) for judge in graded},
                problem,
                budget,
            )
        yield self.meta

    def _sample(
        self,
        generation: Generation,
        judged: dict[str, Judgment | None],
        asked: dict[str, Conversation | None],
        problem,
        budget,
    ) -> Iterator[str]:
        yield f'<section class="sample" data-sample="{generation.sample}">\n<h2>Sample {generation.sample}</h2>'
        if generation.error is not None:
            yield f'<p class="error">generation failed: {text(generation.error)}</p>'
        yield facts(sample_facts(generation, self.replied.get(generation.sample), self.usage), css="facts sample-facts")
        if generation.error is None:
            if generation.finish_reason == "length":
                yield '<p class="error">truncated: the response was cut at the token limit</p>'
            if generation.reasoning:
                yield f'<details class="reasoning"><summary>reasoning</summary>{maths(generation.reasoning)}</details>'
            yield '<div class="response">' + maths(generation.response or "") + "</div>"
        for judge, judgment in judged.items():
            yield from self._judgment(judge, judgment, asked.get(judge), generation.sample, problem, budget)
        yield "</section>"

    def _judgment(self, judge: str, judgment, conversation, sample: int, problem, budget) -> Iterator[str]:
        yield f'<div class="judgment" data-judge="{attr(judge)}">\n<h3>judge {text(judge)}</h3>'
        if judgment is None:
            yield '<p class="error">no judgment</p>\n</div>'
            return
        yield from judgment_html(judgment, self.hook, problem)
        if conversation is not None:
            yield conversation_html(conversation, conversation_anchor(sample, judge), budget, self.label)
        elif judge not in self.talks and judgment.details:
            yield '<p class="note">What this judge was sent and replied: not recorded (judge the cell again).</p>'
        yield "</div>"

    def _column(self, problem_id, slug, status, samples, graded, asked) -> str:
        """The cell's column of the problem's side-by-side page: each sample's response, its answers
        extracted (typeset), each judge's verdict and a link to its conversation; linked from the
        suite's side-by-side folder."""
        layout = self.cell.layout
        side = layout.report_side(self.cell.suite)
        page = relative(self.cell.folder / "problems" / f"{slug}.html", side)
        parts = [
            f'<p class="column-nav"><span class="status" data-status="{status}">{text(status_label(status))}</span>'
            f' &middot; <a href="{attr(page)}">this model\'s page of the problem</a></p>'
        ]
        if not samples:
            parts.append('<p class="error">no generation</p>')
        for generation in samples:
            parts.append(f'<section class="side-sample" data-sample="{generation.sample}">')
            if len(samples) > 1:
                parts.append(f"<h3>sample {generation.sample}</h3>")
            if generation.error is not None:
                parts.append(f'<p class="error">generation failed: {text(generation.error)}</p>')
            else:
                if generation.finish_reason == "length":
                    parts.append('<p class="error">truncated at the token limit</p>')
                parts.append('<div class="response">' + maths(generation.response or "") + "</div>")
            judgments = {judge: graded[judge].get(generation.sample) for judge in self.cell.judges}
            extracted = next((j.extracted for j in judgments.values() if j is not None and j.extracted), ())
            parts.append(
                '<p class="extracted"><b>extracted:</b> '
                + (", ".join(answer_html(e) for e in extracted) or "none")
                + "</p>"
            )
            rows = []
            for judge, judgment in judgments.items():
                talk = asked.get(judge, {}).get(generation.sample)
                link = (
                    f'<a href="{attr(page)}#{attr(conversation_anchor(generation.sample, judge))}">conversation</a>'
                    if talk is not None
                    else ""
                )
                if judgment is None:
                    rows.append(f"<tr><td>{text(judge)}</td><td>no judgment</td><td></td><td></td><td></td></tr>")
                    continue
                said = status_of(1, False, {judge: {generation.sample: judgment}})
                rows.append(
                    f'<tr data-judge="{attr(judge)}"><td>{text(judge)}</td><td>{text(status_label(said))}</td>'
                    f"<td>{number(judgment.points)} of {number(judgment.max_points)}</td>"
                    f"<td>{text(judgment.verdict or EMPTY)}</td><td>{link}</td></tr>"
                )
            parts.append(
                '<table class="side-verdicts"><thead><tr><th>judge</th><th>status</th><th>points</th>'
                "<th>verdict</th><th>conversation</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
            )
            reply = self.replied.get(generation.sample)
            parts.append(facts(sample_facts(generation, reply, self.usage, short=True), css="facts sample-facts"))
            parts.append("</section>")
        return "\n".join(parts)


def _answers_cell(extracted) -> str:
    """A row's extracted answers (`ANSWERS_MOST`): typeset whole as its rows come on screen, an empty
    slot a dash; those left out counted."""
    shown, used = [], 0
    for value in extracted:
        size = len(str(value).strip()) + 2
        if shown and used + size > ANSWERS_MOST:
            break
        shown.append(value)
        used += size
    if shown and len(str(shown[0])) > ANSWER_MOST:
        cells = f"(an answer of {len(str(shown[0])):,} characters: on the problem's page)"
    else:
        cells = answers_html(shown)
    left = len(extracted) - len(shown)
    return f"<td>{cells}" + (f"; + {left} more" if left else "") + "</td>"


def answer_html(value) -> str:
    """An extracted answer, typeset; an empty slot as a dash."""
    return html.formula_cell(value) if str(value).strip() else EMPTY


def sample_facts(
    generation: Generation, reply: SampleReply | None, usage: dict, short: bool = False
) -> list[tuple[str, str]]:
    """A sample's cost and timing: its finish reason and refusal, and from its reply's facts (the
    generate stage's `sample_replies` file) the model the endpoint said it served, its tokens, its
    retries and when its reply came. An offline provider sent no request; a cell generated before
    the facts were kept says "not recorded" (with the cell's totals, from its usage file)."""
    pairs = [("finish reason", generation.finish_reason or EMPTY)]
    if generation.refusal:
        pairs.append(("refusal", generation.refusal))
    if reply is not None:
        return pairs + _reply_facts(reply)
    if usage and "replies_received" not in usage:  # the usage of a provider that sends has the dates
        return pairs + [("request", "none: an offline provider (no tokens, retries, served model or latency)")]
    cell_tokens, retries = _cell_tokens(usage), usage.get("retries")
    requests = usage.get("requests", 0)
    cell_retries = "" if short or retries is None else f" (the cell's: {retries} over {requests} requests)"
    return pairs + [
        ("model served", generation.served_model or "not recorded"),
        ("tokens", "not recorded per sample" + ("" if short or not cell_tokens else f" (the cell's: {cell_tokens})")),
        ("retries", "not recorded per sample" + cell_retries),
        ("latency", "not recorded"),
    ]


def _reply_facts(reply: SampleReply) -> list[tuple[str, str]]:
    tokens = ", ".join(f"{name.replace('_', ' ')} {reply.usage[name]}" for name in sorted(reply.usage))
    return [
        ("model served", reply.served_model or "not said by the endpoint"),
        ("tokens", tokens or "not reported by the endpoint"),
        ("retries", str(max(reply.attempts - 1, 0))),
        ("received", f"{reply.received} (UTC)" if reply.received else "not recorded (cached before dates were kept)"),
        # as the request cache keeps it with the reply: a rerun over the cache writes the same page
        (
            "latency",
            f"{reply.latency:.2f} s" if reply.latency is not None else "not recorded (cached before it was kept)",
        ),
    ]


def _cell_tokens(usage: dict) -> str:
    if not usage or not usage.get("requests"):
        return ""
    names = ("prompt_tokens", "completion_tokens", "reasoning_tokens")
    return ", ".join(f"{name.replace('_', ' ')} {usage[name]}" for name in names if name in usage) + (
        f" over {usage['requests']} requests"
    )


# ---------------------------------------------------------------- judge conversations

# A page holds at most this many characters of judge conversations (each page must stay under
# 5 MB: a HiPhO problem asks every criterion of every scheme, each with the whole problem and
# response); past it, texts are cut, saying where they are whole.
CONVERSATION_BUDGET = 2_000_000
# A message that repeats the start or end of the same message of the conversation's first task
# (the same problem and response, another criterion) shows only what differs, when the repeated
# part is at least this long.
SAME_AT_LEAST = 200


class _Budget:
    def __init__(self, most: int = CONVERSATION_BUDGET):
        self.left = most

    def take(self, value: str) -> tuple[str, bool]:
        """`value`, or as much of it as the page has room for; and whether it was cut."""
        kept = value[: max(self.left, 0)]
        self.left -= len(kept)
        return kept, len(kept) < len(value)


def conversation_anchor(sample: int, judge: str) -> str:
    return f"conversation-{sample}-{html.page_slug(judge)}"


def conversation_html(conversation: Conversation, anchor: str, budget: _Budget, label=str) -> str:
    """What one judge of the plan (its ensemble's judges each) was sent about one sample, task by
    task, and every raw reply, re-asks included: collapsed, the messages as sent (raw text). Each
    task is named by `label` (the benchmark's `report_task_label`: the numbering of its sections)."""
    tasks = [task for task in conversation.tasks if isinstance(task, dict)]
    replies = sum(len(kept) for task in tasks for kept in (task.get("replies") or {}).values())
    reasks = sum(max(len(kept) - 1, 0) for task in tasks for kept in (task.get("replies") or {}).values())
    parts = [
        f'<details class="conversation" id="{attr(anchor)}"><summary>What judge {text(conversation.judge)} was asked '
        f"and replied: {len(tasks)} task{'s' * (len(tasks) != 1)}, {replies} repl{'ies' if replies != 1 else 'y'}"
        + (f" ({reasks} re-ask{'s' * (reasks != 1)})" if reasks else "")
        + "</summary>"
    ]
    first = tasks[0] if tasks else None
    for task in tasks:
        parts.append(_task_html(task, first, budget, label))
    parts.append("</details>")
    return "\n".join(parts)


def _task_html(task: dict, first: dict | None, budget: _Budget, label) -> str:
    key = str(task.get("task", ""))
    judges = task.get("replies") or {}
    said = "; ".join(
        f"{judge}: {len(kept)} repl{'ies' if len(kept) != 1 else 'y'}"
        + (f" ({len(kept) - 1} re-ask{'s' * (len(kept) != 2)})" if len(kept) > 1 else "")
        + (", failed" if kept and kept[-1].get("error") else "")
        for judge, kept in judges.items()
    )
    parts = [f'<details class="task" data-task="{attr(key)}"><summary>{text(label(key))}: {text(said)}</summary>']
    messages = task.get("messages") or []
    earlier = (first or {}).get("messages") or [] if first is not task else []
    parts.append('<div class="sent"><h5>sent (to every judge, and again on each re-ask)</h5>')
    for index, message in enumerate(messages):
        other = earlier[index] if index < len(earlier) else None
        parts.append(f'<div class="message"><p class="role">{text(message.get("role", ""))}</p>')
        for n, part in enumerate(content_parts(message)):
            if part.get("type") == "image":
                parts.append(f'<p class="figure-note">[figure {text(str(part.get("sha256", ""))[:12])}]</p>')
                continue
            was = content_parts(other)[n].get("text") if other and n < len(content_parts(other)) else None
            parts.append(
                _sent_text(str(part.get("text", "")), was, label(str(first.get("task", ""))) if first else "", budget)
            )
        parts.append("</div>")
    parts.append("</div>")
    for judge, kept in judges.items():
        parts.append(f'<div class="replies" data-judge="{attr(judge)}"><h5>{text(judge)} replied</h5>')
        for asked, reply in enumerate(kept):
            parts.append(_reply_html(reply, asked, len(kept), budget))
        parts.append("</div>")
    parts.append("</details>")
    return "\n".join(parts)


def _sent_text(value: str, was: str | None, first: str, budget: _Budget) -> str:
    """A message's text as sent; where it repeats the start or the end of the first task's, those
    whole lines named instead of repeated (a line that differs is shown whole: a criterion that
    shares its first words with the first task's reads as itself)."""
    head = tail = 0
    if was is not None and was is not value:
        if was == value:
            same = f"[the same {len(value):,} characters as in {text(first)}]"
            return f'<pre class="sent-text"><span class="same">{same}</span></pre>'
        head = len(os.path.commonprefix([value, was]))
        head = value.rfind("\n", 0, head) + 1  # back to the start of the line where they part
        tail = len(os.path.commonprefix([value[head:][::-1], was[head:][::-1]]))
        line_end = value.find("\n", len(value) - tail) if tail else -1  # on to the end of that line
        tail = len(value) - line_end if line_end != -1 else 0
        head, tail = (head if head >= SAME_AT_LEAST else 0), (tail if tail >= SAME_AT_LEAST else 0)
    middle, cut = budget.take(value[head : len(value) - tail])
    same = '<span class="same">[\u2026 {:,} characters as in {} \u2026]</span>'
    return (
        '<pre class="sent-text">'
        + (same.format(head, text(first)) if head else "")
        + text(middle)
        + (_cut_note() if cut else "")
        + (same.format(tail, text(first)) if tail else "")
        + "</pre>"
    )


def _cut_note() -> str:
    return (
        '<span class="same">[\u2026 cut: a page shows at most '
        f"{CONVERSATION_BUDGET:,} characters of judge conversations; the whole is in the judge cell's "
        "outputs/conversations/ file]</span>"
    )


def _reply_html(reply: dict, asked: int, asks: int, budget: _Budget) -> str:
    """One raw reply of a judge to a task; where the task was asked again (`asks` > 1), which ask it answered."""
    label = (
        ""
        if asks == 1
        else "to the first ask"
        if asked == 0
        else f"to re-ask {asked} (the reply before did not follow the asked schema)"
    )
    usage = reply.get("usage") or {}
    pairs = [
        ("finish reason", reply.get("finish_reason") or EMPTY),
        ("tokens", ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in sorted(usage.items())) or "not reported"),
        ("retries", str(max(int(reply.get("attempts", 1)) - 1, 0))),
        ("received", reply.get("received") or "not recorded (offline, or cached before dates were kept)"),
    ]
    parts = [
        '<div class="reply">' + (f'<p class="ask">{text(label)}</p>' if label else ""),
        facts(pairs, css="facts reply-facts"),
    ]
    if reply.get("error"):
        parts.append(f'<p class="error">request failed: {text(reply["error"])}</p>')
    if reply.get("refusal"):
        parts.append(f'<p class="error">refused: {text(reply["refusal"])}</p>')
    if reply.get("reasoning"):
        kept, cut = budget.take(str(reply["reasoning"]))
        parts.append(
            f'<details class="reasoning"><summary>reasoning</summary><pre>{text(kept)}{_cut_note() if cut else ""}'
            "</pre></details>"
        )
    if reply.get("text") is not None:
        kept, cut = budget.take(str(reply["text"]))
        parts.append(f'<pre class="reply-text">{text(kept)}{_cut_note() if cut else ""}</pre>')
    parts.append("</div>")
    return "\n".join(parts)


# The markers a figure follows in a prompt (`render.place_figures` puts each right after its first).
FIGURE_MARKER_AT_END = re.compile(r"(\[figure\d+\]|<image\d+>)\s*$")


def content_parts(message: dict) -> list[dict]:
    content = message.get("content")
    parts = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
    return [part for part in parts if isinstance(part, dict)]


def question_parts(own: str, messages) -> list[dict]:
    """A problem's own text cut into text and image parts as its prompt places the figures: after
    the marker that precedes each in the prompt, where the text has that marker; the others before
    the text where the prompt puts them before any text, else after it."""
    before, at_markers, after = [], [], []
    seen_text = False
    for message in messages:
        previous = ""
        for part in content_parts(message):
            if part.get("type") == "text":
                previous, seen_text = str(part.get("text", "")), seen_text or bool(str(part.get("text", "")).strip())
            elif part.get("type") == "image":
                marker = FIGURE_MARKER_AT_END.search(previous)
                if marker and marker.group(1) in own:
                    at_markers.append((marker.group(1), part))
                else:
                    (after if seen_text else before).append(part)
                previous = ""
    parts, start = list(before), 0
    for marker, image in at_markers:
        found = own.find(marker, start)
        if found < 0:  # a marker named twice in the prompt but once in the text
            after.append(image)
            continue
        parts += [{"type": "text", "text": own[start : found + len(marker)]}, image]
        start = found + len(marker)
    if own[start:].strip() or start == 0:
        parts.append({"type": "text", "text": own[start:]})
    return parts + after


def _mean_score(by_sample: dict[int, Judgment]) -> float | None:
    scores = [j.score for j in by_sample.values() if j.score is not None]
    return sum(scores) / len(scores) if scores else None


def _points_text(by_sample: dict[int, Judgment]) -> str:
    points, most = mean_points(by_sample.values())
    if points is None:
        return "\u2013"
    errors = sum(j.status != "scored" for j in by_sample.values())
    return f"{number(round(points, 4))}/{number(most)}" + (f" ({errors} unscored)" if errors else "")


def judgment_html(judgment: Judgment, hook, problem: Problem | None) -> Iterator[str]:
    """One judgment: its status and score, the answers against the gold, the rule checks, and the
    benchmark's own sections (its `report_sections`) or, without them, each judge's raw replies."""
    pairs = [
        ("status", judgment.status),
        ("score", number(judgment.score)),
        ("points", f"{number(judgment.points)} of {number(judgment.max_points)}"),
    ]
    if judgment.verdict is not None:
        pairs.append(("verdict", judgment.verdict))
    pairs += [(name.replace("_", " "), number(value)) for name, value in judgment.parts.items() if value is not None]
    if judgment.truncated:
        pairs.append(("truncated", "yes"))
    if judgment.refused:
        pairs.append(("refused", "yes"))
    if judgment.detail:
        pairs.append(("detail", judgment.detail))
    yield facts(pairs)
    yield '<section class="answers">\n<h4>Answers: extracted against the gold</h4>'
    yield "<p>extracted: " + (", ".join(answer_html(e) for e in judgment.extracted) or "none") + "</p>"
    if judgment.slots:
        rows = "\n".join(
            f"<tr><td>{html.formula_cell(slot.get('expected'))}</td><td>{html.formula_cell(slot.get('given'))}"
            f"</td><td>{html.cell(slot.get('points'))}</td></tr>"
            for slot in judgment.slots
        )
        yield (
            '<table class="slots">\n<thead><tr><th>gold</th><th>given</th><th>points</th></tr></thead>\n<tbody>\n'
            + rows
            + "\n</tbody>\n</table>"
        )
    yield "</section>"
    yield '<section class="rules">\n<h4>Rule checks</h4>'
    rows = [(index + 1, bool(slot.get("correct"))) for index, slot in enumerate(judgment.slots)]
    yield html.table("rules", ("answer", "matched"), rows) if rows else "<p>no rule check</p>"
    if judgment.undecided:
        yield (
            "<p>undecided (scored as not matched, or by the protocol's judge):</p><ul>"
            + "".join(f"<li>{text(reason)}</li>" for reason in judgment.undecided)
            + "</ul>"
        )
    yield "</section>"
    sections = hook(problem, judgment) if hook is not None and problem is not None else None
    if sections is None:
        yield details_html(judgment.details)
    else:
        yield from (section_html(section) for section in sections)


def section_html(section: ReportSection) -> str:
    parts = [f'<section class="{attr(section.css)}">', f"<h4>{text(section.title)}</h4>"]
    if section.facts:
        parts.append(facts(section.facts))
    parts += [html.table(t.css, t.columns, t.rows, t.math) for t in section.tables]
    parts.append("</section>")
    return "\n".join(parts)


def details_html(details) -> str:
    """Each judge's replies per task, one row per field: the generic view of a benchmark without
    `report_sections`."""
    rows = []
    for entry in details or ():
        judge = entry.get("judge", "")
        for task in sorted(k for k in entry if k != "judge"):
            reply = entry[task]
            fields = sorted(reply.items()) if isinstance(reply, dict) else [("", reply)]
            rows += [(judge, task, field, _value(value)) for field, value in fields]
    if not rows:
        return ""
    return (
        '<section class="replies">\n<h4>What each judge replied</h4>\n'
        + html.table("details", ("judge", "task", "field", "value"), rows, math=("value",))
        + "\n</section>"
    )


def _value(value) -> str:
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return "" if value is None else str(value) if not isinstance(value, float) else f"{value:g}"
