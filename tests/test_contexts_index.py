"""The run's in-memory chunk index: exact cosine against numpy, scopes, ties, and a real Chroma."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from synth.contexts.config import ContextConstructionConfig
from synth.contexts.group import group_contexts, prefetch_neighbours
from synth.contexts.index import ChunkIndex
from synth.contexts.select import SeedSelector
from synth.data import Chunk
from synth.errors import ConfigError, StoreError
from synth.store import ChunkStore, HashEmbedder
from tests.test_contexts_group import corpus


def chunk(source: str, index: int) -> Chunk:
    return Chunk(
        id=f"{source}#{index}",
        document_id=source,
        source=source,
        index=index,
        text=f"text {source} {index}",
        token_count=3,
    )


def brute_force(
    chunks: list[Chunk], vectors: np.ndarray, query: np.ndarray, n: int, source: str | None
) -> list[tuple[str, float]]:
    """Every chunk's cosine with the query, one at a time, sorted by hand."""
    rows = []
    for c, v in zip(chunks, vectors, strict=True):
        if source is not None and c.source != source:
            continue
        sim = float(np.dot(v, query) / (np.linalg.norm(v) * np.linalg.norm(query)))
        rows.append((c.id, sim))
    return sorted(rows, key=lambda r: (-r[1], r[0]))[:n]


def test_answers_are_the_exact_cosine_top_n_in_each_scope() -> None:
    rng = np.random.default_rng(3)
    chunks = [chunk(s, i) for s in ("a.md", "b.md", "c.md") for i in range(40)]
    vectors = rng.normal(size=(len(chunks), 16)) * rng.uniform(0.1, 9, size=(len(chunks), 1))
    index = ChunkIndex(chunks, vectors)
    queries = rng.normal(size=(5, 16))
    for source in (None, "a.md", "c.md"):
        for n in (1, 4, 39, 200):
            got = index.query(queries, n, source=source)
            for q, row in zip(queries, got, strict=True):
                want = brute_force(chunks, vectors, q, n, source)
                assert [cid for cid, _ in row] == [cid for cid, _ in want]
                assert np.allclose([s for _, s in row], [s for _, s in want], atol=1e-6)
    hits = index.query_chunks(queries[:1], 3, source="b.md")[0]
    assert [c.source for c, _, _ in hits] == ["b.md"] * 3
    for c, _, vector in hits:
        assert np.allclose(
            vector, vectors[chunks.index(c)] / np.linalg.norm(vectors[chunks.index(c)])
        )
    assert index.query(queries[0], 3, source="nowhere.md") == [[]]
    assert index.query(np.zeros((0, 16)), 3) == []
    assert len(index) == 120


def test_exclusions_ties_and_lookups() -> None:
    chunks = [chunk("a.md", i) for i in range(6)]
    same = np.tile([1.0, 0.0], (6, 1))  # all alike: ties go to the smaller id
    index = ChunkIndex(list(reversed(chunks)), same)
    assert [cid for cid, _ in index.query([1.0, 0.0], 3)[0]] == ["a.md#0", "a.md#1", "a.md#2"]
    excluded = index.query([[1.0, 0.0]], 3, exclude_ids=["a.md#0", "a.md#2", "gone"])[0]
    assert [cid for cid, _ in excluded] == ["a.md#1", "a.md#3", "a.md#4"]
    assert [c.id for c in index.get(["a.md#4", "a.md#1"])] == ["a.md#4", "a.md#1"]
    assert np.allclose(index.get_embeddings(["a.md#5"]), [[1.0, 0.0]])
    with pytest.raises(StoreError, match="not among the run's chunks"):
        index.get(["a.md#9"])
    zero = ChunkIndex(chunks[:2], np.zeros((2, 2)))  # a zero vector is similar to nothing
    assert [s for _, s in zero.query([1.0, 1.0], 2)[0]] == [0.0, 0.0]


def test_bad_input_is_refused() -> None:
    chunks = [chunk("a.md", i) for i in range(3)]
    with pytest.raises(ConfigError, match="one vector per chunk"):
        ChunkIndex(chunks, np.ones((2, 4)))
    with pytest.raises(ConfigError, match="same chunk id twice"):
        ChunkIndex([chunks[0], chunks[0]], np.ones((2, 4)))
    index = ChunkIndex(chunks, np.ones((3, 4)))
    with pytest.raises(ConfigError, match="n_results"):
        index.query([1, 1, 1, 1], 0)
    with pytest.raises(ConfigError, match="2-d"):
        index.query(np.ones((1, 1, 4)), 1)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> ChunkStore:
    path: Path = tmp_path_factory.mktemp("chroma")
    chunk_store = ChunkStore(HashEmbedder(256), path=path, collection="index_test")
    chunk_store.add(corpus())
    return chunk_store


