"""Deduplication: cosine of input embeddings at or above the threshold, the better-scored one kept."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from synth.data import Context
from synth.errors import ConfigError
from synth.generate.dedup import DUPLICATE, Deduplicator
from synth.generate.draft import Draft
from synth.store import HashEmbedder


def draft(i: str, text: str, quality: float | None, context_quality: float | None = None) -> Draft:
    context = Context(
        id="c", chunk_ids=["x"], texts=["t"], source_files=["f"], quality=context_quality
    )
    return Draft(id=i, input=text, input_quality=quality, context=context)


def test_near_duplicates_keep_the_better_scored_one() -> None:
    dedup = Deduplicator(HashEmbedder(384), threshold=0.9)
    a = draft("a", "How do solar panels convert sunlight into electricity?", 0.6)
    b = draft("b", "How do solar panels convert sunlight into electricity ?", 0.9)
    c = draft("c", "What temperature should bread be baked at?", 0.5)
    d = draft("d", "how do solar panels convert sunlight into electricity?", 0.7)
    decisions = [dedup.offer(x) for x in (a, b, c, d)]
    assert [x.action for x in decisions] == ["kept", "replaced", "kept", "dropped"]
    assert decisions[1].other is a and decisions[3].other is b
    assert decisions[1].similarity >= 0.9
    assert dedup.kept == [b, c]
    assert (
        a.drop_reason == DUPLICATE and a.dropped_at == "dedup" and a.metadata["duplicate_of"] == "b"
    )
    assert d.drop_reason == DUPLICATE and d.metadata["duplicate_of"] == "b"
    stats = dedup.stats
    assert (stats.items_in, stats.items_out, stats.dropped[DUPLICATE]) == (4, 2, 2)


def test_threshold_is_inclusive_and_checked_against_numpy() -> None:
    embedder = HashEmbedder(64)
    texts = ["alpha beta gamma", "alpha beta delta"]
    vectors = embedder.embed_array(texts).astype(np.float64)
    cosine = float(
        vectors[0] @ vectors[1] / np.linalg.norm(vectors[0]) / np.linalg.norm(vectors[1])
    )
    at = Deduplicator(embedder, threshold=cosine - 1e-9)
    at.offer(draft("1", texts[0], 0.5))
    decision = at.offer(draft("2", texts[1], 0.4))
    assert decision.action == "dropped" and decision.similarity == pytest.approx(cosine, abs=1e-6)
    above = Deduplicator(embedder, threshold=min(1.0, cosine + 1e-3))
    above.offer(draft("1", texts[0], 0.5))
    assert above.offer(draft("2", texts[1], 0.4)).action == "kept"


def test_ties_keep_the_first_and_context_quality_breaks_ties() -> None:
    dedup = Deduplicator(None, threshold=0.9)
    first = draft("1", "q", 0.5, context_quality=0.6)
    tie = draft("2", "q", 0.5, context_quality=0.6)
    better_context = draft("3", "q", 0.5, context_quality=0.9)
    assert dedup.offer(first, embedding=[1.0, 0.0]).action == "kept"
    assert dedup.offer(tie, embedding=[2.0, 0.0]).action == "dropped"
    assert dedup.offer(better_context, embedding=[1.0, 0.01]).action == "replaced"
    assert dedup.kept == [better_context]


def test_offer_many_embeds_once() -> None:
    embedder = HashEmbedder(128)
    dedup = Deduplicator(embedder, threshold=0.95)
    items = [
        draft(str(i), text, 0.5)
        for i, text in enumerate(["one fish", "two fish", "one fish", "red fish"])
    ]
    decisions = dedup.offer_many(items)
    assert [d.action for d in decisions] == ["kept", "kept", "dropped", "kept"]
    assert embedder.batches_embedded == 1


def test_async_offer_many_matches_sync() -> None:
    texts = ["one fish", "two fish", "one fish", "red fish"]
    sync = Deduplicator(HashEmbedder(128), threshold=0.95)
    expected = [
        d.action for d in sync.offer_many([draft(str(i), t, 0.5) for i, t in enumerate(texts)])
    ]
    dedup = Deduplicator(HashEmbedder(128), threshold=0.95)
    decisions = asyncio.run(dedup.aoffer_many([draft(str(i), t, 0.5) for i, t in enumerate(texts)]))
    assert [d.action for d in decisions] == expected == ["kept", "kept", "dropped", "kept"]


def test_bad_threshold_and_missing_embedder() -> None:
    with pytest.raises(ConfigError):
        Deduplicator(None, threshold=1.5)
    with pytest.raises(ConfigError):
        Deduplicator(None).offer(draft("1", "q", 0.5))


def test_a_similarity_exactly_at_the_threshold_is_a_duplicate() -> None:
    # [3, 4] / 5 . [1, 0] is exactly 0.6 in floating point
    at = Deduplicator(None, threshold=0.6)
    at.offer(draft("1", "first", 0.5), embedding=[5.0, 0.0])
    decision = at.offer(draft("2", "second", 0.4), embedding=[3.0, 4.0])
    assert decision.action == "dropped" and decision.similarity == 0.6
    above = Deduplicator(None, threshold=0.6000001)
    above.offer(draft("1", "first", 0.5), embedding=[5.0, 0.0])
    assert above.offer(draft("2", "second", 0.4), embedding=[3.0, 4.0]).action == "kept"
