"""Grouping: each seed gathers its most similar chunks into a context.

A seed takes up to ``max_context_length - 1`` neighbours whose cosine similarity to it, computed
here from the stored embeddings (never read off a distance), is at least
``context_similarity_threshold``; from its own file unless ``allow_cross_file_contexts``. Seeds are
served in order and every chunk a context takes is claimed in ``used``, so no chunk sits in two
contexts of a run; only with ``allow_reuse`` (the selector has started reusing chunks because the
corpus is too small) may a neighbour already be claimed, and each such chunk is counted.

The store is queried in batches: all seeds of one file (or all seeds, across files) per request.
What the store holds for a set of seeds (their vectors, their nearest chunks, those chunks) does
not depend on which chunks are claimed, so :func:`prefetch_neighbours` can read it ahead, while
the critic is still scoring the seeds; :func:`group_contexts` then only claims.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from synth.contexts.config import ContextConstructionConfig
from synth.contexts.context import make_context
from synth.contexts.critic import ScoredSeed
from synth.data import Chunk, Context
from synth.stage.stats import StageStats
from synth.store.embedder import unit_rows

TOO_FEW = "too_few_similar_chunks"


class NeighbourStore(Protocol):
    """What grouping needs from a store (``synth.store.ChunkStore`` has it)."""

    def query(
        self,
        embeddings: Any,
        n_results: int,
        *,
        source: str | None = None,
        exclude_ids: Sequence[str] | None = None,
    ) -> list[list[tuple[str, float]]]: ...

    def query_chunks(
        self, embeddings: Any, n_results: int, *, source: str | None = None
    ) -> list[list[tuple[Chunk, float, Any]]]: ...

    def get(self, ids: Sequence[str]) -> list[Chunk]: ...

    def get_embeddings(self, ids: Sequence[str]) -> Any: ...


@dataclass
class GroupResult:
    """Contexts in seed order, the seeds that made none (``(chunk_id, reason)``), and reuse counts."""

    contexts: list[Context] = field(default_factory=list)
    dropped: list[tuple[str, str]] = field(default_factory=list)
    shared_chunks: int = 0  # neighbours already in another context (only with allow_reuse)
    shared_ids: set[str] = field(default_factory=set)


def _unit_rows(vectors: Any) -> np.ndarray:
    """``vectors`` (one, or a row each) as float64 rows of length 1."""
    array = np.asarray(vectors, dtype=np.float64)
    return unit_rows(array.reshape(1, -1) if array.ndim == 1 else array)


def _embeddings(store: NeighbourStore, ids: Sequence[str]) -> dict[str, np.ndarray]:
    if not ids:
        return {}
    raw = store.get_embeddings(list(ids))
    if isinstance(raw, dict):
        rows = _unit_rows([raw[i] for i in ids])
    else:
        rows = _unit_rows(raw)
    return dict(zip(ids, rows, strict=True))


@dataclass
class Prefetched:
    """The store's answers for some seeds, read ahead of grouping (see :func:`prefetch_neighbours`).

    ``candidates`` is each seed's first query (``fetch`` nearest chunks in its scope, nothing
    excluded); ``vectors`` holds the unit vectors of the seeds and of those chunks, ``chunks``
    the chunks themselves.
    """

    fetch: int
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    candidates: dict[str, list[tuple[str, float]]] = field(default_factory=dict)
    chunks: dict[str, Chunk] = field(default_factory=dict)


def first_fetch(config: ContextConstructionConfig) -> int:
    """How many nearest chunks a seed's first query asks for."""
    return (config.max_context_length - 1) * 2 + 2


def prefetch_neighbours(
    seeds: Sequence[Chunk],
    store: NeighbourStore,
    config: ContextConstructionConfig,
    *,
    batch_size: int = 32,
) -> Prefetched:
    """Read from the store what grouping ``seeds`` will need first; claims nothing, so it may run
    in another thread while the run goes on (the store is only read)."""
    fetch = first_fetch(config)
    ahead = Prefetched(fetch)
    if config.max_context_length < 2 or not seeds:
        return ahead
    parts: list[tuple[Chunk, ScoredSeed | None]] = [(seed, None) for seed in seeds]
    ahead.vectors = _embeddings(store, [seed.id for seed in seeds])
    for scope, members in _scopes(parts, range(len(parts)), config).items():
        for start in range(0, len(members), batch_size):  # the chunks and vectors come along
            batch = members[start : start + batch_size]
            matrix = np.stack([ahead.vectors[seeds[i].id] for i in batch]).astype(np.float32)
            for i, hits in zip(batch, store.query_chunks(matrix, fetch, source=scope), strict=True):
                ahead.candidates[seeds[i].id] = [(chunk.id, float(sim)) for chunk, sim, _ in hits]
                for chunk, _, vector in hits:
                    ahead.chunks[chunk.id] = chunk
                    if chunk.id not in ahead.vectors:
                        ahead.vectors[chunk.id] = _unit_rows(vector)[0]
    return ahead


