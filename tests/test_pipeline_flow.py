"""The Synthesizer end to end: exact N, provenance, accounting, top-up, failures as drops,
determinism independent of completion order, resume from the run directory.

Tests taking the ``model`` fixture run twice: against the scripted model that knows synth's prompts,
and against the generic fake server (real openai SDK over HTTP) that answers from the JSON schema
alone. The others script a behaviour (a failing or slow reply, low scores) only the scripted model
can give, and say so."""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from model_modes import MODES, ModelMode, model_mode, open_mode
from synth_replies import Replies, stage_of

from synth import FunctionModel, Synthesizer
from synth.contexts.config import ContextConstructionConfig
from synth.dataset import Dataset
from synth.errors import AuthenticationError, ConfigError, ShortfallWarning
from synth.generate.config import EvolutionConfig, GenerationConfig, StylingConfig
from synth.store import HashEmbedder

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample_docs"
META_KEYS = {
    "context_quality",
    "input_quality",
    "evolutions",
    "styling",
    "persona",
    "models",
    "prompt_version",
    "seed",
    "run_id",
}


def synthesizer(replies: Replies, **kw) -> Synthesizer:
    kw.setdefault("embedder", "hash")
    return Synthesizer(FunctionModel(replies, name="replies"), **kw)


@pytest.fixture(params=MODES)
def model(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModelMode]:
    yield from open_mode(request.param, monkeypatch)


def check_table_adds_up(manifest: dict) -> None:
    rows = {r["stage"]: r for r in manifest["stages"]}
    order = [r["stage"] for r in manifest["stages"]]
    for row in manifest["stages"]:
        if row["stage"] not in ("ingest", "inputs"):
            assert row["items_in"] == row["items_out"] + sum(row["dropped"].values()), row
    chain = [s for s in order if s != "ingest"]
    for before, after in zip(chain, chain[1:], strict=False):
        if before == "group":
            assert rows[after]["items_in"] == rows[before]["items_out"], (before, after)
        elif before != "critic" or after == "group":
            assert rows[after]["items_in"] == rows[before]["items_out"], (before, after)
    assert rows["dedup"]["items_out"] == manifest["delivered"]


def test_exactly_n_goldens_with_provenance_and_a_table_that_adds_up(model: ModelMode) -> None:
    synth = model.synthesizer(seed=3)
    dataset = synth.generate_goldens_from_docs(SAMPLE, num_goldens=20)
    assert len(dataset) == 20
    manifest = synth.manifest
    assert manifest["status"] == "complete" and manifest["delivered"] == 20
    for golden in dataset:
        assert golden.input and golden.expected_output
        assert golden.context and golden.context_ids and golden.source_files
        assert len(golden.context) == len(golden.context_ids)
        assert META_KEYS <= set(golden.metadata)
        assert golden.metadata["seed"] == 3
        assert golden.metadata["run_id"] == manifest["run_id"]
        assert golden.metadata["models"]["generator"]["provider"] == model.provider
        assert len(golden.metadata["evolutions"]) == 1
        assert 0 <= golden.metadata["input_quality"] <= 1
        assert 0 <= golden.metadata["context_quality"] <= 1
    assert len({g.input for g in dataset}) == 20
    check_table_adds_up(manifest)
    requests = manifest["totals"]["requests"]
    assert requests == len(model.prompts())  # every request the model saw is counted
    assert manifest["requests_per_golden"] == round(requests / 20, 3)
    assert Path(manifest["run_dir"], "goldens.jsonl").exists()
    on_disk = json.loads(Path(manifest["run_dir"], "manifest.json").read_text())
    assert on_disk["stages"] == manifest["stages"]


