"""A run's chunks in memory, searched exactly: what grouping reads instead of the store.

A run holds every chunk of its files anyway (seeds are drawn from them), so grouping can find each
seed's neighbours among those chunks without a store query per file. :class:`ChunkIndex` reads
their vectors from the store once, in one batched read, and answers every query after that with
a product of unit vectors:

- the similarity is the exact cosine, not an approximate nearest-neighbour index's guess, and ties
  go to the smaller chunk id, so the answer never depends on the order chunks were stored in;
- the scope is the run's own files: a file's chunks, or, with ``allow_cross_file_contexts``, all
  of them, never chunks other folders left in a shared store, nor an earlier version of a file;
- a query takes microseconds; a Chroma query filtered to one file takes about a millisecond and
  holds the interpreter's lock throughout, which holds up every request thread of the run.

It has the read half of :class:`synth.contexts.group.NeighbourStore`.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

import numpy as np

from synth.data import Chunk
from synth.errors import ConfigError, StoreError
from synth.store._queries import query_matrix
from synth.store.embedder import is_unit, unit_rows


class VectorStore(Protocol):
    """Where an index reads its vectors from (``synth.store.ChunkStore`` is one)."""

    def get_embeddings(self, ids: Sequence[str]) -> Any: ...


class ChunkIndex:
    """``chunks`` with their ``vectors`` (one row each, any length), searched by exact cosine."""

    def __init__(self, chunks: Sequence[Chunk], vectors: Any) -> None:
        matrix = np.asarray(vectors, dtype=np.float32)
        if matrix.ndim != 2 or len(matrix) != len(chunks):
            raise ConfigError(
                f"a chunk index needs one vector per chunk: {len(chunks)} chunks, "
                f"vectors of shape {matrix.shape}"
            )
        # rows already of length 1 (or 0) are kept as given, not copied: a store's vectors are a
        # run's largest object (300 MB for 200,000 chunks of 384 dimensions)
        self._unit = matrix if is_unit(matrix) else unit_rows(matrix)
        self._chunks = list(chunks)
        self._row = {chunk.id: row for row, chunk in enumerate(self._chunks)}
        if len(self._row) != len(self._chunks):
            raise ConfigError("a chunk index got the same chunk id twice")
        # ties are broken in each query, by the ids of the few rows that make its top n: a rank
        # of every id made here was a sort, n log n (0.35 µs of CPU a chunk at 20,000 chunks,
        # 0.77 at 200,000), for an order few rows were ever asked for
        by_source: dict[str, list[int]] = {}
        for row, chunk in enumerate(self._chunks):
            by_source.setdefault(chunk.source, []).append(row)
        self._by_source = {s: np.array(rows, dtype=np.intp) for s, rows in by_source.items()}
        self._all = np.arange(len(self._chunks), dtype=np.intp)

    @classmethod
    def from_store(cls, chunks: Sequence[Chunk], store: VectorStore) -> ChunkIndex:
        """The index of ``chunks`` with the vectors ``store`` holds for them (one read)."""
        unique = list({chunk.id: chunk for chunk in chunks}.values())
        vectors = store.get_embeddings([chunk.id for chunk in unique])
        if isinstance(vectors, np.ndarray) and vectors.dtype == np.float32:
            if vectors.ndim == 2 and vectors.base is None and vectors.flags.writeable:
                unit_rows(vectors, in_place=True)  # read for the index alone: scaled as it lies
        return cls(unique, vectors)

    def __len__(self) -> int:
        return len(self._chunks)

    # ---- what grouping asks ----------------------------------------------------------------------
    def query(
        self,
        embeddings: Any,
        n_results: int,
        *,
        source: str | None = None,
        exclude_ids: Sequence[str] | None = None,
    ) -> list[list[tuple[str, float]]]:
        """Per query vector, the ``n_results`` most similar chunks of ``source`` (or all) but
        ``exclude_ids``, as ``(chunk_id, cosine similarity)``, most similar first."""
        return [
            [(self._chunks[row].id, sim) for row, sim in hits]
            for hits in self._nearest(embeddings, n_results, source, exclude_ids)
        ]

    def query_chunks(
        self, embeddings: Any, n_results: int, *, source: str | None = None
    ) -> list[list[tuple[Chunk, float, np.ndarray]]]:
        """Like :meth:`query`, with each hit's chunk and unit vector."""
        return [
            [(self._chunks[row], sim, self._unit[row]) for row, sim in hits]
            for hits in self._nearest(embeddings, n_results, source, None)
        ]

    def get(self, ids: Sequence[str]) -> list[Chunk]:
        """The chunks with these ids, in the order asked; StoreError names ids it lacks."""
        return [self._chunks[row] for row in self._rows(ids)]

    def get_embeddings(self, ids: Sequence[str]) -> np.ndarray:
        """The unit vectors of these chunks, one row per id in the order asked; every chunk's,
        in the index's order, is the index's own matrix, read-only (not a copy of it)."""
        rows = self._rows(ids)
        if len(rows) == len(self._chunks) and np.array_equal(rows, self._all):
            whole = self._unit.view()
            whole.flags.writeable = False
            return whole
        return self._unit[rows]

    # ---- inside ----------------------------------------------------------------------------------
    def _rows(self, ids: Sequence[str]) -> list[int]:
        missing = [i for i in ids if i not in self._row]
        if missing:
            shown = ", ".join(repr(m) for m in missing[:5])
            raise StoreError(f"{len(missing)} chunk id(s) not among the run's chunks: {shown}")
        return [self._row[i] for i in ids]

    def _nearest(
        self,
        embeddings: Any,
        n_results: int,
        source: str | None,
        exclude_ids: Iterable[str] | None,
    ) -> list[list[tuple[int, float]]]:
        queries = query_matrix(embeddings, n_results)
        scope = self._all if source is None else self._by_source.get(source, self._all[:0])
        excluded = {self._row[i] for i in exclude_ids or () if i in self._row}
        if excluded:
            scope = scope[~np.isin(scope, list(excluded))]
        if len(queries) == 0:
            return []
        if len(scope) == 0:
            return [[] for _ in range(len(queries))]
        # float32 products (the whole index is never copied for a query across files), ranked
        # in float64
        vectors = self._unit if scope is self._all else self._unit[scope]
        similarities = (unit_rows(queries) @ vectors.T).astype(np.float64)
        return [self._top(scope, row, n_results) for row in similarities]

    def _top(self, scope: np.ndarray, sims: np.ndarray, n: int) -> list[tuple[int, float]]:
        """The ``n`` best of ``scope`` by ``sims``, ties to the smaller chunk id."""
        chunks = self._chunks
        if len(scope) > n:  # only what makes the top n is sorted
            edge = np.partition(sims, len(sims) - n)[len(sims) - n]  # the n-th largest
            above = np.flatnonzero(sims > edge)  # fewer than n: all of them make it
            tied = np.flatnonzero(sims == edge).tolist()
            if len(tied) > n - len(above):  # the smaller ids of those at the edge fill it up
                tied = heapq.nsmallest(n - len(above), tied, key=lambda i: chunks[scope[i]].id)
            keep = np.concatenate([above, np.asarray(tied, dtype=np.intp)])
            scope, sims = scope[keep], sims[keep]
        rows, values = scope.tolist(), sims.tolist()
        order = sorted(range(len(rows)), key=lambda i: (-values[i], chunks[rows[i]].id))
        return [(rows[i], values[i]) for i in order[:n]]


__all__ = ["ChunkIndex", "VectorStore"]