def _seed_parts(seed: ScoredSeed | Chunk) -> tuple[Chunk, ScoredSeed | None]:
    return (seed.chunk, seed) if isinstance(seed, ScoredSeed) else (seed, None)


def group_contexts(
    seeds: Sequence[ScoredSeed | Chunk],
    store: NeighbourStore,
    config: ContextConstructionConfig,
    *,
    used: set[str],
    allow_reuse: bool = False,
    batch_size: int = 32,
    stats: StageStats | None = None,
    prefetched: Prefetched | None = None,
) -> GroupResult:
    """Build one context per seed, in seed order; blocking (store calls).

    ``used``: the run's claimed chunk ids (the selector's ``used``); seeds are expected to be in it
    already, neighbours are added, and a seed that cannot reach ``min_context_length`` chunks is
    released and reported in ``dropped``. Call it from one thread at a time: it claims chunks.
    ``prefetched`` (from :func:`prefetch_neighbours` over these seeds, or more) saves the store
    reads it holds; the contexts are the same with or without it.
    """
    result = GroupResult()
    parts = [_seed_parts(s) for s in seeds]
    if stats is not None:
        stats.items_in += len(parts)
    wanted = config.max_context_length - 1
    neighbours: list[list[tuple[str, float]]] = [[] for _ in parts]
    ahead = prefetched if prefetched is not None else Prefetched(first_fetch(config))
    if wanted > 0 and parts:
        seed_vectors = _cached_embeddings(store, [c.id for c, _ in parts], ahead)
        neighbours = _find_neighbours(
            parts, seed_vectors, store, config, used, allow_reuse, batch_size, result, ahead
        )
    found_ids = sorted({cid for row in neighbours for cid, _ in row})
    missing = [cid for cid in found_ids if cid not in ahead.chunks]
    fetched = {cid: ahead.chunks[cid] for cid in found_ids if cid in ahead.chunks}
    fetched.update({c.id: c for c in store.get(missing)} if missing else {})
    for (seed, scored), row in zip(parts, neighbours, strict=True):
        chunks = [seed] + [fetched[cid] for cid, _ in row]
        if len(chunks) < config.min_context_length:
            if not allow_reuse:  # when reusing, these chunks may belong to other contexts too
                used.difference_update([seed.id, *(cid for cid, _ in row)])
            result.dropped.append((seed.id, TOO_FEW))
            if stats is not None:
                stats.drop(TOO_FEW)
            continue
        result.contexts.append(_context(chunks, scored, row, result.shared_ids))
        if stats is not None:
            stats.items_out += 1
            stats.note("neighbours", len(row))
    if stats is not None and result.shared_chunks:
        stats.note("shared_chunks", result.shared_chunks)
    return result


def _context(
    chunks: list[Chunk],
    scored: ScoredSeed | None,
    row: list[tuple[str, float]],
    shared_ids: set[str],
) -> Context:
    """The context of a seed (``chunks[0]``) and its neighbours (``row``: id and similarity)."""
    metadata: dict[str, Any] = {}
    reused = [cid for cid, _ in row if cid in shared_ids]
    if reused:
        metadata["shared_chunk_ids"] = reused
    score = scored.score if scored is not None else None
    if scored is not None and score is not None:
        metadata["critic"] = score.model_dump()
        if scored.attempts is not None:
            metadata["critic_attempts"] = scored.attempts
    return make_context(
        chunks,
        quality=score.quality if score else None,
        similarities=[1.0] + [sim for _, sim in row],
        metadata=metadata,
    )


def _find_neighbours(
    parts: list[tuple[Chunk, ScoredSeed | None]],
    seed_vectors: dict[str, np.ndarray],
    store: NeighbourStore,
    config: ContextConstructionConfig,
    used: set[str],
    allow_reuse: bool,
    batch_size: int,
    result: GroupResult,
    ahead: Prefetched,
) -> list[list[tuple[str, float]]]:
    """Neighbours per seed, claimed in seed order.

    A seed whose whole candidate list was similar enough but already claimed asks again, excluding
    the claimed chunks it saw, with a doubled list (the seeds after it wait and ask again too, so
    claims follow the seed order); that repeats until it has its neighbours, meets a chunk under
    the threshold, or its file runs out.
    """
    wanted = config.max_context_length - 1
    threshold = config.context_similarity_threshold
    chosen: list[list[tuple[str, float]]] = [[] for _ in parts]
    claims = _Claims({c.id for c, _ in parts}, used, allow_reuse, result)
    todo = list(range(len(parts)))
    fetch = first_fetch(config)
    while todo:
        exclude = sorted(claims.seen)
        candidates = _prefetched_rows(parts, todo, ahead) if not exclude else None
        if candidates is None or fetch != ahead.fetch:
            candidates = _query(
                parts, todo, seed_vectors, store, config, fetch, exclude, batch_size
            )
        found = sorted({cid for row in candidates.values() for cid, _ in row})
        vectors = _cached_embeddings(store, found, ahead)
        retry: list[int] = []
        for position, i in enumerate(todo):
            seed = parts[i][0]
            # the similarity is recomputed from the vectors: the store's number only ranks
            rows = sorted(
                (
                    (cid, float(np.dot(seed_vectors[seed.id], vectors[cid])))
                    for cid, _ in candidates[i]
                ),
                key=lambda item: (-item[1], item[0]),
            )
            claims.take(seed.id, rows, chosen[i], wanted, threshold)
            full = len(candidates[i]) >= fetch
            if len(chosen[i]) < wanted and full and rows and rows[-1][1] >= threshold:
                # later seeds wait, so that claims keep the seed order
                retry = todo[position:]
                break
        todo = retry
        fetch *= 2
    return chosen


