"""The one interface every embedder has: texts in, L2-normalised vectors out, in batches."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np

from synth.errors import ConfigError


class Embedder(ABC):
    """Turns texts into unit-length vectors; ``embed`` batches, subclasses embed one batch.

    ``name`` is the spec that makes this embedder again (``hash:384``, ``openai:<model>``, ...);
    ``identity()`` is what a stored vector depends on and names the store's collection. Neither
    ever holds an API key.
    """

    #: spec string, e.g. ``hash:384``; set by subclasses
    name: str = ""
    #: texts sent per request; subclasses choose a default
    default_batch_size: int = 64
    #: True when each batch is a request to a service (counted as embedding requests in a run)
    remote: bool = False
    #: True when embedding is Python work that holds the GIL throughout: ingest then embeds on its
    #: own thread, not in its background writer (two threads taking turns on the GIL are slower)
    holds_gil: bool = False

    def __init__(self, *, batch_size: int | None = None) -> None:
        size = self.default_batch_size if batch_size is None else batch_size
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            raise ConfigError(f"embedding batch_size must be a positive integer, got {size!r}")
        self.batch_size = size
        #: set by make_embedder when it chose this embedder because none was named
        self.notice: str | None = None
        #: how many batches were sent (for reports and tests)
        self.batches_embedded = 0
        #: how many texts were embedded
        self.texts_embedded = 0

    @property
    @abstractmethod
    def dimension(self) -> int:
        """Length of every vector this embedder returns."""

    @abstractmethod
    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        """Embed at most ``batch_size`` texts; return a (len(texts), dimension) array."""

    def share(self, *, limiter: Any = None, usage: Any = None) -> None:  # noqa: B027
        """Pace and count this embedder's requests with a run's ``limiter`` and ``usage``.

        Only a remote embedder makes requests; the others have nothing to share.
        """

    def close(self) -> None:  # noqa: B027 - most embedders hold nothing open
        """Release what the embedder holds open (an HTTP client); it opens again when used."""

    def identity(self) -> dict[str, Any]:
        """What the vectors depend on: used to name collections, never holds a key."""
        return {"embedder": self.name, "dimension": self.dimension}

    def _embed_labelled(self, texts: list[str], label: str | None) -> np.ndarray:
        """:meth:`_embed_batch` for a caller's ``label`` (a stage); remote embedders count by it."""
        return self._embed_batch(texts)

    def embed_array(self, texts: Sequence[str], *, label: str | None = None) -> np.ndarray:
        """Embed ``texts`` in batches; return a float32 (n, dimension) array of unit rows.

        ``label`` names what the vectors are for (``ingest``, ``dedup``): a remote embedder counts
        its requests and retries under it."""
        if isinstance(texts, str):
            raise ConfigError("embed() takes a list of texts, not one string")
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        parts = []
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            vectors = np.asarray(self._embed_labelled(batch, label), dtype=np.float32)
            if vectors.shape[0] != len(batch):
                raise ValueError(
                    f"{self.name} returned {vectors.shape[0]} vectors for {len(batch)} texts"
                )
            parts.append(normalize(vectors))
            self.batches_embedded += 1
            self.texts_embedded += len(batch)
        return np.concatenate(parts, axis=0)

    def embed(self, texts: Sequence[str], *, label: str | None = None) -> list[list[float]]:
        """Embed ``texts`` in batches; return one L2-normalised vector per text."""
        return self.embed_array(texts, label=label).tolist()

    async def aembed(self, texts: Sequence[str], *, label: str | None = None) -> list[list[float]]:
        """Async twin of :meth:`embed` (runs it in a worker thread: for a remote embedder, one
        of the pool its requests wait in, so that many can be out at once)."""
        if self.remote:
            from synth.llm.base import in_io_thread

            return await in_io_thread(self.embed, texts, label=label)
        return await asyncio.to_thread(self.embed, texts, label=label)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name}, batch_size={self.batch_size})"


#: bytes of rows whose lengths are measured at once: numpy squares every row it is given before it
#: sums them, and a run's whole matrix squared at once was a second copy of a store's vectors
#: (300 MB at 200,000 chunks of 384 dimensions), made three times as a run set up its indexes
_NORM_BLOCK_BYTES = 4 * 2**20


def row_norms(matrix: np.ndarray, *, keepdims: bool = False) -> np.ndarray:
    """The length of each row of the 2-d ``matrix``: the numbers ``np.linalg.norm(matrix,
    axis=1)`` gives (each row is summed alone either way), measured a few MB of rows at a time."""
    step = max(1, _NORM_BLOCK_BYTES // max(matrix.itemsize * matrix.shape[1], 1))
    if len(matrix) <= step:
        norms = np.linalg.norm(matrix, axis=1)
    else:
        norms = np.concatenate(
            [np.linalg.norm(matrix[s : s + step], axis=1) for s in range(0, len(matrix), step)]
        )
    return norms[:, np.newaxis] if keepdims else norms


def is_unit(matrix: np.ndarray) -> bool:
    """Whether every row of ``matrix`` is of length 1, or 0, to float32's precision."""
    norms = row_norms(matrix)
    return bool(np.all((np.abs(norms - 1.0) <= 1e-6) | (norms == 0)))


def unit_rows(matrix: np.ndarray, *, in_place: bool = False) -> np.ndarray:
    """Each row of ``matrix`` scaled to length 1 (a zero row stays zero), in its own dtype; a new
    matrix, or ``matrix`` itself with ``in_place``."""
    norms = row_norms(matrix, keepdims=True)
    out = matrix if in_place else np.zeros_like(matrix)
    unit: np.ndarray = np.divide(matrix, norms, out=out, where=norms > 0)
    return unit


def normalize(vectors: np.ndarray) -> np.ndarray:
    """Scale each row to unit length; an all-zero row stays zero."""
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim != 2:
        raise ValueError(f"expected a 2-d array of vectors, got shape {vectors.shape}")
    return unit_rows(vectors)


__all__ = ["Embedder", "is_unit", "normalize", "row_norms", "unit_rows"]
