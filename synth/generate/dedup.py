"""Deduplication: near-duplicate inputs (cosine of their embeddings at or above a threshold).

Incremental: drafts are offered one at a time (or in batches) as they are finished. A draft that
duplicates a kept one is dropped, unless it scores better, in which case it takes the kept one's
place and the kept one is dropped (``replaced``). Better means a higher input quality, then a higher
context quality; on a tie the draft offered first stays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np

from synth.errors import ConfigError
from synth.generate.draft import Draft
from synth.stage.stats import StageStats

LABEL = "dedup"
DUPLICATE = "near_duplicate"


class TextEmbedder(Protocol):
    """What deduplication needs from an embedder (``synth.store`` embedders have it)."""

    def embed(self, texts: Sequence[str]) -> Any: ...


@dataclass
class DedupDecision:
    """The outcome of offering one draft.

    ``kept``: it is new; ``replaced``: it duplicates ``other`` but scores better, and ``other`` is now
    dropped; ``dropped``: it duplicates ``other``, which stays. ``similarity`` is to ``other``.
    """

    action: Literal["kept", "replaced", "dropped"]
    draft: Draft
    other: Draft | None = None
    similarity: float | None = None


def _rank(draft: Draft) -> tuple[float, float]:
    quality = draft.input_quality if draft.input_quality is not None else -1.0
    context = draft.context.quality if draft.context and draft.context.quality is not None else -1.0
    return (quality, context)


def _unit(vector: Any) -> np.ndarray:
    array = np.asarray(vector, dtype=np.float64).reshape(-1)
    norm = float(np.linalg.norm(array))
    return array / norm if norm > 0 else array


class Deduplicator:
    """Keeps one draft of every group of near-duplicate inputs, the best-scored one.

    ``offer(draft)`` embeds the input (or takes ``embedding``) and returns a :class:`DedupDecision`
    (a run passes the vectors it already has). ``kept`` lists the drafts kept so far (a replacement
    takes its predecessor's position). Dropped drafts are marked with ``near_duplicate`` and, in
    their metadata, ``duplicate_of`` (the other draft's id) and ``duplicate_similarity``.
    """

    def __init__(
        self,
        embedder: TextEmbedder | None,
        threshold: float = 0.9,
        *,
        stats: StageStats | None = None,
    ):
        if not 0.0 <= threshold <= 1.0:
            raise ConfigError(f"dedup threshold must be in [0, 1], got {threshold!r}")
        self.embedder = embedder
        self.threshold = threshold
        self.stats = stats if stats is not None else StageStats(stage=LABEL)
        self._kept: list[Draft] = []
        # the kept inputs' unit vectors, row i for kept[i], in a matrix that doubles when full:
        # stacking a list at every offer copied every vector again, O(n^2) copies for n inputs
        self._matrix: np.ndarray | None = None
        self._count = 0

    @property
    def kept(self) -> list[Draft]:
        return list(self._kept)

    def offer(self, draft: Draft, embedding: Any = None) -> DedupDecision:
        """Offer one finished draft; returns what happened to it."""
        if embedding is None:
            if self.embedder is None:
                raise ConfigError("this Deduplicator has no embedder: pass embeddings to offer()")
            embedding = self.embedder.embed([draft.input])[0]
        return self._offer(draft, _unit(embedding))

    def _offer(self, draft: Draft, vector: np.ndarray) -> DedupDecision:
        self.stats.items_in += 1
        best_index, best_sim = -1, -2.0
        if self._count:
            assert self._matrix is not None
            # einsum, not @: a matrix-vector product goes to BLAS, whose threads, woken for
            # every offer, made 5,000 offers 15 times slower on a busy 2-core machine
            # (docs/benchmarks.md); einsum's own loop stays on this thread
            sims = np.einsum("ij,j->i", self._matrix[: self._count], vector)
            best_index = int(np.argmax(sims))
            best_sim = float(sims[best_index])
        if best_index < 0 or best_sim < self.threshold:
            self._kept.append(draft)
            self._append(vector)
            self.stats.items_out += 1
            return DedupDecision("kept", draft)
        incumbent = self._kept[best_index]
        self.stats.drop(DUPLICATE)
        if _rank(draft) > _rank(incumbent):
            self._mark(incumbent, draft, best_sim)
            self._kept[best_index] = draft
            assert self._matrix is not None
            self._matrix[best_index] = vector
            return DedupDecision("replaced", draft, incumbent, best_sim)
        self._mark(draft, incumbent, best_sim)
        return DedupDecision("dropped", draft, incumbent, best_sim)

    def _append(self, vector: np.ndarray) -> None:
        if self._matrix is None or self._count == len(self._matrix):
            grown = np.empty((max(16, 2 * self._count), vector.shape[0]), dtype=vector.dtype)
            if self._matrix is not None:
                grown[: self._count] = self._matrix[: self._count]
            self._matrix = grown
        self._matrix[self._count] = vector
        self._count += 1

    @staticmethod
    def _mark(loser: Draft, winner: Draft, similarity: float) -> None:
        loser.drop(LABEL, DUPLICATE)
        loser.metadata["duplicate_of"] = winner.id
        loser.metadata["duplicate_similarity"] = round(similarity, 6)


__all__ = ["DUPLICATE", "DedupDecision", "Deduplicator"]