def test_rejected_contexts_and_vague_inputs_are_topped_up(monkeypatch: pytest.MonkeyPatch) -> None:
    # scripted only: low scores for chosen passages and inputs are the scripted model's knobs
    monkeypatch.setenv("SYNTH_REPLIES_REJECT", "0.3")
    monkeypatch.setenv("SYNTH_REPLIES_VAGUE", "0.3")
    config = ContextConstructionConfig(chunk_size=256)
    synth = synthesizer(Replies(), context_construction_config=config)
    dataset = synth.generate_goldens_from_docs(SAMPLE, num_goldens=24)
    assert len(dataset) == 24
    rows = {r["stage"]: r for r in synth.manifest["stages"]}
    assert rows["critic"]["dropped"].get("below_quality_threshold", 0) > 0
    assert rows["critic"]["items_in"] > 12  # replacements were drawn
    check_table_adds_up(synth.manifest)
    rewritten = [g for g in dataset if "(clarified)" in g.input]
    assert rewritten  # the vague ones were rewritten and kept with their rewrite's score
    assert all(g.metadata["input_quality"] >= 0.5 for g in dataset)


def test_a_corpus_too_small_delivers_what_it_can_and_says_why(model: ModelMode) -> None:
    synth = model.synthesizer()
    with pytest.warns(ShortfallWarning, match=r"of 40 goldens: the corpus has no more") as caught:
        dataset = synth.generate_goldens_from_docs(SAMPLE / "quick_start.md", num_goldens=40)
    assert [w.filename for w in caught] == [__file__]  # attributed to the caller's line
    manifest = synth.manifest
    assert 0 < len(dataset) < 40
    assert manifest["status"] == "partial" and manifest["delivered"] == len(dataset)
    assert manifest["shortfall"][0] == "the corpus has no more chunks to start a context from"
    assert dataset.metadata["shortfall"] == manifest["shortfall"]
    short = dataset.shortfall
    assert short is not None and (short.asked, short.delivered) == (40, len(dataset))
    assert short.reason == manifest["shortfall"][0] and list(short.reasons) == manifest["shortfall"]
    dataset.save("short.jsonl")
    assert Dataset.load("short.jsonl").shortfall == short  # kept in the metadata sidecar
    with pytest.raises(IndexError, match="the run delivered .* of 40 goldens: the corpus"):
        dataset[len(dataset)]
    check_table_adds_up(manifest)


def test_every_reply_invalid_says_model_errors_not_the_top_up_limit() -> None:
    replies = Replies(fail=lambda prompt: "{}" if stage_of(prompt) == "critic" else None)
    synth = synthesizer(replies)

    async def generate() -> Dataset:
        with pytest.warns(ShortfallWarning) as caught:
            dataset = await synth.a_generate_goldens_from_docs(SAMPLE, num_goldens=5)
        assert [w.filename for w in caught] == [__file__]  # the awaiting line, not asyncio's
        return dataset

    dataset = asyncio.run(generate())
    assert len(dataset) == 0
    reasons = synth.manifest["shortfall"]
    # what stopped the run first leads; the limit that ended the top-up follows
    assert reasons[0].startswith("model errors: every item failed, ")
    assert "at critic: model_error:invalid_output" in reasons[0]
    assert "did not fit the requested format" in reasons[0]
    assert reasons[1].startswith("the top-up limit was reached")
    assert any(r.endswith("dropped at critic: model_error:invalid_output") for r in reasons[2:])
    assert dataset.shortfall is not None and dataset.shortfall.reason == reasons[0]


def test_a_complete_run_has_no_shortfall_and_gives_no_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dataset = synthesizer(Replies()).generate_goldens_from_docs(SAMPLE, num_goldens=3)
    assert len(dataset) == 3 and dataset.shortfall is None


def test_model_failures_drop_items_with_a_reason_and_the_run_goes_on() -> None:
    # scripted only: the point is a broken reply to chosen evolutions
    def fail(prompt: str) -> str | None:
        # about a third of the contexts get a broken reply to their inputs' evolution, every time
        if stage_of(prompt) == "evolve":
            text = prompt.split("Inputs to rewrite", 1)[1].split("\n\nHow to rewrite", 1)[0]
            if hashlib.sha256(text.encode()).digest()[0] < 85:
                return '{"input": '
        return None

    synth = synthesizer(Replies(fail=fail))
    dataset = synth.generate_goldens_from_docs(SAMPLE, num_goldens=16)
    assert len(dataset) == 16
    rows = {r["stage"]: r for r in synth.manifest["stages"]}
    dropped = rows["evolve"]["dropped"]
    assert dropped and set(dropped) == {"model_error:invalid_output"}
    # a failed request drops the inputs of its context (two a context at most)
    assert 0 < rows["evolve"]["failures"] <= sum(dropped.values()) <= 2 * rows["evolve"]["failures"]
    rejects = Path(synth.manifest["run_dir"], "rejects.jsonl").read_text().splitlines()
    assert any(json.loads(line)["stage"] == "evolve" for line in rejects)


