"""A run over a large store ranks each golden among a pool of its chunks, not all of them: the same
ranks as over the pool and the golden's own sources, a measurement whose cost follows the pool,
and a search (distracting and out-of-scope questions) that still looks at every chunk.

Measured by what numpy and Python allocate (``tracemalloc``), never by time.
"""

from __future__ import annotations

import math
import random
import tracemalloc

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from synth._ids import text_hash
from synth._words import content_words
from synth.contexts.feed import Corpus
from synth.data import Context
from synth.generate._bm25 import BM25, K1, B
from synth.generate.difficulty import DifficultyIndex
from synth.generate.draft import Draft
from synth.llm.base import run_sync
from synth.run.difficulty import POOL, DifficultyMeter

WORDS = [f"w{i}" for i in range(14)]
docs_st = st.lists(st.lists(st.sampled_from(WORDS[:12]), max_size=20), min_size=1, max_size=25)
query_st = st.lists(st.sampled_from(WORDS), max_size=6, unique=True)


@settings(max_examples=200, deadline=None)
@given(docs=docs_st, query=query_st)
def test_a_document_the_index_holds_scores_alone_as_the_index_scores_it(
    docs: list[list[str]], query: list[str]
) -> None:
    index = BM25(docs)
    scores = index.scores(query)
    assert [index.score(query, doc) for doc in docs] == list(scores)


def pool_of(ids: list[str], size: int) -> set[str]:
    """The pool a DifficultyIndex draws: the ``size`` ids whose hashes are lowest."""
    return set(sorted(ids, key=lambda i: text_hash(i, 16))[:size])


def reference_score(pool_docs: list[list[str]], query: list[str], doc: list[str]) -> float:
    """Lucene BM25 of ``doc`` for ``query`` in float64, with the pool's statistics."""
    average = sum(len(d) for d in pool_docs) / len(pool_docs)
    score = 0.0
    for word in dict.fromkeys(query):
        df = sum(word in d for d in pool_docs)
        idf = math.log(1 + (len(pool_docs) - df + 0.5) / (df + 0.5))
        tf = doc.count(word)
        if tf and average:
            score += idf * tf / (tf + K1 * (1 - B + B * len(doc) / average))
    return score


texts_st = st.lists(
    st.lists(st.sampled_from(WORDS[:12]), min_size=1, max_size=8).map(" ".join),
    min_size=2,
    max_size=14,
)


@settings(max_examples=200, deadline=None)
@given(texts=texts_st, query=st.lists(st.sampled_from(WORDS), max_size=5), data=st.data())
def test_a_pooled_index_ranks_among_the_pool_and_the_goldens_own_sources(
    texts: list[str], query: list[str], data: st.DataObject
) -> None:
    ids = [f"c{i}" for i in range(len(texts))]
    size = data.draw(st.integers(1, len(ids) - 1))
    sources = sorted(data.draw(st.sets(st.sampled_from(ids), min_size=1, max_size=3)))
    rng = np.random.default_rng(data.draw(st.integers(0, 1000)))
    vectors = rng.integers(-3, 4, (len(ids), 3)).astype(np.float32)
    query_vector = rng.integers(-3, 4, 3)
    question = " ".join(query)
    found = DifficultyIndex(ids, texts, vectors, pool=size).measure(question, sources, query_vector)

    pool = pool_of(ids, size)
    outside = [s for s in sources if s not in pool]
    assert found.chunks == size + len(outside)
    # the dense rank: the same as in an index of the pool and the outside sources alone
    kept = [i for i in ids if i in pool or i in outside]
    rows = [ids.index(i) for i in kept]
    alone = DifficultyIndex(kept, [texts[r] for r in rows], vectors[rows])
    assert found.dense_rank == alone.measure(question, sources, query_vector).dense_rank
    # the BM25 rank: against the pool's scores, each source weighed by the pool's statistics
    words = {i: content_words(texts[ids.index(i)]) for i in ids}
    pool_docs = [words[i] for i in ids if i in pool]
    terms = content_words(question)
    best = max(reference_score(pool_docs, terms, words[s]) for s in sources)
    scores = [reference_score(pool_docs, terms, words[i]) for i in ids if i in pool]
    if best == 0:
        assert found.bm25_rank == found.chunks
        return
    tol = 1e-5 * best  # float32 inside the index
    assert 1 + sum(s > best + tol for s in scores) <= found.bm25_rank
    assert found.bm25_rank <= 1 + sum(s > best - tol for s in scores)


