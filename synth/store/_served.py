"""``ServedEmbedder``: the vectors of chunks embedded elsewhere (by Ray workers), served to the store.

The store asks its embedder for the vectors of the chunks it does not hold yet, by text. A text
whose vector a worker sent back is answered from memory, and let go; any other text is embedded by
the embedder it stands for. Its name, identity and dimension are that embedder's, so the store's
collection, the files' fingerprints and the run's counts are those of a single-process ingest.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from synth.data import Chunk
from synth.store.embedder import Embedder


class ServedEmbedder(Embedder):
    """``inner``, with the vectors handed over by :meth:`offer` served without embedding again."""

    def __init__(self, inner: Embedder) -> None:
        super().__init__(batch_size=inner.batch_size)
        self.inner = inner
        self.name = inner.name
        self.remote = inner.remote
        self.notice = inner.notice
        self._vectors: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()  # offered by the reading thread, taken by the writer's

    # the counts are the inner embedder's: what it embedded here, never what a worker did
    batches_embedded = property(lambda self: self.inner.batches_embedded, lambda self, value: None)
    texts_embedded = property(lambda self: self.inner.texts_embedded, lambda self, value: None)

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def identity(self) -> dict[str, Any]:
        return self.inner.identity()

    def offer(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> None:
        """Keep the vectors a worker made for ``chunks`` (unit rows, in the chunks' order)."""
        with self._lock:
            for chunk, row in zip(chunks, vectors, strict=True):
                self._vectors[chunk.text] = row

    def embed_array(self, texts: Sequence[str], *, label: str | None = None) -> np.ndarray:
        """The offered vectors of ``texts``, the others embedded by the inner embedder."""
        texts = list(texts)
        with self._lock:
            served = [self._vectors.pop(text, None) for text in texts]
        missing = [text for text, row in zip(texts, served, strict=True) if row is None]
        fresh = iter(self.inner.embed_array(missing, label=label) if missing else ())
        rows = [row if row is not None else next(fresh) for row in served]
        if not rows:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.asarray(rows, dtype=np.float32)

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        return self.inner.embed_array(texts)

    def share(self, *, limiter: Any = None, usage: Any = None) -> None:
        self.inner.share(limiter=limiter, usage=usage)


__all__ = ["ServedEmbedder"]
