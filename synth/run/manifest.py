"""The run's manifest: what ran, with what, and per stage what went in, out, and what it cost.

Item counts come from the stage outputs of the candidates the run used (so they add up: each
stage's ``items_in`` is ``items_out`` plus the drops, and feeds the next stage). Requests, cached
responses, retries, failures, tokens (and of the input tokens, those the provider served from its
prompt cache, ``cached_input_tokens``, or wrote to it, ``cache_write_tokens``) and cost come from
the models' usage, summed over every session of the run (a resumed run adds a session).

The ``timeline`` (:func:`timeline`) says where this session's time went: per stage, when its
first and last request left and its first and last reply came back, in seconds from the session's
start; the time before the first request; the request phase (first request out to last reply in);
and the chain floor, the time one golden's dependent requests take at each stage's mean latency
(:data:`CHAIN`), which no run, however parallel, goes below.

Retries are also split by kind, for chat requests and for embedding requests apart: each stage row
and the totals carry ``retries_by_kind`` = ``{"chat": {kind: n}, "embeddings": {kind: n}}``, the
kinds of :data:`RETRY_KINDS` always present. A stage's ``retries`` counts both.
"""

from __future__ import annotations

import platform
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from importlib import metadata
from typing import Any

from synth.llm.pricing import estimate_cost
from synth.llm.usage import EMBEDDINGS_LABEL, LabelTimes, Usage
from synth.run.slots import NOT_NEEDED
from synth.stage.stats import StageStats

#: usage labels (one per request kind) -> the stage row they are counted in
LABEL_STAGE = {
    "critic": "critic",
    "inputs": "inputs",
    "filter": "filter",
    "filter_rewrite": "filter",
    "evolve": "evolve",
    "style": "style",
    "expected": "expected",
    # the final check of the input (synth.generate.final_check): its two checks and its rewrite
    "check_alone": "check",
    "check_context": "check",
    "check_rewrite": "check",
    "check_language": "check",
    # the language check's re-asks (synth.generate.language), counted in the stage they check
    "inputs_language": "inputs",
    "filter_language": "filter",
    "evolve_language": "evolve",
    "style_language": "style",
    "conversation_language": "conversation",
}
USAGE_FIELDS = (
    "requests",
    "cancelled",  # of requests: abandoned before their reply, once the run no longer needed them
    "embedding_requests",  # batches sent to a remote embedder (not in requests per golden)
    "cached",
    "retries",
    "failures",
    "input_tokens",
    "cached_input_tokens",  # of input_tokens, served from the provider's prompt cache
    "cache_write_tokens",  # of input_tokens, written to it (Anthropic's, billed dearer)
    "output_tokens",
    "cost_usd",
)
#: retry kinds always shown (others, such as a re-ask kind, appear when counted): 429, 5xx,
#: timeout, dropped connection, cut-off reply, malformed reply
RETRY_KINDS = ("rate_limit", "server", "timeout", "connection", "incomplete", "invalid_output")
#: the two request families retries are split by
RETRY_FAMILIES = ("chat", "embeddings")
#: usage rows keep the split as flat numeric keys "<family>:<kind>" (summed like the others)
_KIND_SEP = ":"
_PACKAGES = ("synth", "pydantic", "chromadb", "openai", "numpy", "tiktoken", "rich")


#: one golden's dependent requests, stage by stage: the stages of a group are asked side by
#: side (the filter's verdicts and the evolved inputs), each group after the one before, unless
#: the run asked it ahead (its first request left before the group before had its first reply:
#: inputs for contexts guessed before the critic's verdicts, the expected outputs beside the
#: final check), when the two count once, the slower
CHAIN = (
    ("critic",),
    ("inputs",),
    ("filter", "evolve"),
    ("style",),
    ("check",),
    ("expected",),
)


def _chain_floor(stages: Mapping[str, LabelTimes]) -> float:
    """One golden's dependent requests at each stage's mean latency (see :data:`CHAIN`)."""
    floor = 0.0
    before: tuple[float, float] | None = None  # the group before: its mean, its first reply
    for group in CHAIN:
        asked = [t for s in group if (t := stages.get(s)) and t.replies]
        if not asked:
            continue
        mean = max(t.seconds / t.replies for t in asked)
        first_sent = min(t.first_sent for t in asked)
        first_back = min(t.first_back for t in asked)
        if before is not None and first_sent < before[1]:
            floor += max(0.0, mean - before[0])  # asked ahead: side by side with the one before
            before = (max(mean, before[0]), before[1])
        else:
            floor += mean
            before = (mean, first_back)
    return floor


