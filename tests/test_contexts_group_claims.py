"""Grouping's claims, asked-again queries, ties and store reads, on vectors whose cosines are exact."""

from __future__ import annotations

from typing import Any

import numpy as np

from synth.contexts.config import ContextConstructionConfig
from synth.contexts.context import make_context
from synth.contexts.critic import ScoredSeed
from synth.contexts.group import group_contexts, prefetch_neighbours
from synth.contexts.index import ChunkIndex
from synth.data import Chunk
from synth.stage.stats import StageStats

SAME = [1.0, 0.0, 0.0, 0.0]  # cosine 1 to the seed
HALF = [0.5, 0.5, 0.5, 0.5]  # exactly 0.5, in float32 too
HALF_B = [0.5, -0.5, 0.5, -0.5]  # exactly 0.5
BELOW = [0.0, 0.0, 1.0, 0.0]  # 0


def chunk(i: int, source: str = "f.md") -> Chunk:
    return Chunk(
        id=f"{source}#{i}",
        document_id=source,
        source=source,
        index=i,
        text=f"passage {i}",
        token_count=2,
    )


def index_of(*vectors: list[float]) -> tuple[list[Chunk], ChunkIndex]:
    chunks = [chunk(i) for i in range(len(vectors))]
    return chunks, ChunkIndex(chunks, np.array(vectors))


class Recording:
    """A ChunkIndex that records every read: queries with their size and exclusions."""

    def __init__(self, index: Any, *, reverse_rows: bool = False) -> None:
        self.index = index
        self.reverse_rows = reverse_rows
        self.queries: list[tuple[int, list[str] | None]] = []
        self.reads = 0

    def query(self, embeddings, n_results, *, source=None, exclude_ids=None):  # type: ignore[no-untyped-def]
        self.reads += 1
        self.queries.append((n_results, None if exclude_ids is None else list(exclude_ids)))
        rows = self.index.query(embeddings, n_results, source=source, exclude_ids=exclude_ids)
        return [row[::-1] for row in rows] if self.reverse_rows else rows

    def query_chunks(self, embeddings, n_results, *, source=None):  # type: ignore[no-untyped-def]
        self.reads += 1
        return self.index.query_chunks(embeddings, n_results, source=source)

    def get(self, ids):  # type: ignore[no-untyped-def]
        self.reads += 1
        return self.index.get(ids)

    def get_embeddings(self, ids):  # type: ignore[no-untyped-def]
        self.reads += 1
        return self.index.get_embeddings(ids)


def test_a_seed_whose_candidates_are_all_claimed_asks_again_without_them() -> None:
    """The first query asks for twice the neighbours wanted plus two; when every one of them was
    similar enough but claimed (the last exactly at the threshold), the seed asks again for twice
    as many, excluding the claimed chunks it met (not itself), and takes the next free one."""
    chunks, index = index_of(SAME, SAME, SAME, HALF, HALF_B, BELOW)
    store = Recording(index)
    config = ContextConstructionConfig(max_context_length=2, context_similarity_threshold=0.5)
    used = {"f.md#0", "f.md#1", "f.md#2", "f.md#3"}  # the seed and three claimed chunks
    result = group_contexts([chunks[0]], store, config, used=used)
    assert [c.chunk_ids for c in result.contexts] == [["f.md#0", "f.md#4"]]
    assert store.queries == [(4, None), (8, ["f.md#1", "f.md#2", "f.md#3"])]
    assert "f.md#4" in used


def test_a_seed_that_met_a_chunk_under_the_threshold_does_not_ask_again() -> None:
    chunks, index = index_of(SAME, SAME, SAME, HALF, HALF_B, BELOW)
    store = Recording(index)
    config = ContextConstructionConfig(max_context_length=2, context_similarity_threshold=0.55)
    used = {"f.md#0", "f.md#1", "f.md#2"}
    result = group_contexts([chunks[0]], store, config, used=used)
    assert [c.chunk_ids for c in result.contexts] == [["f.md#0"]]
    assert store.queries == [(4, None)]


def test_asking_again_never_takes_a_chunk_the_seed_already_holds_even_with_reuse() -> None:
    # the seed's own neighbour comes back in the second answer; with reuse allowed it is claimed
    # (by this seed), and must not be counted twice
    chunks, index = index_of(SAME, SAME, SAME, SAME, SAME, SAME, HALF, BELOW)
    seeds = chunks[:5]  # the seed and four other seeds fill the first answer with the free #5
    config = ContextConstructionConfig(max_context_length=3, context_similarity_threshold=0.5)
    result = group_contexts(
        seeds, Recording(index), config, used={s.id for s in seeds}, allow_reuse=True
    )
    assert result.contexts[0].chunk_ids == ["f.md#0", "f.md#5", "f.md#6"]


def test_equally_similar_neighbours_go_to_the_smaller_id_whatever_the_store_order() -> None:
    chunks, index = index_of(SAME, SAME, SAME, BELOW)
    store = Recording(index, reverse_rows=True)  # as an approximate store may list ties
    config = ContextConstructionConfig(max_context_length=2)
    result = group_contexts([chunks[0]], store, config, used={"f.md#0"})
    assert result.contexts[0].chunk_ids == ["f.md#0", "f.md#1"]


