"""The batcher: requests queued, sent as one job once they settle, journaled, polled, answered.

One :class:`Batcher` serves one model. ``request`` queues a ``(custom_id, body)`` and waits for its
reply. A queue that has had no new request for ``settle`` seconds is sent as one job (several when
it holds more than ``max_requests``). The job id is journaled (``<run_dir>/batches.jsonl``) before
the job is polled. A finished job answers its requests by ``custom_id``; its error lines, and what
an expired, failed or cancelled job did not finish, are queued again for the next job, each
request at most ``max_resubmits`` times.

A run that was killed asks its requests again (those the response cache does not answer): a
request whose id a journaled job holds waits on that job, polled again, and is never sent twice.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from synth.errors import ModelError
from synth.llm._batch_types import JOURNAL, BatchAPI, BatchConfig, JobLog, JobResults, JobStatus
from synth.llm.base import Completion
from synth.llm.retry import TRANSIENT
from synth.llm.usage import UNLABELLED

#: consecutive failed polls of one job before its requests fail
MAX_POLL_ERRORS = 8


@dataclass
class _Request:
    """A request waiting for its reply."""

    custom_id: str
    body: dict[str, Any]
    label: str
    future: asyncio.Future[Completion]
    sent: int = 0  # jobs it went out in


@dataclass
class _Job:
    """A job this run knows of: sent by it, or journaled by the run before it was killed."""

    id: str
    custom_ids: list[str]
    labels: Counter[str]
    state: str = "submitted"
    waiting: dict[str, _Request] = field(default_factory=dict)
    task: asyncio.Task[None] | None = None


class Batcher:
    """Queues, sends, journals and polls the batch jobs of one model (see the module)."""

    def __init__(self, api: BatchAPI, config: BatchConfig, model: str) -> None:
        self.api = api
        self.config = config
        self.model = model
        self._log_source: Callable[[], JobLog] | None = None
        self._note: Callable[[str], None] = lambda text: None
        # counted here until a run binds its manifest's entry (a model made outside any run)
        self.report: dict[str, Any] = _empty_report()
        self._reset(None)

    def _reset(self, loop: asyncio.AbstractEventLoop | None) -> None:
        self._loop = loop
        self._queue: dict[str, _Request] = {}
        self._jobs: dict[str, _Job] = {}
        self._owner: dict[str, str] = {}  # custom_id -> the journaled job that holds it
        self._answers: dict[str, Completion] = {}  # answered before anyone asked (a resumed job)
        self._flusher: asyncio.Task[None] | None = None
        self._last_queued = 0.0
        self._loaded = False
        self._log: JobLog | None = None

    def bind(self, log: Callable[[], JobLog], note: Callable[[str], None], report: dict[str, Any]):
        """Journal jobs in ``log()`` (called at the first request, once the run directory is
        open), tell the user of job states with ``note``, count jobs into ``report``."""
        self._log_source, self._note = log, note
        self.report = report.setdefault(self.model, _empty_report())
        self._reset(None)

    # ---- asking ------------------------------------------------------------------------------
    async def request(self, custom_id: str, body: dict[str, Any], label: str | None) -> Completion:
        """The reply to ``body``, from the job it goes out in (or a journaled one)."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # a new run's loop: what the old one waited on is gone
            self._reset(loop)
        self._load()
        if custom_id in self._answers:
            return self._answers.pop(custom_id)
        item = _Request(custom_id, body, label or UNLABELLED, loop.create_future())
        job_id = self._owner.get(custom_id)
        if job_id is not None:
            job = self._jobs[job_id]
            job.waiting[custom_id] = item
            self._poll(job)
        else:
            self._enqueue(item)
        return await item.future

    def _load(self) -> None:
        """Once per run: the jobs its journal holds, and which request each holds."""
        if self._loaded:
            return
        self._loaded = True
        self._log = self._log_source() if self._log_source is not None else None
        for key, record in (self._log.records if self._log is not None else {}).items():
            if record.get("model") != self.model:
                continue
            job = _Job(key, list(record["custom_ids"]), Counter(record.get("labels", {})))
            job.state = str(record.get("state", "submitted"))
            self._jobs[key] = job
            for custom_id in job.custom_ids:
                self._owner[custom_id] = key  # a later job (a resubmission) wins

    def _enqueue(self, item: _Request) -> None:
        assert self._loop is not None
        self._queue[item.custom_id] = item
        self._last_queued = self._loop.time()
        if self._flusher is None or self._flusher.done():
            self._flusher = self._loop.create_task(self._flush_when_settled())

    async def _flush_when_settled(self) -> None:
        """Send the queue as jobs each time it settles, until it stays empty; should anything
        raise, the requests not yet handed to a job's follower fail with it (none hangs)."""
        unsent: list[_Request] = []
        try:
            while self._queue:  # what came while a job was being sent goes out next
                await self._settled()
                unsent = [item for item in self._queue.values() if not item.future.done()]
                self._queue.clear()
                size = self.config.max_requests
                while unsent:
                    await self._submit(unsent[:size])
                    del unsent[:size]
        except Exception as exc:  # a bug or an SDK surprise: the requests fail with it
            for item in [*unsent, *self._queue.values()]:
                _fail(item, exc)
            self._queue.clear()

    async def _settled(self) -> None:
        """Return once ``settle`` seconds have passed with no new request."""
        assert self._loop is not None
        while True:
            wait = self._last_queued + self.config.settle - self._loop.time()
            if wait <= 0:
                return
            await asyncio.sleep(wait)

    # ---- sending -----------------------------------------------------------------------------
    async def _submit(self, items: list[_Request]) -> None:
        lines = [(item.custom_id, item.body) for item in items]
        try:
            job_id = await self.api.submit(lines)
        except ModelError as exc:
            for item in items:
                _fail(item, exc)
            return
        labels = Counter(item.label for item in items)
        job = _Job(job_id, [cid for cid, _ in lines], labels)
        for item in items:
            item.sent += 1
            job.waiting[item.custom_id] = item
        self._jobs[job_id] = job
        self._journal(job)  # before the first poll: a killed run finds it
        for label, n in labels.items():
            row = self._stage(label)
            row["jobs"] += 1
            row["requests"] += n
        self._poll(job)

    def _journal(self, job: _Job) -> None:
        record = {
            "model": self.model,
            "state": job.state,
            "custom_ids": job.custom_ids,
            "labels": dict(job.labels),
        }
        if self._log is not None:
            self._log.append(job.id, record)
        # updated, not replaced: the counts its last poll showed stay
        self.report["jobs"].setdefault(job.id, {}).update(
            state=job.state,
            requests=len(job.custom_ids),
            labels=dict(sorted(job.labels.items())),
        )

    def _stage(self, label: str) -> dict[str, int]:
        stages: dict[str, dict[str, int]] = self.report["stages"]
        return stages.setdefault(label, {"jobs": 0, "requests": 0, "retried": 0, "failed": 0})

    # ---- polling -----------------------------------------------------------------------------
    def _poll(self, job: _Job) -> None:
        assert self._loop is not None
        if job.task is None:
            job.task = self._loop.create_task(self._guarded(job))

    async def _guarded(self, job: _Job) -> None:
        """Follow ``job``; whatever stops it, its waiting requests hear of it (none hangs)."""
        try:
            await self._follow(job)
        except Exception as exc:  # a bug or an SDK surprise: the requests fail with it
            for item in job.waiting.values():
                _fail(item, exc)
            job.waiting.clear()

    async def _follow(self, job: _Job) -> None:
        delay, errors = self.config.poll_interval, 0
        shown: JobStatus | None = None
        while True:
            try:
                status = await self.api.status(job.id)
                errors = 0
            except TRANSIENT as exc:
                errors += 1
                if errors >= MAX_POLL_ERRORS:
                    return self._give_up(job, exc)
                status = shown or JobStatus(state=job.state)
            except ModelError as exc:
                return self._give_up(job, exc)
            if status != shown:
                shown = status
                self._show(job, status)
            if status.done:
                break
            await asyncio.sleep(delay)
            delay = min(delay * self.config.backoff, self.config.max_poll_interval)
        try:
            results = await self.api.results(job.id, status)
        except ModelError as exc:
            return self._give_up(job, exc)
        self._finish(job, status, results)

    def _show(self, job: _Job, status: JobStatus) -> None:
        job.state = status.state
        row = self.report["jobs"].setdefault(job.id, {"requests": len(job.custom_ids)})
        row.update(state=status.state, completed=status.completed, failed=status.failed)
        self._note(
            f"batch job {job.id}: {status.state}, {status.completed} of "
            f"{status.total or len(job.custom_ids)} done, {status.failed} failed"
        )

    def _finish(self, job: _Job, status: JobStatus, results: JobResults) -> None:
        """Answer the job's requests; send again what it did not finish."""
        self._journal(job)
        for custom_id in job.custom_ids:
            if self._owner.get(custom_id) == job.id:
                del self._owner[custom_id]
            answer = results.answers.get(custom_id)
            item = job.waiting.get(custom_id)  # left waiting until handled: should this raise,
            if answer is not None:  # the follower's guard fails it
                if item is None:  # a resumed job: its request may still come
                    self._answers[custom_id] = answer
                elif not item.future.done():
                    item.future.set_result(answer)
            elif item is not None and not item.future.done():
                why = results.errors.get(custom_id) or f"the job ended {status.state}"
                self._again(item, why)
            job.waiting.pop(custom_id, None)

    def _again(self, item: _Request, why: str) -> None:
        """Queue ``item`` for the next job, or fail it when it was sent too often."""
        row = self._stage(item.label)
        if item.sent > self.config.max_resubmits:
            row["failed"] += 1
            _fail(item, ModelError(f"{self.model}: batch request {item.custom_id} failed: {why}"))
            return
        row["retried"] += 1
        self._enqueue(item)

    def _give_up(self, job: _Job, error: ModelError) -> None:
        """The job cannot be followed: its waiting requests fail (it stays journaled)."""
        for item in job.waiting.values():
            _fail(item, error)
        job.waiting.clear()


def _empty_report() -> dict[str, Any]:
    """A model's entry in the manifest's batch report: its jobs and its counts by stage."""
    return {"jobs": {}, "stages": {}}


def _fail(item: _Request, error: BaseException) -> None:
    if not item.future.done():
        item.future.set_exception(error)


__all__ = ["JOURNAL", "MAX_POLL_ERRORS", "Batcher"]
