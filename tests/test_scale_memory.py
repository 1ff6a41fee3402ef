"""A run over a large store holds its chunks' vectors once: no copy per reader, no transient copies.

Measured by what numpy and Python allocate (``tracemalloc``) and by shared memory, never by time.
"""

from __future__ import annotations

import random
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from synth.contexts.index import ChunkIndex
from synth.data import Chunk
from synth.generate._bm25 import BM25
from synth.generate.difficulty import DifficultyIndex
from synth.store import ChunkStore
from synth.store.hash_embedder import HashEmbedder


def make_chunks(n: int) -> list[Chunk]:
    rng = random.Random(3)
    return [
        Chunk(
            id=f"c{i:05d}",
            document_id=f"d{i // 50}",
            source=f"f{i // 50}.txt",
            index=i % 50,
            text=" ".join(f"word{rng.randrange(400)}" for _ in range(12)),
            token_count=12,
        )
        for i in range(n)
    ]


def held_allocated(function: object) -> tuple[object, int]:
    """What ``function()`` returns and the memory allocated while it ran and still held."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        result = function()  # type: ignore[operator]
        return result, tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()


def peak_allocated(function: object) -> tuple[object, int]:
    """What ``function()`` returns and the most memory allocated at once while it ran."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        result = function()  # type: ignore[operator]
        return result, tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> ChunkStore:
    path: Path = tmp_path_factory.mktemp("store")
    chunk_store = ChunkStore(HashEmbedder(256), path=path, collection="memory_test")
    chunk_store.add(make_chunks(3000))
    return chunk_store