@dataclass
class _Claims:
    """Who may take which chunk while neighbours are claimed in seed order."""

    seed_ids: set[str]
    used: set[str]
    allow_reuse: bool
    result: GroupResult
    seen: set[str] = field(
        default_factory=set
    )  # claimed chunks a seed met, excluded on asking again

    def take(
        self,
        seed_id: str,
        rows: list[tuple[str, float]],
        chosen: list[tuple[str, float]],
        wanted: int,
        threshold: float,
    ) -> None:
        """Add to ``chosen`` the best of ``rows`` (most similar first) that are free, until
        ``wanted`` or a chunk under ``threshold``."""
        taken = {cid for cid, _ in chosen}
        for cid, sim in rows:
            if len(chosen) >= wanted or sim < threshold:
                break
            if cid == seed_id or cid in taken:
                continue
            if cid in self.seed_ids or (cid in self.used and not self.allow_reuse):
                self.seen.add(cid)
                continue
            if cid in self.used:
                self.result.shared_chunks += 1
                self.result.shared_ids.add(cid)
            self.used.add(cid)
            taken.add(cid)
            chosen.append((cid, sim))


def _prefetched_rows(
    parts: list[tuple[Chunk, ScoredSeed | None]], todo: list[int], ahead: Prefetched
) -> dict[int, list[tuple[str, float]]] | None:
    """The first query's rows for ``todo``, when every one of them was read ahead."""
    rows = {i: ahead.candidates.get(parts[i][0].id) for i in todo}
    if any(row is None for row in rows.values()):
        return None
    return {i: row for i, row in rows.items() if row is not None}


def _cached_embeddings(
    store: NeighbourStore, ids: Sequence[str], ahead: Prefetched
) -> dict[str, np.ndarray]:
    missing = [i for i in ids if i not in ahead.vectors]
    found = _embeddings(store, missing)
    return {i: ahead.vectors[i] if i in ahead.vectors else found[i] for i in ids}


def _scopes(
    parts: list[tuple[Chunk, ScoredSeed | None]],
    todo: Iterable[int],
    config: ContextConstructionConfig,
) -> dict[str | None, list[int]]:
    """The seeds of ``todo`` by the scope their neighbours come from: their file, or everything."""
    scopes: dict[str | None, list[int]] = {}
    for i in todo:
        scope = None if config.allow_cross_file_contexts else parts[i][0].source
        scopes.setdefault(scope, []).append(i)
    return scopes


def _query(
    parts: list[tuple[Chunk, ScoredSeed | None]],
    todo: list[int],
    seed_vectors: dict[str, np.ndarray],
    store: NeighbourStore,
    config: ContextConstructionConfig,
    fetch: int,
    exclude: list[str],
    batch_size: int,
) -> dict[int, list[tuple[str, float]]]:
    """One store query per batch of seeds sharing a scope (their file, or everything)."""
    out: dict[int, list[tuple[str, float]]] = {}
    for scope, members in _scopes(parts, todo, config).items():
        for start in range(0, len(members), batch_size):
            batch = members[start : start + batch_size]
            matrix = np.stack([seed_vectors[parts[i][0].id] for i in batch]).astype(np.float32)
            rows = store.query(matrix, fetch, source=scope, exclude_ids=exclude or None)
            for i, row in zip(batch, rows, strict=True):
                out[i] = [(str(cid), float(sim)) for cid, sim in row]
    return out


def ready_prefetch(read: asyncio.Future[Prefetched] | None) -> Prefetched | None:
    """What a store read ahead returned, if it has (grouping does the reads itself otherwise)."""
    if read is None or not read.done() or read.cancelled() or read.exception() is not None:
        return None
    return read.result()


__all__ = [
    "TOO_FEW",
    "GroupResult",
    "NeighbourStore",
    "Prefetched",
    "first_fetch",
    "group_contexts",
    "prefetch_neighbours",
    "ready_prefetch",
]
