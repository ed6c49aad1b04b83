"""What every page of the report shares: the page shell, escaping, text that may hold maths, tables
of plain values, the run metadata and settings shown without their secrets.

Everything that comes from a dataset or a model passes through `escape` here; no other module of
the report writes such text into a page. What escaping cannot stop is what the typesetter makes of
the maths in that text (`\\href{javascript:...}`, `\\style{background:url(...)}`): the viewer runs
MathJax with its safe extension (no URL, no style, class or id of the text's own reaching the
page), and every page carries a Content-Security-Policy that lets it load and run the report's own
files only (`CSP`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from html import escape
from pathlib import Path
from urllib.parse import quote

from olympiad_eval.core.layout import page_name
from olympiad_eval.core.secrets import secret_name, secret_value, shown_url
from olympiad_eval.scoring.answers import outer_boxes

# The viewer's own files, copied into the report's assets folder (`write_assets`); MathJax's safe
# extension beside its build, where MathJax's loader finds it (`ui/safe.js`, loaded by name).
STYLE, SCRIPT, MATHJAX, MATHJAX_SAFE = "viewer.css", "viewer.js", "mathjax/tex-svg-full.js", "mathjax/ui/safe.js"

# What a page may load and run: its own files and nothing else, no inline script, no remote
# anything (a page opened from disk has a file: origin, which Chromium's 'self' matches; the pages
# link only their own folder's files, and the browser tests check that nothing else is asked for).
# Inline style stays allowed: MathJax writes its own stylesheet and sizes into the page as it
# typesets, and a style cannot run script; what one could load (a url() of a \style that got
# through) is refused by img-src and font-src, which name no host.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self'; "
    "font-src 'self'; connect-src 'none'; object-src 'none'; frame-src 'none'; base-uri 'none'; form-action 'none'"
)

PAGE_HEAD = """<!DOCTYPE html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="stylesheet" href="{assets}/{style}">
<script src="{assets}/{script}"></script>
{scripts}{maths}</head>
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


def head(title: str, assets: str, maths: bool, lang: str = "en", scripts: Iterable[str] = ()) -> str:
    """The start of a page; `assets` is the link to the assets folder from it. Pages with maths load
    MathJax (configured by the viewer's script, which comes first); `scripts` are links to data
    files of the report the page reads (run in order, once the page is parsed)."""
    mathjax = f'<script defer src="{attr(assets)}/{MATHJAX}"></script>\n' if maths else ""
    data = "".join(f'<script defer src="{attr(link)}"></script>\n' for link in scripts)
    return PAGE_HEAD.format(
        lang=attr(lang),
        csp=attr(CSP),
        title=text(title),
        assets=attr(assets),
        style=STYLE,
        script=SCRIPT,
        scripts=data,
        maths=mathjax,
    )


