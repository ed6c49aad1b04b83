"""Inline SVG bar charts (no script, no network): a row per label, a bar per series, with a
whisker for an interval where one is known; or a stacked bar per label (medal counts).

A model has one colour on every chart and page of the report (`model_colours`, in the plan's
order); its judges are shades of it. The legend names every series in full, wrapping onto as many
lines as it needs; a value's label stands clear of its bar and of its whisker; a bar that is a
cell's (or a cell's subset's) links to that cell's index, filtered to it.
"""

from __future__ import annotations

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
BAR_WIDTH, BAR_HEIGHT, GAP, CHAR = 420, 14, 8, 6.4  # CHAR: the width of a character of an 11px label
WIDTH = 860  # within the page's 1200px, whatever the labels


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
    """An `<svg class="chart">` of the bars; empty when there are none."""
    if not bars:
        return ""
    labels = list(dict.fromkeys(bar.label for bar in bars))
    series = list(dict.fromkeys(bar.series for bar in bars))
    first = {bar.series: bar for bar in reversed(bars)}  # the series' first bar: its colour and shade
    colour = {
        name: first[name].colour or STACK_COLOURS.get(name, PALETTE[index % len(PALETTE)])
        for index, name in enumerate(series)
    }
    opacity = {name: first[name].opacity for name in series}
    by_label = {label: [bar for bar in bars if bar.label == label] for label in labels}
    if stacked:
        top = max(sum(bar.value for bar in row) for row in by_label.values())
    else:
        top = max(max(bar.high if bar.high is not None else bar.value for bar in bars), 0)
    top = 100.0 if unit == "%" and top <= 100 else (top or 1.0)
    most = int((WIDTH - BAR_WIDTH - 70 - 12) / CHAR)  # the characters a label has room for
    longest = min(max(len(label) for label in labels), most)
    label_width = int(max(longest * CHAR + 12, 120))
    # the legend: every series, whole, on as many lines as it takes
    legend, x, y = [], 0.0, 24
    for name in series:
        item = 14 + len(name) * CHAR + 16
        if x and x + item > WIDTH:
            x, y = 0.0, y + 16
        legend.append(
            f'<rect x="{x:.0f}" y="{y}" width="10" height="10" fill="{colour[name]}"'
            + (f' fill-opacity="{opacity[name]:g}"' if opacity[name] != 1 else "")
            + f'/><text x="{x + 14:.0f}" y="{y + 9}" class="legend">{text(name)}</text>'
        )
        x += item
    top_y = y + 20
    row_height = BAR_HEIGHT + GAP if stacked else len(series) * BAR_HEIGHT + GAP
    height = top_y + len(labels) * row_height + 20
    scale = BAR_WIDTH / top
    parts = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" role="img" aria-label="{attr(title)}">',
        f'<text x="0" y="14" class="chart-title">{text(title)} ({text(unit)})</text>',
        *legend,
    ]
    y = top_y
    for label in labels:
        shown = label if len(label) <= longest else label[: longest - 1] + "\u2026"
        parts.append(
            f'<text x="{label_width - 6}" y="{y + BAR_HEIGHT - 3}" text-anchor="end" class="label">{text(shown)}'
            f"<title>{text(label)}</title></text>"
        )
        start = label_width
        for index, bar in enumerate(by_label[label]):
            bar_y = y if stacked else y + index * BAR_HEIGHT
            length = max(bar.value, 0) * scale
            tip = f"{bar.label} / {bar.series}: {bar.value:g}" + (
                f" [{bar.low:g}, {bar.high:g}]" if bar.low is not None and bar.high is not None else ""
            )
            rect = (
                f'<rect x="{start:.1f}" y="{bar_y}" width="{length:.1f}" height="{BAR_HEIGHT - 2}" '
                f'fill="{colour[bar.series]}" data-series="{attr(bar.series)}"'
                + (f' fill-opacity="{opacity[bar.series]:g}"' if opacity[bar.series] != 1 else "")
                + f"><title>{text(tip)}</title></rect>"
            )
            if bar.href:
                # the bar and a strip as wide as the chart's bars: a short bar is still easy to click
                rect = (
                    f'<a class="bar-link" href="{attr(bar.href)}">'
                    f'<rect x="{label_width}" y="{bar_y}" width="{BAR_WIDTH}" height="{BAR_HEIGHT - 2}" '
                    f'class="bar-target"><title>{text(tip)}</title></rect>{rect}</a>'
                )
            parts.append(rect)
            end = length
            if bar.low is not None and bar.high is not None and not stacked:
                low, high, middle = (
                    label_width + bar.low * scale,
                    label_width + bar.high * scale,
                    bar_y + BAR_HEIGHT / 2 - 1,
                )
                parts.append(
                    f'<path d="M{low:.1f} {middle:.1f}H{high:.1f}M{low:.1f} {middle - 4:.1f}v8'
                    f'M{high:.1f} {middle - 4:.1f}v8" class="whisker"/>'
                )
                end = max(end, bar.high * scale)  # the value's label after the whisker, never on it
            if stacked:
                start += length
            else:
                parts.append(
                    f'<text x="{label_width + end + 5:.1f}" y="{bar_y + BAR_HEIGHT - 4}" class="value">'
                    f"{bar.value:g}</text>"
                )
        if stacked:
            total = sum(bar.value for bar in by_label[label])
            parts.append(f'<text x="{start + 5:.1f}" y="{y + BAR_HEIGHT - 4}" class="value">{total:g}</text>')
        y += row_height
    parts.append(f'<line x1="{label_width}" y1="{top_y - 2}" x2="{label_width}" y2="{y}" class="axis"/>')
    parts.append(f'<text x="{label_width + BAR_WIDTH}" y="{y + 14}" text-anchor="end" class="value">{top:g}</text>')
    parts.append("</svg>")
    return "\n".join(parts)
