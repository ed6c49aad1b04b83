"""Inline SVG bar charts (no script, no network): a row per label, a bar per series, with a
whisker for an interval where one is known; or a stacked bar per label (medal counts)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from olympiad_eval.report.html import attr, text

PALETTE = ("#1a3d6d", "#c0504d", "#4f8f3a", "#8064a2", "#d08a1e", "#2c8c99", "#7f7f7f", "#b5487a")
STACK_COLOURS = {"gold": "#d4af37", "silver": "#a8a9ad", "bronze": "#b0703c"}
LABEL_WIDTH, BAR_WIDTH, BAR_HEIGHT, GAP = 260, 420, 14, 8


@dataclass(frozen=True)
class Bar:
    label: str  # the row: a cell, a subset
    series: str  # the bar's colour within the row: a model, a medal
    value: float
    low: float | None = None  # its interval, where known
    high: float | None = None


def bar_chart(title: str, unit: str, bars: Sequence[Bar], stacked: bool = False) -> str:
    """An `<svg class="chart">` of the bars; empty when there are none."""
    if not bars:
        return ""
    labels = list(dict.fromkeys(bar.label for bar in bars))
    series = list(dict.fromkeys(bar.series for bar in bars))
    colour = {name: STACK_COLOURS.get(name, PALETTE[index % len(PALETTE)]) for index, name in enumerate(series)}
    by_label = {label: [bar for bar in bars if bar.label == label] for label in labels}
    if stacked:
        top = max(sum(bar.value for bar in row) for row in by_label.values())
    else:
        top = max(max(bar.high if bar.high is not None else bar.value for bar in bars), 0)
    top = 100.0 if unit == "%" and top <= 100 else (top or 1.0)
    row_height = BAR_HEIGHT + GAP if stacked else len(series) * BAR_HEIGHT + GAP
    legend_height = 18
    height = 24 + legend_height + len(labels) * row_height + 20
    width = LABEL_WIDTH + BAR_WIDTH + 80
    scale = BAR_WIDTH / top
    parts = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{attr(title)}">',
        f'<text x="0" y="14" class="chart-title">{text(title)} ({text(unit)})</text>',
    ]
    x = LABEL_WIDTH
    for name in series:
        parts.append(
            f'<rect x="{x}" y="24" width="10" height="10" fill="{colour[name]}"/>'
            f'<text x="{x + 14}" y="33" class="legend">{text(name)}</text>'
        )
        x += 24 + 7 * len(name)
    y = 24 + legend_height
    for label in labels:
        parts.append(
            f'<text x="{LABEL_WIDTH - 6}" y="{y + BAR_HEIGHT - 3}" text-anchor="end" class="label">{text(label)}</text>'
        )
        start = LABEL_WIDTH
        for index, bar in enumerate(by_label[label]):
            top_y = y if stacked else y + index * BAR_HEIGHT
            length = max(bar.value, 0) * scale
            tip = f"{bar.label} / {bar.series}: {bar.value:g}" + (
                f" [{bar.low:g}, {bar.high:g}]" if bar.low is not None and bar.high is not None else ""
            )
            parts.append(
                f'<rect x="{start:.1f}" y="{top_y}" width="{length:.1f}" height="{BAR_HEIGHT - 2}" '
                f'fill="{colour[bar.series]}"><title>{text(tip)}</title></rect>'
            )
            if bar.low is not None and bar.high is not None and not stacked:
                low, high, middle = (
                    LABEL_WIDTH + bar.low * scale,
                    LABEL_WIDTH + bar.high * scale,
                    top_y + BAR_HEIGHT / 2 - 1,
                )
                parts.append(
                    f'<path d="M{low:.1f} {middle:.1f}H{high:.1f}M{low:.1f} {middle - 4:.1f}v8'
                    f'M{high:.1f} {middle - 4:.1f}v8" class="whisker"/>'
                )
            if stacked:
                start += length
            else:
                parts.append(
                    f'<text x="{LABEL_WIDTH + length + 4:.1f}" y="{top_y + BAR_HEIGHT - 4}" class="value">'
                    f"{bar.value:g}</text>"
                )
        if stacked:
            total = sum(bar.value for bar in by_label[label])
            parts.append(f'<text x="{start + 4:.1f}" y="{y + BAR_HEIGHT - 4}" class="value">{total:g}</text>')
        y += row_height
    parts.append(f'<line x1="{LABEL_WIDTH}" y1="{24 + legend_height - 2}" x2="{LABEL_WIDTH}" y2="{y}" class="axis"/>')
    parts.append(f'<text x="{LABEL_WIDTH + BAR_WIDTH}" y="{y + 14}" text-anchor="end" class="value">{top:g}</text>')
    parts.append("</svg>")
    return "\n".join(parts)
