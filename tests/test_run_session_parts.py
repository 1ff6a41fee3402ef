"""What a run session builds and records, part by part (synth/run/session.py): deduplication as
configured, the difficulty meter and the easy cap, the trust summary, the question type on each
golden, the session record, the critic's journal, the seeds and stage rows of docs runs, the
manifest while a run goes, the context critic, a second run's deduplication requests, and the
progress display's counts. Every run is made with the async API in the test's own thread (where
mutmut sees the session's calls); small runs through a Synthesizer, FunctionModel replies, the
hash embedder, no server."""

from __future__ import annotations

import asyncio
import json
import warnings
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from test_run_session import CONTEXTS, Counted, _session, synthesizer

from synth import FunctionModel, Synthesizer
from synth.contexts.config import ContextConstructionConfig
from synth.dataset import Dataset
from synth.dataset.inspect import inspect_dataset
from synth.errors import ShortfallWarning
from synth.generate.config import EvolutionConfig, GenerationConfig
from synth.run import session as run_session
from synth.run.difficulty import STAGE, TOO_EASY
from synth.store.hash_embedder import HashEmbedder

SOLAR = CONTEXTS[0]
PARAGRAPHS = [
    "Solar panels lose a tenth of their output in winter, the report says.",
    "An inverter changes direct current from the panels into alternating current.",
    "Wind turbines stop turning above 25 metres per second of wind.",
    "Batteries store the surplus of sunny afternoons for the evening peak.",
]


def from_contexts(synth: Synthesizer, contexts: list[list[str]], n: int) -> Dataset:
    async def go() -> Dataset:
        return await synth.a_generate_goldens_from_contexts(
            contexts, num_goldens=n, max_goldens_per_context=1
        )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ShortfallWarning)
        return asyncio.run(go())


def from_docs(synth: Synthesizer, folder: Path, n: int) -> Dataset:
    async def go() -> Dataset:
        return await synth.a_generate_goldens_from_docs(
            str(folder), num_goldens=n, max_goldens_per_context=1
        )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ShortfallWarning)
        return asyncio.run(go())


def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("\n\n".join(PARAGRAPHS), encoding="utf-8")
    return folder


#: no evolution: one context's questions are the same, wherever it stands in the run
SAME = EvolutionConfig(num_evolutions=0)
SMALL_CHUNKS = ContextConstructionConfig(chunk_size=16, max_contexts_per_document=8)


def row(manifest: dict[str, Any], stage: str) -> tuple[int, int, dict[str, int]]:
    (found,) = [r for r in manifest["stages"] if r["stage"] == stage]
    return found["items_in"], found["items_out"], found["dropped"]


def test_near_duplicate_inputs_are_dropped_with_the_configured_threshold(tmp_path: Path) -> None:
    generation = GenerationConfig(dedup_threshold=0.95)
    synth, _ = synthesizer(tmp_path / "run", generation_config=generation, evolution_config=SAME)
    dataset = from_contexts(synth, [SOLAR, SOLAR, CONTEXTS[1]], 2)
    inputs = [golden.input for golden in dataset]
    assert len(inputs) == 2 and len(set(inputs)) == 2  # the second solar question was dropped
    manifest = synth.manifest
    assert manifest is not None and manifest["status"] == "complete"
    assert row(manifest, "dedup") == (3, 2, {"near_duplicate": 1})
    session = synth._session
    assert session is not None and session.stream is not None
    dedup = session.stream.dedup
    assert dedup is not None and dedup.threshold == 0.95
    assert dedup.embedder is session.settings.embedder is not None


def test_with_dedup_off_identical_inputs_are_all_kept(tmp_path: Path) -> None:
    off = GenerationConfig(dedup_threshold=None)
    synth, _ = synthesizer(tmp_path / "run", generation_config=off, evolution_config=SAME)
    dataset = from_contexts(synth, [SOLAR, SOLAR], 2)
    assert len(dataset) == 2 and dataset[0].input == dataset[1].input
    session = synth._session
    assert session is not None and session.stream is not None and session.stream.dedup is None


