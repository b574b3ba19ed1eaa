"""Small inline SVG charts (line and horizontal bar), drawn by hand.

The report needs nothing installed to draw them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

Format = Callable[[float], str]

WIDTH = 760
FONT = "font-family:system-ui,-apple-system,'Segoe UI',sans-serif;font-size:12px"
GRID = "#e5e7eb"
INK = "#374151"


@dataclass(frozen=True, slots=True)
class Series:
    """One line of a chart: (x, y) points in x order.

    ``steps`` holds each value until the next point, as running totals are drawn.
    """

    name: str
    points: Sequence[tuple[float, float]]
    color: str
    dots: bool = False
    dashed: bool = False
    steps: bool = False


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering [low, high] (about ``count`` of them)."""
    if not math.isfinite(low) or not math.isfinite(high):
        return [0.0, 1.0]
    if high <= low:
        high = low + (abs(low) or 1.0)
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    start = math.floor(low / step) * step
    ticks = []
    value = start
    while value < high + step * 0.5:
        ticks.append(round(value, 10))
        value += step
    if ticks[-1] < high:
        ticks.append(round(value, 10))
    return ticks


def line_chart(
    series: Sequence[Series],
    *,
    label: str,
    x_format: Format,
    y_format: Format,
    y_range: tuple[float, float] | None = None,
    height: int = 280,
) -> str:
    """A line chart with axes, grid, a legend and a tooltip on each dot."""
    left, right, top, bottom = 72, 16, 28, 36
    xs = [x for s in series for x, _ in s.points]
    ys = [y for s in series for _, y in s.points]
    if not xs:
        return empty(label, height)
    x_low, x_high = min(xs), max(xs)
    if x_high <= x_low:
        x_low, x_high = x_low - 1.0, x_high + 1.0
    y_ticks = nice_ticks(*y_range) if y_range else nice_ticks(min(0.0, *ys), max(ys))
    y_low, y_high = y_ticks[0], y_ticks[-1]
    plot_w, plot_h = WIDTH - left - right, height - top - bottom

    def px(x: float) -> float:
        return left + (x - x_low) / (x_high - x_low) * plot_w

    def py(y: float) -> float:
        return top + plot_h - (y - y_low) / (y_high - y_low) * plot_h

    parts = [_open(label, height)]
    for tick in y_ticks:
        y = py(tick)
        parts.append(f'<line x1="{left}" x2="{WIDTH - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="{GRID}"/>')
        parts.append(_text(left - 6, y + 4, y_format(tick), anchor="end"))
    for i in range(5):
        x_value = x_low + (x_high - x_low) * i / 4
        anchor = "start" if i == 0 else "end" if i == 4 else "middle"
        parts.append(_text(px(x_value), height - bottom + 18, x_format(x_value), anchor=anchor))
    parts.append(
        f'<line x1="{left}" x2="{WIDTH - right}" y1="{top + plot_h}" y2="{top + plot_h}" stroke="{INK}"/>'
    )
    legend_x = left
    for s in series:
        if not s.points:
            continue
        path = _path([(px(x), py(y)) for x, y in s.points], steps=s.steps)
        dash = ' stroke-dasharray="5 4"' if s.dashed else ""
        parts.append(f'<path d="{path}" fill="none" stroke="{s.color}" stroke-width="2"{dash}/>')
        if s.dots:
            for x, y in s.points:
                tip = escape(f"{s.name}: {y_format(y)} at {x_format(x)}")
                parts.append(
                    f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{s.color}"><title>{tip}</title></circle>'
                )
        parts.append(f'<rect x="{legend_x}" y="8" width="12" height="4" fill="{s.color}"/>')
        parts.append(_text(legend_x + 16, 14, s.name))
        legend_x += 28 + 7 * len(s.name)
    parts.append("</svg>")
    return "".join(parts)


def _path(points: Sequence[tuple[float, float]], *, steps: bool) -> str:
    """SVG path data through ``points``: straight segments, or a level line then a rise for ``steps``."""
    (x0, y0), rest = points[0], points[1:]
    if steps:
        return f"M{x0:.1f},{y0:.1f}" + "".join(f" H{x:.1f} V{y:.1f}" for x, y in rest)
    return f"M{x0:.1f},{y0:.1f}" + "".join(f" L{x:.1f},{y:.1f}" for x, y in rest)


def bar_chart(items: Sequence[tuple[str, float]], *, label: str, color: str, value_format: Format) -> str:
    """Horizontal bars, largest first as given, each labelled with its name and value."""
    if not items:
        return empty(label, 80)
    row, top, name_w = 26, 8, 300
    height = top * 2 + row * len(items)
    most = max(v for _, v in items) or 1.0
    bar_w = WIDTH - name_w - 70
    parts = [_open(label, height)]
    for i, (name, value) in enumerate(items):
        y = top + i * row
        width = max(1.0, value / most * bar_w)
        tip = escape(f"{name}: {value_format(value)}")
        short = name if len(name) <= 46 else name[:45] + "…"
        parts.append(_text(name_w - 8, y + 16, short, anchor="end"))
        parts.append(
            f'<rect x="{name_w}" y="{y + 4}" width="{width:.1f}" height="{row - 8}" rx="2" fill="{color}">'
            f"<title>{tip}</title></rect>"
        )
        parts.append(_text(name_w + width + 6, y + 16, value_format(value)))
    parts.append("</svg>")
    return "".join(parts)


def empty(label: str, height: int) -> str:
    """A placeholder where a chart has no data."""
    return (
        _open(label, height)
        + _text(WIDTH / 2, height / 2 + 4, "no data yet", anchor="middle", color="#9ca3af")
        + "</svg>"
    )


def _open(label: str, height: int) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" width="100%" '
        f'role="img" aria-label="{escape(label)}" style="{FONT}"><title>{escape(label)}</title>'
    )


def _text(x: float, y: float, text: str, *, anchor: str = "start", color: str = INK) -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" fill="{color}">{escape(text)}</text>'
