"""How hard a golden's source is to find from its input alone: BM25 rank, dense rank, word overlap.

Measured over the run's own chunk index, with no model request. A :class:`DifficultyIndex` is built
once per run from the chunks (ids, texts and, when the run has them, their vectors); each golden's
input is then scored against every chunk of its pool, and its :class:`Difficulty` records. The
pool is every chunk, or, given ``pool=P`` and more chunks than that, the ``P`` whose ids hash
lowest: a golden is then ranked among those and its own source chunks (a source outside the pool
scored by the pool's BM25 statistics), so a measurement costs the same whatever the number of
chunks. "Every chunk" below is every chunk of the pool:

``bm25_rank``
    The 1-based rank, under BM25, of the best-ranked of the golden's source chunks: 1 plus the
    number of chunks that score strictly higher than it, so a chunk tied with the source never
    pushes it down. A source chunk that shares no content word with the input (BM25 score 0) ranks
    last, at ``chunks``. BM25 is the Lucene variant (bm25s's default), k1 1.5 and b 0.75
    (:mod:`synth.generate._bm25`), over :func:`synth._words.content_words` of the chunks and of
    the input; each distinct input word
    counts once, however often it is repeated. So an input with no content word ranks every source
    last, and so does an empty chunk.
``dense_rank``
    The same rank under exact cosine similarity of the input's vector with every chunk's vector
    (the run's embedder; no approximate search). A zero vector has cosine 0 with everything, so a
    zero input vector ties every chunk and ranks its source first. Cosines are compared rounded to
    6 decimal places, so float noise never splits a tie. No score-0 rule here: a cosine of 0 is a
    real score. ``None`` when the index has no vectors or the input none.
``overlap``
    The share of the input's distinct content words that occur in its source chunks
    (:func:`synth._words.overlap`), to 4 places; 0 for an input with no content word.
``label``
    ``easy``: BM25 ranks a source chunk first and ``overlap`` is at least :data:`EASY_OVERLAP`
    (0.5): the question says what its source says, in its words. ``hard``: neither BM25 nor the
    embedder (when measured) puts a source chunk in its top :data:`HARD_RANK` (3), and
    ``overlap`` is below :data:`HARD_OVERLAP` (0.5). ``medium``: everything else, including a
    paraphrase keyword search misses but the embedder finds. In an index of 3 chunks or fewer no
    rank is outside the top 3, so only a golden none of whose sources is in the index is hard
    there.
``chunks``
    The number of chunks the ranks are out of: the pool's, and the golden's sources outside it.
``unanswerable``
    True when, in an index of 2 chunks or more, the source chunks rank last under both BM25 and
    the embedder: nothing in the input points at them, so it may not be answerable from itself.
    Never true when there is no dense rank.

Source ids that are not in the index are ignored; when none is, both ranks are ``None``, overlap is
0 and the label is ``hard``. A chunk id given twice keeps its first text (and vector). An empty
index is allowed: every golden measured against it gets that no-source answer, with ``chunks`` 0.
An empty chunk text is a chunk with no words: it matches nothing under BM25.

The label leans on both retrievers on purpose: a paraphrase that keyword search misses but the
embedder finds first is a fair test of a hybrid or dense system, not a hard one; a golden is hard
when it defeats both.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from synth._ids import text_hash
from synth._words import content_words, overlap
from synth.errors import ConfigError
from synth.generate._bm25 import BM25
from synth.store.embedder import is_unit, unit_rows

#: a source chunk ranked this high under BM25 (and enough overlap) makes a golden easy
EASY_RANK = 1
#: the overlap an easy golden needs, at least
EASY_OVERLAP = 0.5
#: a golden is hard only when no retriever ranks a source chunk this high or higher ...
HARD_RANK = 3
#: ... and its overlap is below this
HARD_OVERLAP = 0.5
# cosines are rounded before they are compared: matrix products of different shapes may differ in
# the last bits, and that must not turn a tie into a rank (measure_many must equal measure)
_COSINE_PLACES = 6

Label = Literal["easy", "medium", "hard"]


class Difficulty(BaseModel):
    """How easily a golden's source chunks are found from its input (see the module docstring)."""

    model_config = ConfigDict(frozen=True)

    bm25_rank: int | None
    dense_rank: int | None
    overlap: float
    label: Label
    chunks: int
    unanswerable: bool