def test_each_golden_is_measured_and_the_easy_cap_drops_the_easy_ones(tmp_path: Path) -> None:
    synth, _ = synthesizer(tmp_path / "one")
    dataset = from_contexts(synth, CONTEXTS, 2)
    for golden in dataset:
        difficulty = golden.metadata[STAGE]
        assert difficulty["label"] == "easy" and difficulty["bm25_rank"] == 1
        assert difficulty["dense_rank"] is None  # given contexts were never embedded
    capped, _ = synthesizer(tmp_path / "two", max_easy_share=0.0)
    assert len(from_contexts(capped, CONTEXTS, 2)) == 0
    manifest = capped.manifest
    assert manifest is not None and manifest["status"] == "partial"
    assert any(TOO_EASY in line for line in manifest["shortfall"])


def test_the_trust_summary_uses_the_configured_grounding_threshold(tmp_path: Path) -> None:
    synth, model = synthesizer(tmp_path / "run", grounding_threshold=0.8)
    dataset = from_contexts(synth, CONTEXTS, 2)
    manifest = synth.manifest
    assert manifest is not None
    expected = inspect_dataset(dataset, grounding_threshold=0.8).summary()
    assert manifest["trust"] == expected and manifest["trust"]["grounding_threshold"] == 0.8
    assert manifest["trust"]["goldens"] == 2
    # the generation stages' rows count the drafts of the contexts used
    assert row(manifest, "inputs") == (2, 2, {}) and row(manifest, "expected") == (2, 2, {})


def test_goldens_record_their_question_type_only_when_the_run_asks_for_types(
    tmp_path: Path,
) -> None:
    plain, _ = synthesizer(tmp_path / "one")
    for golden in from_contexts(plain, CONTEXTS, 2):
        assert "question_type" not in golden.metadata and "tests" not in golden.metadata
    typed = GenerationConfig(question_types={"simple": 1.0, "double": 0.0})
    synth, _ = synthesizer(tmp_path / "two", generation_config=typed)
    dataset = from_contexts(synth, CONTEXTS, 2)
    assert len(dataset) == 2
    for golden in dataset:
        assert (golden.metadata["question_type"], golden.metadata["tests"]) == (
            "simple",
            "generator",
        )


def test_a_rerun_keeps_the_runs_creation_time_and_each_session_records_four_things(
    tmp_path: Path,
) -> None:
    synth, _ = synthesizer(tmp_path / "run")
    from_contexts(synth, CONTEXTS, 2)
    manifest = synth.manifest
    assert manifest is not None
    assert set(manifest["sessions"][0]) == {"started_at", "ended_at", "status", "usage"}
    # a rerun (its goldens gone) of a run made long ago
    path = tmp_path / "run" / "manifest.json"
    on_disk = json.loads(path.read_text(encoding="utf-8"))
    on_disk["created_at"] = "2020-01-01T00:00:00+00:00"
    path.write_text(json.dumps(on_disk), encoding="utf-8")
    (tmp_path / "run" / run_session.GOLDENS).unlink()
    again, _ = synthesizer(tmp_path / "run")
    from_contexts(again, CONTEXTS, 2)
    rerun = again.manifest
    assert rerun is not None and rerun["created_at"] == "2020-01-01T00:00:00+00:00"
    assert set(rerun["sessions"][1]) == {"started_at", "ended_at", "status", "usage"}


class RemoteHash(HashEmbedder):
    """The hash embedder, counted as a service's requests would be."""

    remote = True


def test_a_second_runs_deduplication_requests_are_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    embedder = RemoteHash()
    synth, _ = synthesizer(None, embedder=embedder)
    from_contexts(synth, CONTEXTS, 2)
    before = embedder.batches_embedded
    assert before >= 2
    from_contexts(synth, [*CONTEXTS, ["Heat pumps move heat instead of making it, it says."]], 3)
    manifest = synth.manifest
    assert manifest is not None
    sent = embedder.batches_embedded - before
    assert sent > 0
    (session,) = manifest["sessions"]
    assert session["usage"]["dedup"]["embedding_requests"] == sent
    assert manifest["totals"]["embedding_requests"] == sent


