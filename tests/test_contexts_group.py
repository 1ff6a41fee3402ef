"""Grouping against a real embedded Chroma with the hash embedder, checked against numpy."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from synth.contexts.config import ContextConstructionConfig
from synth.contexts.critic import ContextScore, ScoredSeed
from synth.contexts.group import TOO_FEW, group_contexts, prefetch_neighbours
from synth.contexts.index import ChunkIndex
from synth.contexts.select import SeedSelector
from synth.data import Chunk
from synth.stage.stats import StageStats
from synth.store import ChunkStore, HashEmbedder
from synth.store.embedder import Embedder

TOPICS = {
    "solar": "solar panels convert sunlight photovoltaic cells inverter rooftop energy output",
    "bread": "bread dough yeast flour knead oven crust bake proofing loaf",
    "chess": "chess opening gambit bishop knight pawn endgame checkmate rook",
}


def corpus() -> list[Chunk]:
    """Three files; each chunk is a topic sentence plus a few distinguishing words."""
    rng = random.Random(11)
    chunks = []
    for f, source in enumerate(["one.txt", "two.txt", "three.txt"]):
        for i in range(14):
            topic = list(TOPICS)[(i + f) % 3]
            extra = " ".join(
                rng.choice(["alpha", "beta", "gamma", "delta", "omega"]) for _ in range(3)
            )
            text = f"{TOPICS[topic]} {extra} note {i}"
            chunks.append(
                Chunk(
                    id=f"{source}#{i}",
                    document_id=source,
                    source=source,
                    index=i,
                    text=text,
                    token_count=20,
                )
            )
    return chunks


class CountingStore:
    """A real ChunkStore whose query calls are counted."""

    def __init__(self, store: ChunkStore) -> None:
        self.store = store
        self.queries: list[int] = []

    def query(self, embeddings, n_results, **kwargs):  # type: ignore[no-untyped-def]
        self.queries.append(len(embeddings))
        return self.store.query(embeddings, n_results, **kwargs)

    def query_chunks(self, embeddings, n_results, **kwargs):  # type: ignore[no-untyped-def]
        return self.store.query_chunks(embeddings, n_results, **kwargs)

    def get(self, ids):  # type: ignore[no-untyped-def]
        return self.store.get(ids)

    def get_embeddings(self, ids):  # type: ignore[no-untyped-def]
        return self.store.get_embeddings(ids)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> ChunkStore:
    path: Path = tmp_path_factory.mktemp("chroma")
    chunk_store = ChunkStore(HashEmbedder(256), path=path, collection="group_test")
    chunk_store.add(corpus())
    return chunk_store


def reference(seeds, chunks, config, used):  # type: ignore[no-untyped-def]
    """The same grouping, brute force with numpy: true cosine over every chunk, seeds in order."""
    vectors = HashEmbedder(256).embed_array([c.text for c in chunks]).astype(np.float64)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = {c.id: i for i, c in enumerate(chunks)}
    seed_ids = {s.id for s in seeds}
    out = []
    for seed in seeds:
        sims = vectors @ vectors[index[seed.id]]
        candidates = [
            (c.id, float(sims[index[c.id]]))
            for c in chunks
            if c.id not in used
            and c.id not in seed_ids
            and (config.allow_cross_file_contexts or c.source == seed.source)
            and sims[index[c.id]] >= config.context_similarity_threshold
        ]
        candidates.sort(key=lambda item: (-item[1], item[0]))
        taken = candidates[: config.max_context_length - 1]
        used.update(cid for cid, _ in taken)
        out.append([seed.id] + [cid for cid, _ in taken])
    return out


@pytest.mark.parametrize("cross_file", [False, True])
def test_grouping_matches_brute_force_cosine(store: ChunkStore, cross_file: bool) -> None:
    chunks = corpus()
    config = ContextConstructionConfig(
        max_context_length=4, context_similarity_threshold=0.3, allow_cross_file_contexts=cross_file
    )
    selector = SeedSelector(chunks, config, random.Random(5), max_passes=1)
    seeds = selector.take(8)
    used_before = set(selector.used)
    counting = CountingStore(store)
    stats = StageStats(stage="group")
    result = group_contexts(seeds, counting, config, used=selector.used, batch_size=64, stats=stats)
    expected = reference(seeds, chunks, config, set(used_before))
    assert [c.chunk_ids for c in result.contexts] == expected
    # the grouping really grouped: at least some contexts have neighbours
    assert any(len(c.chunk_ids) > 1 for c in result.contexts)
    for context in result.contexts:
        sims = context.metadata["similarities"]
        assert sims[0] == 1.0 and all(s >= 0.3 for s in sims[1:])
        if not cross_file:
            assert len(set(context.source_files)) == 1
    # the similarities recorded are the true cosines
    vectors = HashEmbedder(256).embed_array
    first = result.contexts[0]
    if len(first.texts) > 1:
        v = vectors(first.texts).astype(np.float64)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        assert first.metadata["similarities"][1] == pytest.approx(float(v[0] @ v[1]), abs=1e-5)
    # batched: one query per file (or one for all) in the first round, not one per seed
    scopes = 1 if cross_file else len({s.source for s in seeds})
    assert counting.queries[:scopes] and sum(counting.queries[:scopes]) == len(seeds)
    assert len(counting.queries) < len(seeds)
    assert stats.items_in == 8 and stats.items_out == 8


def test_no_chunk_in_two_contexts(store: ChunkStore) -> None:
    chunks = corpus()
    config = ContextConstructionConfig(max_context_length=5, context_similarity_threshold=0.2)
    selector = SeedSelector(chunks, config, random.Random(9), max_passes=1)
    seen: list[str] = []
    # several rounds, as a top-up would do, until the selector runs dry
    while seeds := selector.take(5):
        result = group_contexts(seeds, store, config, used=selector.used, batch_size=2)
        for context in result.contexts:
            seen.extend(context.chunk_ids)
    assert len(seen) == len(set(seen))
    assert set(seen) == {c.id for c in chunks}


def test_seed_below_min_context_length_is_dropped_and_released(store: ChunkStore) -> None:
    chunks = corpus()
    config = ContextConstructionConfig(
        max_context_length=3, min_context_length=3, context_similarity_threshold=0.99
    )
    selector = SeedSelector(chunks, config, random.Random(1), max_passes=1)
    seeds = selector.take(3)
    stats = StageStats(stage="group")
    result = group_contexts(seeds, store, config, used=selector.used, stats=stats)
    assert result.contexts == []
    assert result.dropped == [(s.id, TOO_FEW) for s in seeds]
    assert stats.dropped == {TOO_FEW: 3} and stats.items_in == 3
    assert selector.used == set()


def test_reuse_is_counted_when_allowed(store: ChunkStore) -> None:
    chunks = corpus()
    config = ContextConstructionConfig(max_context_length=3, context_similarity_threshold=0.2)
    seed = next(c for c in chunks if c.id == "one.txt#0")
    used = {c.id for c in chunks if c.source == "one.txt"}
    blocked = group_contexts([seed], store, config, used=set(used))
    assert blocked.contexts[0].chunk_ids == [seed.id] and blocked.shared_chunks == 0
    allowed = group_contexts([seed], store, config, used=set(used), allow_reuse=True)
    assert len(allowed.contexts[0].chunk_ids) == 3 and allowed.shared_chunks == 2
    assert allowed.contexts[0].metadata["shared_chunk_ids"] == allowed.contexts[0].chunk_ids[1:]


def test_context_carries_seed_quality(store: ChunkStore) -> None:
    chunks = corpus()
    score = ContextScore(prose=True, self_contained=3, informative=2, coherent=1)
    seeded = ScoredSeed(chunks[0], score, attempts=2)
    config = ContextConstructionConfig(max_context_length=1)
    result = group_contexts([seeded], store, config, used={chunks[0].id})
    context = result.contexts[0]
    assert context.quality == pytest.approx(2 / 3)
    assert (
        context.metadata["critic"]["informative"] == 2 and context.metadata["critic_attempts"] == 2
    )
    assert context.chunk_ids == [chunks[0].id] and context.source_files == ["one.txt"]


class ReadCountingStore(CountingStore):
    """Counts every read: queries, chunk reads and vector reads."""

    def __init__(self, store: ChunkStore) -> None:
        super().__init__(store)
        self.reads = 0

    def query(self, embeddings, n_results, **kwargs):  # type: ignore[no-untyped-def]
        self.reads += 1
        return super().query(embeddings, n_results, **kwargs)

    def query_chunks(self, embeddings, n_results, **kwargs):  # type: ignore[no-untyped-def]
        self.reads += 1
        return self.store.query_chunks(embeddings, n_results, **kwargs)

    def get(self, ids):  # type: ignore[no-untyped-def]
        self.reads += 1
        return self.store.get(ids)

    def get_embeddings(self, ids):  # type: ignore[no-untyped-def]
        self.reads += 1
        return self.store.get_embeddings(ids)


@pytest.mark.parametrize("cross_file", [False, True])
def test_reading_ahead_gives_the_same_contexts_with_fewer_reads(
    store: ChunkStore, cross_file: bool
) -> None:
    """The store read ahead for a batch of seeds (while the critic scores them) spares grouping
    its reads, and what it groups is the same as without it, for the accepted subset too."""
    chunks = corpus()
    config = ContextConstructionConfig(
        max_context_length=4, context_similarity_threshold=0.3, allow_cross_file_contexts=cross_file
    )
    seeds = SeedSelector(chunks, config, random.Random(5), max_passes=1).take(8)
    accepted = [s for i, s in enumerate(seeds) if i % 3 != 1]  # the critic turned some down

    plain = ReadCountingStore(store)
    without = group_contexts(accepted, plain, config, used={s.id for s in accepted})
    ahead = prefetch_neighbours(seeds, store, config)
    reading = ReadCountingStore(store)
    with_ahead = group_contexts(
        accepted, reading, config, used={s.id for s in accepted}, prefetched=ahead
    )

    assert [c.model_dump() for c in with_ahead.contexts] == [
        c.model_dump() for c in without.contexts
    ]
    assert any(len(c.chunk_ids) > 1 for c in with_ahead.contexts)
    # only a seed whose first candidates were claimed by earlier seeds asks the store again
    assert plain.reads >= 3 and reading.reads < plain.reads and reading.reads <= 1
    assert set(ahead.candidates) == {s.id for s in seeds}
    # the read-ahead itself: the seeds' vectors, then one query per file (one in all, across files)
    reads = ReadCountingStore(store)
    prefetch_neighbours(seeds, reads, config)
    assert reads.reads == 1 + (1 if cross_file else len({s.source for s in seeds}))


def test_reading_ahead_of_other_seeds_changes_nothing(store: ChunkStore) -> None:
    """Read-ahead data for other seeds, or with another fetch size, is not used wrongly."""
    chunks = corpus()
    config = ContextConstructionConfig(max_context_length=3, context_similarity_threshold=0.2)
    seeds = SeedSelector(chunks, config, random.Random(2), max_passes=1).take(6)
    first, second = seeds[:3], seeds[3:]
    ahead = prefetch_neighbours(first, store, config)
    plain = group_contexts(second, store, config, used={s.id for s in second})
    reading = ReadCountingStore(store)
    mixed = group_contexts(second, reading, config, used={s.id for s in second}, prefetched=ahead)
    assert [c.chunk_ids for c in mixed.contexts] == [c.chunk_ids for c in plain.contexts]
    assert reading.reads > 0  # nothing usable was read ahead for these seeds
    assert prefetch_neighbours([], store, config).candidates == {}
    single = ContextConstructionConfig(max_context_length=1)
    assert prefetch_neighbours(first, store, single).candidates == {}


class _FixedVectors(Embedder):
    """Each text's vector is looked up by its first word: cosines known exactly in float32."""

    name = "fixed"
    VECTORS = {
        "seed": [1.0, 0.0, 0.0, 0.0],
        "above": [0.6, 0.8, 0.0, 0.0],  # about 0.6 to the seed
        "at_a": [0.5, 0.5, 0.5, 0.5],  # exactly 0.5
        "at_b": [0.5, -0.5, 0.5, -0.5],  # exactly 0.5
        "below": [0.0, 0.0, 1.0, 0.0],  # 0
    }

    @property
    def dimension(self) -> int:
        return 4

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        return np.array([self.VECTORS[t.split()[0]] for t in texts])


