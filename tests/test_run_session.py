"""One run in progress (synth/run/session.py): the manifest it keeps and how each run ends,
the dataset and its provenance, a finished run replayed, the progress display's snapshot, a
session's own usage, and the accounting of embedding requests. Small runs from given contexts
through a Synthesizer (FunctionModel replies, the hash embedder), no server."""

from __future__ import annotations

import asyncio
import json
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from synth_replies import Replies

from synth import FunctionModel, Synthesizer
from synth.dataset import Dataset
from synth.errors import ShortfallWarning
from synth.run import session as run_session
from synth.run.manifest import package_versions
from synth.run.progress import Snapshot
from synth.run.session import GOLDENS, MANIFEST_EVERY, RunSession, replay_note

CONTEXTS = [
    ["Solar panels lose a tenth of their output in winter, the report says."],
    ["Wind turbines stop turning above 25 metres per second of wind."],
]


class Display:
    """A progress display that records what the run showed it, and can fail on start."""

    def __init__(self, fail: BaseException | None = None) -> None:
        self.fail = fail
        self.notes: list[str] = []
        self.events: list[str] = []
        self.snapshot: Callable[[], Snapshot] | None = None
        self.last: Snapshot | None = None

    def start(self, snapshot: Callable[[], Snapshot]) -> None:
        self.events.append("start")
        self.snapshot = snapshot
        if self.fail is not None:
            raise self.fail

    def stop(self) -> None:
        self.events.append("stop")
        assert self.snapshot is not None
        self.last = self.snapshot()

    def note(self, text: str) -> None:
        self.notes.append(text)


class Counted:
    """The scripted replies, counting requests."""

    def __init__(self) -> None:
        self.replies = Replies()
        self.requests = 0

    async def __call__(self, prompt: str, system: str | None = None) -> str:
        self.requests += 1
        return await self.replies(prompt, system)


def synthesizer(run_dir: Path | None, **kw: Any) -> tuple[Synthesizer, Counted]:
    model = Counted()
    options: dict[str, Any] = dict(embedder="hash", cache=None, run_dir=run_dir, seed=5)
    options.update(kw)
    return Synthesizer(FunctionModel(model, name="replies"), **options), model


def test_a_complete_runs_manifest_and_dataset(tmp_path: Path) -> None:
    display = Display()
    synth, model = synthesizer(tmp_path / "run", progress=display)
    dataset = synth.generate_goldens_from_contexts(
        CONTEXTS, num_goldens=2, max_goldens_per_context=1
    )
    manifest = synth.manifest
    assert manifest is not None and len(dataset) == 2
    run_dir = tmp_path / "run"
    assert json.loads((run_dir / "manifest.json").read_text(encoding="utf-8")) == manifest
    assert manifest["run_id"] == dataset.metadata["run_id"] and manifest["run_dir"] == str(run_dir)
    assert (manifest["mode"], manifest["status"], manifest["seed"]) == ("contexts", "complete", 5)
    assert (manifest["num_goldens"], manifest["delivered"], manifest["shortfall"]) == (2, 2, [])
    totals = manifest["totals"]
    assert totals["requests"] == model.requests > 0
    assert manifest["requests_per_golden"] == round(model.requests / 2, 3)
    assert manifest["versions"] == package_versions()
    assert manifest["created_at"] == manifest["sessions"][0]["started_at"]
    assert manifest["updated_at"] >= manifest["created_at"]
    assert manifest["limits"]["max_concurrent"] == 256  # the ceiling: no number given
    # the level the adaptive limiter reached is recorded (it started at a run's start, 64)
    concurrency = manifest["concurrency"]
    assert concurrency["adaptive"] is True and concurrency["start"] == 64
    assert 1 <= concurrency["level"] <= concurrency["peak_level"] <= 256
    assert "contexts" not in manifest  # no documents: no seed counts
    (session,) = manifest["sessions"]
    assert session["status"] == "complete" and session["ended_at"] >= session["started_at"]
    assert "replayed" not in session
    assert sum(row.get("requests", 0) for row in session["usage"].values()) == model.requests
    assert [row["stage"] for row in manifest["stages"]] == [
        "inputs",
        "filter",
        "evolve",
        "style",
        "check",
        "expected",
        "dedup",
    ]
    # the dataset, as saved in the run directory, with its provenance
    assert Dataset.load(run_dir / GOLDENS) == dataset
    metadata = dataset.metadata
    assert metadata == {
        "generator": "synth",
        "mode": "contexts",
        "run_id": manifest["run_id"],
        "seed": 5,
        "num_goldens": 2,
        "delivered": 2,
        "shortfall": [],
        "models": manifest["models"],
        "prompt_version": manifest["prompt_version"],
        "config": manifest["config"],
    }
    for golden in dataset:
        assert golden.metadata["run_id"] == manifest["run_id"] and golden.metadata["seed"] == 5
        assert golden.metadata["prompt_version"] == manifest["prompt_version"]
        assert golden.metadata["models"] == manifest["models"]
    # what the display was shown, read when the run stopped
    assert display.events == ["start", "stop"]
    shown = display.last
    assert shown is not None
    assert shown.title == f"run {manifest['run_id']}"
    assert (shown.goldens, shown.target, shown.requests) == (2, 2, model.requests)
    assert (shown.cached, shown.retries, shown.cost_usd, shown.in_flight) == (0, 0, 0.0, 0)
    names = [name for name, _, _ in shown.stages]
    assert "style" not in names  # the styling rewrites nothing: no style line
    assert ("inputs", 2, 2) in shown.stages and ("filter", 2, 2) in shown.stages


