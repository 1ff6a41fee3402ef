"""Deduplication: cosine of input embeddings at or above the threshold, the better-scored one kept."""

from __future__ import annotations

import numpy as np
import pytest

from synth.data import Context
from synth.errors import ConfigError
from synth.generate.dedup import DUPLICATE, Deduplicator
from synth.generate.draft import Draft
from synth.stage.stats import StageStats
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


def test_no_embedder_is_refused_with_the_fix_and_a_given_vector_needs_none() -> None:
    message = "this Deduplicator has no embedder: pass embeddings to offer()"
    with pytest.raises(ConfigError) as info:
        Deduplicator(None).offer(draft("1", "q", 0.5))
    assert str(info.value) == message
    assert Deduplicator(None).offer(draft("1", "q", 0.5), embedding=[1.0]).action == "kept"


def test_the_threshold_defaults_to_0_9_and_takes_both_ends_of_0_to_1() -> None:
    dedup = Deduplicator(None)
    assert dedup.threshold == 0.9 and dedup.stats.stage == "dedup"
    assert Deduplicator(None, threshold=0.0).threshold == 0.0
    assert Deduplicator(None, threshold=1.0).threshold == 1.0
    with pytest.raises(ConfigError) as info:
        Deduplicator(None, threshold=-0.1)
    assert str(info.value) == "dedup threshold must be in [0, 1], got -0.1"
    stats = StageStats(stage="dedup")
    shared = Deduplicator(None, stats=stats)
    assert shared.stats is stats
    shared.offer(draft("1", "q", 0.5), embedding=[1.0, 0.0])
    assert stats.items_in == 1 and stats.items_out == 1


def test_a_duplicate_is_judged_against_its_nearest_kept_draft_and_the_decision_names_it() -> None:
    dedup = Deduplicator(None, threshold=0.9)
    a, b = draft("a", "qa", 0.5), draft("b", "qb", 0.5)
    assert dedup.offer(a, embedding=[1.0, 0.0]).draft is a
    assert dedup.offer(b, embedding=[0.0, 1.0]).draft is b
    near_b = draft("c", "qc", 0.4)
    decision = dedup.offer(near_b, embedding=[0.0, 2.0])
    assert (decision.action, decision.draft, decision.other) == ("dropped", near_b, b)
    better = draft("d", "qd", 0.9)
    decision = dedup.offer(better, embedding=[1.0, 1.0e-3])
    assert (decision.action, decision.draft, decision.other) == ("replaced", better, a)
    assert dedup.kept == [better, b]


def test_the_similarity_kept_on_a_dropped_draft_is_rounded_to_6_digits() -> None:
    dedup = Deduplicator(None, threshold=0.7)
    dedup.offer(draft("1", "first", 0.5), embedding=[1.0, 0.0])
    loser = draft("2", "second", 0.4)
    decision = dedup.offer(loser, embedding=[1.0, 1.0])
    assert decision.similarity == pytest.approx(0.7071067811865475, abs=1e-15)
    assert loser.metadata == {"duplicate_of": "1", "duplicate_similarity": 0.707107}


def test_a_float32_embedding_is_compared_at_the_thresholds_precision() -> None:
    # float32 would give 0.70710677, under a threshold of the float64 cosine
    cosine = float(np.array([1.0, 1.0]) / np.linalg.norm([1.0, 1.0]) @ np.array([1.0, 0.0]))
    dedup = Deduplicator(None, threshold=cosine)
    dedup.offer(draft("1", "first", 0.5), embedding=np.array([1.0, 0.0], dtype=np.float32))
    second = np.array([1.0, 1.0], dtype=np.float32)
    assert dedup.offer(draft("2", "second", 0.4), embedding=second).action == "dropped"


def test_an_embedding_given_as_one_row_is_read_as_a_vector() -> None:
    embedder = HashEmbedder(64)
    dedup = Deduplicator(None, threshold=0.99)
    row = embedder.embed_array(["alpha beta"])  # shape (1, 64)
    dedup.offer(draft("1", "alpha beta", 0.5), embedding=row)
    decision = dedup.offer(draft("2", "alpha beta", 0.4), embedding=row)
    assert decision.action == "dropped" and decision.similarity == pytest.approx(1.0)


def test_a_zero_embedding_has_a_similarity_of_0_not_nan() -> None:
    dedup = Deduplicator(None, threshold=0.0)
    assert dedup.offer(draft("1", "first", 0.5), embedding=[0.0, 0.0]).action == "kept"
    decision = dedup.offer(draft("2", "second", 0.4), embedding=[0.0, 0.0])
    assert decision.action == "dropped" and decision.similarity == 0.0


def test_an_unscored_draft_ranks_below_any_score_and_a_missing_context_below_any_context() -> None:
    dedup = Deduplicator(None, threshold=0.9)
    unscored = draft("1", "q", None)
    scored = draft("2", "q", 0.0)
    dedup.offer(unscored, embedding=[1.0, 0.0])
    assert dedup.offer(scored, embedding=[1.0, 0.0]).action == "replaced"
    assert dedup.offer(draft("3", "q", None), embedding=[1.0, 0.0]).action == "dropped"
    # the same input quality: a context of any quality beats one of none and no context at all
    bare = Deduplicator(None, threshold=0.9)
    no_context = Draft(id="a", input="q", input_quality=0.5)
    unrated = draft("b", "q", 0.5, context_quality=None)
    rated = draft("c", "q", 0.5, context_quality=0.0)
    bare.offer(no_context, embedding=[1.0, 0.0])
    assert bare.offer(unrated, embedding=[1.0, 0.0]).action == "dropped"
    assert bare.offer(rated, embedding=[1.0, 0.0]).action == "replaced"
    assert bare.offer(Draft(id="d", input="q", input_quality=0.5), embedding=[1.0, 0.0]).action == (
        "dropped"
    )
