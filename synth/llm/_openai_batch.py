"""OpenAI's Batch API over an :class:`~synth.llm.openai.OpenAIModel`'s client.

A job is a JSONL file of ``{"custom_id", "method": "POST", "url": "/v1/chat/completions",
"body"}`` lines uploaded with purpose ``batch`` (``/v1/files``), then ``/v1/batches`` with that
file, endpoint ``/v1/chat/completions`` and completion window ``24h``; it is polled with
``/v1/batches/{id}`` and its output and error files read from ``/v1/files/{id}/content``. The
bodies are the adapter's own requests, so a line is what the chat endpoint would have been sent.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from synth.errors import ServerError
from synth.llm._batch_types import JobResults, JobStatus
from synth.llm.base import Completion
from synth.llm.openai import OpenAIModel

ENDPOINT = "/v1/chat/completions"
WINDOW = "24h"
#: the states after which a job changes no more
FINAL = frozenset({"completed", "expired", "failed", "cancelled"})
#: request options of ``create`` that are not part of a line's body
_NOT_BODY = ("timeout", "extra_headers", "extra_query")


class OpenAIBatchAPI:
    """Jobs of chat completions through OpenAI's ``/v1/batches`` (see the module)."""

    def __init__(self, adapter: OpenAIModel) -> None:
        self.adapter = adapter

    def body(
        self, prompt: str, system: str | None, schema: type[BaseModel] | None
    ) -> dict[str, Any]:
        arguments = self.adapter.request_arguments(prompt, system, schema, self.adapter._mode)
        for key in _NOT_BODY:
            arguments.pop(key, None)
        arguments.update(arguments.pop("extra_body", None) or {})
        return arguments

    async def submit(self, lines: list[tuple[str, dict[str, Any]]]) -> str:
        client = self.adapter._client
        data = "".join(
            json.dumps(
                {"custom_id": cid, "method": "POST", "url": ENDPOINT, "body": body},
                ensure_ascii=False,
            )
            + "\n"
            for cid, body in lines
        ).encode("utf-8")
        upload = await self.adapter.call(
            client.files.create, file=("synth-batch.jsonl", data), purpose="batch"
        )
        job = await self.adapter.call(
            client.batches.create,
            input_file_id=upload.id,
            endpoint=ENDPOINT,
            completion_window=WINDOW,
        )
        return str(job.id)

    async def status(self, job_id: str) -> JobStatus:
        job = await self.adapter.call(self.adapter._client.batches.retrieve, batch_id=job_id)
        counts = getattr(job, "request_counts", None)
        errors = getattr(getattr(job, "errors", None), "data", None) or []
        return JobStatus(
            state=str(job.status),
            total=int(getattr(counts, "total", 0) or 0),
            completed=int(getattr(counts, "completed", 0) or 0),
            failed=int(getattr(counts, "failed", 0) or 0),
            done=job.status in FINAL,
            detail="; ".join(str(getattr(e, "message", e)) for e in errors),
        )

    async def results(self, job_id: str, status: JobStatus) -> JobResults:
        job = await self.adapter.call(self.adapter._client.batches.retrieve, batch_id=job_id)
        results = JobResults()
        for file_id in (job.output_file_id, job.error_file_id):
            if file_id:
                for line in (await self._content(file_id)).splitlines():
                    if line.strip():
                        self._read_line(json.loads(line), results)
        return results

    async def cancel(self, job_id: str) -> None:
        await self.adapter.call(self.adapter._client.batches.cancel, batch_id=job_id)

    async def _content(self, file_id: str) -> str:
        content = await self.adapter.call(self.adapter._client.files.content, file_id=file_id)
        return str(content.text)

    def _read_line(self, line: dict[str, Any], results: JobResults) -> None:
        custom_id = str(line.get("custom_id"))
        response = line.get("response") or {}
        if response.get("status_code") == 200 and not line.get("error"):
            try:
                results.answers[custom_id] = self._completion(response.get("body") or {})
            except ServerError as exc:  # one bad line is that request's failure, not the job's
                results.errors[custom_id] = str(exc)
            return
        error = line.get("error") or (response.get("body") or {}).get("error") or {}
        status = response.get("status_code")
        results.errors[custom_id] = f"{status or ''} {error.get('message') or error}".strip()

    def _completion(self, body: dict[str, Any]) -> Completion:
        sdk = self.adapter._sdk
        try:
            response = sdk.types.chat.ChatCompletion.model_validate(body)
        except ValueError as exc:
            raise ServerError(f"{self.adapter.model}: a batch line is malformed: {exc}") from exc
        return self.adapter._completion(response)


__all__ = ["ENDPOINT", "FINAL", "WINDOW", "OpenAIBatchAPI"]
