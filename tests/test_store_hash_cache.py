"""The hash embedder's caches change nothing but speed: same vectors with them full, empty or off."""

from __future__ import annotations

import numpy as np
import pytest

from synth.store import HashEmbedder, hash_embedder

TEXTS = [
    "The harbour light turns every twelve seconds; the keeper logs each tide.",
    "Ünïcode wörds, 日本語のテキスト and 42 numbers, then the same words again: harbour light",
    "one",
    "",
]


def _fresh() -> None:
    hash_embedder._word_hashes.cache_clear()
    hash_embedder._trigrams.clear()


def test_vectors_do_not_depend_on_what_is_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    _fresh()
    cold = HashEmbedder(96).embed_array(TEXTS)
    assert hash_embedder._trigrams  # trigram hashes were kept
    warm = HashEmbedder(96).embed_array(TEXTS)
    _fresh()
    monkeypatch.setattr(hash_embedder, "_TRIGRAM_CACHE", 5)  # full after five trigrams
    tiny = HashEmbedder(96).embed_array(TEXTS)
    assert len(hash_embedder._trigrams) == 5
    assert np.array_equal(cold, warm) and np.array_equal(cold, tiny)
    _fresh()


def test_the_trigram_cache_is_bounded() -> None:
    assert 0 < hash_embedder._TRIGRAM_CACHE <= 1 << 16
