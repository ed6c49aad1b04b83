"""Bar charts drawn by matplotlib as inline SVG when the report is written (no script, no network):
a row per label, a bar per series with a whisker for its 95% interval where one is known; or a
stacked bar per label (medal counts). The axis starts at 0 with its ticks and gridlines; a chart is
as tall as its rows need; its title is the figure's caption, said once, and its unit the axis's.

A model has one colour on every chart and page of the report (`model_colours`, in the plan's
order); its judges are shades of it. A bar that is a cell's (or a cell's subset's) links to that
cell's index, filtered to it, over the chart's whole width (a short bar is still easy to click); it
names its label, series, value and interval in a tooltip. The SVG is byte-stable: no date, no
creator, and ids from a hash salted with the chart's title (unique within the page).
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from olympiad_eval.report.html import attr, text

# Twelve colours told apart in print and by most colour-blind readers (Paul Tol's "muted" and
# "bright" sets), then again in the same order for a plan of more models.
PALETTE = (
    "#332288",
    "#cc6677",
    "#117733",
    "#ddcc77",
    "#88ccee",
    "#aa4499",
    "#44aa99",
    "#999933",
    "#882255",
    "#4477aa",
    "#ee6677",
    "#228833",
)
STACK_COLOURS = {"gold": "#d4af37", "silver": "#a8a9ad", "bronze": "#b0703c"}
SHADES = (1.0, 0.6, 0.35, 0.2)  # a model's judges, in the plan's order
WIDTH = 900  # px: within the page's 1,200, on a 1,400-pixel screen
BAR, GAP = 14, 10  # px: a bar's height, and the space between two labels' bars
AXIS, LEGEND_LINE, RIGHT = 44, 20, 56  # px: the x axis with its label; a line of the legend; room for a value
LABEL_MOST = 44  # characters of a label shown (the whole in the tooltip)
PX = 1 / 96  # matplotlib's sizes are in inches; the browser draws 96 px to one
FONT_PX = 10 / 72 / PX  # 1 em: the font's size (STYLE's, 10 points) in px
STYLE = {
    "svg.hashsalt": "olympiad-eval",
    "svg.fonttype": "none",  # text stays text: the reader's font, selectable, small
    "font.family": "DejaVu Sans",  # matplotlib's own font, whose widths the layout measures
    "font.size": 10,
    "axes.edgecolor": "#666666",
    "axes.spines.top": False,
    "axes.spines.right": False,
}


def model_colours(plan: dict) -> dict[str, str]:
    """Each model of the plan and its colour, by its place in the plan."""
    return {str(model): PALETTE[index % len(PALETTE)] for index, model in enumerate(plan.get("models") or [])}


def shade(index: int) -> float:
    return SHADES[min(index, len(SHADES) - 1)]


@dataclass(frozen=True)
class Bar:
    label: str  # the row: a cell, a subset
    series: str  # the bar within the row: a model, a model's judge, a medal
    value: float
    low: float | None = None  # its interval, where known
    high: float | None = None
    colour: str | None = None  # the series' colour (a model's); else a medal's, or the palette's in turn
    opacity: float = 1.0  # a judge's shade of its model's colour
    href: str | None = None  # where the bar leads: its cell's index, filtered to it


def bar_chart(title: str, unit: str, bars: Sequence[Bar], stacked: bool = False) -> str:
    """A `<figure>` with the title as its caption and the chart as inline `<svg class="chart">`;
    empty when there are no bars."""
    if not bars:
        return ""
    import matplotlib
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    labels = list(dict.fromkeys(bar.label for bar in bars))
    series = list(dict.fromkeys(bar.series for bar in bars))
    first = {bar.series: bar for bar in reversed(bars)}  # the series' first bar: its colour and shade
    colour = {
        name: first[name].colour or STACK_COLOURS.get(name, PALETTE[index % len(PALETTE)])
        for index, name in enumerate(series)
    }
    per_row = 1 if stacked else len(series)
    shown = [_shown(label) for label in labels]
    left_px = max(_text_px(label) for label in shown) + 10  # the plot's left edge: past the longest label
    columns = _legend_columns(series, WIDTH - left_px)
    top_px = LEGEND_LINE * -(-len(series) // columns) + 6
    height = top_px + len(labels) * (per_row * BAR + GAP) + AXIS
    with matplotlib.rc_context({**STYLE, "svg.hashsalt": f"olympiad-eval {title}"}):
        figure = Figure(figsize=(WIDTH * PX, height * PX))
        axes = figure.add_subplot()
        top, links = _draw(axes, labels, series, colour, bars, stacked)
        _axes(axes, shown, per_row, top, unit, stacked)
        left = left_px / WIDTH  # the plot as tall as its bars: a pixel a unit of the y axis
        figure.subplots_adjust(left=left, right=1 - RIGHT / WIDTH, top=1 - top_px / height, bottom=AXIS / height)
        if links:  # a strip as wide as the plot under each linked bar
            ys, hrefs = zip(*links)
            strips = axes.barh(ys, axes.get_xlim()[1], height=BAR, color="#ffffff", alpha=0.0, zorder=0.5)
            for strip, href in zip(strips, hrefs):
                strip.set_url(href)
        handles = [Patch(facecolor=colour[name], alpha=first[name].opacity, label=name) for name in series]
        legend = figure.legend(
            handles=handles,
            loc="upper left",
            bbox_to_anchor=(left, 1),
            ncols=columns,
            frameon=False,
            handlelength=1,
            borderaxespad=0,
            borderpad=0.2,
        )
        for name, key in zip(series, legend.get_patches()):
            key.set_gid(_tag("legend-key", series=name, colour=colour[name]))
        out = io.StringIO()
        figure.savefig(out, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    return (
        f'<figure class="chart-figure"><figcaption>{text(title)}</figcaption>{_inline(out.getvalue(), title)}</figure>'
    )


def _legend_columns(series: list[str], room: float) -> int:
    """As many legend entries to a line as fit the room right of the labels: a column as wide as
    the widest entry, with its key (1 em), the gap to its text (0.8 em) and to the next (2 em)."""
    column = max(_text_px(name) for name in series) + 3.8 * FONT_PX
    return max(1, min(len(series), int(room // column)))


def _text_px(text: str) -> float:
    """The width of a line of text in the charts' font, as matplotlib lays it out (no figure needed)."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    font = FontProperties(family=STYLE["font.family"], size=STYLE["font.size"])
    width, _, _ = TextToPath().get_text_width_height_descent(text, font, ismath=False)
    return width / 72 / PX  # points to px