def write_page(
    path: Path,
    title: str,
    assets: str,
    chunks: Iterable[str],
    maths: bool = False,
    lang: str = "en",
    scripts: Iterable[str] = (),
    body: dict[str, str] | None = None,
) -> None:
    """A page written as it is made, chunk by chunk: never a whole page in memory. `body`: data
    attributes of its body for the viewer (`{"page": "side"}` is `data-page="side"`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        start = head(title, assets, maths, lang, scripts)
        if body:
            data = "".join(f' data-{name}="{attr(value)}"' for name, value in body.items())
            start = start.replace('<body class="tex2jax_ignore">', f'<body class="tex2jax_ignore"{data}>')
        handle.write(start)
        for chunk in chunks:
            handle.write(chunk)
            handle.write("\n")
        handle.write(PAGE_TAIL)


def maths(value, block: bool = True, formula: bool = False) -> str:
    """Text that may hold LaTeX (`$...$`, `\\(...\\)`, `$$...$$`, `\\[...\\]`): typeset in the browser,
    its raw text one click away. Line breaks are kept (`white-space: pre-wrap`). A `formula` (an
    answer: LaTeX without delimiters, `\\frac{1}{2}`) is typeset whole unless it has delimiters. A
    box outside the maths (`\\boxed{$a = 3.20$}`, as releases write some golds) is shown as its
    content in a frame, never with the `\\boxed{` left as text (`unboxed`)."""
    raw = text(value)
    tag = "div" if block else "span"
    if formula and raw.strip() and not _DELIMITED.search(raw):
        shown = f"\\({raw}\\)"  # a box in it is MathJax's to draw
    else:
        shown = unboxed(raw)
    return (
        f'<{tag} class="math-text">{shown}</{tag}><details class="raw"><summary>raw</summary><pre>{raw}</pre></details>'
    )


_DELIMITED = re.compile(r"\$|\\\(|\\\[")
_DOLLAR = re.compile(r"(?<!\\)\$")


def unboxed(raw: str) -> str:
    """`raw` with each closed box that is outside the maths (MathJax typesets only what is inside
    delimiters, so its `\\boxed{` would show as text), found by the project's one brace matcher
    (`scoring.answers`): a box of bare LaTeX (`\\boxed{v = \\sqrt{2gh}}`, as a response ends) is
    made maths, which MathJax draws boxed; one holding delimited maths (`\\boxed{$a = 3.20$}`, as
    releases write some golds: no LaTeX that typesets) becomes its content in a framed span."""
    parts, at = [], 0
    for box in outer_boxes(raw):
        if not box.closed or _inside_maths(raw[: box.start]):
            continue
        inside = box.inside.strip()
        shown = (
            f'<span class="boxed">{unboxed(inside)}</span>'
            if _DELIMITED.search(inside)
            else f"\\(\\boxed{{{inside}}}\\)"
        )
        parts += [raw[at : box.start], shown]
        at = box.end
    return "".join(parts) + raw[at:]


def _inside_maths(before: str) -> bool:
    """Whether the text that follows `before` is inside delimited maths (a `$` or `\\(` or `\\[` left open)."""
    return (
        len(_DOLLAR.findall(before)) % 2 == 1
        or before.rfind("\\(") > before.rfind("\\)")
        or before.rfind("\\[") > before.rfind("\\]")
    )


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


EMPTY = "\u2013"  # what an empty value (an answer slot left empty, a number not known) shows


def answers_html(values: Iterable[str]) -> str:
    """Extracted answers on one line, typeset as `maths(..., formula=True)` typesets an answer but
    only once the viewer asks (class `tex`: a cell's index typesets its rows as they come on
    screen), with no raw text beside them; an empty slot a dash. Answers of bare LaTeX share one
    element (a PhysElite-sized index has 11,586 rows); one with delimiters of its own has its own,
    so that an unmatched `$` in it cannot reach the next."""
    raws = [text(value).strip() for value in values]
    shown = [unboxed(raw) if _DELIMITED.search(raw) else f"\\({raw}\\)" if raw else EMPTY for raw in raws]
    if not any(_DELIMITED.search(raw) for raw in raws):
        return f'<span class="tex">{"; ".join(shown)}</span>' if any(raws) else "; ".join(shown)
    return "; ".join(f'<span class="tex">{one}</span>' if raw else one for raw, one in zip(raws, shown))


def table(
    css: str,
    columns: Iterable[str],
    rows: Iterable[Iterable],
    math: Iterable[str] = (),
    formula: Iterable[str] = (),
) -> str:
    """A table of plain values; the columns in `math` hold text that may carry LaTeX, those in
    `formula` answers (LaTeX typeset whole: `formula_cell`)."""
    columns = list(columns)
    maths_at = {index for index, name in enumerate(columns) if name in set(math)}
    formula_at = {index for index, name in enumerate(columns) if name in set(formula)}
    head_row = "".join(f"<th>{text(name)}</th>" for name in columns)
    body = "\n".join(
        "<tr>"
        + "".join(
            f"<td>{formula_cell(value) if index in formula_at else cell(value, index in maths_at)}</td>"
            for index, value in enumerate(row)
        )
        + "</tr>"
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


# The side-by-side pages' columns come in shards of this many problems (in the suite's order), a
# file per shard in each cell's folder: few files, each small enough to load at once.
SHARD = 64


def shard(position: int) -> str:
    """The shard of the suite's `position`-th problem (from 0), as its file is named."""
    return f"{position // SHARD:05d}"


def page_slug(problem_id: str) -> str:
    """A problem's file name: its id where that is a plain file name (`core.layout.NAME`, the one
    pattern of every name that becomes a path), else a plain form of it with a hash of the id (two
    ids never share a file)."""
    return page_name(problem_id)


def neighbour_links(neighbours: tuple[str | None, str | None]) -> list[str]:
    """Links to the problems before and after a problem's page (`None` where there is none), each
    page of a folder named by `page_slug`."""
    return [
        f'<a rel="{rel}" href="{attr(page_slug(other))}.html">{label} {text(other)}</a>'
        for rel, label, other in (("prev", "\u2190", neighbours[0]), ("next", "\u2192", neighbours[1]))
        if other
    ]


# ---------------------------------------------------------------- settings without their secrets

HIDDEN = "(not shown: looks like a secret)"


def without_secrets(value):
    """A config (nested mappings and lists) as the report may print it: every field whose name or
    value looks secret (`core.secrets`) has its value replaced by `HIDDEN` (a name that itself
    looks like a key, by a line saying a field was left out)."""
    if isinstance(value, dict):
        shown: dict = {}
        for name, item in value.items():
            if secret_value(name):
                shown[f"(a field {HIDDEN})"] = HIDDEN
            elif secret_name(name) and item is not None:
                shown[str(name)] = HIDDEN
            else:
                shown[str(name)] = without_secrets(item)
        return shown
    if isinstance(value, (list, tuple)):
        return [without_secrets(item) for item in value]
    return HIDDEN if secret_value(value) else shown_url(value)
