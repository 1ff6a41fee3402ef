"""The records and protocols of the Batch API layer (``synth.llm.batch`` re-exports them)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from synth.llm.base import Completion

#: the name of the run directory's journal of batch jobs (``batches.jsonl``)
JOURNAL = "batches"


class BatchConfig(BaseModel):
    """How requests are sent through a provider's Batch API."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    poll_interval: float = Field(default=5.0, gt=0, description="seconds before the first poll")
    max_poll_interval: float = Field(default=60.0, gt=0, description="longest wait between polls")
    backoff: float = Field(default=1.5, ge=1, description="each wait this much longer")
    settle: float = Field(
        default=1.0, ge=0, description="seconds with no new request before a job is sent"
    )
    max_requests: int = Field(default=50_000, ge=1, description="requests per job at most")
    max_resubmits: int = Field(
        default=3, ge=0, description="times a request is sent again after an error line or expiry"
    )


@dataclass(frozen=True)
class JobStatus:
    """A job as the provider reports it, in OpenAI's words for its state."""

    state: str  # validating, in_progress, finalizing, completed, expired, failed, cancelled, ...
    total: int = 0
    completed: int = 0
    failed: int = 0
    #: the state is final: the job's results (what it finished) can be read
    done: bool = False
    detail: str = ""


@dataclass
class JobResults:
    """What a finished job answered, by ``custom_id``, and why the others failed."""

    answers: dict[str, Completion] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)


class BatchAPI(Protocol):
    """One provider's Batch API, over the adapter's client (SDK errors translated)."""

    def body(
        self, prompt: str, system: str | None, schema: type[BaseModel] | None
    ) -> dict[str, Any]:
        """The request of one line, as the provider's endpoint takes it."""
        ...

    async def submit(self, lines: list[tuple[str, dict[str, Any]]]) -> str:
        """Send ``(custom_id, body)`` lines as one job; its id."""
        ...

    async def status(self, job_id: str) -> JobStatus:
        """The job's state and counts now."""
        ...

    async def results(self, job_id: str, status: JobStatus) -> JobResults:
        """The answers and error lines of a finished job."""
        ...

    async def cancel(self, job_id: str) -> None:
        """Ask the provider to stop the job."""
        ...


class JobLog(Protocol):
    """Where job ids are journaled: a run directory's :class:`~synth.run.dir.Journal`."""

    @property
    def records(self) -> dict[str, dict[str, Any]]: ...

    def append(self, key: str, record: Mapping[str, Any]) -> None: ...


__all__ = ["JOURNAL", "BatchAPI", "BatchConfig", "JobLog", "JobResults", "JobStatus"]