@pytest.mark.parametrize("critic", [True, False])
def test_a_refused_key_ends_the_run_with_one_clear_error(critic: bool) -> None:
    from synth.errors import AuthenticationError as Refused

    async def refuse(prompt: str, system: str | None) -> str:
        raise Refused("401 incorrect API key")

    synth = Synthesizer(FunctionModel(refuse), embedder="hash", use_context_critic=critic)
    with pytest.raises(AuthenticationError, match="refused the API key"):
        synth.generate_goldens_from_docs(SAMPLE, num_goldens=4)
    assert synth.manifest["status"] == "failed"


def test_failed_requests_are_asked_again_when_the_run_is_resumed() -> None:
    # scripted only: the point is a provider that breaks every evolution, then is fixed
    broken = True

    def fail(prompt: str) -> str | None:
        return '{"input": ' if broken and stage_of(prompt) == "evolve" else None

    replies = Replies(fail=fail)
    first = synthesizer(replies)
    with pytest.warns(ShortfallWarning, match="delivered 0 of 6 goldens: model errors"):
        assert len(first.generate_goldens_from_docs(SAMPLE, num_goldens=6)) == 0
    rows = {r["stage"]: r for r in first.manifest["stages"]}
    assert set(rows["evolve"]["dropped"]) == {"model_error:invalid_output"}
    assert first.manifest["status"] == "partial"
    asked = replies.counts()
    broken = False  # the provider is fixed; the same command again
    second = synthesizer(replies)
    assert len(second.generate_goldens_from_docs(SAMPLE, num_goldens=6)) == 6
    again = {k: v - asked.get(k, 0) for k, v in replies.counts().items()}
    # the failed evolutions (and what follows them) were asked again; what had answered was not
    assert again.get("evolve", 0) > 0 and again.get("critic", 0) == 0
    assert again.get("inputs", 0) == 0 and again.get("filter", 0) == 0