def _shown(label: str) -> str:
    """A row's label as shown: cut to LABEL_MOST characters (the whole in the tooltip)."""
    return label if len(label) <= LABEL_MOST else label[: LABEL_MOST - 1] + "\u2026"


def _draw(axes, labels, series, colour, bars, stacked: bool) -> tuple[float, list[tuple[float, str]]]:
    """Every bar, its whisker and its value; the largest end drawn (bar, whisker or stack), and
    where each linked bar is with its link. A series' bars are drawn in one call (and their whiskers
    in another): matplotlib's cost is per call, and a paper's plan has hundreds of bars."""
    row = {label: index for index, label in enumerate(labels)}
    per_row = 1 if stacked else len(series)
    stack = dict.fromkeys(labels, 0.0)  # where each label's next stacked bar starts
    ends, links = [0.0], []
    for index, name in enumerate(series):
        own = [bar for bar in bars if bar.series == name]
        ys = [_y(row[bar.label], 0 if stacked else index, per_row) for bar in own]
        lefts = [stack[bar.label] if stacked else 0.0 for bar in own]
        widths = [max(bar.value, 0) for bar in own]
        drawn = axes.barh(ys, widths, height=BAR * 0.85, left=lefts, color=colour[name])
        for bar, patch, y in zip(own, drawn, ys):
            interval = bar.low is not None and bar.high is not None and not stacked
            tip = f"{bar.label} / {bar.series}: {bar.value:g}" + (f" [{bar.low:g}, {bar.high:g}]" if interval else "")
            patch.set_alpha(bar.opacity)
            patch.set_gid(_tag("bar", series=bar.series, colour=colour[bar.series], tip=tip))
            if bar.href:
                patch.set_url(bar.href)
                links.append((y, bar.href))
        if not stacked:
            _whiskers(axes, own, ys)
            for bar, y in zip(own, ys):
                end = max(bar.value, bar.high if bar.low is not None and bar.high is not None else bar.value)
                _value_label(axes, bar.value, end, y)
                ends.append(end)
        for bar, width in zip(own, widths):
            stack[bar.label] += width
    if stacked:
        for label in labels:
            total = sum(bar.value for bar in bars if bar.label == label)
            _value_label(axes, total, stack[label], _y(row[label], 0, 1))
        ends.extend(stack.values())
    return max(ends), links


