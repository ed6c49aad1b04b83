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
    columns = _legend_columns(series)
    top_px = LEGEND_LINE * -(-len(series) // columns) + 6
    height = top_px + len(labels) * (per_row * BAR + GAP) + AXIS
    with matplotlib.rc_context({**STYLE, "svg.hashsalt": f"olympiad-eval {title}"}):
        figure = Figure(figsize=(WIDTH * PX, height * PX))
        axes = figure.add_subplot()
        top, links = _draw(axes, labels, series, colour, bars, stacked)
        _axes(axes, labels, per_row, top, unit, stacked)
        # the plot as tall as its bars (a pixel a unit of the y axis), its left edge past the longest label
        figure.draw_without_rendering()
        left = (max(label.get_window_extent().width for label in axes.get_yticklabels()) + 10) / WIDTH
        figure.subplots_adjust(left=left, right=1 - RIGHT / WIDTH, top=1 - top_px / height, bottom=AXIS / height)
        for y, href in links:  # a strip as wide as the plot under each linked bar
            axes.barh(y, axes.get_xlim()[1], height=BAR, color="#ffffff", alpha=0.0, zorder=0.5, url=href)
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


def _legend_columns(series: list[str]) -> int:
    """As many legend entries to a line as fit the chart's width."""
    widest = max(len(name) for name in series) * 6.5 + 40
    return max(1, min(len(series), int(WIDTH // widest)))


def _draw(axes, labels, series, colour, bars, stacked: bool) -> tuple[float, list[tuple[float, str]]]:
    """Every bar, its whisker and its value; the largest end drawn (bar, whisker or stack), and
    where each linked bar is with its link."""
    by_label = {label: [bar for bar in bars if bar.label == label] for label in labels}
    per_row = 1 if stacked else len(series)
    ends, links = [0.0], []
    for row, label in enumerate(labels):
        start = 0.0
        for bar in by_label[label]:
            y = _y(row, 0 if stacked else series.index(bar.series), per_row)
            interval = bar.low is not None and bar.high is not None and not stacked
            drawn = axes.barh(
                y,
                max(bar.value, 0),
                height=BAR * 0.85,
                left=start,
                color=colour[bar.series],
                alpha=bar.opacity,
                xerr=[[max(bar.value - bar.low, 0)], [max(bar.high - bar.value, 0)]] if interval else None,
                error_kw={"ecolor": "#222222", "elinewidth": 1, "capsize": 3},
            )
            tip = f"{bar.label} / {bar.series}: {bar.value:g}" + (f" [{bar.low:g}, {bar.high:g}]" if interval else "")
            drawn[0].set_gid(_tag("bar", series=bar.series, colour=colour[bar.series], tip=tip))
            if drawn.errorbar is not None:
                for line in (*drawn.errorbar.lines[1], *drawn.errorbar.lines[2]):  # its caps and its line
                    line.set_gid(_tag("whisker"))
            if bar.href:
                drawn[0].set_url(bar.href)
                links.append((y, bar.href))
            end = max(bar.value, bar.high if interval else bar.value)
            if stacked:
                start += max(bar.value, 0)
            else:
                _value_label(axes, bar.value, end, y)
            ends.append(start if stacked else end)
        if stacked:
            _value_label(axes, sum(bar.value for bar in by_label[label]), start, _y(row, 0, 1))
    return max(ends), links


def _value_label(axes, value: float, end: float, y: float) -> None:
    """A value's label, just past the end of its bar (or its whisker, or its stack)."""
    label = axes.annotate(f"{value:g}", (end, y), xytext=(4, 0), textcoords="offset points", va="center", fontsize=9)
    label.set_gid(_tag("value"))


def _y(row: int, index: int, per_row: int) -> float:
    """The centre of a bar, in px from the top of the plot (the y axis is inverted)."""
    return row * (per_row * BAR + GAP) + GAP / 2 + (index + 0.5) * BAR


def _axes(axes, labels, per_row: int, top: float, unit: str, stacked: bool) -> None:
    """A label per row; an x axis from 0 with its ticks, gridlines and what it counts."""
    from matplotlib.ticker import MaxNLocator

    axes.set_ylim(len(labels) * (per_row * BAR + GAP), 0)
    axes.set_yticks(
        [_y(row, 0, per_row) + (per_row - 1) * BAR / 2 for row in range(len(labels))],
        [label if len(label) <= LABEL_MOST else label[: LABEL_MOST - 1] + "\u2026" for label in labels],
    )
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
