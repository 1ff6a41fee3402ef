"""The run's difficulty meter, driven directly: one index per run, built in a thread, every kept
draft with a context measured, the inputs' vectors used only when they are the chunks' own kind,
and the ``max_easy_share`` cap and its ``easy`` test.

The whole-run tests (tests/test_pipeline_trust.py) check the same through a Synthesizer, at seconds
a run; these take milliseconds, so mutation testing can run them against every mutant.
"""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest

from synth.contexts.feed import Corpus
from synth.data import Context
from synth.generate.difficulty import DifficultyIndex
from synth.generate.draft import Draft
from synth.llm.base import run_sync
from synth.run.difficulty import EASY, STAGE, TOO_EASY, DifficultyMeter, is_easy, max_easy

IDS = ["refund", "shipping", "password", "volcano"]
TEXTS = [
    "Customers may return unused merchandise within thirty days for a full refund.",
    "Parcels leave our warehouse every weekday and arrive in two to five days.",
    "To reset your password, open settings, choose security and follow the link.",
    "Volcanic eruptions eject molten lava, ash and toxic gases into the atmosphere.",
]
# one axis per chunk: an input vector along a chunk's axis is nearest that chunk
VECTORS = np.eye(4, dtype=np.float64).tolist()


def corpus(vectors: list[list[float]] | None = VECTORS, calls: list[int] | None = None) -> Corpus:
    """The four chunks; ``calls`` records the thread each read of the vectors ran in."""

    def read() -> list[list[float]] | None:
        if calls is not None:
            calls.append(threading.get_ident())
        return vectors

    return Corpus(chunk_ids=list(IDS), texts=list(TEXTS), vectors=read)


def draft(name: str, question: str, source: str | None) -> Draft:
    context = None
    if source is not None:
        text = TEXTS[IDS.index(source)]
        context = Context(id=name, chunk_ids=[source], texts=[text], source_files=["f.md"])
    return Draft(id=name, input=question, context=context)


def expected(question: str, source: str, vector: list[float] | None) -> dict:
    """What a draft's ``metadata["difficulty"]`` must be: the index's own measurement."""
    index = DifficultyIndex(IDS, TEXTS, np.asarray(VECTORS, dtype=np.float32))
    return index.measure(question, [source], vector).model_dump(mode="json")


# a refund question whose vector points at the volcano chunk: BM25 ranks the source first, the
# embedder second (behind the volcano, tied with the rest), so the measurement shows whether the
# vector was used
REFUND_Q = "Within how many days may customers return unused merchandise for a refund?"
SHIP_Q = "How many days do parcels take to arrive from the warehouse?"
AWAY = [0.0, 0.0, 0.0, 1.0]


def test_names_of_the_label_the_reason_and_the_stage() -> None:
    assert (EASY, TOO_EASY, STAGE) == ("easy", "too_easy", "difficulty")


def test_kept_drafts_with_a_context_are_measured_with_their_vectors() -> None:
    meter = DifficultyMeter(corpus())
    a, b = draft("a", REFUND_Q, "refund"), draft("b", SHIP_Q, "shipping")
    run_sync(meter.measure([a, b], [AWAY, [0.0, 1.0, 0.0, 0.0]]))
    assert a.metadata[STAGE] == expected(REFUND_Q, "refund", AWAY)
    assert a.metadata[STAGE]["dense_rank"] == 2 and a.metadata[STAGE]["bm25_rank"] == 1
    assert b.metadata[STAGE] == expected(SHIP_Q, "shipping", [0.0, 1.0, 0.0, 0.0])
    assert b.metadata[STAGE]["dense_rank"] == 1


def test_a_dropped_draft_is_not_measured_and_its_vector_is_not_expected() -> None:
    meter = DifficultyMeter(corpus())
    dropped, kept = draft("d", SHIP_Q, "shipping"), draft("k", REFUND_Q, "refund")
    dropped.drop("dedup", "duplicate")
    # the vectors are the kept drafts' only
    run_sync(meter.measure([dropped, kept], [AWAY]))
    assert STAGE not in dropped.metadata
    assert kept.metadata[STAGE] == expected(REFUND_Q, "refund", AWAY)


def test_vectors_that_do_not_match_the_kept_drafts_give_keyword_ranks_only() -> None:
    no_dense = expected(REFUND_Q, "refund", None)
    assert no_dense["dense_rank"] is None
    cases = [
        ([], "no vectors"),
        ([AWAY, AWAY], "one vector too many"),
        ([[0.0, 0.0, 1.0]], "another embedder's dimensions"),
    ]
    for vectors, why in cases:
        measured = draft("a", REFUND_Q, "refund")
        run_sync(DifficultyMeter(corpus()).measure([measured], vectors))
        assert measured.metadata[STAGE] == no_dense, why
    # a kept draft without a context has a vector but no measurement: the vectors are not its
    # measured drafts', so none is used
    scratch, sourced = draft("s", SHIP_Q, None), draft("a", REFUND_Q, "refund")
    run_sync(DifficultyMeter(corpus()).measure([scratch, sourced], [AWAY, AWAY]))
    assert STAGE not in scratch.metadata
    assert sourced.metadata[STAGE] == no_dense


def test_without_dense_the_inputs_vectors_are_ignored() -> None:
    measured = draft("a", REFUND_Q, "refund")
    run_sync(DifficultyMeter(corpus(), dense=False).measure([measured], [AWAY]))
    assert measured.metadata[STAGE] == expected(REFUND_Q, "refund", None)
    assert DifficultyMeter(corpus()).dense is True


