"""A deterministic feature-hashing embedder: no model, no network, same vectors in every process.

Features are lower-cased words, word bigrams and character trigrams of each word; each feature is
hashed with BLAKE2b (never Python's per-process salted ``hash()``) to a bucket and a sign, counts
are damped with ``1 + log(count)``, and the vector is L2-normalised. Texts sharing words land near
each other, which is all tests and offline dry runs need.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from functools import lru_cache
from typing import Any

import numpy as np

from synth.errors import ConfigError
from synth.store.embedder import Embedder

DEFAULT_DIMENSION = 384
#: bump when the featurisation changes, so old collections are not mixed with new vectors
_VERSION = 1
_WORD = re.compile(r"\w+", re.UNICODE)


class HashEmbedder(Embedder):
    """``hash`` or ``hash:<dimension>``: feature hashing of words, bigrams and char trigrams."""

    default_batch_size = 256

    def __init__(self, dimension: int = DEFAULT_DIMENSION, *, batch_size: int | None = None):
        if not isinstance(dimension, int) or isinstance(dimension, bool) or dimension < 2:
            raise ConfigError(f"hash embedder dimension must be an integer >= 2, got {dimension!r}")
        super().__init__(batch_size=batch_size)
        self._dimension = dimension
        self.name = f"hash:{dimension}"

    @property
    def dimension(self) -> int:
        return self._dimension

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "version": _VERSION}

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            counts = Counter(_features(text))
            if not counts:
                # an empty text still needs a direction: cosine of a zero vector is undefined
                out[row, 0] = 1.0
                continue
            for feature, count in counts.items():
                bucket, sign = _bucket(feature, self._dimension)
                out[row, bucket] += sign * (1.0 + math.log(count))
        return out


def _features(text: str) -> list[str]:
    words = _WORD.findall(text.lower())
    features = [f"w:{w}" for w in words]
    features += [f"b:{a} {b}" for a, b in zip(words, words[1:], strict=False)]
    for word in words:
        padded = f"<{word}>"
        features += [f"c:{padded[i : i + 3]}" for i in range(len(padded) - 2)]
    return features


@lru_cache(maxsize=1 << 18)
def _bucket(feature: str, dimension: int) -> tuple[int, float]:
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return (value >> 1) % dimension, (1.0 if value & 1 else -1.0)


__all__ = ["DEFAULT_DIMENSION", "HashEmbedder"]