def timeline(usages: Iterable[Usage], started: float) -> dict[str, Any]:
    """Where the session's time went (see the module); times in seconds from ``started``
    (``time.time()``)."""
    stages: dict[str, LabelTimes] = {}
    for usage in usages:
        for label, times in usage.timeline.by_label().items():
            if label.startswith(EMBEDDINGS_LABEL):
                continue
            stages.setdefault(LABEL_STAGE.get(label, label), LabelTimes()).add(times)

    def at(moment: float) -> float | None:
        return round(moment - started, 3) if abs(moment) != float("inf") else None

    rows = {
        stage: {
            "first_sent_s": at(t.first_sent),
            "last_sent_s": at(t.last_sent),
            "first_back_s": at(t.first_back),
            "last_back_s": at(t.last_back),
            "replies": t.replies,
            "mean_latency_s": round(t.seconds / t.replies, 3) if t.replies else None,
        }
        for stage, t in sorted(stages.items(), key=lambda item: item[1].first_sent)
    }
    first = min((t.first_sent for t in stages.values()), default=float("inf"))
    last = max((t.last_back for t in stages.values()), default=float("-inf"))
    floor = _chain_floor(stages)
    requests = last - first if stages and last >= first else None
    return {
        "to_first_request_s": at(first),
        "requests_s": None if requests is None else round(requests, 3),
        "chain_floor_s": round(floor, 3),
        "requests_over_floor": round(requests / floor, 3) if requests and floor else None,
        "stages": rows,
    }


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
            if label.startswith(EMBEDDINGS_LABEL):  # an embedder's: only its retries count here
                if counts.retries:
                    stage = label.removeprefix(EMBEDDINGS_LABEL)
                    row = rows.setdefault(stage, dict.fromkeys(USAGE_FIELDS, 0))
                    row["retries"] += counts.total_retries
                    _count_kinds(row, "embeddings", counts.retries)
                continue
            stage = LABEL_STAGE.get(label, label)
            row = rows.setdefault(stage, dict.fromkeys(USAGE_FIELDS, 0))
            _count_kinds(row, "chat", counts.retries)
            row["requests"] += counts.requests
            row["cancelled"] += counts.cancelled
            row["cached"] += counts.cached_responses
            row["retries"] += counts.total_retries
            row["failures"] += counts.total_failures
            row["input_tokens"] += counts.input_tokens
            row["output_tokens"] += counts.output_tokens
            row["cached_input_tokens"] += counts.cached_input_tokens
            row["cache_write_tokens"] += counts.cache_write_tokens
            row["cost_usd"] += costs.get(label, 0.0)
    return rows


def _count_kinds(row: dict[str, float], family: str, kinds: Mapping[str, int]) -> None:
    for kind, n in kinds.items():
        key = f"{family}{_KIND_SEP}{kind}"
        row[key] = row.get(key, 0) + n


def _summed_keys(row: Mapping[str, Any]) -> list[str]:
    return [*USAGE_FIELDS, *(k for k in row if _KIND_SEP in k)]


