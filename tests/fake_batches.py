"""OpenAI's Batch API on the fake server (tests/fake_openai.py mounts it on every FakeOpenAI).

Routes: ``POST /v1/files`` (multipart upload, purpose ``batch``), ``GET /v1/files/{id}/content``,
``POST /v1/batches``, ``GET /v1/batches/{id}``, ``POST /v1/batches/{id}/cancel``. A job is
``validating`` when made, ``in_progress`` at once, and finished by the server's own clock thread
``delay`` seconds later (nobody has to poll for it to move on). Every line is answered by the
server's reply function (``FakeOpenAI._answer``: the same one the chat endpoint uses), so a batch
run and a run over ``/v1/chat/completions`` get the same replies for the same requests.

Scripting (change between jobs)::

    server.batches.delay = 0.2            # seconds from creation to the end of a job
    server.batches.error_share = 0.2      # lines answered in the error file (500), seeded by
                                          # the job's seed and each line's custom_id
    server.batches.outcomes = ["expired", "failed"]   # how the next jobs end (then: completed);
                                          # expired: the first half of the lines answered
    server.batches.submitted              # job id -> the custom_ids it was sent
    server.batches.custom_id_counts()     # custom_id -> how many jobs it was sent in

Anthropic's Message Batches are served too (``POST /v1/messages/batches``, ``GET .../{id}``,
``GET .../{id}/results``, ``POST .../{id}/cancel``), on the same jobs and clock: a request's
``params`` are answered as a chat request of the same messages (the system prompt first).
"""

from __future__ import annotations

import email
import email.policy
import hashlib
import itertools
import json
import random
import threading
import time
from collections import Counter, deque
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fake_openai import FakeOpenAI

#: the states a job ends in
FINAL = ("completed", "expired", "failed", "cancelled")


