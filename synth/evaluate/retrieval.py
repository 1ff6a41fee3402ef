"""Retrieval scored by context id: hit rate, recall, precision and nDCG at k, MRR, average precision.

Each item's ``context_ids`` are the relevant ids (for a generated golden, the chunks it was made
from). The retriever returns a ranked list of ids or hits; a repeated id counts once, at its first
rank. Relevance is binary.
"""

from __future__ import annotations

import asyncio
import inspect
import math
from collections.abc import Callable, Collection, Sequence
from typing import Any

from synth.errors import ConfigError
from synth.evaluate._calls import callable_name
from synth.evaluate._items import EvalItem, as_items
from synth.evaluate._jobs import (
    call_user,
    check_n_jobs,
    check_on_error,
    describe,
    gather_all,
    limited,
    run_jobs,
    warns_on_failures,
)
from synth.evaluate.report import ItemResult, RetrievalEvaluation, summarize
from synth.evaluate.retrieved import context_ids


def _ranked(retrieved: Sequence[str]) -> list[str]:
    seen: set[str] = set()
    ranked = []
    for rid in retrieved:
        if rid not in seen:
            seen.add(rid)
            ranked.append(rid)
    return ranked


def _check(relevant: Collection[str], k: int | None = None) -> None:
    if not relevant:
        raise ConfigError("retrieval metrics need at least one relevant id")
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise ConfigError(f"k must be a positive integer, got {k!r}")


def hit_rate_at_k(retrieved: Sequence[str], relevant: Collection[str], k: int) -> float:
    """1.0 when a relevant id is among the first ``k`` retrieved, else 0.0."""
    _check(relevant, k)
    return float(any(rid in relevant for rid in _ranked(retrieved)[:k]))


def recall_at_k(retrieved: Sequence[str], relevant: Collection[str], k: int) -> float:
    """Relevant ids among the first ``k`` retrieved / relevant ids."""
    _check(relevant, k)
    wanted = set(relevant)
    return sum(rid in wanted for rid in _ranked(retrieved)[:k]) / len(wanted)


def precision_at_k(retrieved: Sequence[str], relevant: Collection[str], k: int) -> float:
    """Relevant ids among the first ``k`` retrieved / ``k`` (fewer results count as misses)."""
    _check(relevant, k)
    wanted = set(relevant)
    return sum(rid in wanted for rid in _ranked(retrieved)[:k]) / k


def ndcg_at_k(retrieved: Sequence[str], relevant: Collection[str], k: int) -> float:
    """Discounted cumulative gain of the first ``k`` (binary relevance) / its best possible value."""
    _check(relevant, k)
    wanted = set(relevant)
    gain = sum(
        1.0 / math.log2(rank + 1)
        for rank, rid in enumerate(_ranked(retrieved)[:k], start=1)
        if rid in wanted
    )
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(k, len(wanted)) + 1))
    return gain / ideal


def reciprocal_rank(retrieved: Sequence[str], relevant: Collection[str]) -> float:
    """1 / rank of the first relevant id retrieved, 0.0 when none is (MRR is its mean)."""
    _check(relevant)
    for rank, rid in enumerate(_ranked(retrieved), start=1):
        if rid in relevant:
            return 1.0 / rank
    return 0.0


def average_precision(retrieved: Sequence[str], relevant: Collection[str]) -> float:
    """Mean of the precision at the rank of each relevant id retrieved, over all relevant ids."""
    _check(relevant)
    wanted = set(relevant)
    hits = 0
    total = 0.0
    for rank, rid in enumerate(_ranked(retrieved), start=1):
        if rid in wanted:
            hits += 1
            total += hits / rank
    return total / len(wanted)