@pytest.mark.parametrize("mode", MODES)
def test_same_seed_same_goldens_whatever_order_requests_complete_in(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def shuffled(seed: int):
        rng = random.Random(seed)
        lock = __import__("threading").Lock()

        def delay(prompt: str) -> float:
            with lock:
                return rng.uniform(0, 0.03)

        return delay

    def run(shuffle: int, seed: int, run_dir: str) -> Dataset:
        if mode == "scripted":
            synth = synthesizer(
                Replies(delay=shuffled(shuffle)), seed=seed, cache=None, run_dir=run_dir
            )
            return synth.generate_goldens_from_docs(SAMPLE, num_goldens=14)
        # a server of its own per run, as the generic server answers a request it has seen
        # before afresh (as a real model does), on the first one's port (the base URL is part of
        # the goldens' provenance). Its delays are drawn in arrival order from one seeded stream:
        # the reversed range turns the same draws into opposite delays
        latency = (0.0, 0.03) if shuffle == 1 else (0.03, 0.0)
        with model_mode(mode, monkeypatch, latency=latency, port=ports[0] if ports else 0) as made:
            assert made.server is not None
            ports.append(made.server.port)
            synth = made.synthesizer(seed=seed, cache=None, run_dir=run_dir)
            return synth.generate_goldens_from_docs(SAMPLE, num_goldens=14)

    ports: list[int] = []

    a = run(1, 7, "run-a")
    b = run(2, 7, "run-b")
    assert [g.model_dump() for g in a] == [g.model_dump() for g in b]
    c = run(1, 8, "run-c")
    assert [g.input for g in c] != [g.input for g in a]  # the seed does matter


def test_warm_cache_gives_the_same_goldens_with_no_request(model: ModelMode) -> None:
    if model.server is not None:
        # the generic server answers a request it has seen before afresh, as a real model does
        a = model.synthesizer(run_dir="one").generate_goldens_from_docs(SAMPLE, num_goldens=10)
        made = model.server.request_count("chat")
        second = model.synthesizer(run_dir="two")
        b = second.generate_goldens_from_docs(SAMPLE, num_goldens=10)
        assert model.server.request_count("chat") == made  # the cache answered everything
        assert second.manifest["totals"]["requests"] == 0
        assert second.manifest["totals"]["cached"] > 0
        assert [g.model_dump() for g in a] == [g.model_dump() for g in b]
        return
    noisy = Replies()
    original = noisy.__call__

    async def nondeterministic(prompt: str, system: str | None = None) -> str:
        reply = await original(prompt, system)
        # a real model answers differently each time: make every input unique per call
        if stage_of(prompt) == "inputs":
            data = json.loads(reply)
            data["inputs"] = [f"{q} [{random.random():.6f}]" for q in data["inputs"]]
            return json.dumps(data)
        return reply

    first = Synthesizer(
        FunctionModel(nondeterministic, name="noisy"), embedder="hash", run_dir="one"
    )
    a = first.generate_goldens_from_docs(SAMPLE, num_goldens=10)
    made = len(noisy.prompts)
    second = Synthesizer(
        FunctionModel(nondeterministic, name="noisy"), embedder="hash", run_dir="two"
    )
    b = second.generate_goldens_from_docs(SAMPLE, num_goldens=10)
    assert len(noisy.prompts) == made  # the cache answered everything
    assert second.manifest["totals"]["requests"] == 0
    assert second.manifest["totals"]["cached"] > 0
    assert [g.model_dump() for g in a] == [g.model_dump() for g in b]


def test_rerunning_a_finished_run_makes_no_request_and_gives_the_same_dataset(
    model: ModelMode,
) -> None:
    a = model.synthesizer(cache=None).generate_goldens_from_docs(SAMPLE, num_goldens=8)
    made = len(model.prompts())
    again = model.synthesizer(cache=None)
    b = again.generate_goldens_from_docs(SAMPLE, num_goldens=8)
    assert len(model.prompts()) == made  # the run directory's stage outputs answered it
    assert a == b
    assert len(again.manifest["sessions"]) == 2


def test_streaming_first_goldens_finish_while_later_contexts_are_scored() -> None:
    # scripted only: the point is a critic held until an expected output exists
    order: list[str] = []
    critic_calls = 0
    replies = Replies()
    original = replies.__call__
    answered: asyncio.Event | None = None

    async def traced(prompt: str, system: str | None = None) -> str:
        nonlocal critic_calls, answered
        answered = answered or asyncio.Event()
        stage = stage_of(prompt)
        if stage == "critic":
            critic_calls += 1
            if critic_calls > 1:
                # every critic batch but the first is answered only once an expected output
                # exists: a pipeline that scored every context before generating would wait
                # here for ever (the timeout only turns that hang into a failure)
                await asyncio.wait_for(answered.wait(), timeout=120)
        reply = await original(prompt, system)
        order.append(stage)
        if stage == "expected":
            answered.set()
        return reply

    synth = Synthesizer(FunctionModel(traced), embedder="hash", cache=None)
    assert len(synth.generate_goldens_from_docs(SAMPLE, num_goldens=20)) == 20
    # goldens of the first batch's contexts were finished while the other batches were scored
    assert critic_calls >= 3
    assert order.index("expected") < order.index("critic", order.index("critic") + 1)


def test_from_contexts_from_scratch_and_from_goldens(model: ModelMode) -> None:
    contexts = [
        ["The HB-10 battery stores 10 kWh and charges from solar panels during the day."],
        [
            "Firmware 3.4 adds dynamic tariffs in selected regions.",
            "Dynamic tariffs read hourly prices from the supplier.",
        ],
    ]
    synth = model.synthesizer()
    from_contexts = synth.generate_goldens_from_contexts(contexts, source_files=["a.txt", "b.txt"])
    assert len(from_contexts) == 4
    assert {tuple(g.context) for g in from_contexts} == {tuple(c) for c in contexts}
    assert all(g.context_ids and g.source_files for g in from_contexts)

    styling = StylingConfig(
        scenario="Owners of a home battery ask its support chatbot",
        task="answer support questions",
        input_format="a short chat message",
    )
    scratch = model.synthesizer(styling_config=styling)
    made = scratch.generate_goldens_from_scratch(7)
    assert len(made) == 7
    assert all(g.context is None and g.expected_output for g in made)
    assert all(g.metadata["styling"]["scenario"] == styling.scenario for g in made)

    with pytest.raises(ConfigError, match="scenario"):
        model.synthesizer().generate_goldens_from_scratch(3)

    again = model.synthesizer().generate_goldens_from_goldens(from_contexts, num_goldens=6)
    assert len(again) == 6
    assert all(g.context for g in again)


def test_personas_and_styling_are_recorded(model: ModelMode) -> None:
    styling = StylingConfig(
        scenario="Customers ask a support chatbot",
        task="answer support questions",
        input_format="a chat message",
        personas=["an anxious first-time owner", "an installer who wants exact figures"],
    )
    synth = model.synthesizer(styling_config=styling)
    dataset = synth.generate_goldens_from_docs(SAMPLE, num_goldens=8)
    assert len(dataset) == 8
    assert {g.metadata["persona"] for g in dataset} <= set(styling.personas)
    if model.server is None:  # the greeting is the scripted restyling; a generic server has none
        assert all(g.input.startswith("Hi (") for g in dataset)
    rows = {r["stage"]: r for r in synth.manifest["stages"]}
    assert rows["style"]["requests"] == rows["style"]["items_in"]


def test_cancelling_a_run_keeps_everything_done_and_a_rerun_finishes_it() -> None:
    # scripted only: slow replies to chosen input requests decide where the run is cancelled
    def delay(prompt: str) -> float:  # about half the contexts are slow to get their inputs
        slow = stage_of(prompt) == "inputs" and hashlib.sha256(prompt.encode()).digest()[0] % 2
        return 0.5 if slow else 0.01

    replies = Replies(delay=delay)
    synth = synthesizer(replies, cache=None)

    async def cancel_midway() -> None:
        task = asyncio.create_task(synth.a_generate_goldens_from_docs(SAMPLE, num_goldens=20))

        def finished() -> int:  # candidates whose expected outputs are journaled
            if synth.last_run_dir is None or not (synth.last_run_dir / "expected.jsonl").exists():
                return 0
            return len((synth.last_run_dir / "expected.jsonl").read_text().splitlines())

        while finished() < 2:
            await asyncio.sleep(0.005)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_midway())
    assert synth.manifest["status"] == "interrupted"
    run_dir = Path(synth.manifest["run_dir"])
    done = len((run_dir / "expected.jsonl").read_text().splitlines())
    assert done >= 1
    before = len(replies.prompts)
    rerun = synthesizer(replies, cache=None)
    dataset = rerun.generate_goldens_from_docs(SAMPLE, num_goldens=20)
    assert len(dataset) == 20 and rerun.manifest["status"] == "complete"
    fresh = synthesizer(Replies(), cache=None, run_dir="fresh").generate_goldens_from_docs(
        SAMPLE, num_goldens=20
    )
    assert [g.model_dump() for g in dataset] == [g.model_dump() for g in fresh]
    # the stages journaled before the cancel were not asked again
    expected_again = sum(1 for p in replies.prompts[before:] if stage_of(p) == "expected")
    assert expected_again <= 10 - done