def test_reading_every_vector_from_the_store_holds_about_one_copy(
    store: ChunkStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = [chunk.id for chunk in make_chunks(3000)]
    monkeypatch.setattr(store, "_max_batch", 100)  # thirty reads, as a large store takes
    vectors, peak = peak_allocated(lambda: store.get_embeddings(ids))
    assert isinstance(vectors, np.ndarray) and vectors.shape == (3000, 256)
    # the float32 matrix, and one read's answer beside it (Chroma answers in float64, from
    # lists); every read's answer kept until the end, then a list of rows stacked, were three
    # times the matrix
    assert peak < 2.2 * vectors.nbytes


def test_the_store_gives_vectors_in_the_order_asked_with_repeats(store: ChunkStore) -> None:
    every = store.get_embeddings([chunk.id for chunk in make_chunks(3000)])
    asked = ["c00007", "c02999", "c00007", "c00000"]
    assert np.array_equal(store.get_embeddings(asked), every[[7, 2999, 7, 0]])


def test_the_index_keeps_the_vectors_the_store_read_and_lends_them_unchanged(
    store: ChunkStore,
) -> None:
    chunks = make_chunks(3000)
    read: list[np.ndarray] = []

    class Spy:
        def get_embeddings(self, ids: list[str]) -> np.ndarray:
            read.append(store.get_embeddings(ids))
            return read[-1]

    index = ChunkIndex.from_store(chunks, Spy())
    every = index.get_embeddings([chunk.id for chunk in chunks])
    assert np.shares_memory(every, read[0])  # neither scaled into a copy nor copied when lent
    assert not every.flags.writeable
    norms = np.linalg.norm(every, axis=1)
    assert np.allclose(norms, 1.0, atol=1e-6)
    some = index.get_embeddings(["c00002", "c00001"])
    assert not np.shares_memory(some, read[0]) and np.array_equal(some, every[[2, 1]])


def test_an_index_given_vectors_not_of_unit_length_scales_a_copy() -> None:
    chunks = make_chunks(3)
    given = np.array([[3.0, 4.0], [0.0, 0.0], [1.0, 0.0]], dtype=np.float32)
    index = ChunkIndex(chunks, given)
    assert np.array_equal(given[0], [3.0, 4.0])  # the caller's array is left as it was
    assert np.allclose(index.get_embeddings(["c00000"]), [[0.6, 0.8]])


def test_the_difficulty_index_compares_with_the_unit_vectors_it_was_lent() -> None:
    chunks = make_chunks(500)
    vectors = np.asarray(HashEmbedder(64).embed([c.text for c in chunks]), dtype=np.float32)
    index, peak = peak_allocated(
        lambda: DifficultyIndex([c.id for c in chunks], [c.text for c in chunks], vectors)
    )
    assert isinstance(index, DifficultyIndex) and index.dimensions == 64
    # no copy; a float64 copy, a copy of its rows and a scaled copy of those were six times the
    # lent float32 matrix
    assert peak < vectors.nbytes / 2 + 600_000  # the BM25 postings of 500 short chunks
    found = index.measure("word1 word2", [chunks[7].id], vectors[7])
    assert found.dense_rank == 1  # its own chunk's vector is the nearest


def test_bm25_postings_are_built_without_a_python_object_per_posting() -> None:
    rng = random.Random(0)
    documents = [[f"w{rng.randrange(3000)}" for _ in range(60)] for _ in range(3000)]
    index, peak = peak_allocated(lambda: BM25(iter(documents)))
    assert isinstance(index, BM25)
    # flat arrays, one document's counts at a time: under 30 bytes a posting at the peak; a
    # Counter per document and a list of rows and floats per term came to 87
    assert peak < 40 * index.postings


def long_chunks(n: int) -> list[Chunk]:
    """Chunks named as the ingest names them: 64-character ids, a document id per file."""
    return [
        chunk.model_copy(
            update={
                "id": f"{i:064x}",
                "document_id": f"{i // 50:064x}",
                "source": f"/data/corpus/folder/f{i // 50}.txt",
            }
        )
        for i, chunk in enumerate(make_chunks(n))
    ]


@pytest.fixture(scope="module")
def long_store(tmp_path_factory: pytest.TempPathFactory) -> ChunkStore:
    path: Path = tmp_path_factory.mktemp("long_store")
    chunk_store = ChunkStore(HashEmbedder(384), path=path, collection="long_ids")
    chunk_store.add(long_chunks(3000))
    return chunk_store


def test_reading_every_vector_takes_reads_small_enough_to_sit_beside_the_matrix(
    long_store: ChunkStore,
) -> None:
    ids = [chunk.id for chunk in long_chunks(3000)]
    vectors, peak = peak_allocated(lambda: long_store.get_embeddings(ids))
    assert isinstance(vectors, np.ndarray) and vectors.shape == (3000, 384)
    assert np.array_equal(vectors, long_store.get_embeddings(ids[::-1])[::-1])
    # Chroma answers a read with a list of Python floats per vector (about 15 KB each at 384
    # dimensions): reads of its largest batch (5,461 ids) took every vector here at once,
    # ten times the float32 matrix, and at 200,000 chunks 350 MB of resident memory a read
    assert peak < 4.5 * vectors.nbytes


def test_chunks_read_back_are_the_chunks_stored_and_share_what_they_can(
    long_store: ChunkStore,
) -> None:
    stored = sorted(long_chunks(3000), key=lambda c: (c.source, c.index))
    read, held = held_allocated(lambda: long_store.chunks())
    assert isinstance(read, list)
    assert [c.model_dump() for c in read] == [c.model_dump() for c in stored]
    assert read[0].model_dump(exclude_unset=True) == stored[0].model_dump()
    read[0].text = "changed"  # setting a field leaves the others' fields as they were
    assert read[0].model_fields_set == read[1].model_fields_set == set(Chunk.model_fields)
    # the fields each chunk was given, one set for all (728 bytes a chunk when each had its
    # own), and one string per file of its path and of its document's id (185 bytes a chunk
    # when each had its own): what a chunk of 12 words holds besides its text and its id, read
    # back, is about 480 bytes (its dict, its metadata dict, the object)
    texts = sum(len(c.text) + len(c.id) + 2 * 49 for c in stored)
    assert (held - texts) / len(stored) < 560


def test_an_index_of_long_ids_holds_a_few_bytes_a_chunk_besides_its_vectors_and_chunks() -> None:
    chunks = long_chunks(3000)
    vectors = np.asarray(HashEmbedder(32).embed([c.text for c in chunks]), dtype=np.float32)
    ChunkIndex(chunks, vectors)  # once for the imports and caches it makes
    index, peak = peak_allocated(lambda: ChunkIndex(chunks, vectors.copy()))
    assert isinstance(index, ChunkIndex)
    # a dict from id to row (about 100 bytes a chunk at its largest); an array of the ids
    # themselves was 256 bytes a chunk more
    assert (peak - vectors.nbytes) / len(chunks) < 200
    # ties still go to the smaller id: every vector alike, the ids in reverse of their rows
    alike = np.tile(np.asarray([1.0, 0.0], dtype=np.float32), (3000, 1))
    backwards = [c.model_copy(update={"id": f"{2999 - i:064x}"}) for i, c in enumerate(chunks)]
    hits = ChunkIndex(backwards, alike).query([[1.0, 0.0]], 3)[0]
    assert [chunk_id for chunk_id, _ in hits] == [f"{i:064x}" for i in range(3)]


def test_a_journal_holds_where_its_records_are_not_the_records(tmp_path: Path) -> None:
    from synth._journal import Journal

    step = {"drafts": [{"input": "q" * 200, "history": ["inputs", "filter"] * 20}] * 4}
    vector = {"vectors": [[0.125] * 384]}
    with Journal(tmp_path / "steps.jsonl") as journal:

        def write() -> None:
            for i in range(300):
                journal.append(f"c{i}", step)
                journal.append(f"v{i}", vector)

        _, held = held_allocated(write)
        # a run's journals held every record they wrote: steps and vectors, 40 KB a golden
        assert held < 300 * 2 * 200
        assert journal.get("c7") == {"key": "c7", **step} and len(journal) == 600
        assert journal.get("v299") == {"key": "v299", **vector} and journal.get("c300") is None
        journal.append("c7", vector)  # the last record of a key wins
        assert journal.get("c7") == {"key": "c7", **vector}
    reopened = Journal(tmp_path / "steps.jsonl")
    reopened.close()
    assert reopened.records["c7"] == {"key": "c7", **vector} and len(reopened.records) == 600


def test_setting_up_the_indexes_measures_row_lengths_without_a_copy_of_the_matrix() -> None:
    chunks = make_chunks(20_000)
    scale = np.arange(1, 20_001, dtype=np.float32)[:, np.newaxis]  # rows not of unit length

    class Store:
        def get_embeddings(self, ids: list[str]) -> np.ndarray:
            matrix = np.random.default_rng(0).standard_normal((len(ids), 512), dtype=np.float32)
            matrix *= scale
            return matrix

    def build() -> tuple[ChunkIndex, DifficultyIndex]:
        index = ChunkIndex.from_store(chunks, Store())  # scaled in place, then checked
        every = index.get_embeddings([c.id for c in chunks])
        return index, DifficultyIndex([c.id for c in chunks], [""] * len(chunks), every)

    ChunkIndex(chunks[:10], np.ones((10, 4), dtype=np.float32))  # imports and caches first
    (index, _), peak = peak_allocated(build)  # type: ignore[misc]
    matrix = 20_000 * 512 * 4
    # the matrix, one block of squared rows (4 MB), the rows' lengths and both indexes' maps of
    # the ids (about 5 MB); numpy's norm of the whole matrix squared all of it at once
    assert peak - matrix < 0.5 * matrix
    every = index.get_embeddings([c.id for c in chunks])
    assert np.allclose(np.linalg.norm(every, axis=1), 1.0, atol=1e-6)


def test_row_lengths_measured_in_blocks_are_numpys_to_the_last_bit() -> None:
    from synth.store.embedder import row_norms

    rng = np.random.default_rng(1)
    for dtype in (np.float32, np.float64):
        matrix = rng.standard_normal((9_000, 300)).astype(dtype)  # several blocks of 4 MB
        assert np.array_equal(row_norms(matrix), np.linalg.norm(matrix, axis=1))
        assert np.array_equal(
            row_norms(matrix, keepdims=True), np.linalg.norm(matrix, axis=1, keepdims=True)
        )
        assert row_norms(matrix).dtype == np.linalg.norm(matrix, axis=1).dtype
