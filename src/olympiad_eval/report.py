"""A static, offline HTML report of a run: the tables of each benchmark, and one page per
suite x model with every problem's prompt, figures, responses and grades.

Plain HTML and a little inline CSS, no scripts, no network. Everything that comes from a dataset
or a model is HTML-escaped. The output is deterministic (sorted, no timestamps), so a rerun on
the same inputs writes the same bytes.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from html import escape
from pathlib import Path
from urllib.parse import quote

import pandas as pd

from olympiad_eval.layout import Layout
from olympiad_eval.records import (
    Generation, InputError, Judgment, Prompt, Selection, atomic_dir, atomic_file, file_sha256, iter_json_lines,
    iter_jsonl,
    natural_key,
)

CSS = """
body { font-family: sans-serif; margin: 1.5em auto; max-width: 1200px; padding: 0 1em; color: #222; }
h1, h2, h3 { color: #1a3d6d; }
table { border-collapse: collapse; margin: 0.5em 0 1.2em; font-size: 0.9em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #e4ecf7; }
tr:nth-child(even) td { background: #f6f8fb; }
pre { background: #f4f4f4; border: 1px solid #ddd; padding: 0.6em; white-space: pre-wrap;
      word-break: break-word; max-height: 30em; overflow: auto; }
section.problem { border-top: 2px solid #1a3d6d; margin-top: 2em; }
img { max-width: 100%; border: 1px solid #ccc; margin: 0.3em 0; }
.error { color: #a00; font-weight: bold; }
.ok { color: #070; } .bad { color: #a00; }
""".strip()

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>
{css}
</style>
</head>
<body>
{body}
</body>
</html>
"""


def page_name(suite: str, model: str) -> str:
    return f"{suite}__{model}.html"


def write_report(plan: dict, layout: Layout) -> None:
    """Write index.html and one page per suite x model of the plan (`stage.read_plan`'s) into the
    layout's report folder, atomically."""
    suites = dict(plan.get("suites") or {})
    models, judges = list(plan.get("models") or []), list(plan.get("judges") or [])
    with atomic_dir(layout.report()) as staging:
        os.chmod(staging, 0o755)
        figures: dict[str, str] = {}  # sha256 -> relative path in the report
        _write(staging / "index.html", _page("olympiad-eval report", _index(plan, layout)))
        for suite in sorted(suites):
            prompts = _need(layout.prompts(suite), suite)
            of_plan = _Suite(suite, suites[suite], plan["family"][suites[suite]], layout)
            for model in models:
                chunks = _model_page(of_plan, model, judges, prompts, staging, figures)
                _write_page(staging / page_name(suite, model), f"{suite} \u00d7 {model}", chunks)


def _need(path: Path, cell: str) -> Path:
    if not path.is_file():
        raise InputError(f"{path}: the plan's cell {cell} has no such file; run its stages first")
    return path


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8", newline="\n")


def _page(title: str, body: str) -> str:
    return PAGE.format(title=escape(title), css=CSS, body=body)


def _write_page(path: Path, title: str, chunks: Iterable[str]) -> None:
    """A page written as it is made: a suite x model page of a PhysElite-sized run is ~100 MB of
    HTML, which must not sit in memory (joined, formatted and encoded: several copies)."""
    head, tail = _page(title, "\0").split("\0")
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(head)
        handle.writelines(_lines(chunks))
        handle.write(tail)


def _lines(chunks: Iterable[str]) -> Iterator[str]:
    """The chunks joined by newlines, as `"\\n".join` would join them."""
    for number, chunk in enumerate(chunks):
        yield chunk if number == 0 else "\n" + chunk


# ---- index ---------------------------------------------------------------------------------


def _tables(layout: Layout, benchmark: str) -> list[dict]:
    """The tables of a benchmark in the aggregate stage's order, from the index it writes: each
    table's name, title and files (`tables.table_index`)."""
    index = _need(layout.table_index(benchmark), benchmark)
    return json.loads(index.read_text(encoding="utf-8"))["tables"]


def _table_html(csv: Path) -> str:
    frame = pd.read_csv(csv, keep_default_na=False, na_values=[""])
    return frame.to_html(index=False, na_rep="\u2013", float_format="%.2f", escape=True, border=0)


def partial(layout: Layout, suite: str) -> str | None:
    """What a rendered suite that leaves problems out took (`2 of 5 problems (limit 2)`), from
    the selection its suite.json records; None for a whole suite."""
    path = layout.suite(suite) / "suite.json"
    record = json.loads(path.read_text(encoding="utf-8")).get("selection") if path.is_file() else None
    taken = Selection(**record) if record else None
    return taken.describe() if taken is not None and taken.partial else None


def _partial_html(took: str | None, suite: str | None = None) -> list[str]:
    if took is None:
        return []
    return [f'<p class="partial"><b>partial:</b> {escape(suite) + ": " if suite else ""}{escape(took)}</p>']


def _index(plan: dict, layout: Layout) -> str:
    suites = dict(plan.get("suites") or {})
    parts = ["<h1>olympiad-eval report</h1>",
             "<p>Models: " + escape(", ".join(map(str, plan.get("models") or []))) +
             "; judges: " + escape(", ".join(map(str, plan.get("judges") or []))) + "</p>"]
    for benchmark in plan.get("benchmarks") or []:
        parts.append(f'<h2 id="{escape(benchmark, quote=True)}">{escape(benchmark)}</h2>')
        for suite in sorted(s for s, b in suites.items() if b == benchmark):
            parts += _partial_html(partial(layout, suite), suite)
        for table in _tables(layout, benchmark):
            parts.append(f"<h3>{escape(table['title'])}</h3>")
            parts.append(_table_html(_need(layout.tables(benchmark) / table["files"]["csv"], benchmark)))
        links = [
            f'<li><a href="{escape(quote(page_name(suite, model)), quote=True)}">'
            f"{escape(suite)} \u00d7 {escape(model)}</a></li>"
            for suite in sorted(s for s, b in suites.items() if b == benchmark)
            for model in plan.get("models") or []
        ]
        if links:
            parts.append("<h3>Responses</h3>\n<ul>\n" + "\n".join(links) + "\n</ul>")
    parts.append(_comparisons_link(layout))
    return "\n".join(parts)


# ---- comparisons ---------------------------------------------------------------------------
# `python -m olympiad_eval.compare` writes comparisons on demand, outside the DVC pipeline, and
# rewrites their page each time. The report links that page rather than listing the comparisons
# itself: it is a DVC stage, and what it reads must be its dependencies, so a list read from a
# folder that no stage makes would change its bytes (and its dvc.lock) with whatever comparisons
# happen to be on disk, and a new comparison would not show until the report reran.


def _relative(target: Path, start: Path) -> str:
    return quote(Path(os.path.relpath(target, start)).as_posix())


def _comparisons_link(layout: Layout) -> str:
    page = _relative(layout.comparison_index(), layout.report())
    return ("<h2 id=\"comparisons\">Comparisons</h2>\n"
            f'<p><a href="{escape(page, quote=True)}">Comparisons of two runs and judges\' agreement</a>: flips, score '
            "differences with paired intervals and tests, kappas. <code>python -m olympiad_eval.compare runs SUITE "
            "MODEL/JUDGE MODEL/JUDGE</code> or <code>... judges SUITE CELL...</code> writes one and lists it there "
            "(no page until the first).</p>")


def write_comparison_index(layout: Layout) -> Path:
    """The page listing every comparison under the comparisons folder, each with its tables."""
    folder = layout.comparison_index().parent
    entries = sorted(folder.glob("*/*/index.json"), key=lambda path: (path.parent.parent.name, path.parent.name))
    back = _relative(layout.report() / "index.html", folder)
    parts = ["<h1>Comparisons</h1>", f'<p><a href="{escape(back, quote=True)}">back to the report</a></p>']
    parts += [_comparison_html(index) for index in entries] or ["<p>No comparison yet.</p>"]
    with atomic_file(layout.comparison_index()) as handle:
        handle.write(_page("olympiad-eval comparisons", "\n".join(parts)))
    return layout.comparison_index()


def _comparison_html(index_path: Path) -> str:
    index = json.loads(index_path.read_text(encoding="utf-8"))
    where = index_path.parent.relative_to(index_path.parent.parent.parent).as_posix()
    parts = [f'<h2 id="{escape(where, quote=True)}">{escape(index["title"])}</h2>',
             f'<p><a href="{escape(quote(where + "/" + index["all"]), quote=True)}">{escape(index["all"])}</a> (Markdown); '
             "each table as .md, .csv, .tex in "
             f'<a href="{escape(quote(where), quote=True)}/">{escape(where)}/</a></p>']
    for table in index["tables"]:
        parts.append(f"<h3>{escape(table['title'])}</h3>")
        parts.append(_comparison_table_html(index_path.parent / table["files"]["csv"]))
    parts.append("<ul>\n" + "\n".join(f"<li>{escape(line)}</li>" for line in index["notes"] + index["made_by"])
                 + "\n</ul>")
    return "\n".join(parts)


def _comparison_table_html(csv: Path) -> str:
    """A comparison's table; its p-values with three significant digits, not two decimals."""
    frame = pd.read_csv(csv, keep_default_na=False, na_values=[""])
    formatters = {"p": lambda p: f"{p:.3g}"} if "p" in frame.columns else None
    return frame.to_html(index=False, na_rep="\u2013", float_format="%.2f", formatters=formatters, escape=True,
                         border=0)


# ---- suite x model pages -------------------------------------------------------------------


def _figure(part: dict, outputs: Path, staging: Path, figures: dict[str, str]) -> str:
    sha = str(part.get("sha256", ""))
    if sha not in figures:
        source = Path(str(part.get("path", "")))
        candidates = [source, outputs.parent / source] if not source.is_absolute() else [source]
        found = next((c for c in candidates if c.is_file()), None)
        if found is None:
            raise InputError(f"figure {sha} not found at {source}")
        if file_sha256(found) != sha:
            raise InputError(f"{found}: content does not match its sha256 {sha}")
        ext = found.suffix.lower() or ".bin"
        relative = f"figures/{sha}{ext}"
        (staging / "figures").mkdir(exist_ok=True)
        shutil.copyfile(found, staging / relative)
        os.chmod(staging / relative, 0o644)
        figures[sha] = relative
    return f'<img src="{escape(figures[sha], quote=True)}" alt="figure {escape(sha[:12], quote=True)}">'


def _prompt_html(prompt: Prompt, outputs: Path, staging: Path, figures: dict[str, str]) -> str:
    texts, images = [], []
    for message in prompt.messages:
        content = message.get("content")
        role = str(message.get("role", ""))
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
        for part in parts:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "text":
                texts.append(f"<p><b>{escape(role)}</b></p>\n<pre>{escape(str(part.get('text', '')))}</pre>")
            elif part.get("type") == "image":
                images.append(_figure(part, outputs, staging, figures))
    html = "\n".join(texts)
    if images:
        html += '\n<div class="figures">\n' + "\n".join(images) + "\n</div>"
    return html


def _value(value) -> str:
    if isinstance(value, (dict, list, tuple)):
        return escape(json.dumps(value, ensure_ascii=False, sort_keys=True))
    return escape("" if value is None else str(value))


def _details_html(details) -> str:
    """Each judge's replies per task, one row per field: criterion awards, verdicts, steps."""
    rows = []
    for entry in details or ():
        judge = entry.get("judge", "")
        for task in sorted(k for k in entry if k != "judge"):
            reply = entry[task]
            fields = sorted(reply.items()) if isinstance(reply, dict) else [("", reply)]
            for field, value in fields:
                rows.append(f"<tr><td>{escape(str(judge))}</td><td>{escape(str(task))}</td>"
                            f"<td>{escape(str(field))}</td><td>{_value(value)}</td></tr>")
    if not rows:
        return ""
    return ("<table class=\"details\">\n<tr><th>judge</th><th>task</th><th>field</th><th>value</th></tr>\n"
            + "\n".join(rows) + "\n</table>")


def _number(value) -> str:
    return "\u2013" if value is None else f"{value:g}"


def _judgment_html(judge: str, judgment: Judgment | None) -> str:
    if judgment is None:
        return f"<h4>judge {escape(judge)}</h4>\n<p class=\"error\">no judgment</p>"
    parts = [f"<h4>judge {escape(judge)}</h4>", "<ul>",
             f"<li>status: {escape(judgment.status)}</li>",
             f"<li>score: {_number(judgment.score)}; points: {_number(judgment.points)} of "
             f"{_number(judgment.max_points)}</li>"]
    if judgment.truncated:
        parts.append("<li>truncated</li>")
    if judgment.verdict is not None:
        parts.append(f"<li>verdict: {escape(judgment.verdict)}</li>")
    parts += [f"<li>{escape(name.replace('_', ' '))}: {_number(value)}</li>"
              for name, value in judgment.parts.items() if value is not None]
    if judgment.detail:
        parts.append(f"<li>detail: {escape(judgment.detail)}</li>")
    parts.append("<li>extracted: " + ", ".join(f"<code>{escape(str(e))}</code>" for e in judgment.extracted)
                 + "</li>")
    parts.append("</ul>")
    if judgment.slots:
        rows = []
        for slot in judgment.slots:
            correct = slot.get("correct")
            mark = '<span class="ok">yes</span>' if correct else '<span class="bad">no</span>'
            rows.append(f"<tr><td>{_value(slot.get('expected'))}</td><td>{_value(slot.get('given'))}</td>"
                        f"<td>{mark}</td><td>{_value(slot.get('points'))}</td></tr>")
        parts.append("<table class=\"slots\">\n<tr><th>expected</th><th>given</th><th>correct</th><th>points</th></tr>\n"
                     + "\n".join(rows) + "\n</table>")
    parts.append(_details_html(judgment.details))
    return "\n".join(p for p in parts if p)


class _Cursor:
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


@dataclass(frozen=True)
class _Suite:
    """A suite of the plan as its pages read it: its benchmark, and where its cells' files are."""

    name: str
    benchmark: str
    family: str
    layout: Layout


def _model_page(suite: _Suite, model: str, judges: list[str], prompts_path: Path, staging: Path,
                figures: dict[str, str]) -> Iterator[str]:
    cell = f"{suite.name} x {model}"
    generations = _need(suite.layout.generations(suite.family, suite.name, model), cell)
    judgments = {judge: _need(suite.layout.judgments(suite.family, suite.name, model, judge), f"{cell} x {judge}")
                 for judge in judges}
    ids = [str(row.get("id", "")) for _, row in iter_json_lines(prompts_path)]
    yield from _page_head(suite.name, suite.benchmark, model, ids, partial(suite.layout, suite.name))
    generated = _Cursor(iter_jsonl(generations, Generation))
    judged = {judge: _Cursor(iter_jsonl(path, Judgment)) for judge, path in judgments.items()}
    for prompt in iter_jsonl(prompts_path, Prompt):
        grades = {judge: {j.sample: j for j in cursor.take(prompt.id)} for judge, cursor in judged.items()}
        yield from _problem_section(prompt, generated.take(prompt.id), judges, grades, suite.layout.root, staging,
                                    figures)


def _page_head(suite: str, benchmark: str, model: str, ids: list[str], took: str | None) -> Iterator[str]:
    yield f"<h1>{escape(suite)} \u00d7 {escape(model)}</h1>"
    yield (f'<p><a href="index.html">back to the index</a> &middot; benchmark {escape(benchmark)}; '
           f"{len(ids)} problems</p>")
    yield from _partial_html(took)
    yield ("<ul class=\"toc\">"
           + "".join(f'<li><a href="#p-{escape(quote(i), quote=True)}">{escape(i)}</a></li>' for i in ids)
           + "</ul>")


def _problem_section(prompt: Prompt, samples: list[Generation], judges: list[str], grades: dict, outputs: Path,
                     staging: Path, figures: dict[str, str]) -> Iterator[str]:
    yield f'<section class="problem" id="p-{escape(quote(prompt.id), quote=True)}">'
    yield f"<h2>{escape(prompt.id)}</h2>"
    yield f"<p>language: {escape(prompt.language)}</p>"
    yield "<h3>Prompt</h3>"
    yield _prompt_html(prompt, outputs, staging, figures)
    if not samples:
        yield '<p class="error">no generation</p>'
    for generation in sorted(samples, key=lambda g: g.sample):
        yield f"<h3>Sample {generation.sample}</h3>"
        if generation.error is not None:
            yield f'<p class="error">generation failed: {escape(generation.error)}</p>'
        else:
            if generation.finish_reason:
                yield f"<p>finish reason: {escape(generation.finish_reason)}</p>"
            yield f"<pre class=\"response\">{escape(generation.response or '')}</pre>"
        for judge in judges:
            yield _judgment_html(judge, grades[judge].get(generation.sample))
    yield "</section>"