def test_a_context_of_two_gets_its_neighbour_read_ahead_or_not() -> None:
    chunks, index = index_of(SAME, HALF, BELOW)
    config = ContextConstructionConfig(max_context_length=2)
    ahead = prefetch_neighbours([chunks[0]], index, config)
    assert ahead.fetch == 4 and [cid for cid, _ in ahead.candidates["f.md#0"]][:2] == [
        "f.md#0",
        "f.md#1",
    ]
    for prefetched in (None, ahead):
        result = group_contexts([chunks[0]], index, config, used={"f.md#0"}, prefetched=prefetched)
        assert result.contexts[0].chunk_ids == ["f.md#0", "f.md#1"]


def test_what_was_read_ahead_is_not_read_again() -> None:
    chunks, index = index_of(SAME, HALF, BELOW)
    config = ContextConstructionConfig(max_context_length=3)
    ahead = prefetch_neighbours([chunks[0]], index, config)
    store = Recording(index)
    result = group_contexts([chunks[0]], store, config, used={"f.md#0"}, prefetched=ahead)
    assert result.contexts[0].chunk_ids == ["f.md#0", "f.md#1"]
    assert store.reads == 0


def test_contexts_of_one_chunk_read_nothing_from_the_store() -> None:
    chunks, index = index_of(SAME, SAME)
    store = Recording(index)
    config = ContextConstructionConfig(max_context_length=1)
    result = group_contexts(chunks, store, config, used={c.id for c in chunks})
    assert [c.chunk_ids for c in result.contexts] == [["f.md#0"], ["f.md#1"]]
    assert store.reads == 0


def test_stats_add_up_over_calls_and_note_neighbours_and_shared_chunks() -> None:
    chunks, index = index_of(SAME, SAME, SAME, BELOW)
    config = ContextConstructionConfig(max_context_length=3, context_similarity_threshold=0.0)
    stats = StageStats(stage="group")
    used = {"f.md#0"}
    group_contexts([chunks[0]], index, config, used=used, stats=stats)
    assert stats.notes == {"neighbours": 2} and used == {"f.md#0", "f.md#1", "f.md#2"}
    used.add("f.md#3")  # the next seed's two choices are in the first context already
    again = group_contexts([chunks[3]], index, config, used=used, allow_reuse=True, stats=stats)
    assert again.contexts[0].chunk_ids == ["f.md#3", "f.md#0", "f.md#1"]
    assert stats.items_in == 2 and stats.items_out == 2
    assert stats.notes == {"neighbours": 4, "shared_chunks": 2}


def test_a_seed_scored_without_a_critic_carries_no_verdict() -> None:
    chunks, index = index_of(SAME, BELOW)
    config = ContextConstructionConfig(max_context_length=1)
    result = group_contexts([ScoredSeed(chunks[0])], index, config, used={"f.md#0"})
    context = result.contexts[0]
    assert context.quality is None and "critic" not in context.metadata


class DictVectors:
    """A store answering vector reads as a mapping of id to vector, in its own order."""

    def __init__(self, index: ChunkIndex) -> None:
        self.index = index

    def query(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        return self.index.query(*args, **kwargs)

    def query_chunks(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        return self.index.query_chunks(*args, **kwargs)

    def get(self, ids):  # type: ignore[no-untyped-def]
        return self.index.get(ids)

    def get_embeddings(self, ids):  # type: ignore[no-untyped-def]
        backwards = list(ids)[::-1]
        vectors = self.index.get_embeddings(backwards)
        return {i: list(v) for i, v in zip(backwards, vectors, strict=True)}


def test_vectors_read_as_a_mapping_are_matched_by_id() -> None:
    chunks, index = index_of(SAME, HALF, BELOW, [0.0, 1.0, 0.0, 0.0])
    config = ContextConstructionConfig(max_context_length=2, context_similarity_threshold=0.0)
    seeds = [chunks[0], chunks[2]]
    plain = group_contexts(seeds, index, config, used={s.id for s in seeds})
    mapped = group_contexts(seeds, DictVectors(index), config, used={s.id for s in seeds})
    assert [c.model_dump() for c in mapped.contexts] == [c.model_dump() for c in plain.contexts]
    assert [c.chunk_ids for c in plain.contexts] == [["f.md#0", "f.md#1"], ["f.md#2", "f.md#3"]]


def test_context_ids_and_metadata_are_pinned() -> None:
    """A context's id is kept in run directories and datasets: it must not change between
    versions, and it depends on the chunk ids and their order."""
    ids = ["a.md#0", "b.md#3"]
    context = make_context([chunk(0, "a.md"), chunk(3, "b.md")], similarities=[1.0, 0.12345678])
    assert context.id == "ctx_9be2396ad33ff29c"
    assert make_context([chunk(3, "b.md"), chunk(0, "a.md")]).id != context.id
    assert context.chunk_ids == ids
    assert context.metadata == {"seed_chunk_id": "a.md#0", "similarities": [1.0, 0.123457]}
    assert make_context([]).metadata == {"seed_chunk_id": None}


def test_a_context_carries_each_chunks_page_breaks_when_any_has_pages():
    paged = Chunk(
        id="m.pdf#0",
        document_id="m",
        source="m.pdf",
        index=0,
        text="x" * 50,
        token_count=5,
        page_start=3,
        page_end=4,
        metadata={"pages": [[3, 0], [4, 20]]},
    )
    old = paged.model_copy(update={"id": "m.pdf#1", "page_end": 3, "metadata": {}})
    spread = paged.model_copy(update={"id": "m.pdf#2", "metadata": {}})  # no breaks: unknown
    context = make_context([paged, old, spread])
    assert context.metadata["pages"] == [[[3, 0], [4, 20]], [[3, 0]], None]