def test_chunks_without_vectors_give_keyword_ranks_only() -> None:
    measured = draft("a", REFUND_Q, "refund")
    run_sync(DifficultyMeter(corpus(vectors=None)).measure([measured], [AWAY]))
    assert measured.metadata[STAGE] == expected(REFUND_Q, "refund", None)


def test_the_index_is_built_once_in_a_thread_and_only_when_something_is_measured() -> None:
    calls: list[int] = []
    meter = DifficultyMeter(corpus(calls=calls))
    run_sync(meter.measure([draft("s", SHIP_Q, None)], []))
    assert calls == []  # nothing with a context: no index

    async def twice() -> tuple[DifficultyIndex | None, DifficultyIndex | None, int]:
        first, second = await asyncio.gather(meter.index(), meter.index())
        return first, second, threading.get_ident()

    first, second, loop_thread = run_sync(twice())
    assert first is not None and first is second and len(first) == 4
    assert first.dimensions == 4
    assert run_sync(meter.index()) is first
    assert len(calls) == 1 and calls[0] != loop_thread


def test_no_corpus_or_no_chunks_measures_nothing() -> None:
    for meter in (DifficultyMeter(None), DifficultyMeter(Corpus(chunk_ids=[], texts=[]))):
        assert run_sync(meter.index()) is None
        measured = draft("a", REFUND_Q, "refund")
        run_sync(meter.measure([measured], [AWAY]))
        assert STAGE not in measured.metadata
        run_sync(meter.aclose())


def test_aclose_waits_for_an_index_still_being_built() -> None:
    release = threading.Event()
    read: list[str] = []

    def slow() -> None:
        release.wait()
        read.append("done")

    meter = DifficultyMeter(Corpus(chunk_ids=list(IDS), texts=list(TEXTS), vectors=slow))

    async def close_while_building() -> bool:
        started = asyncio.ensure_future(meter.index())
        await asyncio.sleep(0)  # the build is under way
        assert meter._index is not None and not meter._index.done()
        closing = asyncio.ensure_future(meter.aclose())
        await asyncio.sleep(0)
        waited = not closing.done()
        release.set()
        await closing
        await started
        return waited

    assert run_sync(close_while_building()) is True
    assert read == ["done"]
    run_sync(meter.aclose())  # built: nothing to wait for


def test_max_easy_is_the_share_of_the_target_rounded_down() -> None:
    assert max_easy(None, 10) is None
    assert max_easy(0.5, None) is None
    assert max_easy(0.3, 10) == 3  # 0.3 * 10 is 3.0000000000000004
    assert max_easy(0.29, 100) == 29  # 0.29 * 100 is 28.999999999999996
    assert max_easy(0.3, 7) == 2
    assert max_easy(0.3, 9) == 2  # 2.7: down, not to the nearest
    assert max_easy(0.0, 10) == 0
    assert max_easy(1.0, 4) == 4


def test_is_easy_reads_the_measured_label() -> None:
    def with_metadata(metadata: dict) -> Draft:
        return Draft(id="d", input="q", metadata=metadata)

    assert is_easy(with_metadata({STAGE: {"label": "easy"}}))
    assert not is_easy(with_metadata({STAGE: {"label": "medium"}}))
    assert not is_easy(with_metadata({STAGE: "easy"}))
    assert not is_easy(with_metadata({"other": {"label": "easy"}}))
    assert not is_easy(with_metadata({}))


def test_aclose_does_not_raise_for_an_index_whose_build_failed() -> None:
    release = threading.Event()

    def broken() -> None:
        release.wait()
        raise OSError("the ingest's vectors are gone")

    meter = DifficultyMeter(Corpus(chunk_ids=list(IDS), texts=list(TEXTS), vectors=broken))

    async def close_while_failing() -> None:
        started = asyncio.ensure_future(meter.index())
        await asyncio.sleep(0)  # the build is under way
        closing = asyncio.ensure_future(meter.aclose())
        await asyncio.sleep(0)
        release.set()
        await closing  # the failure is the run's to report, through index(), not the close's
        with pytest.raises(OSError, match="vectors are gone"):
            await started

    run_sync(close_while_failing())


def test_measuring_leaves_the_event_loop_free_for_the_replies_in_flight() -> None:
    # the measurement, once started, waits for a coroutine of the loop to run: on the loop it
    # could not, and the wait runs out
    started, reply_read, seen = threading.Event(), threading.Event(), []

    class Slow(DifficultyIndex):
        def measure_many(self, *args: object, **kwargs: object) -> list:  # type: ignore[override]
            started.set()
            seen.append(reply_read.wait(timeout=5))
            return super().measure_many(*args, **kwargs)  # type: ignore[arg-type]

    async def go() -> dict:
        meter = DifficultyMeter(corpus())
        slow = Slow(IDS, TEXTS, np.asarray(VECTORS, dtype=np.float32))
        meter._index = asyncio.ensure_future(asyncio.sleep(0, result=slow))  # type: ignore[assignment]

        async def read_a_reply() -> None:
            await asyncio.to_thread(started.wait, 5)
            reply_read.set()

        one = draft("d1", "How do I get a refund for merchandise?", "refund")
        await asyncio.gather(meter.measure([one], []), read_a_reply())
        return one.metadata[STAGE]

    question = "How do I get a refund for merchandise?"
    assert run_sync(go()) == expected(question, "refund", None)
    assert seen == [True]