def label_of(bm25_rank: int | None, dense_rank: int | None, overlap: float, chunks: int) -> Label:
    """``easy``, ``medium`` or ``hard`` for these measurements (the rules are in the module doc)."""
    for name, rank in (("bm25_rank", bm25_rank), ("dense_rank", dense_rank)):
        if rank is not None and not 1 <= rank <= chunks:
            raise ConfigError(f"{name} {rank} is not a rank in an index of {chunks} chunks")
    if not 0.0 <= overlap <= 1.0:
        raise ConfigError(f"overlap {overlap} is not between 0 and 1")
    if bm25_rank is not None and bm25_rank <= EASY_RANK and overlap >= EASY_OVERLAP:
        return "easy"
    missed = all(rank is None or rank > HARD_RANK for rank in (bm25_rank, dense_rank))
    if missed and overlap < HARD_OVERLAP:
        return "hard"
    return "medium"


class DifficultyIndex:
    """The run's chunks, indexed once for BM25 and cosine, to measure every golden against."""

    def __init__(
        self,
        chunk_ids: Sequence[str],
        texts: Sequence[str],
        vectors: np.ndarray | None = None,
        *,
        pool: int | None = None,
    ) -> None:
        if len(chunk_ids) != len(texts):
            raise ConfigError(f"{len(chunk_ids)} chunk ids but {len(texts)} texts")
        if pool is not None and pool < 1:
            raise ConfigError(f"a difficulty pool holds at least one chunk, got {pool}")
        rows: list[int] = []
        self._row: dict[str, int] = {}
        for i, chunk_id in enumerate(chunk_ids):
            if chunk_id not in self._row:
                self._row[chunk_id] = len(rows)
                rows.append(i)
        self._texts = [texts[i] for i in rows]
        ids = list(self._row)
        if pool is None or pool >= len(ids):
            self._pool = np.arange(len(ids), dtype=np.intp)
        else:  # the same sample whatever the chunks' order: the ids that hash lowest
            lowest = sorted(range(len(ids)), key=lambda r: text_hash(ids[r], 16))[:pool]
            self._pool = np.sort(np.array(lowest, dtype=np.intp))
        #: each chunk's place in the pool, -1 for one outside it
        self._place = np.full(len(ids), -1, dtype=np.intp)
        self._place[self._pool] = np.arange(len(self._pool), dtype=np.intp)
        self._pool_ids = [ids[r] for r in self._pool]
        self._bm25 = _bm25_index(content_words(self._texts[r]) for r in self._pool)
        self._vectors: np.ndarray | None = None
        self._pool_vectors: np.ndarray | None = None
        if vectors is not None:
            array = np.asarray(vectors)
            if array.ndim != 2 or array.shape[0] != len(chunk_ids):
                raise ConfigError(
                    f"chunk vectors must be {len(chunk_ids)} rows (one per chunk id), "
                    f"got shape {array.shape}"
                )
            if len(rows) != len(array):
                array = array[rows]
            if array.dtype == np.float32 and is_unit(array):
                # a run's chunk index lends its own unit rows: compared as they are, in float32
                # (a float64 copy of a store of 200,000 chunks is 600 MB, and making it took two
                # more); the cosines are rounded to six places before they are ranked anyway
                self._vectors = array
            else:
                self._vectors = unit_rows(np.array(array, dtype=np.float64), in_place=True)
            whole = len(self._pool) == len(ids)
            # the pool's rows in one block: a product with them reads nothing else
            self._pool_vectors = self._vectors if whole else self._vectors[self._pool]

    def __len__(self) -> int:
        return len(self._texts)

    @property
    def pool(self) -> int:
        """How many chunks each golden is ranked among, besides its own sources outside them."""
        return len(self._pool)

    @property
    def dimensions(self) -> int | None:
        """The length of the chunk vectors (an input vector must have it); None without any."""
        return None if self._vectors is None else int(self._vectors.shape[1])

    def measure(
        self,
        input: str,
        source_ids: Sequence[str],
        input_vector: Sequence[float] | np.ndarray | None = None,
    ) -> Difficulty:
        """The difficulty of one golden: its input, its source chunk ids, its input's vector."""
        vectors = None if input_vector is None else np.asarray(input_vector, dtype=np.float64)
        if vectors is not None and vectors.ndim != 1:
            raise ConfigError(f"an input vector is one row, got shape {vectors.shape}")
        batch = None if vectors is None else vectors[np.newaxis, :]
        return self.measure_many([input], [source_ids], batch)[0]

    def measure_many(
        self,
        inputs: Sequence[str],
        sources: Sequence[Sequence[str]],
        vectors: np.ndarray | None = None,
    ) -> list[Difficulty]:
        """The difficulty of each golden, in order (the cosines are one matrix product)."""
        if len(inputs) != len(sources):
            raise ConfigError(f"{len(inputs)} inputs but {len(sources)} source lists")
        bm25 = self._bm25_scores(inputs)
        cosines = self._cosines(vectors, len(inputs))
        found: list[Difficulty] = []
        for i, text in enumerate(inputs):
            rows = sorted({self._row[s] for s in sources[i] if s in self._row})
            if not rows:
                found.append(self._not_indexed())
                continue
            inside = [int(self._place[r]) for r in rows if self._place[r] >= 0]
            outside = [r for r in rows if self._place[r] < 0]
            n = self.pool + len(outside)
            outside_bm25 = [self._bm25_score(text, r) for r in outside]
            bm25_rank = _rank(bm25[i], inside, outside_bm25, n, zero_is_last=True)
            dense_rank = None
            if cosines is not None and vectors is not None:
                outside_cosines = self._outside_cosines(vectors[i], outside)
                dense_rank = _rank(cosines[i], inside, outside_cosines, n, zero_is_last=False)
            share = round(overlap(text, (self._texts[r] for r in rows)), 4)
            found.append(
                Difficulty(
                    bm25_rank=bm25_rank,
                    dense_rank=dense_rank,
                    overlap=share,
                    label=label_of(bm25_rank, dense_rank, share, n),
                    chunks=n,
                    unanswerable=n >= 2 and bm25_rank == n and dense_rank == n,
                )
            )
        return found

    def text(self, chunk_id: str) -> str:
        """The text of an indexed chunk (KeyError for one the index does not hold)."""
        return self._texts[self._row[chunk_id]]

    def nearest(
        self,
        queries: Sequence[str],
        k: int,
        exclude: Sequence[Sequence[str]] | None = None,
        vectors: np.ndarray | None = None,
    ) -> list[list[str]]:
        """Each query's best chunks: its ``k`` best by BM25 (chunks sharing a word with it), then
        its ``k`` best by cosine when ``vectors`` are given, without repeats or its ``exclude``d
        ids; ties go to the chunk indexed first."""
        bm25 = self._bm25_scores(queries)
        cosines = self._cosines(vectors, len(queries))
        ids = self._pool_ids
        found: list[list[str]] = []
        for i in range(len(queries)):
            skip = set(exclude[i]) if exclude is not None else set()
            picked: list[str] = []
            for scores, positive in (
                (bm25[i], True),
                (None if cosines is None else cosines[i], False),
            ):
                if scores is None:
                    continue
                order = np.argsort(-scores, kind="stable")
                taken = 0
                for row in order:
                    if taken == k or (positive and scores[row] <= 0.0):
                        break
                    if ids[row] in skip:
                        continue
                    taken += 1
                    if ids[row] not in picked:
                        picked.append(ids[row])
            found.append(picked)
        return found

    def _not_indexed(self) -> Difficulty:
        return Difficulty(
            bm25_rank=None,
            dense_rank=None,
            overlap=0.0,
            label=label_of(None, None, 0.0, self.pool),
            chunks=self.pool,
            unanswerable=False,
        )

    def _bm25_scores(self, inputs: Sequence[str]) -> np.ndarray:
        """BM25 score of every pool chunk for every input, (inputs, pool)."""
        scores = np.zeros((len(inputs), self.pool), dtype=np.float64)
        if self._bm25 is None or not inputs:
            return scores
        # distinct words only: a word the question repeats is still one word asked about
        for i, text in enumerate(inputs):
            scores[i] = self._bm25.scores(list(dict.fromkeys(content_words(text))))
        return scores

    def _bm25_score(self, input: str, row: int) -> float:
        """The BM25 score for ``input`` of a chunk outside the pool, by the pool's statistics."""
        if self._bm25 is None:
            return 0.0
        query = list(dict.fromkeys(content_words(input)))
        return float(self._bm25.score(query, content_words(self._texts[row])))

    def _cosines(self, vectors: np.ndarray | None, count: int) -> np.ndarray | None:
        """Cosine of every input vector with every pool chunk's vector, (inputs, pool), or None."""
        if vectors is None or self._vectors is None or self._pool_vectors is None:
            return None
        queries = self._queries(vectors, count)
        # the pool's rows times the queries, turned: the same products as the queries times the
        # rows turned, but OpenBLAS takes this shape four to ten times faster with the one or two
        # queries of a candidate (1.2 against 13.5 ms for 2,000 rows of 384 on 2 cores)
        products = (self._pool_vectors @ queries.T).T.astype(np.float64)
        cosines: np.ndarray = np.round(products, _COSINE_PLACES)
        return cosines

    def _queries(self, vectors: np.ndarray, count: int) -> np.ndarray:
        """The input vectors as unit rows in the chunk vectors' precision; ConfigError when their
        shape is not (count, dimensions)."""
        assert self._vectors is not None
        array = np.asarray(vectors, dtype=np.float64)
        if array.shape != (count, self._vectors.shape[1]):
            raise ConfigError(
                f"input vectors must have shape ({count}, {self._vectors.shape[1]}), "
                f"got {array.shape}"
            )
        queries: np.ndarray = unit_rows(array).astype(self._vectors.dtype)
        return queries

    def _outside_cosines(self, vector: np.ndarray, rows: list[int]) -> list[float]:
        """The rounded cosines of one input vector with chunks outside the pool."""
        if not rows or self._vectors is None:
            return []
        query = self._queries(np.asarray(vector)[np.newaxis, :], 1)
        products = (self._vectors[rows] @ query.T)[:, 0].astype(np.float64)
        return [float(c) for c in np.round(products, _COSINE_PLACES)]


def _bm25_index(tokens: Iterable[list[str]]) -> BM25 | None:
    """A BM25 index of these tokenized chunks (read one at a time), or None when they hold no
    word at all."""
    index = BM25(tokens)
    return index if index.postings else None  # none: nothing to rank by, every source ranks last


def _rank(
    scores: np.ndarray, inside: list[int], outside: list[float], n: int, *, zero_is_last: bool
) -> int:
    """1 plus the number of pool chunks scoring strictly more than the best source, whether in
    the pool (``inside``, its places) or not (``outside``, their scores); ``n`` when
    ``zero_is_last`` and no source scores above 0."""
    best = max([float(scores[inside].max())] if inside else [], default=-np.inf)
    best = max([best, *outside])
    if zero_is_last and best <= 0.0:
        return n
    return 1 + int(np.count_nonzero(scores > best))


__all__ = [
    "EASY_OVERLAP",
    "EASY_RANK",
    "HARD_OVERLAP",
    "HARD_RANK",
    "Difficulty",
    "DifficultyIndex",
    "label_of",
]