def test_without_a_target_each_planned_context_gives_its_goldens(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # scripted only: low critic scores for chosen passages are the scripted model's knob
    monkeypatch.setenv("SYNTH_REPLIES_REJECT", "0.25")
    synth = synthesizer(Replies())
    plan = synth.plan_from_docs(SAMPLE)
    dataset = synth.generate_goldens_from_docs(SAMPLE)
    rows = {r["stage"]: r for r in synth.manifest["stages"]}
    # rejected seeds were replaced: the run still made the planned number of contexts
    assert rows["critic"]["dropped"]["below_quality_threshold"] > 0
    assert rows["group"]["items_out"] == rows["inputs"]["items_in"] == plan.contexts
    assert len(dataset) == rows["dedup"]["items_out"] <= plan.goldens
    check_table_adds_up(synth.manifest)
    lines = Path(synth.manifest["run_dir"], "rejects.jsonl").read_text().splitlines()
    rejects = [json.loads(line) for line in lines]
    critic_rejects = [r for r in rejects if r["stage"] == "critic"]
    assert len(critic_rejects) >= rows["critic"]["dropped"]["below_quality_threshold"]
    assert all(r["reason"] == "below_quality_threshold" and r["source"] for r in critic_rejects)


def contexts_of(dataset: Dataset) -> dict[str, list[str]]:
    return {g.metadata["context_id"]: g.context_ids for g in dataset}


def test_no_chunk_sits_in_two_contexts_of_a_run(model: ModelMode) -> None:
    # one file of 42 small chunks and no similarity bar: eight seeds compete for neighbours
    config = ContextConstructionConfig(chunk_size=64, context_similarity_threshold=0.0)
    synth = model.synthesizer(context_construction_config=config)
    dataset = synth.generate_goldens_from_docs(SAMPLE / "troubleshooting_faq.md", num_goldens=16)
    assert len(dataset) == 16
    contexts = contexts_of(dataset)
    assert len(contexts) == 8
    assert all(len(ids) == 3 for ids in contexts.values())
    chunk_ids = [cid for ids in contexts.values() for cid in ids]
    assert len(chunk_ids) == len(set(chunk_ids))
    assert synth.manifest["contexts"]["corpus_too_small"] is False
    assert synth.manifest["contexts"]["reused_chunks"] == 0


def test_a_corpus_too_small_for_disjoint_contexts_shares_chunks_and_says_so(
    model: ModelMode,
) -> None:
    # four seeds a critic request: with this draw no two contexts hold the very same chunks, so
    # the dataset's context ids tell every context apart (two identical ones share an id)
    config = ContextConstructionConfig(
        chunk_size=128, context_similarity_threshold=0.0, contexts_per_critic_call=4
    )
    synth = model.synthesizer(context_construction_config=config)
    dataset = synth.generate_goldens_from_docs(SAMPLE / "quick_start.md", num_goldens=20)
    chunks = synth.manifest["inputs"]["chunks"]
    contexts = contexts_of(dataset)
    chunk_ids = [cid for ids in contexts.values() for cid in ids]
    assert len(chunk_ids) > chunks  # more context places than the file has chunks
    shared = len(chunk_ids) - len(set(chunk_ids))
    assert shared > 0
    assert synth.manifest["contexts"]["corpus_too_small"] is True
    assert synth.manifest["contexts"]["reused_chunks"] == shared


def test_a_prompt_overridden_for_one_stage_is_what_that_stage_sends(model: ModelMode) -> None:
    template = (
        "You write questions for a quiz night about these notes.\n\nContext:\n$context\n\n"
        'Write $count questions.\nReply with one JSON object: {"inputs": ["..."]}'
    )
    synth = model.synthesizer(prompts={"inputs": template})
    dataset = synth.generate_goldens_from_docs(SAMPLE, num_goldens=4)
    sent = [p for p in model.prompts() if stage_of(p) == "inputs"]
    assert sent and all(p.startswith("You write questions for a quiz night") for p in sent)
    assert not any("You write questions for evaluating" in p for p in model.prompts())
    default = model.synthesizer(run_dir="default-prompts")
    plain = default.generate_goldens_from_docs(SAMPLE, num_goldens=4)
    version = dataset[0].metadata["prompt_version"]
    assert version == synth.manifest["prompt_version"]
    assert version != plain[0].metadata["prompt_version"]


def test_a_store_write_failing_after_the_critic_started_ends_the_run_with_that_error(
    tmp_path: Path,
) -> None:
    """The run starts its critic requests while the last chunks are still being embedded and
    stored; an embedder failing there ends the run with its own error, recorded as failed, and
    leaves no thread behind. (Scripted only: the point is the embedder, not the model.)"""

    from synth.errors import ModelError

    class FailingEmbedder(HashEmbedder):
        name = "hash-failing"

        def _embed_batch(self, texts: list[str]) -> np.ndarray:
            raise ModelError("the embedding service is down")

    replies = Replies()
    synth = synthesizer(replies, embedder=FailingEmbedder(64), run_dir=tmp_path / "run")
    with pytest.raises(ModelError, match="service is down"):
        synth.generate_goldens_from_docs(SAMPLE, num_goldens=4)
    manifest = json.loads(next((tmp_path / "run").rglob("manifest.json")).read_text())
    assert manifest["status"] == "failed" and "service is down" in manifest["error"]
    assert replies.prompts  # the critic was asked before the failure was known
    assert not _store_threads_left()


def test_a_store_write_failing_after_the_vectors_were_embedded_ends_the_run_with_that_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Grouping searches the vectors as soon as they are embedded, while Chroma stores them; a
    store write failing then still ends the run with its own error, recorded as failed, and
    leaves no thread behind. (Scripted only: the point is the store, not the model.)"""

    from synth.errors import StoreError
    from synth.store import ChunkStore

    def failing_commit(self: ChunkStore, *args: object, **kwargs: object) -> object:
        raise StoreError("the disk is full")

    monkeypatch.setattr(ChunkStore, "commit", failing_commit)
    replies = Replies()
    synth = synthesizer(replies, run_dir=tmp_path / "run", store_path=tmp_path / "store")
    with pytest.raises(StoreError, match="disk is full"):
        synth.generate_goldens_from_docs(SAMPLE, num_goldens=4)
    manifest = json.loads(next((tmp_path / "run").rglob("manifest.json")).read_text())
    assert manifest["status"] == "failed" and "disk is full" in manifest["error"]
    assert not _store_threads_left()


def _store_threads_left() -> set[str]:
    """The store's writer and read-ahead threads still alive. A failed run returns at once and
    its writer's thread ends on its own, after the write under way (a Ctrl-C must not wait for
    it); it must end, so each is waited for, bounded, before looking."""
    import threading

    def ours(thread: threading.Thread) -> bool:
        return "writer" in thread.name or "read-ahead" in thread.name

    for thread in filter(ours, threading.enumerate()):
        thread.join(timeout=30)
    return {t.name for t in filter(ours, threading.enumerate())}


class _Recorded:
    """A progress display that keeps the stage names of the last snapshot it was shown."""

    def __init__(self) -> None:
        self.stages: list[str] = []
        self._snapshot = None

    def start(self, snapshot) -> None:
        self._snapshot = snapshot

    def stop(self) -> None:
        assert self._snapshot is not None
        self.stages = [name for name, _, _ in self._snapshot().stages]

    def note(self, text: str) -> None:
        return None


def test_the_progress_display_shows_only_the_stages_that_run() -> None:
    shown = _Recorded()
    synthesizer(Replies(), progress=shown).generate_goldens_from_docs(SAMPLE, num_goldens=2)
    assert shown.stages == ["critic (seeds)", "inputs", "filter", "evolve", "check", "expected"]
    bare = _Recorded()
    synthesizer(
        Replies(),
        progress=bare,
        use_context_critic=False,
        use_filter=False,
        evolution_config=EvolutionConfig(num_evolutions=0),
    ).generate_goldens_from_docs(SAMPLE, num_goldens=2, include_expected_output=False)
    assert bare.stages == ["inputs"]
    styled = _Recorded()
    synthesizer(
        Replies(), progress=styled, styling_config=StylingConfig(personas=["a nurse"])
    ).generate_goldens_from_docs(SAMPLE, num_goldens=2)
    assert "style" in styled.stages


def test_an_embedder_failing_at_dedup_drops_those_inputs_and_the_run_delivers_n(
    tmp_path: Path,
) -> None:
    """The dedup embedding of one candidate's inputs fails after its retries: those inputs are
    dropped at dedup with the error as their detail and topped up; the run is not ended."""
    from synth.errors import ServerError
    from synth.store import HashEmbedder

    class FlakyAtDedup(HashEmbedder):
        name = "hash-flaky-dedup"
        failures = 2

        def embed(self, texts, *, label=None):
            if label == "dedup" and self.failures > 0:
                self.failures -= 1
                raise ServerError("the embedding service kept failing (503)")
            return super().embed(texts, label=label)

    synth = synthesizer(Replies(), embedder=FlakyAtDedup(64), run_dir=tmp_path / "run")
    dataset = synth.generate_goldens_from_docs(SAMPLE, num_goldens=6)
    assert len(dataset) == 6
    manifest = synth.manifest
    dedup = {r["stage"]: r for r in manifest["stages"]}["dedup"]
    assert dedup["dropped"].get("model_error:server", 0) >= 2
    check_table_adds_up(manifest)
    rejects = [
        json.loads(line)
        for line in next((tmp_path / "run").rglob("rejects.jsonl")).read_text().splitlines()
    ]
    failed = [r for r in rejects if r["stage"] == "dedup"]
    assert failed and all(r["reason"] == "model_error:server" for r in failed)
    assert all("kept failing (503)" in r["detail"] for r in failed)


def test_an_embedder_failing_at_every_dedup_is_named_in_the_shortfall(tmp_path: Path) -> None:
    from synth.errors import ServerError
    from synth.store import HashEmbedder

    class DownAtDedup(HashEmbedder):
        name = "hash-down-at-dedup"

        def embed(self, texts, *, label=None):
            if label == "dedup":
                raise ServerError("the embedding service kept failing (503)")
            return super().embed(texts, label=label)

    synth = synthesizer(Replies(), embedder=DownAtDedup(64), run_dir=tmp_path / "run")
    with pytest.warns(ShortfallWarning):
        dataset = synth.generate_goldens_from_docs(SAMPLE, num_goldens=3)
    assert len(dataset) == 0
    reasons = synth.manifest["shortfall"]
    assert reasons[0].startswith("model errors: every item failed")
    assert any("dedup: model_error:server" in r for r in reasons)


class _OneDirection(HashEmbedder):
    """Every text gets the same vector: with deduplication on, every input after the first would
    be a near-duplicate."""

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        return np.ones((len(texts), self.dimension), dtype=np.float32)


@pytest.mark.parametrize("source", ["docs", "contexts"])
def test_with_dedup_turned_off_the_run_delivers_n_and_keeps_near_duplicates(source: str) -> None:
    """``dedup_threshold=None`` turns deduplication off: the run keeps what it makes, even inputs
    whose vectors are all alike, and still delivers exactly N."""
    config = GenerationConfig(dedup_threshold=None, max_goldens_per_context=2)
    synth = synthesizer(Replies(), embedder=_OneDirection(64), generation_config=config)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no shortfall
        if source == "docs":
            dataset = synth.generate_goldens_from_docs(SAMPLE, num_goldens=3)
        else:
            contexts = [["Solar panels lose a tenth of their output in winter, the report says."]]
            dataset = synth.generate_goldens_from_contexts(contexts, num_goldens=2)
    wanted = 3 if source == "docs" else 2
    assert len(dataset) == wanted and len({g.input for g in dataset}) == wanted
    manifest = synth.manifest
    assert manifest["status"] == "complete" and manifest["delivered"] == wanted
    rows = {r["stage"]: r for r in manifest["stages"]}
    assert "near_duplicate" not in rows["dedup"]["dropped"]
    assert manifest["delivered"] == rows["dedup"]["items_out"]
