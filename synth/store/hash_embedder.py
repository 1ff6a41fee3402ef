"""A deterministic feature-hashing embedder: no model, no network, same vectors in every process.

Features are lower-cased words, word bigrams and character trigrams of each word. Each word's own
features (the word and its trigrams) are hashed with BLAKE2b (never Python's per-process salted
``hash()``) to 64-bit values, cached per word and per trigram; a bigram's value is an arithmetic
mix of its two words' values. A value's low bit is the sign and the rest picks the bucket; counts are damped with
``1 + log(count)`` and the vector is L2-normalised. Texts sharing words land near each other,
which is all tests and offline dry runs need.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from typing import Any

import numpy as np

from synth.errors import ConfigError
from synth.store.embedder import Embedder

DEFAULT_DIMENSION = 384
#: bump when the featurisation changes, so old collections are not mixed with new vectors
_VERSION = 2
_WORD = re.compile(r"\w+", re.UNICODE)
#: words whose hashes are kept; a few hundred bytes each, so this bounds the cache to a few MiB
_WORD_CACHE = 1 << 14
# little-endian 64-bit, whatever the machine, so vectors are the same everywhere
_U64 = np.dtype("<u8")
_MIX = np.uint64(0x9E3779B97F4A7C15)
_OFFSET = np.uint64(0x632BE59BD9B4E019)
_ONE = np.uint64(1)


class HashEmbedder(Embedder):
    """``hash`` or ``hash:<dimension>``: feature hashing of words, bigrams and char trigrams."""

    default_batch_size = 256
    holds_gil = True

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
            values = _feature_values(text)
            if values.size == 0:
                # an empty text still needs a direction: cosine of a zero vector is undefined
                out[row, 0] = 1.0
                continue
            out[row] = _accumulate(values, self._dimension)
        return out


def _feature_values(text: str) -> np.ndarray:
    """The 64-bit hash of every feature of ``text`` (repeats kept: they are counted)."""
    words = _WORD.findall(text.lower())
    if not words:
        return np.empty(0, dtype=_U64)
    own = np.frombuffer(b"".join(map(_word_hashes, words)), dtype=_U64)
    if len(words) == 1:
        return own
    # each word's block starts with the word feature itself, followed by one value per character
    sizes = np.fromiter(map(len, words), dtype=np.intp, count=len(words)) + 1
    starts = np.cumsum(sizes) - sizes
    heads = own[starts]
    with np.errstate(over="ignore"):
        bigrams = (heads[:-1] * _MIX) ^ (heads[1:] + _OFFSET)
    return np.concatenate([own, bigrams])


def _accumulate(values: np.ndarray, dimension: int) -> np.ndarray:
    values = np.sort(values)
    first = np.empty(values.size, dtype=bool)  # where each run of equal values starts
    first[0] = True
    np.not_equal(values[1:], values[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    unique = values[starts]
    counts = np.diff(starts, append=values.size)
    buckets = ((unique >> _ONE) % np.uint64(dimension)).astype(np.intp)
    signs = np.where(unique & _ONE, 1.0, -1.0)
    return np.bincount(buckets, weights=signs * (1.0 + np.log(counts)), minlength=dimension)


@lru_cache(maxsize=_WORD_CACHE)
def _word_hashes(word: str) -> bytes:
    """BLAKE2b values of ``word``'s own features: the word first, then its char trigrams."""
    padded = f"<{word}>"
    parts = [_blake(f"w:{word}")]
    known = _trigrams.get
    for i in range(len(padded) - 2):
        trigram = padded[i : i + 3]
        value = known(trigram)
        if value is None:
            value = _blake(f"c:{trigram}")
            if len(_trigrams) < _TRIGRAM_CACHE:
                _trigrams[trigram] = value
        parts.append(value)
    return b"".join(parts)


def _blake(feature: str) -> bytes:
    return hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()


# A word's trigrams are mostly shared with other words (English text has a few thousand), so
# their hashes are kept apart from the word cache: a new word then costs one BLAKE2b call, not
# one per character. Bounded; once full, new trigrams are hashed each time and not kept. A dict
# read or written by several threads at once stays consistent (each operation is atomic).
_TRIGRAM_CACHE = 1 << 15
_trigrams: dict[str, bytes] = {}


__all__ = ["DEFAULT_DIMENSION", "HashEmbedder"]