def _boundary_chunks() -> list[Chunk]:
    return [
        Chunk(
            id=f"f.md#{i}",
            document_id="f.md",
            source="f.md",
            index=i,
            text=f"{word} passage",
            token_count=2,
        )
        for i, word in enumerate(_FixedVectors.VECTORS)
    ]


@pytest.mark.parametrize("where", ["chroma", "index"])
def test_a_neighbour_exactly_at_the_similarity_threshold_is_taken(
    tmp_path: Path, where: str
) -> None:
    """The docs say a neighbour's similarity must *reach* the threshold: at it is in, a hair
    under it is out (dedup and the critic have the same boundary tests)."""
    chunks = _boundary_chunks()
    chroma = ChunkStore(_FixedVectors(), path=tmp_path / "chroma", collection="boundary")
    chroma.add(chunks)
    store = chroma if where == "chroma" else ChunkIndex.from_store(chunks, chroma)
    seed = chunks[0]

    def grouped(threshold: float) -> list[str]:
        config = ContextConstructionConfig(
            max_context_length=5, context_similarity_threshold=threshold
        )
        result = group_contexts([seed], store, config, used={seed.id})
        return result.contexts[0].chunk_ids

    at = grouped(0.5)
    assert at == ["f.md#0", "f.md#1", "f.md#2", "f.md#3"]  # seed, above, at_a, at_b
    assert grouped(float(np.nextafter(0.5, 1.0))) == ["f.md#0", "f.md#1"]
    chroma.close()
