"""Pacing from the provider's own numbers: the rate-limit headers read, the windows the limiter
paces to, and what a 429 does to it. Every time is passed in (no clock is waited on)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest
from fake_openai import FakeOpenAI

from synth import make_llm
from synth.errors import RateLimitError
from synth.llm._rate_headers import Budget, RateLimits, parse_duration, read_rate_limits
from synth.llm.limiter import HEADER_MARGIN, RateLimiter


def test_openai_durations_are_read_in_seconds() -> None:
    assert parse_duration("1s") == 1.0
    assert parse_duration("6m0s") == 360.0
    assert parse_duration("1h2m3.5s") == 3723.5
    assert parse_duration("20ms") == pytest.approx(0.02)
    assert parse_duration("2.5") == 2.5
    assert parse_duration("soon") is None and parse_duration("1s later") is None


def test_openai_and_anthropic_headers_become_the_same_budgets() -> None:
    openai = read_rate_limits(
        {
            "x-ratelimit-limit-requests": "300",
            "x-ratelimit-remaining-requests": "299",
            "x-ratelimit-reset-requests": "200ms",
            "x-ratelimit-limit-tokens": "150000",
            "x-ratelimit-remaining-tokens": "149000",
            "x-ratelimit-reset-tokens": "400ms",
        }
    )
    assert openai == RateLimits(Budget(300, 299, pytest.approx(0.2)), Budget(150000, 149000, 0.4))
    anthropic = read_rate_limits(
        {
            "anthropic-ratelimit-requests-limit": "50",
            "anthropic-ratelimit-requests-remaining": "0",
            "anthropic-ratelimit-requests-reset": "2026-12-06T10:00:30Z",
            "anthropic-ratelimit-input-tokens-limit": "40000",
        },
        now=datetime(2026, 12, 6, 10, 0, tzinfo=UTC).timestamp(),
    )
    assert anthropic == RateLimits(Budget(50, 0, 30.0), Budget(40000, None, None))
    assert read_rate_limits({"content-type": "application/json"}) is None
    assert read_rate_limits(None) is None


def test_the_limiter_paces_to_the_providers_limit_over_a_minute() -> None:
    limiter = RateLimiter(64, adaptive=True, clock=lambda: 0.0)
    limiter.observe(RateLimits(requests=Budget(300, 299, 0.2)), now=0.0)
    assert limiter.paced_by_provider and limiter._requests is not None
    window = limiter._requests
    assert window.limit == 300 and window.window == pytest.approx(60 * (1 + HEADER_MARGIN))
    for _ in range(299):  # the one the provider had counted is charged
        assert window.try_acquire(1, 1.0)[0] is not None
    entry, wait = window.try_acquire(1, 1.0)
    assert entry is None and wait == pytest.approx(
        0.2 + 60 * HEADER_MARGIN - 1.0
    )  # its charge ends


def test_a_pinned_rpm_is_kept_and_the_provider_only_charges_what_it_saw() -> None:
    limiter = RateLimiter(8, rpm=100, window=60, clock=lambda: 0.0)
    window = limiter._requests
    limiter.observe(RateLimits(requests=Budget(300, 280, 10.0)), now=0.0)
    assert limiter._requests is window and window is not None and window.limit == 100
    # the provider counted 20 requests this window never sent (another client of the key): they
    # are charged until its reset, 10 s from now (a pinned window has no slack), and then freed
    assert window.left(0.0) == 80
    assert window.left(9.9) == 80 and window.left(10.0) == 100


def test_a_429_that_says_the_budget_is_spent_holds_without_cutting_when_paced() -> None:
    now = [0.0]
    limiter = RateLimiter(64, adaptive=True, clock=lambda: now[0])
    limiter.observe(RateLimits(requests=Budget(300, 10, 5.0)))
    spent = RateLimitError("slow down", retry_after=4.0, rate_limits=RateLimits(Budget(300, 0, 5)))
    with pytest.raises(RateLimitError), limiter.watch("inputs"):
        raise spent
    assert limiter.level == 8 and limiter.held_for() == 4.0  # the level stays, requests wait
    now[0] = 4.0
    assert limiter.held_for() == 0.0
    assert limiter.concurrency()["signals"] == {"rate_limit": 1}


def test_a_429_without_the_providers_numbers_holds_and_cuts() -> None:
    limiter = RateLimiter(64, adaptive=True, clock=lambda: 0.0)
    with pytest.raises(RateLimitError), limiter.watch("inputs"):
        raise RateLimitError("slow down", retry_after=30.0)
    assert limiter.level == 4 and limiter.held_for() == 30.0
    assert not limiter.paced_by_provider


def test_replies_with_rate_headers_pace_the_run_and_are_not_kept_with_the_reply() -> None:
    with FakeOpenAI(reply="ok", rpm=1000, rate_headers=True) as server:
        limiter = RateLimiter(16, adaptive=True)
        llm = make_llm("openai:m", base_url=server.url, api_key="sk-test", limiter=limiter)

        async def main() -> list[object]:
            return list(await asyncio.gather(*[llm.inner.arequest(f"q{i}") for i in range(5)]))

        replies = asyncio.run(main())
        llm.close()
    assert limiter.concurrency()["paced_by_provider"] is True
    assert limiter._requests is not None and limiter._requests.limit == 1000
    assert all("rate_limits" not in reply.extra for reply in replies)  # type: ignore[attr-defined]


def test_what_the_provider_saw_expires_in_its_turn_among_the_windows_requests() -> None:
    limiter = RateLimiter(8, rpm=100, window=60, clock=lambda: 0.0)
    window = limiter._requests
    assert window is not None
    window.try_acquire(50, 0.0)  # sent at 0, expires at 60
    window.try_acquire(20, 30.0)  # sent at 30, expires at 90
    # at 40 the provider counts 80: 10 unseen, until its reset 40 s later (at 80)
    limiter.observe(RateLimits(requests=Budget(100, 20, 40.0)), now=40.0)
    assert window.left(40.0) == 20
    assert window.left(60.0) == 70  # the first 50 leave at 60, though the 10 are still counted
    assert window.left(80.0) == 80 and window.left(90.0) == 100


def test_what_the_provider_counted_is_charged_past_its_reset_by_the_windows_margin() -> None:
    limiter = RateLimiter(64, adaptive=True, clock=lambda: 0.0)
    # the first reply: the provider counted 64 requests sent before its numbers were known,
    # which it frees from 58.5 s on, one by one as they came in
    limiter.observe(RateLimits(requests=Budget(300, 236, 58.5)), now=1.5)
    window = limiter._requests
    assert window is not None and window.left(1.5) == 236
    slack = 60 * HEADER_MARGIN
    assert window.left(1.5 + 58.5 + slack - 0.01) == 236 and window.left(1.5 + 58.5 + slack) == 300


def test_a_count_the_provider_states_again_is_charged_once() -> None:
    # a reply the provider counted before the limiter read it (another reply's headers came
    # first): the first statement charges its 50 tokens beyond the estimate, then its own count
    # takes them into the window's log, and the next statement replaces that charge rather than
    # adding to it
    limiter = RateLimiter(8, tpm=1000, window=60, clock=lambda: 0.0)
    window = limiter._tokens
    assert window is not None
    entry, _ = window.try_acquire(100, 0.0)  # sent: 100 estimated
    assert entry is not None
    limiter.observe(RateLimits(tokens=Budget(1000, 850, 30.0)), now=1.0)
    assert window.left(1.0) == 850
    window.adjust(entry, 150)  # its reply read: 150 spent
    limiter.observe(RateLimits(tokens=Budget(1000, 850, 30.0)), now=1.0)
    assert window.left(1.0) == 850


def test_over_http_the_tokens_window_holds_what_the_server_counted_once() -> None:
    # the real openai SDK: a first wave sent before any reply stated the tokens budget, then a
    # request paced by it; the server counted each request's prompt and reply once, and the
    # limiter's window holds the same (it held the first wave twice, and a run under a tokens
    # limit used half the rate it was allowed)
    limiter, counted, requests = _first_wave_then_one_more()
    window = limiter._tokens
    assert window is not None and window.limit == 100_000
    assert requests == 9
    assert window.limit - window.left(limiter._clock()) == counted


def test_the_fake_server_can_refuse_over_its_limit_at_once_as_a_hosted_provider_does() -> None:
    import openai

    with FakeOpenAI(reply="ok", rpm=1, refuse_at_once=True, rate_headers=True) as server:
        client = openai.OpenAI(base_url=server.url, api_key="sk-test", max_retries=0, timeout=10)
        ask = {"model": "m", "messages": [{"role": "user", "content": "q"}]}
        client.chat.completions.create(**ask)  # type: ignore[call-overload]
        server.latency = 60.0  # a model's answer would outlast the client's timeout
        with pytest.raises(openai.RateLimitError) as refused:
            client.chat.completions.create(**ask)  # type: ignore[call-overload]
        client.close()
    assert refused.value.response.headers["x-ratelimit-remaining-requests"] == "0"


def test_requests_are_counted_until_a_reply_says_the_provider_states_no_budget() -> None:
    # counted from the first request, so the provider's numbers, once read, find the first
    # wave in the windows; a reply without them drops the windows not pinned
    limiter = RateLimiter(8, tpm=5000, adaptive=True)
    llm = make_llm(lambda prompt, system: "ok", limiter=limiter)
    assert limiter._requests is not None and limiter._requests.limit == float("inf")
    llm.complete("one question")
    assert limiter._requests is None and not limiter.paced_by_provider
    assert limiter._tokens is not None and limiter._tokens.limit == 5000  # pinned: kept


def test_a_first_wave_is_charged_by_its_length_until_a_reply_states_the_tokens_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # counting the first wave's tokens would load the tokenizer before the first request could
    # leave; until a reply says whether there is a budget, each request is charged its length
    # over 4, which its reply's own count then replaces, so the window ends as exact as before
    from synth.llm.limiter import LimitedModel

    counted: list[str] = []
    real = LimitedModel._estimate
    monkeypatch.setattr(
        LimitedModel, "_estimate", lambda self, p, s: counted.append(p) or real(self, p, s)
    )
    limiter, spent, _ = _first_wave_then_one_more()
    assert counted == ["one more question"]  # estimated once the budget was known, only then
    window = limiter._tokens
    assert window is not None and window.limit - window.left(limiter._clock()) == spent


def _first_wave_then_one_more() -> tuple[RateLimiter, int, int]:
    """Over the real openai SDK to a server with a tokens budget it states: 8 requests at once
    (before any reply stated the budget), then one paced by it. The limiter, the tokens the
    server counted, and its chat requests."""
    with FakeOpenAI(reply="a short answer", tpm=100_000, rate_headers=True) as server:
        limiter = RateLimiter(16, adaptive=True)
        llm = make_llm("openai:m", base_url=server.url, api_key="sk-test", limiter=limiter)

        async def main() -> None:
            await asyncio.gather(*[llm.acomplete(f"question {i} about tokens") for i in range(8)])
            await llm.acomplete("one more question")

        asyncio.run(main())
        llm.close()
        counted = sum(r.usage["total_tokens"] for r in server.requests_to("chat") if r.usage)
        return limiter, counted, server.request_count("chat")