def retrieval_scores(
    retrieved: Sequence[str], relevant: Collection[str], ks: Sequence[int]
) -> dict[str, float]:
    """Every retrieval metric of one query, named as in reports (``recall@5``, ``mrr``, ...)."""
    scores: dict[str, float] = {}
    for k in ks:
        scores[f"hit_rate@{k}"] = hit_rate_at_k(retrieved, relevant, k)
        scores[f"recall@{k}"] = recall_at_k(retrieved, relevant, k)
        scores[f"precision@{k}"] = precision_at_k(retrieved, relevant, k)
        scores[f"ndcg@{k}"] = ndcg_at_k(retrieved, relevant, k)
    scores["mrr"] = reciprocal_rank(retrieved, relevant)
    scores["average_precision"] = average_precision(retrieved, relevant)
    return scores


def metric_names(ks: Sequence[int]) -> list[str]:
    """The report's metric names for cut-offs ``ks``, in report order."""
    names = []
    for k in ks:
        names.extend([f"hit_rate@{k}", f"recall@{k}", f"precision@{k}", f"ndcg@{k}"])
    return [*names, "mrr", "average_precision"]


def _cutoffs(k: int | Sequence[int]) -> list[int]:
    ks = [k] if isinstance(k, int) else list(k)
    if not ks or any(isinstance(x, bool) or not isinstance(x, int) or x < 1 for x in ks):
        raise ConfigError(f"k must be a positive integer or a list of them, got {k!r}")
    return sorted(set(ks))


def _takes_k(retriever: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(retriever).parameters
    except (TypeError, ValueError):
        return False
    return "k" in parameters


@warns_on_failures
def evaluate_retrieval(
    retriever: Callable[..., Any],
    dataset: Any,
    *,
    k: int | Sequence[int] = 10,
    on_error: str = "record",
    n_jobs: int = 1,
    seed: int = 0,
) -> RetrievalEvaluation:
    """Ask ``retriever(question)`` for every item and score the ranked ids against ``context_ids``.

    The retriever returns ranked ids, or hits/chunks/mappings with ids; when it takes a ``k``
    argument it is called with the largest cut-off. ``k`` is one cut-off or several. An item
    without ``context_ids`` is NaN everywhere and costs no call; a failing retriever is recorded
    (``on_error="record"``, with a :class:`~synth.errors.FailedItemsWarning`) or raised.
    """
    check_on_error(on_error)
    check_n_jobs(n_jobs)
    if not callable(retriever):
        raise ConfigError(
            f"retriever must be a callable fn(question), got {type(retriever).__name__}"
        )
    ks = _cutoffs(k)
    names = metric_names(ks)
    items = as_items(dataset)
    kwargs = {"k": max(ks)} if _takes_k(retriever) else {}

    async def score(item: EvalItem, limiter: asyncio.Semaphore) -> ItemResult:
        row = ItemResult(id=item.id, question=item.question, relevant=list(item.context_ids))
        row.scores = dict.fromkeys(names, math.nan)
        if not item.context_ids:
            row.skipped = dict.fromkeys(names, "no context ids")
            return row
        try:
            hits = await limited(limiter, call_user(retriever, item.question, **kwargs))
            row.retrieved = context_ids(hits)
        except Exception as exc:  # the user's retriever may raise anything; it is recorded
            if on_error == "raise":
                raise
            row.errors["retriever"] = describe(exc)
            return row
        row.scores = retrieval_scores(row.retrieved, set(item.context_ids), ks)
        return row

    async def main(limiter: asyncio.Semaphore) -> list[ItemResult]:
        return await gather_all(score(item, limiter) for item in items)

    rows = run_jobs(n_jobs, main)
    config = {"retriever": callable_name(retriever), "k": ks, "n_items": len(items), "seed": seed}
    report = RetrievalEvaluation(items=rows, config=config, k=ks)
    summarize(report, names, seed)
    report.errors = {"retriever": sum("retriever" in row.errors for row in rows)}
    return report


__all__ = [
    "RetrievalEvaluation",
    "average_precision",
    "evaluate_retrieval",
    "hit_rate_at_k",
    "ndcg_at_k",
    "precision_at_k",
    "recall_at_k",
    "reciprocal_rank",
    "retrieval_scores",
]