def test_a_pool_as_large_as_the_chunks_changes_nothing() -> None:
    rng = random.Random(1)
    texts = [" ".join(rng.choice(WORDS) for _ in range(6)) for _ in range(30)]
    ids = [f"c{i}" for i in range(30)]
    vectors = np.random.default_rng(1).standard_normal((30, 4)).astype(np.float32)
    whole, pooled = (
        DifficultyIndex(ids, texts, vectors),
        DifficultyIndex(ids, texts, vectors, pool=30),
    )
    questions = [" ".join(rng.choice(WORDS) for _ in range(4)) for _ in range(20)]
    sources = [[rng.choice(ids)] for _ in questions]
    query_vectors = np.random.default_rng(2).standard_normal((20, 4))
    assert pooled.pool == len(pooled) == 30
    assert pooled.measure_many(questions, sources, query_vectors) == whole.measure_many(
        questions, sources, query_vectors
    )


def test_the_pool_is_the_same_whatever_the_order_of_the_chunks() -> None:
    ids = [f"chunk-{i}" for i in range(40)]
    texts = [f"w{i % 12} w{(i * 7) % 12} w{(i * 5) % 13}" for i in range(40)]
    forward = DifficultyIndex(ids, texts, pool=9)
    backward = DifficultyIndex(ids[::-1], texts[::-1], pool=9)
    for i in range(0, 40, 3):
        assert forward.measure("w1 w7 w5", [ids[i]]) == backward.measure("w1 w7 w5", [ids[i]])


def make_index(chunks: int, pool: int) -> tuple[DifficultyIndex, list[str]]:
    rng = np.random.default_rng(0)
    ids = [f"c{i:06d}" for i in range(chunks)]
    texts = [f"w{i % 97} w{i % 89} w{i % 83}" for i in range(chunks)]
    vectors = rng.standard_normal((chunks, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return DifficultyIndex(ids, texts, vectors, pool=pool), ids


def measuring_peak(index: DifficultyIndex, ids: list[str]) -> int:
    """The most memory measuring two goldens allocated at once."""
    vectors = np.ones((2, 16))
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        index.measure_many(["w1 w2 w3", "w4 w5"], [[ids[5]], [ids[-1]]], vectors)
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_a_measurement_in_a_pooled_index_costs_what_its_pool_does() -> None:
    small, small_ids = make_index(1_000, 500)
    large, large_ids = make_index(40_000, 500)
    assert small.pool == large.pool == 500
    # scores of every chunk for two inputs would be 2 x 40,000 x 8 bytes, twice over
    assert measuring_peak(large, large_ids) < measuring_peak(small, small_ids) + 50_000


def chunk_corpus() -> Corpus:
    ids = [f"c{i}" for i in range(6)]
    texts = ["tide tables", "moon phases", "tide pools", "solar wind", "moon dust", "tide gauge"]
    return Corpus(chunk_ids=ids, texts=texts, vectors=lambda: np.eye(6).tolist())


def test_the_meter_ranks_among_its_pool_and_searches_every_chunk() -> None:
    corpus = chunk_corpus()
    assert DifficultyMeter(corpus).pool == POOL
    meter = DifficultyMeter(corpus, pool=2)
    pool = pool_of(corpus.chunk_ids, 2)
    source = next(i for i in corpus.chunk_ids if i not in pool)
    text = corpus.texts[corpus.chunk_ids.index(source)]
    item = Draft(
        id="d",
        input=text,
        context=Context(id="x", chunk_ids=[source], texts=[text], source_files=["f.md"]),
    )
    run_sync(meter.measure([item], []))
    assert item.metadata["difficulty"]["chunks"] == 3  # the pool's two and the source
    found = run_sync(meter.nearest(["tide"], 3))
    assert [chunk_id for chunk_id, _ in found[0]] == ["c0", "c2", "c5"]  # not only the pool's
    run_sync(meter.aclose())