def test_a_finished_run_is_replayed_without_a_request(tmp_path: Path) -> None:
    synth, model = synthesizer(tmp_path / "run")
    first = synth.generate_goldens_from_contexts(CONTEXTS, num_goldens=2, max_goldens_per_context=1)
    before = synth.manifest
    asked = model.requests
    display = Display()
    again, model = synthesizer(tmp_path / "run", progress=display)
    replayed = again.generate_goldens_from_contexts(
        CONTEXTS, num_goldens=2, max_goldens_per_context=1
    )
    assert replayed == first and model.requests == 0
    assert display.notes == [replay_note(str(tmp_path / "run"), 0)] and display.events == []
    manifest = again.manifest
    assert manifest is not None and before is not None
    assert [s["status"] for s in manifest["sessions"]] == ["complete", "complete"]
    assert manifest["sessions"][1]["replayed"] is True
    assert {k: v for k, v in manifest.items() if k not in ("sessions", "updated_at")} == {
        k: v for k, v in before.items() if k not in ("sessions", "updated_at")
    }
    assert manifest["totals"]["requests"] == asked  # the finished run's record stands
    on_disk = json.loads((tmp_path / "run" / "manifest.json").read_text(encoding="utf-8"))
    assert on_disk == manifest


def test_a_run_whose_goldens_file_is_gone_is_run_again(tmp_path: Path) -> None:
    synth, _ = synthesizer(tmp_path / "run")
    synth.generate_goldens_from_contexts(CONTEXTS, num_goldens=2, max_goldens_per_context=1)
    (tmp_path / "run" / GOLDENS).unlink()
    again, model = synthesizer(tmp_path / "run")
    dataset = again.generate_goldens_from_contexts(
        CONTEXTS, num_goldens=2, max_goldens_per_context=1
    )
    assert len(dataset) == 2 and (tmp_path / "run" / GOLDENS).exists()
    manifest = again.manifest
    assert manifest is not None and "replayed" not in manifest["sessions"][1]
    assert manifest["created_at"] == manifest["sessions"][0]["started_at"]  # kept from the first


def test_replay_note_names_the_failed_requests_it_did_not_retry() -> None:
    start = "run r had already finished: its saved goldens were returned and no request was made"
    end = "; to run it afresh (retrying what failed), choose a new --run-dir"
    assert replay_note("r", 0) == start + end
    assert replay_note("r", 1) == (
        start + "; its 1 request that failed after retries were not retried" + end
    )
    assert replay_note("r", 3) == (
        start + "; its 3 requests that failed after retries were not retried" + end
    )


def test_a_replay_counts_the_finished_runs_failures(tmp_path: Path) -> None:
    synth, _ = synthesizer(tmp_path / "run")
    synth.generate_goldens_from_contexts(CONTEXTS, num_goldens=2, max_goldens_per_context=1)
    path = tmp_path / "run" / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["totals"]["failures"] = 2
    path.write_text(json.dumps(manifest), encoding="utf-8")
    display = Display()
    again, _ = synthesizer(tmp_path / "run", progress=display)
    again.generate_goldens_from_contexts(CONTEXTS, num_goldens=2, max_goldens_per_context=1)
    assert display.notes == [replay_note(str(tmp_path / "run"), 2)]


def test_a_short_run_is_partial(tmp_path: Path) -> None:
    synth, _ = synthesizer(tmp_path / "run")
    with pytest.warns(ShortfallWarning):
        dataset = synth.generate_goldens_from_contexts(
            CONTEXTS[:1], num_goldens=3, max_goldens_per_context=1
        )
    manifest = synth.manifest
    assert manifest is not None and len(dataset) == 1
    assert manifest["status"] == "partial" and manifest["sessions"][0]["status"] == "partial"
    assert manifest["delivered"] == 1 and manifest["shortfall"] == dataset.metadata["shortfall"]
    assert manifest["shortfall"] and dataset.metadata["delivered"] == 1