class FakeBatches:
    """The files and batch jobs of one fake server (see the module)."""

    def __init__(self, fake: FakeOpenAI, *, delay: float = 0.1, seed: int = 0) -> None:
        self.fake = fake
        self.delay = delay
        self.error_share = 0.0
        self.seed = seed
        self.outcomes: deque[str] = deque()
        self.files: dict[str, bytes] = {}
        self.jobs: dict[str, dict[str, Any]] = {}
        self.submitted: dict[str, list[str]] = {}
        self.polls: Counter[str] = Counter()
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._clock: threading.Thread | None = None

    def custom_id_counts(self) -> Counter[str]:
        """How many jobs each custom_id was sent in."""
        with self._lock:
            return Counter(cid for ids in self.submitted.values() for cid in ids)

    # ---- routing -------------------------------------------------------------------------------
    def handles(self, path: str) -> bool:
        return "/files" in path or "/batches" in path

    def serve(self, method: str, path: str, headers: Any, raw: bytes) -> tuple[int, Any]:
        """``(status, payload)``: bytes for a file's content, else JSON."""
        parts = [p for p in path.split("?", 1)[0].split("/") if p and p != "v1"]
        if parts[:2] == ["messages", "batches"]:
            return self._anthropic(method, parts[2:], raw)
        if method == "POST" and parts == ["files"]:
            return self._upload(headers.get("Content-Type", ""), raw)
        if method == "GET" and len(parts) == 3 and parts[0] == "files" and parts[2] == "content":
            data = self.files.get(parts[1])
            return (200, data) if data is not None else _missing("file", parts[1])
        if method == "POST" and parts == ["batches"]:
            return self._create(json.loads(raw or b"{}"))
        if parts[:1] == ["batches"] and len(parts) >= 2:
            with self._lock:
                job = self.jobs.get(parts[1])
                if job is None:
                    return _missing("batch", parts[1])
                if method == "POST" and parts[2:] == ["cancel"]:
                    if job["status"] not in FINAL:
                        job["status"], job["ends_at"] = "cancelling", time.monotonic()
                        job["outcome"] = "cancelled"
                elif method == "GET" and len(parts) == 2:
                    self.polls[parts[1]] += 1
                return 200, _public(job)
        return 404, {"error": {"message": f"no route {path}", "type": "not_found"}}

    def _anthropic(self, method: str, parts: list[str], raw: bytes) -> tuple[int, Any]:
        if method == "POST" and not parts:
            requests = json.loads(raw or b"{}")["requests"]
            lines = [{"custom_id": r["custom_id"], "body": _as_chat(r["params"])} for r in requests]
            job_id = self._new_job(lines, "/v1/messages", "anthropic")
            return 200, _anthropic_public(self.jobs[job_id])
        with self._lock:
            job = self.jobs.get(parts[0]) if parts else None
            if job is None:
                return _missing("batch", "/".join(parts))
            if method == "POST" and parts[1:] == ["cancel"] and job["status"] not in FINAL:
                job["status"], job["ends_at"], job["outcome"] = "cancelling", 0.0, "cancelled"
            if method == "GET" and parts[1:] == ["results"]:
                return 200, job.get("results", b"")
            self.polls[job["id"]] += int(method == "GET")
            return 200, _anthropic_public(job)

    def _upload(self, content_type: str, raw: bytes) -> tuple[int, Any]:
        message = email.message_from_bytes(
            f"Content-Type: {content_type}\r\n\r\n".encode() + raw, policy=email.policy.HTTP
        )
        fields: dict[str, bytes] = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            fields[str(name)] = part.get_payload(decode=True) or b""
        if fields.get("purpose") != b"batch" or "file" not in fields:
            return 400, {"error": {"message": "purpose batch and a file", "type": "invalid"}}
        file_id = self._new_file(fields["file"])
        return 200, _file(file_id, len(fields["file"]), "batch")

    def _new_file(self, data: bytes) -> str:
        with self._lock:
            file_id = f"file-{next(self._ids):04d}"
            self.files[file_id] = data
        return file_id

    def _create(self, body: dict[str, Any]) -> tuple[int, Any]:
        data = self.files.get(str(body.get("input_file_id")))
        if data is None:
            return _missing("file", str(body.get("input_file_id")))
        if body.get("endpoint") != "/v1/chat/completions" or body.get("completion_window") != "24h":
            return 400, {"error": {"message": "endpoint or window", "type": "invalid"}}
        lines = [json.loads(line) for line in data.decode().splitlines() if line.strip()]
        job_id = self._new_job(lines, body["endpoint"], "openai", body["input_file_id"])
        return 200, {**_public(self.jobs[job_id]), "status": "validating"}

    def _new_job(
        self, lines: list[dict[str, Any]], endpoint: str, api: str, input_file: str = ""
    ) -> str:
        with self._lock:
            job_id = f"batch_{next(self._ids):04d}"
            outcome = self.outcomes.popleft() if self.outcomes else "completed"
            self.submitted[job_id] = [line["custom_id"] for line in lines]
            self.jobs[job_id] = {
                "id": job_id,
                "object": "batch",
                "endpoint": endpoint,
                "input_file_id": input_file,
                "completion_window": "24h",
                "status": "in_progress",
                "created_at": int(time.time()),
                "output_file_id": None,
                "error_file_id": None,
                "errors": None,
                "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
                "lines": lines,
                "outcome": outcome,
                "api": api,
                "ends_at": time.monotonic() + self.delay,
            }
            self._start_clock()
        return job_id

    # ---- the clock -----------------------------------------------------------------------------
    def _start_clock(self) -> None:
        if self._clock is None:
            self._clock = threading.Thread(target=self._tick, name="fake-batches", daemon=True)
            self._clock.start()

    def _tick(self) -> None:
        while not self.fake._closing.wait(0.01):
            with self._lock:
                due = [
                    job
                    for job in self.jobs.values()
                    if job["status"] not in FINAL and job["ends_at"] <= time.monotonic()
                ]
            for job in due:
                self._end(job)

    def _end(self, job: dict[str, Any]) -> None:
        """Answer the job's lines (all, half when it expired or was cancelled, none when failed)."""
        outcome, lines = job["outcome"], job["lines"]
        if outcome == "failed":
            errors = {"data": [{"code": "server_error", "message": "the job failed"}]}
            with self._lock:
                job.update(status="failed", errors=errors)
            return
        if outcome in ("expired", "cancelled"):
            lines = lines[: len(lines) // 2]
        answered, failed = [], []
        for line in lines:
            (failed if self._errs(job["id"], line["custom_id"]) else answered).append(line)
        output = "".join(json.dumps(self._answer(line)) + "\n" for line in answered)
        errors_file = "".join(json.dumps(_error_line(line)) + "\n" for line in failed)
        if job["api"] == "anthropic":
            results = [_anthropic_line(self._answer(line)) for line in answered]
            results += [_anthropic_error(line) for line in failed]
            unfinished = job["lines"][len(lines) :]
            results += [_anthropic_unfinished(line, outcome) for line in unfinished]
            job["results"] = "".join(json.dumps(r) + "\n" for r in results).encode()
        output_id = self._new_file(output.encode()) if answered else None
        error_id = self._new_file(errors_file.encode()) if failed else None
        with self._lock:
            job.update(status=outcome, output_file_id=output_id, error_file_id=error_id)
            job["request_counts"].update(completed=len(answered), failed=len(failed))

    def _errs(self, job_id: str, custom_id: str) -> bool:
        if self.error_share <= 0:
            return False
        return random.Random(f"{self.seed}:{job_id}:{custom_id}").random() < self.error_share

    def _answer(self, line: dict[str, Any]) -> dict[str, Any]:
        from fake_openai import completion_payload

        body = line["body"]
        reply = self.fake._answer(body)
        if reply.status != 200 or reply.body is not None:
            response = {"status_code": reply.status, "body": reply.body or {}}
        else:
            payload = completion_payload(
                body, reply.content or "", reply.finish_reason, reply.usage
            )
            response = {"status_code": 200, "body": payload}
        request_id = hashlib.sha256(line["custom_id"].encode()).hexdigest()[:12]
        return {
            "id": f"batch_req_{request_id}",
            "custom_id": line["custom_id"],
            "response": {"request_id": request_id, **response},
            "error": None,
        }


def _error_line(line: dict[str, Any]) -> dict[str, Any]:
    body = {"error": {"message": "the server had an error", "type": "server_error"}}
    return {
        "id": f"batch_req_{line['custom_id'][:12]}",
        "custom_id": line["custom_id"],
        "response": {"status_code": 500, "request_id": "", "body": body},
        "error": None,
    }


def _public(job: dict[str, Any]) -> dict[str, Any]:
    hidden = ("lines", "outcome", "ends_at", "api", "results")
    return {k: v for k, v in job.items() if k not in hidden}


def _as_chat(params: dict[str, Any]) -> dict[str, Any]:
    """An Anthropic request's params as the chat request the reply function reads."""
    system = [{"role": "system", "content": params["system"]}] if params.get("system") else []
    # a message of text blocks (a prompt with a cache breakpoint) is read as its text
    messages = [
        {**m, "content": "".join(b.get("text", "") for b in m["content"])}
        if isinstance(m.get("content"), list)
        else m
        for m in params["messages"]
    ]
    return {"model": params.get("model"), "messages": [*system, *messages]}


def _anthropic_public(job: dict[str, Any]) -> dict[str, Any]:
    counts = job["request_counts"]
    ended = job["status"] in FINAL
    total = counts["total"]
    expired = total - counts["completed"] - counts["failed"] if ended else 0
    return {
        "id": job["id"],
        "type": "message_batch",
        "processing_status": "ended"
        if ended
        else {"cancelling": "canceling"}.get(job["status"], "in_progress"),
        "request_counts": {
            "processing": 0 if ended else total,
            "succeeded": counts["completed"],
            "errored": counts["failed"],
            "canceled": expired if job["status"] == "cancelled" else 0,
            "expired": expired if job["status"] != "cancelled" else 0,
        },
        "created_at": "2026-01-01T00:00:00Z",
        "expires_at": "2026-01-02T00:00:00Z",
        "ended_at": "2026-01-01T01:00:00Z" if ended else None,
        "cancel_initiated_at": None,
        "archived_at": None,
        "results_url": f"/v1/messages/batches/{job['id']}/results" if ended else None,
    }


def _anthropic_line(openai_line: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI output line as a Message Batches result line."""
    body = openai_line["response"]["body"]
    choice, usage = body["choices"][0], body["usage"]
    stop = {"stop": "end_turn", "length": "max_tokens"}.get(choice["finish_reason"], "end_turn")
    message = {
        "id": f"msg_{openai_line['custom_id'][:12]}",
        "type": "message",
        "role": "assistant",
        "model": body["model"],
        "content": [{"type": "text", "text": choice["message"]["content"]}],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": usage["prompt_tokens"],
            "output_tokens": usage["completion_tokens"],
        },
    }
    return {
        "custom_id": openai_line["custom_id"],
        "result": {"type": "succeeded", "message": message},
    }


def _anthropic_error(line: dict[str, Any]) -> dict[str, Any]:
    error = {"type": "error", "error": {"type": "api_error", "message": "internal error"}}
    return {"custom_id": line["custom_id"], "result": {"type": "errored", "error": error}}


def _anthropic_unfinished(line: dict[str, Any], outcome: str) -> dict[str, Any]:
    kind = "canceled" if outcome == "cancelled" else "expired"
    return {"custom_id": line["custom_id"], "result": {"type": kind}}


def _file(file_id: str, size: int, purpose: str) -> dict[str, Any]:
    return {
        "id": file_id,
        "object": "file",
        "bytes": size,
        "created_at": int(time.time()),
        "filename": "input.jsonl",
        "purpose": purpose,
        "status": "processed",
    }


def _missing(kind: str, name: str) -> tuple[int, Any]:
    return 404, {"error": {"message": f"no {kind} {name}", "type": "not_found"}}


__all__ = ["FINAL", "FakeBatches"]
