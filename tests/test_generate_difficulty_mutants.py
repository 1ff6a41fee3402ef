"""Difficulty at its edges: what mutation testing of generate/difficulty.py found unchecked.

Each test pins a behaviour a surviving mutant changed: an index without vectors (no dimensions, no
dense rank), integer vectors taken as floats, the embedder alone keeping a golden from being hard,
``unanswerable`` in an index of exactly 2 chunks, ties in ``nearest`` going to the chunk indexed
first among many tied chunks, no progress bar while indexing, and a zero vector's cosine of 0
whatever memory numpy hands out.
"""

from __future__ import annotations

import numpy as np
import pytest

from synth.generate.difficulty import HARD_RANK, DifficultyIndex

FIVE_IDS = ["refund", "shipping", "password", "volcano", "bread"]
FIVE_TEXTS = [
    "Customers may return unused merchandise within thirty days for a full refund.",
    "Parcels leave our warehouse every weekday and arrive in two to five days.",
    "To reset your password, open settings, choose security and follow the link.",
    "Volcanic eruptions eject molten lava, ash and toxic gases into the atmosphere.",
    "Knead the dough for ten minutes, let it rise, then bake at high heat.",
]


def test_an_index_without_vectors_has_no_dimensions_and_gives_no_dense_rank() -> None:
    index = DifficultyIndex(["a", "b"], ["tide tables", "moon phases"])
    assert index.dimensions is None
    # an input vector is ignored when the chunks have none
    assert index.measure("moon phases", ["b"], [1.0, 0.0]).dense_rank is None
    found = index.measure_many(["moon phases"], [["b"]], np.ones((1, 2)))
    assert [(d.bm25_rank, d.dense_rank) for d in found] == [(1, None)]
    assert index.nearest(["moon"], 2, vectors=np.ones((1, 2))) == [["b"]]


def test_integer_vectors_are_taken_as_floats() -> None:
    texts = ["tide tables", "moon phases", "lunar rocks"]
    index = DifficultyIndex(["a", "b", "c"], texts, np.array([[1, 0], [0, 1], [-1, 0]]))
    assert index.dimensions == 2
    assert index.measure("moon", ["a"], [3, 4]).dense_rank == 2  # cosine 0.6, below b's 0.8
    # the batch takes integer input vectors too, as measure's own conversion does not apply
    found = index.measure_many(["moon", "moon"], [["b"], ["c"]], np.array([[0, 3], [1, 0]]))
    assert [d.dense_rank for d in found] == [1, 3]
    assert index.nearest(["nothing alike"], 1, vectors=np.array([[0, 5]])) == [["b"]]


def test_the_embedder_finding_a_source_keeps_its_golden_from_being_hard() -> None:
    index = DifficultyIndex(FIVE_IDS, FIVE_TEXTS, np.eye(5))
    question = "How long do shoppers have to send back goods?"
    # no word of the refund chunk: BM25 ranks it last, the embedder first
    found = index.measure(question, ["refund"], np.eye(5)[0])
    assert (found.bm25_rank, found.dense_rank, found.overlap) == (5, 1, 0.0)
    assert found.bm25_rank is not None and found.bm25_rank > HARD_RANK
    assert found.label == "medium"
    # the same golden with the embedder missing it too (cosine -1, last) is hard
    missed = index.measure(question, ["refund"], -np.eye(5)[0])
    assert (missed.bm25_rank, missed.dense_rank, missed.label) == (5, 5, "hard")


def test_two_chunks_are_enough_for_a_golden_to_be_unanswerable() -> None:
    vectors = np.array([[1.0, 0.0], [0.0, 1.0]])
    index = DifficultyIndex(["a", "b"], ["moon landing", "lunar rocks"], vectors)
    found = index.measure("moon", ["b"], [1.0, 0.0])
    assert (found.bm25_rank, found.dense_rank, found.chunks) == (2, 2, 2)
    assert found.unanswerable
    assert not index.measure("moon", ["b"], [0.0, 1.0]).unanswerable


def test_nearest_gives_many_tied_chunks_in_the_order_they_were_indexed() -> None:
    # thirty chunks in three kinds, interleaved, so that an unstable sort reorders the ties
    ids = [f"c{i:02}" for i in range(30)]
    texts = ["pump", "pump filter valve", "solar panel"] * 10
    vectors = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]] * 10)
    index = DifficultyIndex(ids, texts, vectors)
    # BM25: the short pump chunks score higher than the long ones, and solar shares no word
    by_bm25 = [ids[i] for i in range(0, 30, 3)] + [ids[i] for i in range(1, 30, 3)]
    assert index.nearest(["pump"], 30) == [by_bm25]
    # cosine with (1, 0): 1, then 0, then -1, each run in index order
    by_cosine = [ids[i] for start in range(3) for i in range(start, 30, 3)]
    assert index.nearest(["nothing alike"], 30, vectors=np.array([[1.0, 0.0]])) == [by_cosine]


def test_building_an_index_shows_no_progress_bar(capfd: pytest.CaptureFixture[str]) -> None:
    index = DifficultyIndex(["a", "b"], ["tide tables", "moon phases"])
    assert index.measure("moon", ["b"]).bm25_rank == 1
    assert capfd.readouterr() == ("", "")


def test_a_zero_vector_has_cosine_zero_whatever_memory_numpy_reuses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # numpy hands freed blocks of the same size out again; this norm leaves a few filled with 7s
    # behind it, as another thread's arrays might, so a unit row left uninitialized shows
    real_norm = np.linalg.norm

    def norm_leaving_dirty_memory(array: np.ndarray, axis: int, keepdims: bool) -> np.ndarray:
        norms: np.ndarray = real_norm(array, axis=axis, keepdims=keepdims)
        dirty = [np.full(array.shape, 7.0) for _ in range(16)]
        del dirty
        return norms

    monkeypatch.setattr(np.linalg, "norm", norm_leaving_dirty_memory)
    vectors = np.array([[0.0, 0.0], [1.0, 0.0], [-1.0, 0.0]])
    index = DifficultyIndex(["a", "b", "c"], ["x", "y", "z"], vectors)
    assert index.measure("q", ["a"], [1.0, 0.0]).dense_rank == 2  # below b's 1, above c's -1
    assert index.measure("q", ["c"], [0.0, 0.0]).dense_rank == 1  # a zero input ties everything
