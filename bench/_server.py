"""The fake OpenAI-compatible server (``tests/fake_openai.py``) as a subprocess, and its request log.

A subprocess, not a thread, so the server's work does not share the interpreter (and its GIL) with
the run being timed. Every request is appended to a JSON-lines log, read back for the counts.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _util import REPO

FAKE_SERVER = REPO / "tests" / "fake_openai.py"


@dataclass
class ServerOptions:
    """How the fake server behaves: latency per request, random faults, a rate limit."""

    latency: float = 0.5
    latency_max: float | None = None  # with it, each chat latency is uniform in [latency, max]
    embedding_latency: float | None = None  # seconds per embeddings request (None: latency)
    token_latency: float = 0.0  # seconds per completion token, after the latency
    prompt_cache: bool = False  # the provider's automatic prompt cache (cached_tokens)
    faults: dict[str, float] = field(default_factory=dict)
    rpm: int | None = None
    rpm_window: float = 60.0
    tpm: int | None = None  # prompt tokens (words) per rpm_window above which 429
    rate_headers: bool = False  # x-ratelimit-* headers with every reply and rate 429
    max_in_flight: int | None = None  # 429 at once above this many requests being served
    workers: int | None = None  # served at once; the others queue
    replies: str | None = None  # module:function answering chat requests
    seed: int = 0
    generic: bool = False  # answer from the JSON schema alone (replies unused)
    sloppy: dict[str, float] = field(default_factory=dict)  # with generic: spoiled batch replies

    def args(self) -> list[str]:
        out = ["--latency", str(self.latency), "--seed", str(self.seed)]
        if self.latency_max is not None:
            out += ["--latency-max", str(self.latency_max)]
        if self.token_latency:
            out += ["--token-latency", str(self.token_latency)]
        if self.prompt_cache:
            out.append("--prompt-cache")
        if self.embedding_latency is not None:
            out += ["--embedding-latency", str(self.embedding_latency)]
        for kind, rate in self.faults.items():
            out += ["--fault", f"{kind}={rate}"]
        if self.rpm is not None:
            out += ["--rpm", str(self.rpm), "--rpm-window", str(self.rpm_window)]
        if self.tpm is not None:
            out += ["--tpm", str(self.tpm), "--rpm-window", str(self.rpm_window)]
        if self.rate_headers:
            out.append("--rate-headers")
        if self.max_in_flight is not None:
            out += ["--max-in-flight", str(self.max_in_flight)]
        if self.workers is not None:
            out += ["--workers", str(self.workers)]
        if self.generic:
            out += ["--mode", "generic"]
            for kind, rate in self.sloppy.items():
                out += ["--sloppy", f"{kind}={rate}"]
        elif self.replies:
            out += ["--replies", self.replies]
        return out

    def describe(self) -> str:
        parts = [f"latency {self.latency:g} s"]
        if self.latency_max is not None:
            parts = [f"latency {self.latency:g} to {self.latency_max:g} s"]
        if self.token_latency:
            parts.append(f"{self.token_latency * 1000:g} ms a completion token")
        if self.prompt_cache:
            parts.append("prompt cache")
        if self.embedding_latency is not None:
            parts.append(f"embeddings {self.embedding_latency:g} s")
        if self.generic:
            parts.append("generic replies")
            parts += [f"batch entries {kind} {rate:.0%}" for kind, rate in self.sloppy.items()]
        parts += [f"{kind} {rate:.0%}" for kind, rate in self.faults.items()]
        if self.rpm is not None:
            parts.append(f"{self.rpm} requests per {self.rpm_window:g} s")
        if self.tpm is not None:
            parts.append(f"{self.tpm} prompt tokens per {self.rpm_window:g} s")
        if self.rate_headers:
            parts.append("x-ratelimit-* headers")
        if self.max_in_flight is not None:
            parts.append(f"429 above {self.max_in_flight} in flight")
        if self.workers is not None:
            parts.append(f"{self.workers} workers, the rest queued")
        return ", ".join(parts)


def parse_faults(text: str) -> dict[str, float]:
    """``"server_error=0.05,invalid_json=0.05"`` -> ``{"server_error": 0.05, ...}``."""
    faults: dict[str, float] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        kind, _, rate = part.partition("=")
        faults[kind.strip()] = float(rate or 1.0)
    return faults


class FakeServer:
    """``with FakeServer(options, log) as server:`` runs the server; ``server.url`` is its base URL."""

    def __init__(self, options: ServerOptions, log: Path, python: str = sys.executable) -> None:
        self.options = options
        self.log = log
        self.python = python
        self.url = ""
        self._process: subprocess.Popen[str] | None = None

    def __enter__(self) -> FakeServer:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        self.log.unlink(missing_ok=True)
        command = [
            self.python,
            str(FAKE_SERVER),
            "--port",
            "0",
            "--log",
            str(self.log),
            *self.options.args(),
        ]
        self._process = subprocess.Popen(
            command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        assert self._process.stdout is not None
        line = self._process.stdout.readline().strip()
        if not line.startswith("http"):
            self.__exit__()
            raise RuntimeError(f"the fake server did not start: {line!r}")
        self.url = line
        return self

    def __exit__(self, *exc: object) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def read_log(log: Path) -> list[dict[str, Any]]:
    """The server's logged requests (empty when none arrived)."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]


def request_counts(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Requests by endpoint and outcome, and the peak number in flight."""
    kinds = Counter("embeddings" if r["path"].endswith("/embeddings") else "chat" for r in rows)
    outcomes = Counter(r["outcome"] for r in rows)
    return {
        "requests": len(rows),
        "chat": kinds.get("chat", 0),
        "embeddings": kinds.get("embeddings", 0),
        "ok": outcomes.get("ok", 0),
        "outcomes": dict(sorted(outcomes.items())),
        "peak_in_flight": peak_in_flight(rows),
        **token_counts(rows),
    }


def token_counts(rows: Sequence[dict[str, Any]]) -> dict[str, int]:
    """Prompt, cached and completion tokens of the chat replies, and embedded tokens, as the server
    reported them in each reply's usage (what a provider bills)."""
    totals = Counter[str]()
    for row in rows:
        usage = row.get("usage") or {}
        if row["path"].endswith("/embeddings"):
            totals["embedding_tokens"] += usage.get("prompt_tokens", 0)
            continue
        totals["prompt_tokens"] += usage.get("prompt_tokens", 0)
        totals["cached_tokens"] += (usage.get("prompt_tokens_details") or {}).get(
            "cached_tokens", 0
        )
        totals["completion_tokens"] += usage.get("completion_tokens", 0)
    keys = ("prompt_tokens", "cached_tokens", "completion_tokens", "embedding_tokens")
    return {key: totals[key] for key in keys}


def peak_in_flight(rows: Sequence[dict[str, Any]]) -> int:
    """The most requests the server was handling at one moment, from their start and end times."""
    events = []
    for row in rows:
        events.append((row["started"], 1))
        events.append((row["finished"] if row.get("finished") is not None else row["started"], -1))
    events.sort(key=lambda event: (event[0], event[1]))  # an end before a start at the same time
    peak = current = 0
    for _, step in events:
        current += step
        peak = max(peak, current)
    return peak
