"""Retrieval metrics by context id, checked on hand-computed cases, and evaluate_retrieval."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from synth import (
    ConfigError,
    FailedItemsWarning,
    Golden,
    RetrievalEvaluation,
    average_precision,
    evaluate_retrieval,
    hit_rate_at_k,
    ndcg_at_k,
    precision_at_k,
    read_report,
    recall_at_k,
    reciprocal_rank,
)

# relevant: a, c, f; retrieved: a x c y z (f never found)
RETRIEVED = ["a", "x", "c", "y", "z"]
RELEVANT = {"a", "c", "f"}


def test_hit_recall_precision_by_hand() -> None:
    assert hit_rate_at_k(RETRIEVED, RELEVANT, 1) == 1.0
    assert hit_rate_at_k(["x", "y", "a"], RELEVANT, 2) == 0.0
    assert recall_at_k(RETRIEVED, RELEVANT, 1) == pytest.approx(1 / 3)
    assert recall_at_k(RETRIEVED, RELEVANT, 3) == pytest.approx(2 / 3)
    assert precision_at_k(RETRIEVED, RELEVANT, 3) == pytest.approx(2 / 3)
    assert precision_at_k(RETRIEVED, RELEVANT, 10) == pytest.approx(2 / 10)  # short lists miss


def test_ndcg_by_hand() -> None:
    dcg = 1 / math.log2(2) + 1 / math.log2(4)
    ideal = 1 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4)
    assert ndcg_at_k(RETRIEVED, RELEVANT, 5) == pytest.approx(dcg / ideal)
    # at k=2 only "a" is in; the ideal holds two relevant ids
    assert ndcg_at_k(RETRIEVED, RELEVANT, 2) == pytest.approx(1 / (1 + 1 / math.log2(3)))
    assert ndcg_at_k(["a"], {"a"}, 3) == 1.0


def test_mrr_and_average_precision_by_hand() -> None:
    assert reciprocal_rank(RETRIEVED, RELEVANT) == 1.0
    assert reciprocal_rank(["x", "y", "c"], RELEVANT) == pytest.approx(1 / 3)
    assert reciprocal_rank(["x"], RELEVANT) == 0.0
    # hits at ranks 1 and 3: (1/1 + 2/3) / 3 relevant
    assert average_precision(RETRIEVED, RELEVANT) == pytest.approx((1 + 2 / 3) / 3)


def test_repeated_ids_count_once() -> None:
    assert recall_at_k(["a", "a", "a"], {"a", "b"}, 3) == 0.5
    assert precision_at_k(["a", "a", "b"], {"a", "b"}, 2) == 1.0  # ranked list is a, b
    assert precision_at_k(["a", "a", "x"], {"a", "b"}, 2) == 0.5
    assert average_precision(["a", "a", "b"], {"a", "b"}) == 1.0


def test_bad_arguments() -> None:
    with pytest.raises(ConfigError):
        recall_at_k(["a"], set(), 1)
    with pytest.raises(ConfigError):
        precision_at_k(["a"], {"a"}, 0)


DATASET = [
    {"id": "q1", "question": "Where is A?", "context_ids": ["a"]},
    {"id": "q2", "question": "Where are C and F?", "context_ids": ["c", "f"]},
    {"id": "q3", "question": "No ground truth here"},
]

RANKINGS = {
    "Where is A?": ["x", "a"],
    "Where are C and F?": ["c", "y", "f"],
}


def test_evaluate_retrieval_report(tmp_path) -> None:
    asked = []

    def retriever(question):
        asked.append(question)
        return RANKINGS[question]

    report = evaluate_retrieval(retriever, DATASET, k=[1, 3])
    assert isinstance(report, RetrievalEvaluation)
    assert asked == ["Where is A?", "Where are C and F?"]  # no call without context ids
    assert list(report.metrics) == [
        "hit_rate@1", "recall@1", "precision@1", "ndcg@1",
        "hit_rate@3", "recall@3", "precision@3", "ndcg@3",
        "mrr", "average_precision",
    ]  # fmt: skip
    assert report.metrics["hit_rate@1"] == 0.5
    assert report.metrics["recall@3"] == 1.0
    assert report.metrics["mrr"] == pytest.approx((1 / 2 + 1) / 2)
    assert report.metrics["average_precision"] == pytest.approx((1 / 2 + (1 + 2 / 3) / 2) / 2)
    assert report.coverage["mrr"] == 2
    assert math.isnan(report.items[2].scores["mrr"])
    assert report.items[2].skipped["mrr"] == "no context ids"
    assert report.items[1].retrieved == ["c", "y", "f"] and report.items[1].relevant == ["c", "f"]
    for suffix in ("json", "jsonl", "yaml", "toml"):
        report.write(tmp_path / f"r.{suffix}")
        assert read_report(tmp_path / f"r.{suffix}") == report


def test_retriever_returning_hits_taking_k_and_failing() -> None:
    seen_k = []

    def retriever(question, k):
        seen_k.append(k)
        if "C" in question:
            raise RuntimeError("index offline")
        return [SimpleNamespace(chunk=SimpleNamespace(id="a", text="A"), score=0.9)]

    with pytest.warns(FailedItemsWarning, match=r"^1 of 3 items failed \(retriever 1\)"):
        report = evaluate_retrieval(retriever, DATASET, k=5)
    assert report.failed_items == 1
    assert seen_k == [5, 5]
    assert report.items[0].retrieved == ["a"]
    assert report.metrics["hit_rate@5"] == 1.0
    assert report.errors == {"retriever": 1}
    assert report.items[1].errors["retriever"] == "RuntimeError: index offline"
    with pytest.raises(RuntimeError):
        evaluate_retrieval(retriever, DATASET, k=5, on_error="raise")


def test_retrieval_from_goldens_and_comparison() -> None:
    goldens = [
        Golden(input="Where is A?", context_ids=["a"]),
        Golden(input="Where are C and F?", context_ids=["c", "f"]),
    ]
    good = evaluate_retrieval(lambda q: RANKINGS[q], goldens, k=3)
    bad = evaluate_retrieval(lambda q: ["zzz"], goldens, k=3)
    comparison = good.compare(bad)
    row = comparison["recall@3"]
    assert row.delta == pytest.approx(-1.0)
    assert row.n == 2 and row.exact
    assert row.p_value == pytest.approx(0.5)  # both differences negative: 2 of 4 sign patterns


def test_retrieval_against_a_real_chroma_store(tmp_path) -> None:
    from synth import Chunk, ChunkStore, HashEmbedder

    topics = {
        "bees": "Honey bees dance to tell the hive where flowers are.",
        "tides": "Tides rise and fall twice a day because of the moon.",
        "rust": "Iron rusts when it meets water and oxygen.",
    }
    chunks = [
        Chunk(
            id=f"chunk-{name}",
            document_id=name,
            source=f"{name}.txt",
            index=0,
            text=text,
            token_count=12,
        )
        for name, text in topics.items()
    ]
    with ChunkStore(HashEmbedder(), path=tmp_path / "chroma", collection="eval_test") as store:
        store.add(chunks)
        goldens = [
            Golden(input=text, context_ids=[f"chunk-{name}"]) for name, text in topics.items()
        ]
        report = evaluate_retrieval(lambda q, k: store.search([q], k)[0], goldens, k=[1, 3])
    assert report.metrics["hit_rate@1"] == 1.0  # each question is its chunk's own text
    assert report.metrics["mrr"] == 1.0 and report.metrics["recall@3"] == 1.0
    assert report.metrics["precision@3"] == pytest.approx(1 / 3)
    assert [item.retrieved[0] for item in report.items] == [c.id for c in chunks]


def test_ndcg_and_average_precision_match_scikit_learn() -> None:
    # the retriever ranks every candidate, so scikit-learn's scores over all of them apply
    import random

    import numpy as np
    from sklearn.metrics import average_precision_score, ndcg_score

    rng = random.Random(7)
    for _ in range(200):
        candidates = [f"c{i}" for i in range(rng.randint(2, 15))]
        relevant = set(rng.sample(candidates, rng.randint(1, len(candidates))))
        ranked = rng.sample(candidates, len(candidates))
        truth = np.array([[float(c in relevant) for c in ranked]])
        scores = np.array([[float(len(ranked) - i) for i in range(len(ranked))]])
        k = rng.randint(1, len(ranked))
        assert ndcg_at_k(ranked, relevant, k) == pytest.approx(
            ndcg_score(truth, scores, k=k), abs=1e-12
        )
        assert average_precision(ranked, relevant) == pytest.approx(
            average_precision_score(truth[0], scores[0]), abs=1e-12
        )
        first = min(i for i, c in enumerate(ranked) if c in relevant)
        assert reciprocal_rank(ranked, relevant) == 1 / (first + 1)
        top = ranked[:k]
        assert recall_at_k(ranked, relevant, k) == pytest.approx(
            len(relevant & set(top)) / len(relevant)
        )
        assert precision_at_k(ranked, relevant, k) == pytest.approx(len(relevant & set(top)) / k)
