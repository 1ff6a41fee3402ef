"""Plot specs for plotly.js, as plain dicts: the page draws them with ``Plotly.newPlot``.

Built as JSON values rather than with plotly's Python figure objects: a report of thousands of
goldens then costs one ``json.dumps``, and the same dict is what the browser test reads back.

plotly.js reads a few tags in its labels (``<b>``, ``<i>``, ``<br>``, ``<a href>``): every text
that names something from the data (a file, a metric, a system) is passed through :func:`_text`,
which writes ``<``, ``>`` and ``&`` as the entities plotly shows as those characters.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

Figure = dict[str, Any]

_COLORS = ("#3b6ea5", "#e0892f", "#4f9d69", "#b5495b", "#7a62a3")
_ENTITIES = {ord("&"): "&amp;", ord("<"): "&lt;", ord(">"): "&gt;"}


def _text(value: str) -> str:
    """``value`` as plotly shows it: as text, never as its label markup."""
    return value.translate(_ENTITIES)


def _layout(title: str, **extra: Any) -> dict[str, Any]:
    return {
        "title": {"text": _text(title), "font": {"size": 14}},
        "height": extra.pop("height", 280),
        "margin": {"l": 50, "r": 20, "t": 40, "b": 40},
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
        "font": {"family": "system-ui, sans-serif", "size": 11},
        **extra,
    }


def bars(
    title: str, series: Mapping[str, Mapping[str, float | None]], *, horizontal: bool = False
) -> Figure:
    """Bars of each series (name -> {category: value}); categories in the first series' order."""
    categories: list[str] = list(dict.fromkeys(k for values in series.values() for k in values))
    labels = [_text(category) for category in categories]
    traces = []
    for number, (name, values) in enumerate(series.items()):
        counts = [values.get(category, 0) for category in categories]
        axes = {"y": labels, "x": counts} if horizontal else {"x": labels, "y": counts}
        traces.append(
            {
                "type": "bar",
                "name": _text(name),
                "orientation": "h" if horizontal else "v",
                "marker": {"color": _COLORS[number % len(_COLORS)]},
                **axes,
            }
        )
    extra: dict[str, Any] = {"barmode": "group", "showlegend": len(series) > 1}
    if horizontal:
        # the first category on top, and room for long file names
        extra["yaxis"] = {"autorange": "reversed", "automargin": True}
        extra["height"] = max(200, 60 + 22 * len(categories) * max(len(series), 1))
    else:
        extra["xaxis"] = {"automargin": True}  # room for long names, turned
    return {"data": traces, "layout": _layout(title, **extra)}


def histogram(
    title: str,
    series: Mapping[str, Sequence[float]],
    *,
    x_title: str,
    y_title: str = "goldens",
    unit_range: bool = False,
) -> Figure:
    """Overlaid histograms of each series (name -> values); ``unit_range``: bins over 0..1."""
    traces = []
    for number, (name, values) in enumerate(series.items()):
        trace: dict[str, Any] = {
            "type": "histogram",
            "name": _text(name),
            "x": list(values),
            "opacity": 0.75,
            "marker": {"color": _COLORS[number % len(_COLORS)]},
        }
        if unit_range:
            # bins centred on 0, 0.1, ..., 1: a score of exactly 1 gets a bar of its own
            trace["xbins"] = {"start": -0.05, "end": 1.05, "size": 0.1}
        traces.append(trace)
    xaxis: dict[str, Any] = {"title": {"text": _text(x_title)}}
    if unit_range:
        xaxis["range"] = [-0.05, 1.05]
    layout = _layout(
        title,
        barmode="overlay",
        showlegend=len(series) > 1,
        xaxis=xaxis,
        yaxis={"title": y_title},
    )
    return {"data": traces, "layout": layout}


def intervals(
    title: str,
    rows: Sequence[tuple[str, float | None, float | None, float | None]],
    *,
    x_title: str,
    reference: float | None = None,
    x_range: tuple[float, float] | None = None,
) -> Figure:
    """Each row ``(label, value, low, high)`` as a dot with its interval as a bar, first on top.

    A mean and its bootstrap interval, a delta and its interval, a system's score: one line each,
    on one axis, so they read against each other. ``reference`` draws a vertical line there (0 for
    deltas); a missing value (None) leaves its line empty, a missing interval draws the dot alone.
    """
    labels = [_text(label) for label, _, _, _ in rows]
    values = [value for _, value, _, _ in rows]
    above = [_gap(high, value) for _, value, _, high in rows]
    below = [_gap(value, low) for _, value, low, _ in rows]
    trace = {
        "type": "scatter",
        "mode": "markers",
        "x": values,
        "y": labels,
        "marker": {"color": _COLORS[0], "size": 9},
        "error_x": {
            "type": "data",
            "symmetric": False,
            "array": above,
            "arrayminus": below,
            "color": _COLORS[0],
            "thickness": 2,
            "width": 5,
        },
        "hovertemplate": "%{y}: %{x:.3f}<extra></extra>",
    }
    xaxis: dict[str, Any] = {"title": {"text": _text(x_title)}, "zeroline": False}
    if x_range is not None:
        xaxis["range"] = list(x_range)
    extra: dict[str, Any] = {
        "showlegend": False,
        "xaxis": xaxis,
        # the first row on top, categories as given (a label that looks like a number stays one)
        "yaxis": {"autorange": "reversed", "automargin": True, "type": "category"},
        "height": max(200, 80 + 28 * len(rows)),
    }
    if reference is not None:
        extra["shapes"] = [
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": reference,
                "x1": reference,
                "y0": 0,
                "y1": 1,
                "line": {"color": "#9aa5b1", "dash": "dot", "width": 1},
            }
        ]
    return {"data": [trace], "layout": _layout(title, **extra)}


def _gap(upper: float | None, lower: float | None) -> float | None:
    return None if upper is None or lower is None else max(upper - lower, 0.0)


__all__ = ["Figure", "bars", "histogram", "intervals"]