def _whiskers(axes, bars, ys) -> None:
    """The 95% intervals of a series' bars that have one, each a line with caps from its low to its high."""
    known = [(bar, y) for bar, y in zip(bars, ys) if bar.low is not None and bar.high is not None]
    if not known:
        return
    drawn = axes.errorbar(
        [max(bar.value, 0) for bar, _ in known],
        [y for _, y in known],
        xerr=[[max(bar.value - bar.low, 0) for bar, _ in known], [max(bar.high - bar.value, 0) for bar, _ in known]],
        fmt="none",
        ecolor="#222222",
        elinewidth=1,
        capsize=3,
        label="_nolegend_",
    )
    for line in (*drawn.lines[1], *drawn.lines[2]):  # the caps and the lines
        line.set_gid(_tag("whisker"))


def _value_label(axes, value: float, end: float, y: float) -> None:
    """A value's label, just past the end of its bar (or its whisker, or its stack)."""
    label = axes.annotate(f"{value:g}", (end, y), xytext=(4, 0), textcoords="offset points", va="center", fontsize=9)
    label.set_gid(_tag("value"))


def _y(row: int, index: int, per_row: int) -> float:
    """The centre of a bar, in px from the top of the plot (the y axis is inverted)."""
    return row * (per_row * BAR + GAP) + GAP / 2 + (index + 0.5) * BAR


def _axes(axes, shown, per_row: int, top: float, unit: str, stacked: bool) -> None:
    """A label per row (as shown); an x axis from 0 with its ticks, gridlines and what it counts."""
    from matplotlib.ticker import MaxNLocator

    axes.set_ylim(len(shown) * (per_row * BAR + GAP), 0)
    axes.set_yticks([_y(row, 0, per_row) + (per_row - 1) * BAR / 2 for row in range(len(shown))], shown)
    axes.tick_params(axis="y", length=0)
    if unit == "%":
        axes.set_xlim(0, 100)  # a value's label past a bar at 100 stands in the margin on the right
        axes.set_xticks(range(0, 101, 20))
        axes.set_xlabel("score (%)")
    else:
        most = top or 1.0
        axes.xaxis.set_major_locator(MaxNLocator(integer=stacked, nbins=6))
        axes.set_xlim(0, most)
        axes.set_xticks([tick for tick in axes.get_xticks() if 0 <= tick <= most * 1.0001])
        axes.set_xlabel(unit)
    axes.grid(axis="x", color="#d9d9d9", linewidth=0.8)
    axes.set_axisbelow(True)
    for tick in axes.xaxis.get_major_ticks():
        tick.gridline.set_gid(_tag("grid"))
        tick.label1.set_gid(_tag("tick"))


def _tag(css: str, **data: str) -> str:
    """A gid that `_inline` turns into the element's class and data attributes (a `tip`: its tooltip),
    written so that matplotlib keeps it as an id."""
    return f"oe-{css}-" + json.dumps(data, sort_keys=True).encode().hex()


_TAGGED = re.compile(r'<g id="oe-([a-z-]+)-([0-9a-f]*)">')
_OWN_ID = re.compile(r'<g id="[^"]*">')


def _inline(svg: str, title: str) -> str:
    """matplotlib's SVG document as an element of the page: no XML prologue or metadata, a class,
    a label, each tagged group (`_tag`) with its class, data and tooltip, links in the same window;
    the groups' own ids dropped (two charts of a page would share them), the ids of what is
    referred to kept (salted per chart)."""
    svg = svg[svg.index("<svg") :]
    svg = re.sub(r"\s*<metadata>.*?</metadata>", "", svg, flags=re.S)
    svg = svg.replace("<svg ", f'<svg class="chart" role="img" aria-label="{attr(title)}" ', 1)

    def tagged(found: re.Match) -> str:
        data = json.loads(bytes.fromhex(found.group(2)))
        tip = data.pop("tip", None)
        attributes = "".join(f' data-{name}="{attr(value)}"' for name, value in data.items())
        return f'<g class="{found.group(1)}"{attributes}>' + (f"<title>{text(tip)}</title>" if tip else "")

    svg = _OWN_ID.sub("<g>", _TAGGED.sub(tagged, svg))
    return re.sub(r'<a xlink:href="([^"]*)" target="_blank">', r'<a class="bar-link" href="\1">', svg)
