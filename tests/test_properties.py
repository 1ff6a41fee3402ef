"""Invariants over generated inputs (hypothesis), where a few examples would miss the odd case:

- any dataset survives every format synth saves, and every export format synth reads back;
- any dataset survives Hugging Face ``datasets``, saved to disk and read back;
- the chunk index's similarities are numpy's cosines, and its answers numpy's top n;
- a bootstrap interval holds the sample mean;
- the limiter never lets more than ``max_concurrent`` run, nor loses a slot, whatever is
  cancelled when.

Example counts are kept modest so the suite stays fast; a failure prints the smallest example."""

from __future__ import annotations

import asyncio
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from synth import ConversationalGolden, Dataset, Golden, RateLimiter, Turn, bootstrap_interval
from synth.contexts.index import ChunkIndex
from synth.data import Chunk
from synth.dataset._export import EXPORT_FORMATS
from synth.dataset._hf_folder import write_hf_folder
from synth.dataset._public import public_goldens
from synth.errors import DatasetError

# ---- datasets: every format ------------------------------------------------------------------------

# text rich in what breaks formats: separators, quotes, newlines, the CSV unit separator, surrogates
# of JSON (\u2028), NUL, and anything else unicode has
_awkward = st.sampled_from(
    [",", ";", "|", "\t", "\n", "\r\n", "\r", '"', "'", "\\", "\x1f", "\x00"]
)
_texts = st.lists(
    st.one_of(_awkward, st.text(max_size=6), st.sampled_from(["null", "[]", "{}", "NA", "1e3"])),
    max_size=5,
).map("".join)
_lists = st.lists(_texts, max_size=3)
_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_texts, inner, max_size=3),
    max_leaves=8,
)
_goldens = st.builds(
    Golden,
    input=_texts.filter(str.strip),
    actual_output=st.none() | _texts,
    expected_output=st.none() | _texts,
    context=st.none() | _lists,
    retrieval_context=st.none() | _lists,
    context_ids=_lists,
    source_files=_lists,
    metadata=st.dictionaries(_texts.filter(lambda k: k != "_synth"), _json, max_size=3),
)
_turns = st.integers(min_value=1, max_value=4).flatmap(
    lambda n: st.tuples(*[_texts.filter(str.strip) for _ in range(n)]).map(
        lambda texts: [
            Turn(role="user" if i % 2 == 0 else "assistant", content=text)
            for i, text in enumerate(texts)
        ]
    )
)
_conversations = st.builds(
    ConversationalGolden,
    input=st.none(),  # the last user turn, filled in from the turns
    turns=_turns,
    scenario=st.none() | _texts,
    expected_outcome=st.none() | _texts,
    user_description=st.none() | _texts,
    context=st.none() | _lists,
    context_ids=_lists,
    metadata=st.dictionaries(_texts.filter(lambda k: k != "_synth"), _json, max_size=2),
)
_datasets = st.builds(
    Dataset,
    st.lists(_goldens | _conversations, max_size=3),
    st.dictionaries(_texts, _json, max_size=2),
)
_FAST = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".csv", ".parquet"])
@_FAST
@given(dataset=_datasets)
def test_any_dataset_survives_every_format_synth_saves(suffix: str, dataset: Dataset) -> None:
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    loaded = Dataset.load(dataset.save(f"p{suffix}"))
    assert loaded == dataset
    assert loaded.goldens == dataset.goldens and loaded.metadata == dataset.metadata


@_FAST
@given(dataset=_datasets)
def test_any_dataset_survives_hugging_face_datasets_and_disk(dataset: Dataset) -> None:
    """synth -> datasets -> disk -> datasets -> synth, by save_to_disk and by the hf folder (its
    parquet shards); the datasets drawn mix single-turn goldens and conversations."""
    import datasets

    shutil.rmtree("disk", ignore_errors=True)  # from the previous example
    # one shard: datasets writes none for an empty table, and then cannot load it back
    dataset.to_hf().save_to_disk("disk", num_shards=1)
    assert Dataset.from_hf(datasets.load_from_disk("disk")) == dataset
    folder = write_hf_folder(Path("folder"), dataset.goldens, dataset.metadata, "---\n---\n")
    assert Dataset.load(folder) == dataset