@pytest.mark.parametrize(
    ("error", "status"),
    [(RuntimeError("boom"), "failed"), (asyncio.CancelledError(), "interrupted")],
)
def test_a_run_that_ends_by_an_error_says_so(
    tmp_path: Path, error: BaseException, status: str
) -> None:
    synth, _ = synthesizer(tmp_path / "run", progress=Display(fail=error))
    with pytest.raises(type(error)):
        asyncio.run(
            synth.a_generate_goldens_from_contexts(
                CONTEXTS, num_goldens=2, max_goldens_per_context=1
            )
        )
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["status"] == status and manifest["sessions"][0]["status"] == status
    assert manifest["delivered"] is None and manifest["requests_per_golden"] is None
    if status == "failed":
        assert manifest["error"] == "RuntimeError: boom"
    else:
        assert "error" not in manifest


def test_a_sessions_usage_is_its_own(tmp_path: Path) -> None:
    synth, model = synthesizer(None)
    synth.generate_goldens_from_contexts(CONTEXTS, num_goldens=1, max_goldens_per_context=1)
    first = model.requests
    synth.generate_goldens_from_contexts(CONTEXTS, num_goldens=2, max_goldens_per_context=1)
    manifest = synth.manifest
    assert manifest is not None
    assert manifest["totals"]["requests"] == model.requests - first  # not the first run's too


def _session(tmp_path: Path) -> RunSession:
    from synth.run.models import ModelSettings, RunModels
    from synth.run.setup import RunConfigs, RunPlace, open_session

    options = Synthesizer(FunctionModel(Counted(), name="replies"), embedder="hash", cache=None)
    configs = RunConfigs.of(options, None, None)
    owner = RunModels(ModelSettings.of(options))
    return open_session("contexts", {}, 2, configs, owner, RunPlace(tmp_path / "run", None))


def test_the_manifest_is_rewritten_at_most_every_second_unless_forced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = [1000.0]
    monkeypatch.setattr(run_session.time, "monotonic", lambda: clock[0])
    session = _session(tmp_path)
    written: list[str] = []

    async def go() -> None:
        async with session:
            assert session.dir is not None
            real = session.dir.write_manifest
            session.dir.write_manifest = lambda m, **kw: (
                written.append(m["status"]),
                real(m, **kw),
            )[1]  # type: ignore[method-assign]
            clock[0] += MANIFEST_EVERY - 0.01
            session._flush()
            assert written == []
            clock[0] += 0.01
            session._flush()
            assert written == ["running"]
            session._flush()
            assert written == ["running"]
            session._flush(force=True)
            assert written == ["running", "running"]

    asyncio.run(go())
    assert written == ["running", "running", "complete"]
    assert MANIFEST_EVERY == 1.0


class Embedder:
    def __init__(self, remote: bool, batches: int) -> None:
        self.remote, self.batches_embedded = remote, batches


def test_embedding_requests_are_counted_by_stage_for_remote_embedders_only(
    tmp_path: Path,
) -> None:
    session = _session(tmp_path)
    session.count_embeddings("ingest", Embedder(False, 9), 0)  # type: ignore[arg-type]
    assert session.embedding_requests == {}
    remote = Embedder(True, 7)
    session.count_embeddings("ingest", remote, 2)  # type: ignore[arg-type]
    session.count_embeddings("contexts", remote, 3, until=5)  # type: ignore[arg-type]
    assert session.embedding_requests == {"ingest": 5, "contexts": 2}
    assert session._dedup_mark == 0  # not the deduplication embedder
    session._dedup_embedder = remote  # type: ignore[assignment]
    session._dedup_mark = 4
    session.count_embeddings("contexts", remote, 5, until=6)  # type: ignore[arg-type]
    assert session._dedup_mark == 6 and session.embedding_requests["contexts"] == 3
    session.count_embeddings("contexts", remote, 0, until=1)  # type: ignore[arg-type]
    assert session._dedup_mark == 6  # never moves back
    session.count_embeddings("ingest", remote, 7)  # type: ignore[arg-type]
    assert session._dedup_mark == 6  # no end given: the whole count is the stage's
    usage = session._session_usage()
    assert usage["ingest"]["embedding_requests"] == 5
    assert usage["contexts"]["embedding_requests"] == 4
    remote.batches_embedded = 10  # four more since the mark: deduplication's
    assert session._session_usage()["dedup"]["embedding_requests"] == 4
    session._dedup_embedder = Embedder(False, 50)  # type: ignore[assignment]
    assert "dedup" not in session._session_usage()
    session.embedding_requests["filter"] = 0
    assert "filter" not in session._session_usage()  # a stage that sent none gets no row