@pytest.mark.parametrize("cross_file", [False, True])
def test_grouping_on_the_index_matches_grouping_on_chroma(
    store: ChunkStore, cross_file: bool
) -> None:
    """Built from a real Chroma's vectors, the index gives the same contexts as the store."""
    chunks = corpus()
    index = ChunkIndex.from_store(chunks + chunks[:3], store)  # a chunk given twice counts once
    assert len(index) == len(chunks)
    config = ContextConstructionConfig(
        max_context_length=4, context_similarity_threshold=0.3, allow_cross_file_contexts=cross_file
    )
    seeds = SeedSelector(chunks, config, random.Random(5), max_passes=1).take(12)
    on_store = group_contexts(seeds, store, config, used={s.id for s in seeds})
    on_index = group_contexts(seeds, index, config, used={s.id for s in seeds})
    ahead = prefetch_neighbours(seeds, index, config)
    read_ahead = group_contexts(seeds, index, config, used={s.id for s in seeds}, prefetched=ahead)
    assert any(len(c.chunk_ids) > 1 for c in on_store.contexts)
    for result in (on_index, read_ahead):
        assert [c.model_dump() for c in result.contexts] == [
            c.model_dump() for c in on_store.contexts
        ]


def test_the_index_holds_only_the_run_s_chunks(store: ChunkStore) -> None:
    """Chunks other folders left in the store are never a run's neighbours, even across files."""
    chunks = corpus()
    mine = [c for c in chunks if c.source != "three.txt"]
    index = ChunkIndex.from_store(mine, store)
    config = ContextConstructionConfig(
        max_context_length=6, context_similarity_threshold=0.0, allow_cross_file_contexts=True
    )
    seeds = SeedSelector(mine, config, random.Random(1), max_passes=1).take(6)
    result = group_contexts(seeds, index, config, used={s.id for s in seeds})
    on_store = group_contexts(seeds, store, config, used={s.id for s in seeds})
    assert {f for c in result.contexts for f in c.source_files} <= {"one.txt", "two.txt"}
    assert "three.txt" in {f for c in on_store.contexts for f in c.source_files}


def test_the_index_keeps_float32_vectors_and_names_what_it_lacks() -> None:
    chunks = [chunk("a.md", i) for i in range(3)]
    index = ChunkIndex(chunks, np.ones((3, 4), dtype=np.float64))
    # float32, as a store keeps them: half the memory of the float64 given
    assert index.get_embeddings(["a.md#0"]).dtype == np.float32
    with pytest.raises(StoreError) as one:
        index.get(["a.md#0", "gone"])
    assert str(one.value) == "1 chunk id(s) not among the run's chunks: 'gone'"
    many = [f"x{i}" for i in range(7)]
    with pytest.raises(StoreError) as seven:
        index.get_embeddings(many)
    assert str(seven.value) == (
        "7 chunk id(s) not among the run's chunks: 'x0', 'x1', 'x2', 'x3', 'x4'"
    )
    with pytest.raises(ConfigError, match="^a chunk index got the same chunk id twice$"):
        ChunkIndex([chunks[0], chunks[0]], np.ones((2, 4)))


def test_chunks_of_equal_similarity_come_back_in_id_order_whatever_order_they_were_given() -> None:
    # directions whose products with the queries are exact in float32 (two terms at most), so
    # the chunks of one direction are tied to the last bit, and those of two differ
    directions = np.array(
        [[1, 0, 0], [0, 1, 0], [0.6, 0.8, 0], [0, 0.6, 0.8], [0, 0, 1]], dtype=np.float32
    )
    rng = random.Random(4)
    chunks = [
        Chunk(
            id=f"{rng.getrandbits(64):016x}",
            document_id="d",
            source=f"{'ab'[i % 2]}.md",
            index=i,
            text="t",
            token_count=1,
        )
        for i in range(40)
    ]
    vectors = directions[[i % 5 for i in range(40)]]
    queries = np.array([[0.6, 0.8, 0], [1, 0, 0], [0, 0.6, 0.8]], dtype=np.float32)
    answers = []
    for order in range(6):
        rows = list(range(40))
        random.Random(order).shuffle(rows)
        index = ChunkIndex([chunks[r] for r in rows], vectors[rows])
        answers.append(
            [
                index.query(queries, n, source=s)
                for n in (1, 3, 8, 9, 17, 40)
                for s in (None, "b.md")
            ]
        )
        for q, query in enumerate(queries):
            for n in (1, 3, 8, 9, 17, 40):
                got = [cid for cid, _ in index.query(query, n)[0]]
                want = brute_force(chunks, vectors.astype(np.float64), query, n, None)
                assert got == [cid for cid, _ in want], (order, q, n)
    assert all(answer == answers[0] for answer in answers)
