"""Anthropic's Message Batches over an :class:`~synth.llm.anthropic.AnthropicModel`'s client.

A job is ``messages.batches.create(requests=[{"custom_id", "params"}])`` (``POST
/v1/messages/batches``), whose params are the adapter's own ``messages.create`` arguments; it is
polled with ``messages.batches.retrieve`` and its results read with ``messages.batches.results``
(one line per request: succeeded, errored, canceled or expired). Its states are named as
OpenAI's are (``ended`` becomes completed, expired or cancelled by what the counts say).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from synth.llm._batch_types import JobResults, JobStatus
from synth.llm.anthropic import AnthropicModel

_STATES = {"in_progress": "in_progress", "canceling": "cancelling"}


class AnthropicBatchAPI:
    """Jobs of messages through Anthropic's Message Batches (see the module)."""

    def __init__(self, adapter: AnthropicModel) -> None:
        self.adapter = adapter

    def body(
        self, prompt: str, system: str | None, schema: type[BaseModel] | None
    ) -> dict[str, Any]:
        arguments = self.adapter.request_arguments(prompt, system, schema)
        arguments.pop("timeout", None)
        return arguments

    async def submit(self, lines: list[tuple[str, dict[str, Any]]]) -> str:
        requests = [{"custom_id": cid, "params": body} for cid, body in lines]
        batches = self.adapter._client.messages.batches
        job = await self.adapter.call(batches.create, requests=requests)
        return str(job.id)

    async def status(self, job_id: str) -> JobStatus:
        batches = self.adapter._client.messages.batches
        job = await self.adapter.call(batches.retrieve, message_batch_id=job_id)
        counts = job.request_counts
        total = sum(
            int(getattr(counts, name, 0) or 0)
            for name in ("processing", "succeeded", "errored", "canceled", "expired")
        )
        state = _STATES.get(job.processing_status, "completed")
        if job.processing_status == "ended":
            state = "expired" if counts.expired else "cancelled" if counts.canceled else state
        return JobStatus(
            state=state,
            total=total,
            completed=int(counts.succeeded or 0),
            failed=int(counts.errored or 0),
            done=job.processing_status == "ended",
        )

    async def results(self, job_id: str, status: JobStatus) -> JobResults:
        batches = self.adapter._client.messages.batches
        lines = await self.adapter.call(_read_all, results=batches.results, job_id=job_id)
        results = JobResults()
        for line in lines:
            result = line.result
            if result.type == "succeeded":
                results.answers[line.custom_id] = self.adapter.completion_of(result.message)
            else:
                error = getattr(getattr(result, "error", None), "error", None)
                message = getattr(error, "message", None) or result.type
                results.errors[line.custom_id] = str(message)
        return results

    async def cancel(self, job_id: str) -> None:
        batches = self.adapter._client.messages.batches
        await self.adapter.call(batches.cancel, message_batch_id=job_id)


def _read_all(results: Any, job_id: str) -> list[Any]:
    """Every line of a job's results (the SDK streams them; read off the event loop)."""
    return list(results(message_batch_id=job_id))


__all__ = ["AnthropicBatchAPI"]
