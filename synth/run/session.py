"""One run in progress: the run directory around the stream, the goldens, and the manifest.

:class:`RunSession` opens (or reopens) the run directory, streams candidates through the stages
(:mod:`synth.run.stream`), turns the kept drafts into goldens with their provenance, and keeps the
manifest up to date: rewritten every second while the run goes and once more when it ends, however
it ends. Its per-stage rows count the candidates the run used; requests, tokens and cost come from
the models' usage, summed over every session of the run.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import Counter
from pathlib import Path
from types import TracebackType
from typing import Any

from synth._journal import Journal
from synth.contexts.coverage import Coverage, measure_coverage
from synth.contexts.feed import Feed
from synth.data import Golden
from synth.generate.dedup import Deduplicator
from synth.generate.question_types import tag_type
from synth.llm.base import LLM
from synth.llm.limiter import RateLimiter
from synth.llm.usage import Usage
from synth.run.difficulty import DifficultyMeter, max_easy
from synth.run.dir import RunDir, replay_note
from synth.run.manifest import (
    USAGE_FIELDS,
    add_usage,
    now,
    package_versions,
    stats_rows,
    timeline,
    totals,
    usage_by_stage,
    with_usage,
)
from synth.run.progress import NullProgress, Progress, Snapshot
from synth.run.slots import spare_counts
from synth.run.stages import CandidateRunner, StageSettings
from synth.run.stream import Stream, StreamResult, Target
from synth.store.embedder import Embedder

#: how often the manifest is rewritten while a run goes (seconds)
MANIFEST_EVERY = 1.0
#: the delivered goldens in the run directory
GOLDENS = "goldens.jsonl"


class RunSession:
    """One run in progress: its directory, its stages, its accounting. ``async with`` opens the
    run directory (``run_dir``, or ``.synth/runs/<run id>``) and, on the way out, writes the
    manifest whatever happened (status complete, partial, interrupted or failed)."""

    def __init__(
        self,
        mode: str,
        key: dict[str, Any],
        settings: StageSettings,
        usages: list[Usage],
        limiter: RateLimiter,
        num_goldens: int | None,
        *,
        run_dir: str | os.PathLike[str] | None = None,
        progress: Progress | None = None,
        context_critic: LLM | None = None,
    ) -> None:
        self.mode = mode
        self.key = key
        self.settings = settings
        self.critic = settings.critic
        self.context_critic = context_critic or settings.critic  # the model scoring seed chunks
        self.prompts = settings.prompts
        self.usages = usages
        self.limiter = limiter
        self.num_goldens = num_goldens
        self.rows: list[dict[str, Any]] = []  # rows of the stages before generation (ingest)
        #: batches this session sent to a remote embedder, by stage
        self.embedding_requests: Counter[str] = Counter()
        self._dedup_embedder: Embedder | None = None
        self._dedup_mark = 0
        self.info: dict[str, Any] = {}
        #: a run from documents: each file's planned goldens (for the manifest's ``coverage``)
        self.coverage: Coverage | None = None
        self.status = "running"
        self.stream: Stream | None = None
        self.feed: Feed | None = None
        self._wakeup = asyncio.Event()  # what the stream waits on (a feed's ``notify`` sets it)
        self.result: StreamResult | None = None
        self.seed = settings.seed
        self.run_dir = run_dir
        self.progress = progress or NullProgress()
        self.manifest: dict[str, Any] | None = None  # as last written
        self._baseline = [usage_by_stage([u]) for u in usages]
        self._last_flush = 0.0
        self.versions = package_versions()
        self.dir: RunDir | None = None
        #: the run had already finished (its manifest says complete): see :meth:`replay`
        self.finished = False
        self.replayed = False
        self._previous: dict[str, Any] = {}
        #: the plan's coverage and its files' rows as the manifest holds them (dumped once)
        self._plan_rows: tuple[Coverage, list[dict[str, Any]]] | None = None

    @property
    def path(self) -> Path | None:
        return self.dir.path if self.dir is not None else None

    async def __aenter__(self) -> RunSession:
        self.dir = RunDir.open(self.run_dir, self.key)
        previous = self.dir.read_manifest() or {}
        self._previous = previous
        self.finished = previous.get("status") == "complete" and self.saved.exists()
        self.sessions: list[dict[str, Any]] = list(previous.get("sessions", []))
        self.created_at = previous.get("created_at") or now()
        self.session: dict[str, Any] = {"started_at": now(), "status": "running", "usage": {}}
        self._started = time.time()
        self.sessions.append(self.session)
        try:
            self._flush(force=True)
        except BaseException:  # the manifest cannot be written (a full disk): let go of the folder
            self.dir.close()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.status = "complete" if not (self.result and self.result.shortfall) else "partial"
        elif issubclass(exc_type, asyncio.CancelledError | KeyboardInterrupt):
            self.status = "interrupted"
        else:
            self.status = "failed"
            self.info["error"] = f"{exc_type.__name__}: {exc}"
        try:
            self._flush(force=True)
        finally:
            assert self.dir is not None
            self.dir.close()

    @property
    def saved(self) -> Path:
        """The file of the goldens the run delivered (the pipeline saves them there)."""
        assert self.dir is not None
        return self.dir.path / GOLDENS

    def replay(self) -> Path:
        """The file of the goldens of a run that had already finished, as it saved them; no
        request is made.

        Items that failed for good in that run are not asked again (a retry could change the
        dataset); a new run directory starts the run afresh, retrying them."""
        assert self.finished, "only a finished run is replayed"
        self.replayed = True
        self.session["replayed"] = True
        failures = int(self._previous.get("totals", {}).get("failures", 0) or 0)
        self.note(replay_note(str(self.path), failures))
        return self.saved

    def mark_interrupted(self) -> None:
        """Record at once that the run was interrupted: the manifest as last written, with status
        ``interrupted``. Callable from another thread, for a process about to be ended by force
        (see synth._interrupt) before this run could unwind; a run that has ended is left as is."""
        if self.dir is None or self.manifest is None or self.finished:
            return
        if self.status not in ("running", "interrupted"):  # it ended otherwise, and said so
            return
        self.status = self.session["status"] = "interrupted"
        self.session["ended_at"] = now()
        manifest = {**self.manifest, "status": "interrupted", "updated_at": now()}
        self.dir.write_manifest({**manifest, "sessions": self.sessions})

    def note(self, text: str) -> None:
        """A line for the user, on the progress display (nothing without one)."""
        self.progress.note(text)

    def notify(self) -> None:
        """Wake the run's stream (a feed calls this when it has something new)."""
        self._wakeup.set()

    def journal(self, name: str) -> Journal:
        """The run directory's journal ``<name>.jsonl``."""
        assert self.dir is not None, "use the session as an async context manager"
        return self.dir.journal(name)

    # ---- stages 2 to 11 ------------------------------------------------------------------------
    async def execute(
        self, feed: Feed, target: Target, coverage: Coverage | None = None
    ) -> tuple[list[Golden], dict[str, Any]]:
        """Stream candidates from ``feed`` through the generation stages until ``target``; the
        goldens and the dataset-level metadata (the pipeline saves them in :attr:`saved`). A feed
        that works in the background must have been made with ``notify=session.notify``;
        ``coverage`` is the files' planned goldens."""
        assert self.dir is not None, "use the session as an async context manager"
        self.feed = feed
        self.coverage = coverage
        dedup = None
        threshold = self.settings.generation.dedup_threshold
        if threshold is not None:
            embedder: Embedder | None = self.settings.embedder
            dedup = Deduplicator(embedder, threshold)
            self._dedup_embedder = embedder
            self._dedup_mark = embedder.batches_embedded if embedder is not None else 0
        meter = DifficultyMeter(feed.corpus(), dense=self.settings.embeds_chunks)
        runner = CandidateRunner(
            self.settings, self.dir, lambda c, s, d: stream.on_stage(c, s, d), meter
        )
        feed.warm_with(runner.warmer())  # inputs asked beside the critic, for the likely contexts
        easy = max_easy(self.settings.generation.max_easy_share, target.num_goldens)
        stream = Stream(
            feed, runner, target, dedup, on_change=self._flush, wakeup=self._wakeup, max_easy=easy
        )
        self.stream = stream
        self.progress.start(self.snapshot)
        try:
            self.result = await stream.run()
        finally:
            self.progress.stop()
        # not in the finally: an interrupted run writes its manifest without waiting for the index
        await meter.aclose()
        return self._delivered(self.result)

    def _delivered(self, result: StreamResult) -> tuple[list[Golden], dict[str, Any]]:
        assert self.dir is not None
        models = {name: identity for name, identity in self.key["models"].items()}
        goldens: list[Golden] = [
            draft.to_golden(
                models=models,
                prompt_version=self.prompts.version,
                seed=self.seed,
                run_id=self.dir.id,
            )
            for draft in result.goldens
        ]
        generation = self.settings.generation
        tag_type(goldens, generation.question_type, generation.records_type)
        metadata = {
            "generator": "synth",
            "mode": self.mode,
            "run_id": self.dir.id,
            "seed": self.seed,
            "num_goldens": self.num_goldens,
            "delivered": len(goldens),
            "shortfall": result.shortfall,
            "models": models,
            "prompt_version": self.prompts.version,
            "config": self.key["config"],
        }
        return goldens, metadata

    # ---- accounting ------------------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        """What the progress display shows now."""
        usage = self._session_usage()
        counts = totals(list(usage.values())) if usage else {}
        stages: list[tuple[str, int, int]] = []
        stream, feed = self.stream, self.feed
        # only the stages that do something: no critic line with the critic off, no style line
        # when the styling rewrites nothing (the filter and evolve steps are not run when off)
        if feed is not None:
            stages.extend(feed.progress())
        if stream is not None:
            for name, (done, total) in stream.stage_counts().items():
                if name != "style" or self.settings.styling.rewrites_inputs:
                    stages.append((name, done, total))
        return Snapshot(
            title=f"run {self.dir.id}" if self.dir is not None else "",
            stages=stages,
            goldens=stream.goldens_so_far if stream is not None else 0,
            target=self.num_goldens,
            in_flight=self.limiter.in_flight,
            requests=int(counts.get("requests", 0)),
            cached=int(counts.get("cached", 0)),
            retries=int(counts.get("retries", 0)),
            cost_usd=float(counts.get("cost_usd", 0.0)),
        )

    def _session_usage(self) -> dict[str, dict[str, float]]:
        """This session's usage per stage (the models may have been used before this run)."""
        current = usage_by_stage(self.usages)
        baseline = add_usage(*self._baseline)
        out: dict[str, dict[str, float]] = {}
        for stage, row in current.items():
            before = baseline.get(stage, {})
            out[stage] = {k: v - before.get(k, 0) for k, v in row.items()}
        embedded = Counter(self.embedding_requests)
        embedder = self._dedup_embedder
        if embedder is not None and embedder.remote:
            embedded["dedup"] += embedder.batches_embedded - self._dedup_mark
        for stage, n in embedded.items():
            if n:
                out.setdefault(stage, dict.fromkeys(USAGE_FIELDS, 0))["embedding_requests"] += n
        return out

    def count_embeddings(
        self, stage: str, embedder: Embedder, since: int, until: int | None = None
    ) -> None:
        """Record the batches ``embedder`` sent for ``stage`` since it had sent ``since`` (and until
        it had sent ``until``, when given: what it sent after is not the stage's, and when it is
        also the deduplication embedder, the batches up to ``until`` are not deduplication's)."""
        if not embedder.remote:
            return
        end = embedder.batches_embedded if until is None else until
        self.embedding_requests[stage] += end - since
        if until is not None and embedder is self._dedup_embedder:
            self._dedup_mark = max(self._dedup_mark, until)

    def stage_rows(self) -> list[dict[str, Any]]:
        """The per-stage rows of the candidates the run used (so far)."""
        rows = list(self.rows)
        stream, result = self.stream, self.result
        if stream is None:
            return rows
        committed = result.committed if result is not None else stream.committed
        reached = result is not None and not result.shortfall
        # once the target is met, the seeds drawn after the last context used do not count
        cut = committed[-1].candidate.position if (reached and committed) else None
        rows.extend(stats_rows(stream.feed.stage_stats(cut), used=len(committed)))
        drafts = [d for slot in committed for d in (slot.drafts or [])]
        rows.extend(stats_rows(stream.runner.stage_stats(drafts, len(committed))))
        return rows

    def _shared_chunks(self) -> int:
        """Chunks that sit in more than one context the run used (only when the corpus is small)."""
        stream = self.stream
        if stream is None:
            return 0
        seen: Counter[str] = Counter()
        for slot in stream.committed:
            if slot.candidate.context is not None:
                seen.update(set(slot.candidate.context.chunk_ids))
        return sum(n - 1 for n in seen.values() if n > 1)

    def _flush(self, force: bool = False) -> None:
        """Rewrite the manifest (at most every MANIFEST_EVERY seconds unless forced)."""
        if self.dir is None:
            return
        moment = time.monotonic()
        if not force and moment - self._last_flush < MANIFEST_EVERY:
            return
        self._last_flush = moment
        self.session["usage"] = self._session_usage()
        self.session["ended_at"] = now()
        self.session["status"] = self.status
        if self.replayed:  # nothing was run: the finished run's record stands, one session more
            manifest = {**self._previous, "updated_at": now(), "sessions": self.sessions}
            self.manifest = manifest
            self.dir.write_manifest(manifest)
            return
        usage = add_usage(*[s.get("usage", {}) for s in self.sessions])
        rows = with_usage(self.stage_rows(), usage)
        delivered = len(self.result.goldens) if self.result is not None else None
        total = totals(rows)
        manifest = {
            "run_id": self.dir.id,
            "run_dir": str(self.dir.path),
            "mode": self.mode,
            "status": self.status,
            "created_at": self.created_at,
            "updated_at": now(),
            "seed": self.seed,
            "num_goldens": self.num_goldens,
            "delivered": delivered,
            "shortfall": self.result.shortfall if self.result is not None else [],
            "requests_per_golden": (round(total["requests"] / delivered, 3) if delivered else None),
            "models": self.key["models"],
            "prompt_version": self.key["prompt_version"],
            "config": self.key["config"],
            "versions": self.versions,
            "stages": rows,
            "totals": total,
            "sessions": self.sessions,
            **self.info,
            # the level the limiter reached (an adaptive one found it; see synth.llm._aimd)
            "concurrency": self.limiter.concurrency(),
            # where this session's time went (synth.run.manifest.timeline)
            "timeline": timeline(self.usages, self._started),
        }
        seeds = self.feed.seed_counts() if self.feed is not None else None
        if seeds is not None:
            shared, stream = self._shared_chunks(), self.stream
            contexts: dict[str, Any] = {**seeds, "reused_chunks": shared}
            contexts["corpus_too_small"] = shared > 0
            contexts["spares"] = spare_counts(stream.slots, stream.committed) if stream else None
            manifest["contexts"] = contexts
        if self.coverage is not None:
            manifest["coverage"] = self._coverage_record(self.coverage)
        self.manifest = manifest
        self.dir.write_manifest(manifest, compact=not force)  # the last one indented

    def _coverage_record(self, planned: Coverage) -> dict[str, Any]:
        """The manifest's coverage. While the run goes its files' rows are the plan's: they are
        dumped once, not at every rewrite (a row per file: 8 ms of CPU a rewrite at 2,000 files,
        the one part of a rewrite that grew with the store)."""
        if self.result is not None:
            return self._coverage(planned).model_dump(mode="json")
        if self._plan_rows is None or self._plan_rows[0] is not planned:
            self._plan_rows = (planned, [row.model_dump(mode="json") for row in planned.files])
        measured = self._coverage(planned, rows=False).model_dump(mode="json")
        return {**measured, "files": self._plan_rows[1]}

    def _coverage(self, planned: Coverage, rows: bool = True) -> Coverage:
        """``planned`` measured against the goldens: those delivered once the run has ended, those
        kept so far while it goes (the files' rows get their delivered counts only at the end).
        Without ``rows``, the files' rows are left out."""
        stream, result = self.stream, self.result
        drafts = result.goldens if result is not None else stream.goldens if stream else []
        return measure_coverage(
            planned.rule,
            planned.files if rows else [],
            (d.context for d in drafts),
            files_ingested=planned.files_ingested,
            chunks_stored=planned.chunks_stored,
            delivered=result is not None,
        )


__all__ = ["GOLDENS", "MANIFEST_EVERY", "RunSession"]