_EXPORTS = [(name, suffix) for name, fmt in EXPORT_FORMATS.items() for suffix in fmt.suffixes]


@pytest.mark.parametrize(("tool", "suffix"), _EXPORTS)
@_FAST
@given(goldens=st.lists(_goldens, max_size=3))
def test_any_goldens_survive_every_export_synth_reads_back(
    tool: str, suffix: str, goldens: list[Golden]
) -> None:
    """Each export loads back to the same goldens, or (deepeval's CSV, whose reader would change
    some cells) is refused with a DatasetError and no file; the chat-format ``messages`` export
    keeps each golden's input and expected output only, by design. An export is what leaves the
    machine: the goldens come back in their shareable form (no base URL, corpus paths)."""
    path = Path(f"p-{tool}{suffix}")
    path.unlink(missing_ok=True)  # from the previous example
    try:
        written = Dataset(goldens).export(path, format=tool)  # type: ignore[arg-type]
    except DatasetError:
        assert tool == "deepeval-csv"
        assert not path.exists()
        return
    loaded = Dataset.load(written).goldens
    if tool == "messages":  # a chat format: the messages alone, read back as conversations
        assert [(g.input, g.expected_output) for g in loaded] == [
            (g.input, g.expected_output) for g in goldens
        ]
        return
    assert loaded == public_goldens(goldens)


# ---- cosine and the chunk index ------------------------------------------------------------------


def _cosines(vectors: np.ndarray, query: np.ndarray) -> np.ndarray:
    v = vectors.astype(np.float64)
    q = query.astype(np.float64)
    return (v @ q) / (np.linalg.norm(v, axis=1) * np.linalg.norm(q))


_elements = st.floats(min_value=-100, max_value=100, allow_nan=False, width=32)


@st.composite
def _index_case(draw):  # type: ignore[no-untyped-def]
    dim = draw(st.integers(1, 6))
    n = draw(st.integers(1, 12))
    vectors = draw(hnp.arrays(np.float32, (n, dim), elements=_elements))
    query = draw(hnp.arrays(np.float32, (dim,), elements=_elements))
    big = lambda v: np.linalg.norm(v.astype(np.float64)) > 1e-2  # noqa: E731
    vectors = vectors[[big(v) for v in vectors]]
    if len(vectors) == 0 or not big(query):
        vectors = np.eye(max(dim, 1), dtype=np.float32)[:1]
        query = np.ones(dim, dtype=np.float32)
    sources = draw(st.lists(st.sampled_from(["a.md", "b.md"]), min_size=len(vectors)))
    top = draw(st.integers(1, len(vectors) + 2))
    return vectors, query, sources[: len(vectors)], top


@settings(max_examples=80, deadline=None)
@given(case=_index_case(), scope=st.sampled_from([None, "a.md", "b.md"]))
def test_the_index_answers_numpys_cosine_top_n(case, scope) -> None:  # type: ignore[no-untyped-def]
    vectors, query, sources, n = case
    chunks = [
        Chunk(id=f"c{i:02d}", document_id=s, source=s, index=i, text="t", token_count=1)
        for i, s in enumerate(sources)
    ]
    index = ChunkIndex(chunks, vectors)
    (row,) = index.query(query[None, :], n, source=scope)
    exact = _cosines(vectors, query)
    in_scope = [i for i, s in enumerate(sources) if scope is None or s == scope]
    assert len(row) == min(n, len(in_scope))
    got = [int(cid[1:]) for cid, _ in row]
    assert set(got) <= set(in_scope) and len(set(got)) == len(got)
    for (_, sim), i in zip(row, got, strict=True):
        assert sim == pytest.approx(exact[i], abs=1e-5)  # float32 products
        assert -1.0 - 1e-5 <= sim <= 1.0 + 1e-5
    # most similar first, and nothing left out beats what was taken
    sims = [sim for _, sim in row]
    assert all(a >= b - 1e-6 for a, b in zip(sims, sims[1:], strict=False))
    left = [exact[i] for i in in_scope if i not in got]
    if row and left:
        assert max(left) <= min(exact[i] for i in got) + 1e-5
    # the stored vectors are unit rows along the original directions
    unit = index.get_embeddings([c.id for c in chunks]).astype(np.float64)
    assert np.allclose(np.linalg.norm(unit, axis=1), 1.0, atol=1e-5)
    assert np.allclose(np.sum(unit * vectors, axis=1), np.linalg.norm(vectors, axis=1), rtol=1e-4)