def retries_by_kind(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """``{"chat": {kind: n}, "embeddings": {kind: n}}`` summed over usage rows (flat
    ``family:kind`` keys) or stage rows (their ``retries_by_kind``)."""
    out: dict[str, dict[str, int]] = {f: dict.fromkeys(RETRY_KINDS, 0) for f in RETRY_FAMILIES}
    for row in rows:
        flat = [(k, v) for k, v in row.items() if _KIND_SEP in k]
        for family, kinds in (row.get("retries_by_kind") or {}).items():
            flat.extend((f"{family}{_KIND_SEP}{kind}", n) for kind, n in kinds.items())
        for key, n in flat:
            family, _, kind = key.partition(_KIND_SEP)
            into = out.setdefault(family, dict.fromkeys(RETRY_KINDS, 0))
            into[kind] = into.get(kind, 0) + int(n)
    return out


def add_usage(*parts: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
    """Sum per-stage usage rows."""
    total: dict[str, dict[str, float]] = {}
    for part in parts:
        for stage, row in part.items():
            into = total.setdefault(stage, dict.fromkeys(USAGE_FIELDS, 0))
            for key in _summed_keys(row):
                into[key] = into.get(key, 0) + row.get(key, 0)
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


def stats_rows(records: Iterable[StageStats], used: int | None = None) -> list[dict[str, Any]]:
    """The manifest rows of per-stage records: stage, items in and out, drops by reason.

    ``used``: the contexts the run used, of those grouping made; the others (a uniform run's
    contexts held for a file that had its quota, never needed) are dropped there as not needed.
    """
    rows = []
    for r in records:
        out, dropped = r.items_out, dict(r.dropped)
        if r.stage == "group" and used is not None and out > used:
            out, dropped[NOT_NEEDED] = used, dropped.get(NOT_NEEDED, 0) + out - used
        row = stage_row(r.stage, r.items_in, out, dropped)
        if r.notes:  # events that are not drops (a step's runs made ahead: synth.run.ahead)
            row["notes"] = dict(sorted(r.notes.items()))
        rows.append(row)
    return rows


def with_usage(
    rows: list[dict[str, Any]], usage: Mapping[str, Mapping[str, float]]
) -> list[dict[str, Any]]:
    """The rows with each stage's usage columns (zeros for stages without model calls), and a
    row for usage under a label no stage row has."""
    named = {row["stage"] for row in rows}
    out = []
    for row in rows:
        out.append({**row, **_usage_columns(usage.get(row["stage"], {}))})
    for stage, values in sorted(usage.items()):
        if stage not in named:
            out.append({**stage_row(stage, 0, 0), **_usage_columns(values)})
    return out


def _usage_columns(values: Mapping[str, float]) -> dict[str, Any]:
    columns: dict[str, Any] = {k: _round(k, values.get(k, 0)) for k in USAGE_FIELDS}
    columns["retries_by_kind"] = retries_by_kind([values])
    return columns


def _round(key: str, value: float) -> float | int:
    return round(float(value), 6) if key == "cost_usd" else int(value)


def totals(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The usage columns summed over ``rows``, with ``retries_by_kind``."""
    out: dict[str, Any] = {k: _round(k, sum(r.get(k, 0) for r in rows)) for k in USAGE_FIELDS}
    out["retries_by_kind"] = retries_by_kind(rows)
    return out


def merged(parts: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """One manifest for a call made of several runs (``(name, manifest)``, one run per question
    type): each stage's counts, drops and usage summed over the runs, the totals of those, the
    goldens asked and delivered summed, and under ``parts`` each run's id, folder and status.

    Each run's own manifest stays in its run directory; this one is what the call reports (the
    stage table, the closing line, ``--json``, the report)."""
    if not parts:
        raise ValueError("no runs to merge")
    stages: dict[str, dict[str, Any]] = {}
    for _, manifest in parts:
        for row in manifest.get("stages", []):
            into = stages.get(row["stage"])
            stages[row["stage"]] = dict(row) if into is None else _added_rows(into, row)
    rows = list(stages.values())
    total = totals(rows)
    manifests = [m for _, m in parts]
    asked = sum(int(m.get("num_goldens") or 0) for m in manifests)
    delivered = sum(int(m.get("delivered") or 0) for m in manifests)
    statuses = [str(m.get("status")) for m in manifests]
    worst = next((s for s in _STATUS_ORDER if s in statuses), statuses[-1])
    return {
        **manifests[0],
        "run_id": manifests[0].get("run_id"),
        "run_dir": manifests[0].get("run_dir"),
        "status": worst,
        "num_goldens": asked,
        "delivered": delivered,
        "shortfall": [f"{name}: {line}" for name, m in parts for line in m.get("shortfall") or []],
        "requests_per_golden": round(total["requests"] / delivered, 3) if delivered else None,
        "stages": rows,
        "totals": total,
        "updated_at": max(str(m.get("updated_at", "")) for m in manifests),
        # what this call's command made (a resumed run's earlier sessions are not this call's)
        "sessions": [_last_sessions(manifests)],
        "parts": {
            name: {
                "run_id": m.get("run_id"),
                "run_dir": m.get("run_dir"),
                "status": m.get("status"),
                "num_goldens": m.get("num_goldens"),
                "delivered": m.get("delivered"),
                "resumed": len(m.get("sessions") or []) > 1,
            }
            for name, m in parts
        },
    }


#: a merged manifest's status is its runs' worst, in this order
_STATUS_ORDER = ("failed", "interrupted", "running", "partial", "complete")


def _added_rows(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """Two runs' rows of one stage, as one: counts, drops, notes and usage summed."""
    row = dict(a)
    for key in ("items_in", "items_out"):
        row[key] = int(a.get(key, 0)) + int(b.get(key, 0))
    for key in ("dropped", "notes"):
        if key in a or key in b:
            both: dict[str, int] = dict(a.get(key) or {})
            for reason, n in (b.get(key) or {}).items():
                both[reason] = both.get(reason, 0) + n
            row[key] = dict(sorted(both.items()))
    for key in USAGE_FIELDS:
        row[key] = _round(key, float(a.get(key, 0)) + float(b.get(key, 0)))
    row["retries_by_kind"] = retries_by_kind([a, b])
    return row


def _last_sessions(manifests: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The runs' last sessions as one: their usage summed, replayed when every one was."""
    last = [(m.get("sessions") or [{}])[-1] for m in manifests]
    return {
        "usage": add_usage(*[s.get("usage") or {} for s in last]),
        "replayed": all(bool(s.get("replayed")) for s in last),
    }


__all__ = [
    "CHAIN",
    "LABEL_STAGE",
    "RETRY_FAMILIES",
    "RETRY_KINDS",
    "USAGE_FIELDS",
    "add_usage",
    "merged",
    "now",
    "package_versions",
    "retries_by_kind",
    "stats_rows",
    "stage_row",
    "timeline",
    "totals",
    "usage_by_stage",
    "with_usage",
]
