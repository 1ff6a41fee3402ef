"""How findable each finished golden is from its input alone, measured over the run's own chunks.

A :class:`DifficultyMeter` builds one :class:`~synth.generate.difficulty.DifficultyIndex` per run,
the first time a candidate finishes, from the feed's :class:`~synth.contexts.feed.Corpus`: BM25
over the chunks' words and, when the chunks have vectors and the inputs were embedded by the same
embedder (for deduplication), exact cosine. Each kept draft gets ``metadata["difficulty"]``. No
model is asked anything: the index is built in a worker thread (the vectors may still be being
embedded) and a measurement is a BM25 query and a matrix product, over :data:`POOL` chunks at
most, so its cost does not grow with the store.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence

import numpy as np

from synth.contexts.feed import Corpus
from synth.generate.difficulty import DifficultyIndex
from synth.generate.draft import Draft

#: the difficulty label the ``max_easy_share`` gate counts
EASY = "easy"
#: the drop reason of an easy golden past the gate's share, and the stage it is dropped at
TOO_EASY = "too_easy"
STAGE = "difficulty"


#: each golden is ranked among at most this many of the run's chunks (and its own sources): the
#: ranks of a run over more are out of a sample of them, so a measurement costs the same whatever
#: the store's size (a golden's cosines with 200,000 chunks read 300 MB, 60 ms at the least)
POOL = 10_000


def _build(corpus: Corpus, pool: int | None = POOL) -> DifficultyIndex:
    vectors = corpus.vectors()
    matrix = None if vectors is None else np.asarray(vectors, dtype=np.float32)
    return DifficultyIndex(corpus.chunk_ids, corpus.texts, matrix, pool=pool)


class DifficultyMeter:
    """Measures the kept drafts of each finished candidate; ``corpus`` None measures nothing.

    ``dense`` says whether the inputs' vectors (the deduplication embedder's) live in the same
    space as the chunks' (the same embedder made both); without it only BM25 and overlap count.
    ``pool``: how many of the chunks each golden is ranked among, at most (None: all of them).
    """

    def __init__(
        self, corpus: Corpus | None, *, dense: bool = True, pool: int | None = POOL
    ) -> None:
        self.corpus = corpus
        self.dense = dense
        self.pool = pool
        self._index: asyncio.Task[DifficultyIndex] | None = None
        self._whole: asyncio.Task[DifficultyIndex] | None = None

    async def index(self) -> DifficultyIndex | None:
        """The run's index (its goldens ranked among ``pool`` of its chunks at most), built once
        (in a thread) on first use; None without a corpus."""
        if self.corpus is None or not self.corpus.chunk_ids:
            return None
        if self._index is None:
            self._index = asyncio.create_task(asyncio.to_thread(_build, self.corpus, self.pool))
        return await asyncio.shield(self._index)

    async def _search(self) -> DifficultyIndex | None:
        """The index :meth:`nearest` searches: every chunk of the run (the pool's when they are
        no more), built once on first use."""
        index = await self.index()
        if index is None or index.pool == len(index) or self.corpus is None:
            return index
        if self._whole is None:
            self._whole = asyncio.create_task(asyncio.to_thread(_build, self.corpus, None))
        return await asyncio.shield(self._whole)

    async def measure(self, drafts: Sequence[Draft], vectors: Sequence[Sequence[float]]) -> None:
        """Record the difficulty of every kept draft with a context; ``vectors`` are the kept
        drafts' input vectors in order (empty when the inputs were not embedded)."""
        kept = [d for d in drafts if d.kept]
        measured = [d for d in kept if d.context is not None]
        if not measured:
            return
        index = await self.index()
        if index is None:
            return
        matrix = None
        if self.dense and vectors and len(vectors) == len(kept) and len(measured) == len(kept):
            matrix = np.asarray(vectors, dtype=np.float32)
            if matrix.ndim != 2 or matrix.shape[1] != index.dimensions:
                matrix = None  # not the chunks' space: only BM25 and overlap count
        sources = [d.context.chunk_ids if d.context is not None else [] for d in measured]
        # in a thread: each input is ranked among every chunk of the run, 0.6 s an input at
        # 200,000 chunks; on the event loop a batch held every reply unread until the run took
        # the model server for silent
        inputs = [d.input for d in measured]
        found = await asyncio.to_thread(index.measure_many, inputs, sources, matrix)
        for draft, difficulty in zip(measured, found, strict=True):
            draft.metadata[STAGE] = difficulty.model_dump(mode="json")

    async def nearest(
        self,
        queries: Sequence[str],
        k: int,
        exclude: Sequence[Sequence[str]] | None = None,
        vectors: Sequence[Sequence[float]] | None = None,
    ) -> list[list[tuple[str, str]]]:
        """Each query's best chunks of the run as ``(chunk_id, text)`` (BM25, then cosine when
        ``vectors`` are in the chunks' space), without its ``exclude``d ids, among all of them;
        none without a corpus (:class:`synth.generate.base.CorpusSearch`)."""
        index = await self._search()
        if index is None:
            return [[] for _ in queries]
        matrix = None
        if self.dense and vectors is not None and len(vectors) == len(queries):
            matrix = np.asarray(vectors, dtype=np.float32)
            if matrix.ndim != 2 or matrix.shape[1] != index.dimensions:
                matrix = None
        found = index.nearest(queries, k, exclude, matrix)
        return [[(chunk_id, index.text(chunk_id)) for chunk_id in ids] for ids in found]

    async def aclose(self) -> None:
        """Wait for an index still being built (its thread cannot be stopped)."""
        building = [t for t in (self._index, self._whole) if t is not None and not t.done()]
        if building:
            await asyncio.gather(*building, return_exceptions=True)


def max_easy(share: float | None, num_goldens: int | None) -> int | None:
    """The most ``easy`` goldens a run of ``num_goldens`` keeps under ``max_easy_share``; None
    when there is no cap (no share, or no target count to take a share of)."""
    if share is None or num_goldens is None:
        return None
    return math.floor(share * num_goldens + 1e-9)


def is_easy(draft: Draft) -> bool:
    """Whether ``draft`` was measured ``easy``."""
    measured = draft.metadata.get(STAGE)
    return isinstance(measured, dict) and measured.get("label") == EASY


__all__ = ["EASY", "POOL", "STAGE", "TOO_EASY", "DifficultyMeter", "is_easy", "max_easy"]
