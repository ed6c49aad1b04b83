"""A cell's pages (suite x model): its index, one row per problem to sort and filter, and one page
per problem with the question, each sample's response and what every judge of the plan made of it.

A cell's folder is the output of its own DVC stage (`report@<suite>-<model>` in its family's
pipeline): adding a model writes its cells and rewrites no other cell's file. Pages are written
as the cell's files are read, a problem at a time (all are sorted by id), so that a cell of any
size never sits in memory; only its index rows do, a few hundred bytes each.
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
    Generation,
    InputError,
    Judgment,
    Problem,
    Prompt,
    atomic_dir,
    file_sha256,
    iter_json_lines,
    iter_jsonl,
    natural_key,
    read_suite_info,
)
from olympiad_eval.report import html, partial_html
from olympiad_eval.report.html import attr, facts, maths, number, relative, text

# A problem is right when it earned all its points (score 1), as the comparison command counts it.
MARKS = {"correct": "\u2713", "partial": "\u25d0", "wrong": "\u2717", "judge-error": "judge error", "failed": "failed"}


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
        return self.layout.report_cell(self.suite, self.model)


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
    """Write the cell's folder (index.html, problems/, figures/) atomically; `settings` are the
    model's generation settings as its config gives them."""
    layout = cell.layout
    prompts = need(layout.prompts(cell.suite), cell.name)
    generations = need(layout.generations(cell.family, cell.suite, cell.model), cell.name)
    judgments = {
        judge: need(layout.judgments(cell.family, cell.suite, cell.model, judge), f"{cell.name} x {judge}")
        for judge in cell.judges
    }
    kind = suite_kind(layout, cell.suite)
    hook = plugin(kind).report_sections
    meta = cell_metadata(cell, settings, judgments)
    cell.folder.parent.mkdir(parents=True, exist_ok=True)
    with atomic_dir(cell.folder) as staging:
        os.chmod(staging, 0o755)
        pages = _Pages(cell, staging, hook, meta)
        problems = Cursor(iter_jsonl(need(layout.suite(cell.suite) / "problems.jsonl", cell.name), Problem))
        generated = Cursor(iter_jsonl(generations, Generation))
        judged = {judge: Cursor(iter_jsonl(path, Judgment)) for judge, path in judgments.items()}
        ids = [str(row.get("id", "")) for _, row in iter_json_lines(prompts)]  # for each page's previous and next
        rows = []
        for number, prompt in enumerate(iter_jsonl(prompts, Prompt)):
            problem = next(iter(problems.take(prompt.id)), None)
            samples = sorted(generated.take(prompt.id), key=lambda g: g.sample)
            graded = {judge: {j.sample: j for j in cursor.take(prompt.id)} for judge, cursor in judged.items()}
            neighbours = (ids[number - 1] if number else None, ids[number + 1] if number + 1 < len(ids) else None)
            rows.append(pages.problem(prompt, problem, samples, graded, neighbours))
        html.write_page(
            staging / "index.html", cell.name, relative(layout.report_assets(), cell.folder), _index(cell, rows, meta)
        )
    return cell.folder


def suite_kind(layout: Layout, suite: str) -> str:
    return read_suite_info(need(layout.suite_info(suite), suite)).kind


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
        ("model settings", json.dumps(settings, sort_keys=True, ensure_ascii=False)),
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
    "hashes (git log dvc.lock pipelines/*/dvc.lock); so the same inputs give the same bytes"
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
    if not usage:
        return "not recorded"
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

SORTS = (("id", "problem"), ("group", "group"), ("level", "level"), ("status", "status"), ("score", "score"))
STATUS_FILTERS = (
    ("all", "every problem"),
    ("wrong", "wrong"),
    ("judge-error", "judge errors"),
    ("truncated", "truncated"),
    ("undecided", "undecided rule checks"),
)


