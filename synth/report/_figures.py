"""Plot specs for plotly.js, as plain dicts: the page draws them with ``Plotly.newPlot``.

Built as JSON values rather than with plotly's Python figure objects: a report of thousands of
goldens then costs one ``json.dumps``, and the same dict is what the browser test reads back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

Figure = dict[str, Any]

_COLORS = ("#3b6ea5", "#e0892f", "#4f9d69", "#b5495b", "#7a62a3")


def _layout(title: str, **extra: Any) -> dict[str, Any]:
    return {
        "title": {"text": title, "font": {"size": 14}},
        "height": extra.pop("height", 280),
        "margin": {"l": 50, "r": 20, "t": 40, "b": 40},
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
        "font": {"family": "system-ui, sans-serif", "size": 11},
        **extra,
    }


def bars(
    title: str, series: Mapping[str, Mapping[str, float]], *, horizontal: bool = False
) -> Figure:
    """Bars of each series (name -> {category: value}); categories in the first series' order."""
    categories: list[str] = list(dict.fromkeys(k for values in series.values() for k in values))
    traces = []
    for number, (name, values) in enumerate(series.items()):
        counts = [values.get(category, 0) for category in categories]
        axes = {"y": categories, "x": counts} if horizontal else {"x": categories, "y": counts}
        traces.append(
            {
                "type": "bar",
                "name": name,
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
    return {"data": traces, "layout": _layout(title, **extra)}


def histogram(
    title: str,
    series: Mapping[str, Sequence[float]],
    *,
    x_title: str,
    unit_range: bool = False,
) -> Figure:
    """Overlaid histograms of each series (name -> values); ``unit_range``: bins over 0..1."""
    traces = []
    for number, (name, values) in enumerate(series.items()):
        trace: dict[str, Any] = {
            "type": "histogram",
            "name": name,
            "x": list(values),
            "opacity": 0.75,
            "marker": {"color": _COLORS[number % len(_COLORS)]},
        }
        if unit_range:
            # bins centred on 0, 0.1, ..., 1: a score of exactly 1 gets a bar of its own
            trace["xbins"] = {"start": -0.05, "end": 1.05, "size": 0.1}
        traces.append(trace)
    xaxis: dict[str, Any] = {"title": {"text": x_title}}
    if unit_range:
        xaxis["range"] = [-0.05, 1.05]
    layout = _layout(
        title,
        barmode="overlay",
        showlegend=len(series) > 1,
        xaxis=xaxis,
        yaxis={"title": "goldens"},
    )
    return {"data": traces, "layout": layout}


__all__ = ["Figure", "bars", "histogram"]