def test_a_docs_run_that_meets_its_target_counts_the_seeds_up_to_its_last_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_session, "MANIFEST_EVERY", 0.0)  # every change rewrites it
    synth, _ = synthesizer(tmp_path / "run", context_construction_config=SMALL_CHUNKS)
    written: list[dict[str, Any]] = []
    real = run_session.RunDir.write_manifest

    def record(self: Any, manifest: dict[str, Any], **kw: Any) -> None:
        written.append(json.loads(json.dumps(manifest)))
        real(self, manifest, **kw)

    monkeypatch.setattr(run_session.RunDir, "write_manifest", record)
    dataset = from_docs(synth, docs(tmp_path), 2)
    manifest = synth.manifest
    assert manifest is not None and len(dataset) == 2 and manifest["status"] == "complete"
    seeds = manifest["contexts"]
    assert seeds["seeds_scored"] > 2  # the feed ran ahead of what the run needed
    assert row(manifest, "critic") == (2, 2, {}) and row(manifest, "group") == (2, 2, {})
    assert (seeds["reused_chunks"], seeds["corpus_too_small"]) == (0, False)
    for golden in dataset:  # one embedder made the chunks and the inputs: a dense rank too
        assert golden.metadata[STAGE]["dense_rank"] is not None
    # while it went, the manifest was rewritten as drafts came in, the coverage with them
    running = [m for m in written if m["status"] == "running" and "coverage" in m]
    assert running
    assert all(f["delivered"] is None for m in running for f in m["coverage"]["files"])
    assert max(m["coverage"]["seed_chunks"] for m in running) > 0
    assert written[-1]["status"] == "complete"
    assert manifest["coverage"]["seed_chunks"] == 2
    # the feed journals the critic's scores through the session, under the critic's name
    assert (tmp_path / "run" / "critic.jsonl").exists()
    assert not (tmp_path / "run" / "None.jsonl").exists()


def test_a_docs_run_with_one_chunk_in_two_contexts_says_the_corpus_is_too_small(
    tmp_path: Path,
) -> None:
    synth, _ = synthesizer(tmp_path / "run", context_construction_config=SMALL_CHUNKS)
    from_docs(synth, docs(tmp_path), 5)
    manifest = synth.manifest
    assert manifest is not None
    assert manifest["contexts"]["reused_chunks"] == 1
    assert manifest["contexts"]["corpus_too_small"] is True


def test_a_short_docs_run_counts_every_seed_and_its_requests_per_golden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = docs(tmp_path)
    synth, model = synthesizer(tmp_path / "one", context_construction_config=SMALL_CHUNKS)
    dataset = from_docs(synth, folder, 9)
    manifest = synth.manifest
    assert manifest is not None and manifest["status"] == "partial"
    per_golden = model.requests / len(dataset)
    assert round(per_golden, 3) != per_golden  # more digits than the manifest keeps
    assert manifest["requests_per_golden"] == round(per_golden, 3)
    # the critic rejects some seeds, the last one drawn among them: a short run counts it too
    monkeypatch.setenv("SYNTH_REPLIES_REJECT", "0.4")
    synth, _ = synthesizer(tmp_path / "two", context_construction_config=SMALL_CHUNKS)
    from_docs(synth, folder, 9)
    manifest = synth.manifest
    assert manifest is not None and manifest["status"] == "partial"
    scored = manifest["contexts"]["seeds_scored"]
    critic = row(manifest, "critic")
    assert critic[0] == scored and critic[2].get("below_quality_threshold", 0) > 0
    assert critic[0] - critic[1] == critic[2]["below_quality_threshold"]


def test_a_docs_run_scores_its_seeds_with_the_context_critic(tmp_path: Path) -> None:
    scorer = Counted()
    contexts = ContextConstructionConfig(
        chunk_size=16, critic_model=FunctionModel(scorer, name="scorer")
    )
    synth, model = synthesizer(tmp_path / "run", context_construction_config=contexts)
    from_docs(synth, docs(tmp_path), 2)
    assert scorer.requests > 0 and model.requests > 0
    manifest = synth.manifest
    assert manifest is not None and manifest["contexts"]["seeds_scored"] > 0


def test_the_display_shows_the_sessions_counts_and_the_requests_in_flight(tmp_path: Path) -> None:
    session = _session(tmp_path)
    usage = {
        "inputs": {"requests": 3, "cached": 1, "retries": 2, "cost_usd": 0.25},
        "expected": {"requests": 1, "cached": 0, "retries": 1, "cost_usd": 0.5},
    }
    session._session_usage = lambda: usage  # type: ignore[method-assign]
    session.limiter = SimpleNamespace(in_flight=4)  # type: ignore[assignment]
    shown = session.snapshot()
    assert (shown.requests, shown.cached, shown.retries) == (4, 1, 3)
    assert shown.cost_usd == 0.75 and shown.in_flight == 4
    session._session_usage = lambda: {}  # type: ignore[method-assign]
    shown = session.snapshot()
    assert (shown.requests, shown.cached, shown.retries, shown.cost_usd) == (0, 0, 0, 0.0)