def test_a_session_before_it_is_entered(tmp_path: Path) -> None:
    session = _session(tmp_path)
    assert session.path is None and session.status == "running" and session.finished is False
    assert session.stage_rows() == [] and session._shared_chunks() == 0
    session._flush(force=True)  # no run directory yet: nothing to write
    assert session.manifest is None and not (tmp_path / "run").exists()
    shown = session.snapshot()
    assert shown.title == "" and shown.stages == [] and shown.goldens == 0 and shown.target == 2
    session.note("nothing shows it")  # the null display
    woken = SimpleNamespace(done=False)
    session._wakeup = SimpleNamespace(set=lambda: setattr(woken, "done", True))  # type: ignore[assignment]
    session.notify()
    assert woken.done is True


@pytest.mark.parametrize("drop", ["failures", "totals"])
def test_a_replay_of_a_manifest_that_counts_no_failures_names_none(
    tmp_path: Path, drop: str
) -> None:
    synth, _ = synthesizer(tmp_path / "run")
    synth.generate_goldens_from_contexts(CONTEXTS, num_goldens=2, max_goldens_per_context=1)
    path = tmp_path / "run" / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    if drop == "totals":
        manifest.pop("totals")
    else:
        manifest["totals"].pop("failures", None)
    path.write_text(json.dumps(manifest), encoding="utf-8")
    display = Display()
    again, _ = synthesizer(tmp_path / "run", progress=display)
    again.generate_goldens_from_contexts(CONTEXTS, num_goldens=2, max_goldens_per_context=1)
    assert display.notes == [replay_note(str(tmp_path / "run"), 0)]


class FirstSeen(Display):
    """A display that also reads a snapshot as soon as the run starts it."""

    first: Snapshot | None = None

    def start(self, snapshot: Callable[[], Snapshot]) -> None:
        super().start(snapshot)
        self.first = snapshot()


def test_the_display_counts_from_zero_and_shows_what_the_cache_answered(tmp_path: Path) -> None:
    cache: dict[str, str] = {}
    synth, model = synthesizer(tmp_path / "one", cache=cache)
    synth.generate_goldens_from_contexts(CONTEXTS, num_goldens=2, max_goldens_per_context=1)
    display = FirstSeen()
    again, _ = synthesizer(tmp_path / "two", cache=cache, progress=display)
    again.generate_goldens_from_contexts(CONTEXTS, num_goldens=2, max_goldens_per_context=1)
    first, last = display.first, display.last
    assert first is not None and last is not None
    assert (first.requests, first.cached, first.goldens) == (0, 0, 0)
    manifest = again.manifest
    assert manifest is not None
    totals = manifest["totals"]
    assert last.cached == totals["cached"] > 0  # the second run's replies came from the cache
    assert (last.requests, last.retries) == (totals["requests"], totals["retries"])
    assert last.cost_usd == totals["cost_usd"]


def write_docs(folder: Path) -> Path:
    folder.mkdir()
    paragraphs = [
        "Solar panels lose a tenth of their output in winter, the report says.",
        "An inverter changes direct current from the panels into alternating current.",
    ]
    (folder / "a.md").write_text("\n\n".join(paragraphs), encoding="utf-8")
    return folder


def test_a_docs_runs_manifest_counts_the_chunks_its_contexts_reused_and_its_coverage(
    tmp_path: Path,
) -> None:
    from synth.contexts.config import ContextConstructionConfig

    contexts = ContextConstructionConfig(chunk_size=16, max_contexts_per_document=8)
    synth, _ = synthesizer(tmp_path / "run", context_construction_config=contexts)

    async def run() -> Dataset:
        # in the test's own thread, where mutmut sees the session's calls
        return await synth.a_generate_goldens_from_docs(
            str(write_docs(tmp_path / "docs")), num_goldens=4, max_goldens_per_context=1
        )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ShortfallWarning)  # a small corpus may fall short
        dataset = asyncio.run(run())
    manifest = synth.manifest
    assert manifest is not None
    uses = Counter(c for golden in dataset for c in set(golden.context_ids))
    reused = sum(n - 1 for n in uses.values() if n > 1)
    assert reused > 0  # two chunks for four contexts
    assert manifest["contexts"]["reused_chunks"] == reused
    assert manifest["contexts"]["corpus_too_small"] is (reused > 0)
    rows = manifest["coverage"]["files"]
    assert sum(row["delivered"] for row in rows) == len(dataset)