# ---- bootstrap --------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(
        st.floats(min_value=-1e3, max_value=1e3, allow_nan=False) | st.just(math.nan),
        min_size=1,
        max_size=25,
    ),
    confidence=st.floats(min_value=0.5, max_value=0.99),
    seed=st.integers(0, 2**16),
)
def test_a_bootstrap_interval_holds_the_sample_mean(
    values: list[float], confidence: float, seed: int
) -> None:
    low, high = bootstrap_interval(values, confidence=confidence, n_resamples=400, seed=seed)
    defined = [v for v in values if not math.isnan(v)]
    if not defined:
        assert math.isnan(low) and math.isnan(high)
        return
    mean = float(np.mean(defined))
    slack = 1e-9 * max(1.0, max(abs(v) for v in defined))  # rounding of sums in another order
    assert min(defined) - slack <= low <= mean + slack <= high + 2 * slack
    assert high <= max(defined) + slack
    assert (low, high) == bootstrap_interval(
        values, confidence=confidence, n_resamples=400, seed=seed
    )


# ---- the limiter under random cancellation --------------------------------------------------------

_steps = st.lists(
    st.tuples(
        st.sampled_from(["cancel", "cancel the next waiter", "finish"]),
        st.integers(0, 11),
        st.integers(0, 3),
    ),
    max_size=30,
)


@settings(max_examples=60, deadline=None)
@given(size=st.integers(1, 4), tasks=st.integers(1, 12), steps=_steps)
def test_the_limiter_never_runs_more_than_max_concurrent_nor_loses_a_slot(
    size: int, tasks: int, steps: list[tuple[str, int, int]]
) -> None:
    """Tasks take a slot and hold it until told to finish; a random schedule tells some to finish
    and cancels others (waiting, granted but not yet resumed, or running), yielding to the loop a
    random number of turns in between (a slot freed by a finishing task reaches the next waiter
    two turns later). No sleeps: the loop's own order decides."""

    async def main() -> None:
        limiter = RateLimiter(size)
        running: set[int] = set()
        entered: set[int] = set()
        peak = 0
        finish = [asyncio.Event() for _ in range(tasks)]
        done: list[int] = []

        async def work(i: int) -> None:
            nonlocal peak
            async with limiter.slot():
                entered.add(i)
                running.add(i)
                peak = max(peak, len(running))
                assert limiter.in_flight <= size
                try:
                    await finish[i].wait()
                finally:
                    running.discard(i)
            done.append(i)

        workers = [asyncio.create_task(work(i)) for i in range(tasks)]
        cancelled: set[int] = set()
        for action, which, turns in steps:
            i = which % tasks
            if action == "cancel the next waiter":  # the queue is in the order tasks were made
                waiting = [j for j in range(tasks) if j not in entered and not workers[j].done()]
                action, i = ("cancel", waiting[0]) if waiting else ("finish", i)
            if action == "finish" and running:  # finishing a task that runs frees a slot
                i = sorted(running)[which % len(running)]
            if action == "cancel":
                if not workers[i].done():
                    cancelled.add(i)
                workers[i].cancel()
            else:
                finish[i].set()
            for _ in range(turns):
                await asyncio.sleep(0)
            assert len(running) <= size and limiter.in_flight <= size
        for event in finish:
            event.set()
        async with asyncio.timeout(5):  # a lost slot would leave a worker waiting forever
            await asyncio.gather(*workers, return_exceptions=True)
        assert peak <= size
        assert set(done) | cancelled == set(range(tasks))
        assert limiter.in_flight == 0 and not limiter._slots._waiters
        # every slot can still be taken at once
        holders = [limiter.slot() for _ in range(size)]
        async with asyncio.timeout(5):
            for holder in holders:
                await holder.__aenter__()
        assert limiter.in_flight == size
        for holder in holders:
            await holder.__aexit__(None, None, None)

    asyncio.run(main())