def _index(cell: Cell, rows: list[tuple[str, str, str]], meta: list) -> Iterator[str]:
    """rows: (group, status, row html) per problem."""
    layout = cell.layout
    yield f"<h1>{text(cell.name)}</h1>"
    yield (
        f'<p class="nav"><a href="{attr(relative(layout.report_index(), cell.folder))}">the report</a> &middot; '
        f"benchmark {text(cell.benchmark)}; {len(rows)} problems; judges {text(', '.join(cell.judges))}</p>"
    )
    yield from partial_html(layout, cell.suite)
    counts = {status: sum(1 for _, s, _ in rows if s == status) for status in MARKS}
    yield facts(((status_label(s), n) for s, n in counts.items() if n), css="counts")
    groups = sorted({group for group, _, _ in rows}, key=natural_key)
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
    yield f'<span><span id="shown-count">{len(rows)}</span> of {len(rows)} shown</span>'
    yield "</div>"
    judges = "".join(f"<th>{text(judge)}</th>" for judge in cell.judges)
    sorts = "".join(f'<th data-sort="{key}">{label}</th>' for key, label in SORTS)
    yield (f'<table class="problems">\n<thead><tr>{sorts}{judges}<th>extracted</th></tr></thead>\n<tbody>')
    yield from (row for _, _, row in rows)
    yield "</tbody>\n</table>"
    yield html.metadata(meta)


# ---------------------------------------------------------------- a problem's page


