"""A provider's Batch API in memory, scripted by the test, and a journal in memory.

:class:`ScriptedAPI` stands where ``synth.llm._openai_batch`` would: a job answers each of its
lines with the line's prompt in capitals once polled, unless the test scripted otherwise (an error
line for some requests, a job that expires, statuses or errors to report). :class:`MemoryLog` is a
run directory's journal of jobs without the file.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from synth.llm._batcher import Batcher
from synth.llm.base import Completion, run_sync
from synth.llm.batch import BatchConfig, JobResults, JobStatus

T = TypeVar("T")
Line = tuple[str, dict[str, Any]]
#: a batch configuration that polls and settles in hundredths of a second
FAST = BatchConfig(poll_interval=0.01, max_poll_interval=0.05, settle=0.02)
#: seconds a test waits for its replies before it fails (a hang, not a slow machine)
BOUND = 30.0


def bounded(make: Callable[[], Awaitable[T]]) -> T:
    """The result of ``make()``, run to completion in a new loop; TimeoutError when it takes
    longer than BOUND."""

    async def wait() -> T:
        return await asyncio.wait_for(make(), BOUND)

    return run_sync(wait())


def ask(batcher: Batcher, *prompts: str, label: str = "stage") -> list[asyncio.Task[Completion]]:
    """One task per prompt, each asking ``batcher`` (the custom id is the prompt)."""
    return [asyncio.ensure_future(batcher.request(p, {"prompt": p}, label)) for p in prompts]


class ScriptedAPI:
    """A Batch API in memory (see the module).

    ``gate`` (an event) holds ``submit`` until it is set; ``submit_errors`` are raised by the next
    submits, ``results_errors`` by the next reads of results; ``statuses`` (JobStatus or an
    exception) are reported before the job's own final status; ``outcomes`` are the final states of
    the next jobs ("completed" by default: an expired or failed job answers none of its lines);
    ``error_lines``: custom ids answered by an error line, once each."""

    def __init__(self) -> None:
        self.jobs: dict[str, list[Line]] = {}
        self.gate: asyncio.Event | None = None
        self.submitting = 0
        self.submit_errors: deque[BaseException] = deque()
        self.results_errors: deque[BaseException] = deque()
        self.statuses: deque[JobStatus | BaseException] = deque()
        self.outcomes: deque[str] = deque()
        self.error_lines: set[str] = set()
        self.polls: dict[str, int] = {}
        self._final: dict[str, str] = {}

    def body(self, prompt: str, system: str | None, schema: Any) -> dict[str, Any]:
        return {"prompt": prompt}

    async def submit(self, lines: list[Line]) -> str:
        self.submitting += 1
        if self.gate is not None:
            await self.gate.wait()
        if self.submit_errors:
            raise self.submit_errors.popleft()
        job_id = f"job-{len(self.jobs) + 1}"
        self.jobs[job_id] = list(lines)
        self._final[job_id] = self.outcomes.popleft() if self.outcomes else "completed"
        return job_id

    def ids(self) -> list[list[str]]:
        """The custom ids of each job submitted, in order."""
        return [[cid for cid, _ in lines] for lines in self.jobs.values()]

    async def status(self, job_id: str) -> JobStatus:
        self.polls[job_id] = self.polls.get(job_id, 0) + 1
        if self.statuses:
            scripted = self.statuses.popleft()
            if isinstance(scripted, BaseException):
                raise scripted
            return scripted
        n, state = len(self.jobs[job_id]), self._final[job_id]
        done = n if state == "completed" else 0
        return JobStatus(state, total=n, completed=done, failed=n - done, done=True)

    async def results(self, job_id: str, status: JobStatus) -> JobResults:
        if self.results_errors:
            raise self.results_errors.popleft()
        results = JobResults()
        if self._final[job_id] != "completed":
            return results
        for cid, body in self.jobs[job_id]:
            if cid in self.error_lines:
                self.error_lines.discard(cid)
                results.errors[cid] = f"line {cid}: server_error"
            else:
                results.answers[cid] = Completion(body["prompt"].upper())
        return results

    async def cancel(self, job_id: str) -> None:
        pass


class MemoryLog:
    """A journal of jobs in memory: the last record of a key wins, as in a run directory's."""

    def __init__(self) -> None:
        self.records: dict[str, dict[str, Any]] = {}
        self.appended: list[tuple[str, dict[str, Any]]] = []

    def append(self, key: str, record: Mapping[str, Any]) -> None:
        self.records[key] = dict(record)
        self.appended.append((key, dict(record)))
