"""What every page of the report shares: the page shell, escaping, text that may hold maths, tables
of plain values and the run metadata.

Everything that comes from a dataset or a model passes through `escape` here; no other module of
the report writes such text into a page.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from html import escape
from pathlib import Path
from urllib.parse import quote

from olympiad_eval.core.layout import page_name

# The viewer's own files, copied into the report's assets folder (`assets.py`).
STYLE, SCRIPT, MATHJAX = "viewer.css", "viewer.js", "mathjax/tex-svg-full.js"

PAGE_HEAD = """<!DOCTYPE html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="stylesheet" href="{assets}/{style}">
<script src="{assets}/{script}"></script>
{maths}</head>
<body class="tex2jax_ignore">
"""
PAGE_TAIL = "</body>\n</html>\n"


def relative(target: Path, start: Path) -> str:
    """A link from a page in folder `start` to `target`, URL-quoted."""
    return quote(Path(os.path.relpath(target, start)).as_posix())


def attr(text) -> str:
    return escape("" if text is None else str(text), quote=True)


def text(value) -> str:
    return escape("" if value is None else str(value), quote=False)


def head(title: str, assets: str, maths: bool, lang: str = "en") -> str:
    """The start of a page; `assets` is the link to the assets folder from it. Pages with maths load
    MathJax (configured by the viewer's script, which comes first)."""
    mathjax = f'<script defer src="{attr(assets)}/{MATHJAX}"></script>\n' if maths else ""
    return PAGE_HEAD.format(
        lang=attr(lang), title=text(title), assets=attr(assets), style=STYLE, script=SCRIPT, maths=mathjax
    )


def write_page(
    path: Path, title: str, assets: str, chunks: Iterable[str], maths: bool = False, lang: str = "en"
) -> None:
    """A page written as it is made, chunk by chunk: never a whole page in memory."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(head(title, assets, maths, lang))
        for chunk in chunks:
            handle.write(chunk)
            handle.write("\n")
        handle.write(PAGE_TAIL)


def maths(value, block: bool = True, formula: bool = False) -> str:
    """Text that may hold LaTeX (`$...$`, `\\(...\\)`, `$$...$$`, `\\[...\\]`): typeset in the browser,
    its raw text one click away. Line breaks are kept (`white-space: pre-wrap`). A `formula` (an
    answer: LaTeX without delimiters, `\\frac{1}{2}`) is typeset whole unless it has delimiters."""
    raw = text(value)
    shown = raw if not formula or _DELIMITED.search(raw) or not raw.strip() else f"\\({raw}\\)"
    tag = "div" if block else "span"
    return (
        f'<{tag} class="math-text">{shown}</{tag}><details class="raw"><summary>raw</summary><pre>{raw}</pre></details>'
    )


_DELIMITED = re.compile(r"\$|\\\(|\\\[")


def number(value) -> str:
    return "\u2013" if value is None else f"{value:g}"


def cell(value, math: bool = False) -> str:
    if isinstance(value, bool):
        return "\u2713" if value else "\u2717"
    if isinstance(value, float):
        return number(value)
    return maths(value, block=False) if math and value not in (None, "") else text(value)


def formula_cell(value) -> str:
    return maths(value, block=False, formula=True) if value not in (None, "") else ""


def table(css: str, columns: Iterable[str], rows: Iterable[Iterable], math: Iterable[str] = ()) -> str:
    columns = list(columns)
    maths_at = {index for index, name in enumerate(columns) if name in set(math)}
    head_row = "".join(f"<th>{text(name)}</th>" for name in columns)
    body = "\n".join(
        "<tr>" + "".join(f"<td>{cell(value, index in maths_at)}</td>" for index, value in enumerate(row)) + "</tr>"
        for row in rows
    )
    return f'<table class="{attr(css)}">\n<thead><tr>{head_row}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>'


def facts(pairs: Iterable[tuple[str, object]], css: str = "facts") -> str:
    """(label, value) lines as a definition list."""
    items = "".join(f"<dt>{text(label)}</dt><dd>{text(value)}</dd>" for label, value in pairs)
    return f'<dl class="{attr(css)}">{items}</dl>'


def metadata(pairs: Iterable[tuple[str, object]]) -> str:
    """The run metadata every page shows."""
    return '<section class="metadata">\n<h2>Run metadata</h2>\n' + facts(pairs) + "\n</section>"


def page_slug(problem_id: str) -> str:
    """A problem's file name: its id where that is a plain file name (`core.layout.NAME`, the one
    pattern of every name that becomes a path), else a plain form of it with a hash of the id (two
    ids never share a file)."""
    return page_name(problem_id)