class _Pages:
    def __init__(self, cell: Cell, staging: Path, hook, meta: list):
        self.cell, self.staging, self.hook = cell, staging, hook
        self.meta = html.metadata(meta)
        self.figures: dict[str, str] = {}  # sha256 -> path in the cell's folder

    def problem(
        self,
        prompt: Prompt,
        problem: Problem | None,
        samples: list[Generation],
        graded: dict[str, dict[int, Judgment]],
        neighbours: tuple,
    ) -> tuple[str, str, str]:
        """Write the problem's page (linking the previous and next problem's); its index row (group,
        status, html)."""
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
        html.write_page(
            page,
            f"{prompt.id} \u00b7 {self.cell.name}",
            relative(layout.report_assets(), where),
            self._page(prompt, problem, samples, graded, status, group, where, neighbours),
            maths=True,
            lang=prompt.language or "en",
        )
        level = problem.level if problem is not None else None
        return group, status, self._row(prompt.id, slug, group, level, status, graded, truncated, undecided)

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
        flags = " ".join(flag for flag, on in (("truncated", truncated), ("undecided", undecided)) if on)
        data = (
            f'data-id="{attr(problem_id)}" data-status="{status}" data-group="{attr(group)}" data-score="{score:.4g}"'
            + ("" if level is None else f' data-level="{level}"')
            + (' data-truncated="1"' if truncated else "")
            + (' data-undecided="1"' if undecided else "")
        )
        mark = MARKS[status] + (f" {flags}" if flags else "")
        return (
            f'<tr class="problem-row" {data}><td><a href="problems/{attr(slug)}.html">{text(problem_id)}</a></td>'
            f"<td>{text(group)}</td><td>{number(level)}</td><td>{mark}</td><td>{score:.2f}</td>{judges}"
            f"<td><code>{text(_short('; '.join(extracted)))}</code></td></tr>"
        )

    def _page(self, prompt, problem, samples, graded, status, group, where: Path, neighbours) -> Iterator[str]:
        layout = self.cell.layout
        compare = layout.report_compare(self.cell.suite) / f"{html.page_slug(prompt.id)}.html"
        steps = [
            f'<a rel="{rel}" href="{attr(html.page_slug(other))}.html">{label} {text(other)}</a>'
            for rel, label, other in (("prev", "\u2190", neighbours[0]), ("next", "\u2192", neighbours[1]))
            if other
        ]
        yield f"<h1>{text(prompt.id)}</h1>"
        yield (
            f'<p class="nav"><a href="../index.html">{text(self.cell.name)}</a> &middot; '
            f'<a href="{attr(relative(compare, where))}">side by side: every model and judge</a> &middot; '
            f'<a href="{attr(relative(layout.report_index(), where))}">the report</a>'
            + "".join(f" &middot; {step}" for step in steps)
            + "</p>"
        )
        yield facts(
            [("status", status_label(status)), ("group", group), ("language", prompt.language)]
            + ([("level", str(problem.level))] if problem is not None and problem.level is not None else [])
        )
        yield from self._question(prompt, problem)
        if not samples:
            yield '<p class="error">no generation</p>'
        for generation in samples:
            yield from self._sample(
                generation, {judge: graded[judge].get(generation.sample) for judge in graded}, problem
            )
        yield self.meta

    def _question(self, prompt: Prompt, problem: Problem | None) -> Iterator[str]:
        """The problem's own text with the prompt's figures where the prompt places them, and the
        whole prompt sent (instructions and all) one click away. Without a problem record, the prompt."""
        yield '<section class="question">\n<h2>Question</h2>'
        own = "\n\n".join(part for part in (problem.context, problem.question) if part) if problem else ""
        if own:
            yield from self._parts(question_parts(own, prompt.messages))
            yield '<details class="prompt"><summary>the full prompt sent</summary>'
            yield from self._messages(prompt.messages, figures=False)
            yield "</details>"
        else:
            yield from self._messages(prompt.messages, figures=True)
        if problem is not None and problem.answers:
            rows = [(slot.value, slot.unit, slot.points) for slot in problem.answers]
            yield "<h3>Gold answers</h3>"
            yield html.table("gold", ("answer", "unit", "points"), rows, math=("answer",))
        if problem is not None and problem.solution:
            yield f'<details class="solution"><summary>reference solution</summary>{maths(problem.solution)}</details>'
        yield "</section>"

    def _messages(self, messages, figures: bool) -> Iterator[str]:
        """Each message with its role; its figures as images, or (`figures` False: they are shown
        above) as a line naming them."""
        for message in messages:
            yield f'<div class="message"><p class="role">{text(message.get("role", ""))}</p>'
            parts = content_parts(message)
            yield from self._parts(
                parts
                if figures
                else [
                    part
                    if part.get("type") != "image"
                    else {"type": "note", "text": f"[figure {str(part.get('sha256', ''))[:12]}, shown above]"}
                    for part in parts
                ]
            )
            yield "</div>"

    def _parts(self, parts: list[dict]) -> Iterator[str]:
        for part in parts:
            if part.get("type") == "text":
                yield maths(part.get("text", ""))
            elif part.get("type") == "image":
                yield self._figure(part)
            elif part.get("type") == "note":
                yield f'<p class="figure-note">{text(part["text"])}</p>'

    def _figure(self, part: dict) -> str:
        sha = str(part.get("sha256", ""))
        if sha not in self.figures:
            source = Path(str(part.get("path", "")))
            root = self.cell.layout.root
            found = next(
                (c for c in ([source] if source.is_absolute() else [source, root.parent / source]) if c.is_file()), None
            )
            if found is None:
                raise InputError(f"figure {sha} not found at {source}")
            if file_sha256(found) != sha:
                raise InputError(f"{found}: content does not match its sha256 {sha}")
            relative_path = f"figures/{sha}{found.suffix.lower() or '.bin'}"
            (self.staging / "figures").mkdir(exist_ok=True)
            shutil.copyfile(found, self.staging / relative_path)
            os.chmod(self.staging / relative_path, 0o644)
            self.figures[sha] = relative_path
        return f'<img src="../{attr(self.figures[sha])}" alt="figure {attr(sha[:12])}">'

    def _sample(self, generation: Generation, judged: dict[str, Judgment | None], problem) -> Iterator[str]:
        yield f'<section class="sample" data-sample="{generation.sample}">\n<h2>Sample {generation.sample}</h2>'
        if generation.error is not None:
            yield f'<p class="error">generation failed: {text(generation.error)}</p>'
        else:
            yield facts(
                [("finish reason", generation.finish_reason or "\u2013")]
                + ([("refusal", generation.refusal)] if generation.refusal else [])
            )
            if generation.finish_reason == "length":
                yield '<p class="error">truncated: the response was cut at the token limit</p>'
            if generation.reasoning:
                yield f'<details class="reasoning"><summary>reasoning</summary>{maths(generation.reasoning)}</details>'
            yield '<div class="response">' + maths(generation.response or "") + "</div>"
        for judge, judgment in judged.items():
            yield from self._judgment(judge, judgment, problem)
        yield "</section>"

    def _judgment(self, judge: str, judgment: Judgment | None, problem) -> Iterator[str]:
        yield f'<div class="judgment" data-judge="{attr(judge)}">\n<h3>judge {text(judge)}</h3>'
        if judgment is None:
            yield '<p class="error">no judgment</p>\n</div>'
            return
        yield from judgment_html(judgment, self.hook, problem)
        yield "</div>"


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


def _short(value: str, most: int = 48) -> str:
    """An index row's extracted answers, cut so that a row stays small (the page has them whole)."""
    return value if len(value) <= most else value[: most - 1] + "\u2026"


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
    yield (
        "<p>extracted: "
        + (", ".join(maths(e, block=False, formula=True) for e in judgment.extracted) or "none")
        + "</p>"
    )
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
