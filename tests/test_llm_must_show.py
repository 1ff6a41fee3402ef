"""The model layer's acceptance scenario (issue 3, "Must show"), against the fake server over HTTP.

500 structured calls, 64 at a time, through a server that fails 5% of requests with HTTP 500, cuts
off 2% of replies, breaks the JSON of 2% more, answers 2% with 429 and Retry-After, and answers 429
above a requests-per-window limit: every call returns a valid object, and usage shows every retry by kind. Past the retry budget a call
raises its typed error, counted. A second identical batch answered from the SQLite cache makes zero
HTTP requests. The API key is in no file the layer wrote and in no repr.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI
from pydantic import BaseModel, Field

from synth import ModelError, RetryConfig, SQLiteCache, make_llm

API_KEY = "sk-must-show-9f8e7d6c5b4a-secret"
# the seeded 429s make sure rate limits are hit on any machine; the requests-per-window limit is
# hit only by a machine fast enough to go past it (a dedicated test below always is)
FAULTS = {"server_error": 0.05, "cutoff": 0.02, "invalid_json": 0.02, "rate_limit": 0.02}


class Verdict(BaseModel):
    claims: list[str]
    supported: bool
    rating: int = Field(ge=1, le=5)
    reason: str


def _prompts(n: int) -> list[str]:
    return [
        f"Item {i}: the Seine flows through Paris, the capital of France. Judge the claims."
        for i in range(n)
    ]


async def _batch(llm, prompts: list[str], **kwargs):
    return await asyncio.gather(
        *[
            llm.acomplete(p, system="You are a strict judge.", schema=Verdict, label="judge")
            for p in prompts
        ],
        **kwargs,
    )


def _model(server: FakeOpenAI, cache_path: Path, retry: RetryConfig):
    return make_llm(
        "openai:gpt-4.1-mini",
        base_url=server.url,
        api_key=API_KEY,
        cache=SQLiteCache(cache_path),
        max_concurrent=64,
        retry=retry,
        seed=1,
    )


def test_faults_are_absorbed_counted_and_a_rerun_is_free(tmp_path: Path) -> None:
    cache_path = tmp_path / ".synth" / "cache.sqlite"
    retry = RetryConfig(initial_delay=0.005, max_delay=0.05, max_retries=12, max_reasks=4)
    with FakeOpenAI(faults=FAULTS, rpm=150, rpm_window=0.5, seed=7) as server:
        llm = _model(server, cache_path, retry)
        results = asyncio.run(_batch(llm, _prompts(500)))
        llm.close()

        assert len(results) == 500 and all(isinstance(r, Verdict) for r in results)
        assert server.peak_in_flight <= 64
        outcomes = server.outcomes()
        assert outcomes["ok"] == 500
        assert min(outcomes.get(k, 0) for k in FAULTS) > 0
        usage = llm.usage.counts(label="judge")
        assert usage.responses == 500 and usage.failures == {}
        # every fault the server injected shows up as a retry of its kind, no more and no less
        assert usage.retries == {
            "server": outcomes["server_error"],
            "incomplete": outcomes["cutoff"],
            "invalid_output": outcomes["invalid_json"],
            "rate_limit": outcomes["rate_limit"] + outcomes.get("rpm_limit", 0),
        }
        assert usage.requests == server.request_count()
        assert not server.duplicates()  # no successful request was made twice

        # the same batch again, from a new model over the same cache file: zero HTTP requests
        sent = server.request_count()
        again = _model(server, cache_path, retry)
        assert asyncio.run(_batch(again, _prompts(500))) == results
        assert server.request_count() == sent
        assert again.usage.total.cached_responses == 500 and again.usage.total.requests == 0
        assert again.usage.cost().total_usd == 0.0
        again.close()

        # the key was really sent, and is nowhere the layer wrote or shows
        assert server.requests[0].headers["authorization"] == f"Bearer {API_KEY}"
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written and any(p.name == "cache.sqlite" for p in written)
    for path in written:
        assert API_KEY.encode() not in path.read_bytes(), path
    shown = (
        repr(llm) + repr(llm.identity()) + repr(llm.usage) + repr(llm.usage.to_dict()) + repr(again)
    )
    assert API_KEY not in shown and "must-show" not in shown


def test_past_the_budget_calls_raise_typed_errors_that_are_counted(tmp_path: Path) -> None:
    no_retry = RetryConfig(max_retries=0, max_reasks=0)
    with FakeOpenAI(
        faults={"server_error": 0.2, "cutoff": 0.1, "invalid_json": 0.1}, seed=3
    ) as server:
        llm = _model(server, tmp_path / "cache.sqlite", no_retry)
        results = asyncio.run(_batch(llm, _prompts(100), return_exceptions=True))
        llm.close()
    errors = [r for r in results if isinstance(r, BaseException)]
    assert errors and all(isinstance(e, ModelError) for e in errors)
    by_kind: dict[str, int] = {}
    for error in errors:
        by_kind[error.kind] = by_kind.get(error.kind, 0) + 1
    usage = llm.usage.total
    assert usage.failures == by_kind and usage.retries == {}
    assert set(by_kind) <= {"server", "incomplete", "invalid_output"}
    assert usage.responses == 100 - len(errors)
    outcomes = server.outcomes()
    assert by_kind.get("server", 0) == outcomes.get("server_error", 0)


@pytest.mark.parametrize("fault", ["prose", "invalid_json"])
def test_prose_or_broken_json_is_never_guessed(tmp_path: Path, fault: str) -> None:
    with FakeOpenAI(sequence=[fault], seed=0) as server:
        llm = _model(server, tmp_path / "cache.sqlite", RetryConfig(max_reasks=1))
        verdict = llm.complete("Judge.", schema=Verdict)
        llm.close()
    assert isinstance(verdict, Verdict)
    assert server.outcomes() == {fault: 1, "ok": 1}
    assert llm.usage.total.retries == {"invalid_output": 1}


def test_a_requests_per_window_limit_is_waited_out() -> None:
    # 12 requests at once against 4 per 0.5 s: the first burst surely goes past the limit
    with FakeOpenAI(rpm=4, rpm_window=0.5) as server:
        llm = make_llm(
            "openai:m",
            base_url=server.url,
            api_key=API_KEY,
            retry=RetryConfig(initial_delay=0.005, max_retries=30),
            seed=2,
        )
        results = asyncio.run(_batch(llm, _prompts(12)))
        llm.close()
    outcomes = server.outcomes()
    assert all(isinstance(r, Verdict) for r in results)
    assert outcomes["ok"] == 12 and outcomes["rpm_limit"] > 0
    assert llm.usage.total.retries == {"rate_limit": outcomes["rpm_limit"]}
