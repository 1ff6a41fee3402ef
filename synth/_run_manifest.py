"""The run's manifest: what ran, with what, and per stage what went in, out, and what it cost.

Item counts come from the stage outputs of the candidates the run used (so they add up: each
stage's ``items_in`` is ``items_out`` plus the drops, and feeds the next stage). Requests, cached
responses, retries, failures, tokens and cost come from the models' usage, summed over every
session of the run (a resumed run adds a session).
"""

from __future__ import annotations

import platform
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from importlib import metadata
from typing import Any

from rich.table import Table
from rich.text import Text

from synth.llm.pricing import estimate_cost
from synth.llm.usage import Usage

#: usage labels (one per request kind) -> the stage row they are counted in
LABEL_STAGE = {
    "critic": "critic",
    "inputs": "inputs",
    "filter": "filter",
    "filter_rewrite": "filter",
    "evolve": "evolve",
    "style": "style",
    "expected": "expected",
}
USAGE_FIELDS = (
    "requests",
    "embedding_requests",  # batches sent to a remote embedder (not in requests per golden)
    "cached",
    "retries",
    "failures",
    "input_tokens",
    "output_tokens",
    "cost_usd",
)
_PACKAGES = ("synth", "pydantic", "chromadb", "openai", "numpy", "tiktoken", "rich")


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def package_versions() -> dict[str, str]:
    """Python's and the main packages' versions."""
    versions = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def usage_by_stage(usages: Iterable[Usage]) -> dict[str, dict[str, float]]:
    """Requests, cached, retries, failures, tokens and cost per stage, over several usages."""
    rows: dict[str, dict[str, float]] = {}
    for usage in usages:
        costs = estimate_cost(usage).by_label
        for label, counts in usage.by_label().items():
            stage = LABEL_STAGE.get(label, label)
            row = rows.setdefault(stage, dict.fromkeys(USAGE_FIELDS, 0))
            row["requests"] += counts.requests
            row["cached"] += counts.cached_responses
            row["retries"] += counts.total_retries
            row["failures"] += counts.total_failures
            row["input_tokens"] += counts.input_tokens
            row["output_tokens"] += counts.output_tokens
            row["cost_usd"] += costs.get(label, 0.0)
    return rows


def add_usage(*parts: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
    """Sum per-stage usage rows."""
    total: dict[str, dict[str, float]] = {}
    for part in parts:
        for stage, row in part.items():
            into = total.setdefault(stage, dict.fromkeys(USAGE_FIELDS, 0))
            for key in USAGE_FIELDS:
                into[key] += row.get(key, 0)
    return total


def stage_row(
    stage: str, items_in: int, items_out: int, dropped: Mapping[str, int] | None = None
) -> dict[str, Any]:
    return {
        "stage": stage,
        "items_in": items_in,
        "items_out": items_out,
        "dropped": dict(sorted((dropped or {}).items())),
    }


def draft_rows(
    stages: Sequence[str], drafts: Sequence[Any], contexts: int, final_stage: str = "dedup"
) -> list[dict[str, Any]]:
    """Rows for the generation stages from the drafts of the candidates used.

    ``inputs`` takes contexts in and gives inputs out (a context whose request failed is its drop);
    every later stage takes the drafts alive after the stage before it.
    """
    by_stage: dict[str, Counter[str]] = {s: Counter() for s in [*stages, final_stage]}
    failed_contexts: Counter[str] = Counter()
    made = 0
    for draft in drafts:
        where = draft.dropped_at
        if where == "inputs":
            failed_contexts[draft.drop_reason] += 1
            continue
        made += 1
        if where is None:
            continue
        stage = where if where in by_stage else final_stage
        by_stage[stage][draft.drop_reason] += 1
    rows = [stage_row("inputs", contexts, made, failed_contexts)]
    alive = made
    for stage in [*stages[1:], final_stage]:
        drops = by_stage[stage]
        out = alive - sum(drops.values())
        rows.append(stage_row(stage, alive, out, drops))
        alive = out
    return rows


def with_usage(
    rows: list[dict[str, Any]], usage: Mapping[str, Mapping[str, float]]
) -> list[dict[str, Any]]:
    """The rows with each stage's usage columns (zeros for stages without model calls), and a
    row for usage under a label no stage row has."""
    named = {row["stage"] for row in rows}
    out = []
    for row in rows:
        values = usage.get(row["stage"], {})
        out.append({**row, **{k: _round(k, values.get(k, 0)) for k in USAGE_FIELDS}})
    for stage, values in sorted(usage.items()):
        if stage not in named:
            extra = stage_row(stage, 0, 0)
            out.append({**extra, **{k: _round(k, values.get(k, 0)) for k in USAGE_FIELDS}})
    return out


def _round(key: str, value: float) -> float | int:
    return round(float(value), 6) if key == "cost_usd" else int(value)


def totals(rows: Sequence[Mapping[str, Any]]) -> dict[str, float | int]:
    return {k: _round(k, sum(r.get(k, 0) for r in rows)) for k in USAGE_FIELDS}


def render_table(rows: Sequence[Mapping[str, Any]], title: str | None = None) -> Table:
    """The per-stage table ``synth generate`` prints at the end."""
    table = Table(title=title, header_style="bold", title_justify="left")
    for name, justify in (
        ("stage", "left"),
        ("in", "right"),
        ("out", "right"),
        ("dropped", "left"),
        ("requests", "right"),
        ("embed req", "right"),
        ("cached", "right"),
        ("retries", "right"),
        ("failed", "right"),
        ("tokens in", "right"),
        ("tokens out", "right"),
        ("cost $", "right"),
    ):
        table.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for row in rows:
        dropped = ", ".join(f"{k}: {v}" for k, v in row.get("dropped", {}).items())
        table.add_row(
            row["stage"],
            str(row["items_in"]),
            str(row["items_out"]),
            Text(dropped),
            str(row.get("requests", 0)),
            str(row.get("embedding_requests", 0)),
            str(row.get("cached", 0)),
            str(row.get("retries", 0)),
            str(row.get("failures", 0)),
            f"{row.get('input_tokens', 0):,}",
            f"{row.get('output_tokens', 0):,}",
            f"{row.get('cost_usd', 0):.4f}",
        )
    return table


__all__ = [
    "LABEL_STAGE",
    "USAGE_FIELDS",
    "add_usage",
    "draft_rows",
    "now",
    "package_versions",
    "render_table",
    "stage_row",
    "totals",
    "usage_by_stage",
    "with_usage",
]
