"""Retry, timeout, limiter and usage wrappers, each around a scripted model."""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import threading
import time
from collections.abc import Iterable

import pytest
from pydantic import BaseModel

from synth import (
    AuthenticationError,
    ConfigError,
    FunctionModel,
    IncompleteCompletionError,
    ModelTimeoutError,
    OutputParseError,
    RateLimiter,
    RateLimitError,
    RetryConfig,
    ServerError,
    Usage,
    make_llm,
    wrap_llm,
)
from synth.llm.base import LLM, Completion
from synth.llm.limiter import _Window
from synth.llm.timeout import TimeoutModel
from synth.llm.usage import UsageCounts

FAST = RetryConfig(initial_delay=0.001, max_delay=0.005)


class Verdict(BaseModel):
    supported: bool


class Scripted(LLM):
    """Answers each request with the next item: an exception to raise or a reply."""

    provider = "scripted"
    model = "s1"

    def __init__(self, script: Iterable[Exception | str | Completion]) -> None:
        self.script = list(script)
        self.prompts: list[str] = []

    async def arequest(self, prompt, *, system=None, schema=None, label=None) -> Completion:
        self.prompts.append(prompt)
        item = self.script.pop(0)
        if isinstance(item, Exception):
            raise item
        if isinstance(item, Completion):
            return item
        return Completion(
            text=item, model=self.model, input_tokens=10, output_tokens=2, finish_reason="stop"
        )


def _cut(text: str = '{"supp') -> Completion:
    return Completion(
        text=text, model="s1", input_tokens=10, output_tokens=5, finish_reason="length"
    )


# ---- retry ---------------------------------------------------------------------------------------


def test_transient_errors_are_retried_and_counted_by_kind() -> None:
    inner = Scripted(
        [ServerError("500"), RateLimitError("429", retry_after=0.001), ModelTimeoutError("t"), "ok"]
    )
    llm = wrap_llm(inner, retry=FAST)
    assert llm.complete("x", label="stage") == "ok"
    counts = llm.usage.counts(label="stage")
    assert counts.retries == {"rate_limit": 1, "server": 1, "timeout": 1}
    assert counts.requests == 4 and counts.responses == 1 and counts.failures == {}
    assert counts.input_tokens == 10  # only the request that got a reply used tokens


def test_past_the_budget_the_typed_error_is_raised_and_counted() -> None:
    inner = Scripted([ServerError("a"), ServerError("b"), ServerError("c")])
    llm = wrap_llm(inner, retry=FAST, max_retries=2)
    with pytest.raises(ServerError, match="c"):
        llm.complete("x")
    assert llm.usage.total.retries == {"server": 2}
    assert llm.usage.total.failures == {"server": 1}


def test_auth_errors_are_not_retried() -> None:
    inner = Scripted([AuthenticationError("no key"), "never"])
    llm = wrap_llm(inner, retry=FAST)
    with pytest.raises(AuthenticationError):
        llm.complete("x")
    assert len(inner.prompts) == 1


def test_a_retry_after_beyond_the_limit_raises_at_once() -> None:
    inner = Scripted([RateLimitError("429", retry_after=3600), "never"])
    llm = wrap_llm(inner, retry=FAST.model_copy(update={"max_retry_after": 60}))
    with pytest.raises(RateLimitError):
        llm.complete("x")
    assert len(inner.prompts) == 1


def test_backoff_grows_is_capped_and_honours_retry_after() -> None:
    config = RetryConfig(initial_delay=1.0, multiplier=2.0, max_delay=5.0, jitter=0.5)
    rng = random.Random(0)
    delays = [config.delay(n, rng) for n in range(6)]
    assert 0.5 <= delays[0] <= 1.0 and 1.0 <= delays[1] <= 2.0
    assert all(2.5 <= d <= 5.0 for d in delays[3:])
    assert config.delay(0, rng, retry_after=7.0) >= 7.0
    again = [config.delay(n, random.Random(0)) for n in range(1)]
    assert again == delays[:1]  # jitter comes from the seeded generator


def test_a_retry_after_is_waited_with_a_small_spread_and_honoured_up_to_the_limit() -> None:
    config = RetryConfig(initial_delay=0.0, jitter=0.5)
    rng = random.Random(1)
    waits = [config.delay(0, rng, retry_after=5.0) for _ in range(300)]
    # at least what the server asked, at most a tenth more (and a millisecond)
    assert all(5.0 <= w <= 5.501 for w in waits)
    assert min(waits) < 5.05 and max(waits) > 5.45
    # a minute's Retry-After (a window that frees as it filled) spreads over a second at most
    minute = [config.delay(0, rng, retry_after=58.0) for _ in range(100)]
    assert all(58.0 <= w <= 59.001 for w in minute) and max(minute) > 58.9
    # even a Retry-After of 0 spreads the waiters over a millisecond
    zero = [config.delay(0, rng, retry_after=0.0) for _ in range(50)]
    assert all(0.0 <= w <= 0.001 for w in zero) and max(zero) > 0.0
    # a Retry-After exactly at max_retry_after is still waited out
    inner = Scripted([RateLimitError("429", retry_after=0.002), "ok"])
    llm = wrap_llm(inner, retry=FAST.model_copy(update={"max_retry_after": 0.002}))
    assert llm.complete("x") == "ok"


def test_retry_model_waits_the_seeded_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    from synth.llm import retry as retry_module
    from synth.llm.retry import RetryModel

    waited: list[float] = []

    async def record(seconds: float) -> None:
        waited.append(seconds)

    monkeypatch.setattr(retry_module.asyncio, "sleep", record)
    model = RetryModel(Scripted([ServerError("a"), ServerError("b"), "ok"]))
    assert isinstance(model.usage, Usage)
    assert asyncio.run(model.arequest("x", label="l")).text == "ok"
    rng = random.Random(0)  # the default generator, so two runs wait the same
    assert waited == [model.config.delay(0, rng), model.config.delay(1, rng)]
    assert model.usage.counts(label="l").retries == {"server": 2}


def test_retry_model_passes_the_call_through_and_re_asks_only_with_a_schema() -> None:
    from synth.llm.retry import RetryModel

    seen: list[tuple[str | None, object]] = []

    class Recording(Scripted):
        async def arequest(self, prompt, *, system=None, schema=None, label=None) -> Completion:
            seen.append((system, schema))
            return await super().arequest(prompt, system=system, schema=schema, label=label)

    model = RetryModel(Recording(['{"supported": true}']), FAST)
    asyncio.run(model.arequest("x", system="be brief", schema=Verdict))
    assert seen == [("be brief", Verdict)]
    # without a schema a cut-off reply is an error at once: nothing to parse, nothing to re-ask
    plain = Recording([_cut("half a sent"), "never"])
    with pytest.raises(IncompleteCompletionError):
        asyncio.run(RetryModel(plain, FAST).arequest("x"))
    assert len(plain.prompts) == 1


def test_reask_budget_and_count_reask_find_the_retry_layer() -> None:
    from synth.llm.retry import RetryModel, count_reask, reask_budget

    bare = Scripted([])
    assert reask_budget(bare) == RetryConfig().max_reasks
    count_reask(bare, "judge", "invalid_output")  # no retry layer: nothing to count, no error
    llm = wrap_llm(bare, retry=FAST, max_reasks=5)
    assert reask_budget(llm) == 5
    assert reask_budget(TimeoutModel(bare, 1.0)) == RetryConfig().max_reasks
    count_reask(llm, "judge", "invalid_output")
    count_reask(llm, "judge", "invalid_output")
    retry = llm.layer(RetryModel)
    assert retry is not None
    assert retry.usage.counts(label="judge").retries == {"invalid_output": 2}
    assert llm.usage.counts(model="scripted:s1", label="judge").retries == {"invalid_output": 2}


def test_malformed_and_cut_off_structured_replies_are_asked_again() -> None:
    inner = Scripted(
        ['{"supported": "yes"}', _cut(), 'Sure: {"supported": true}', '{"supported": true}']
    )
    llm = wrap_llm(inner, retry=FAST, max_reasks=3)
    assert llm.complete("x", schema=Verdict, label="judge") == Verdict(supported=True)
    counts = llm.usage.counts(label="judge")
    assert counts.retries == {"incomplete": 1, "invalid_output": 2}
    assert counts.output_tokens == 2 + 5 + 2 + 2  # discarded replies cost tokens too


def test_re_asks_are_bounded_and_the_parse_error_keeps_the_text() -> None:
    inner = Scripted(["nope", "still no", "never asked"])
    llm = wrap_llm(inner, retry=FAST, max_reasks=1)
    with pytest.raises(OutputParseError) as caught:
        llm.complete("x", schema=Verdict)
    assert caught.value.raw == "still no"
    assert llm.usage.total.failures == {"invalid_output": 1}
    assert len(inner.prompts) == 2
    # the budget counts every re-ask, not just the first: two re-asks, then the error
    inner = Scripted(["nope", "no", "still no", "never asked"])
    with pytest.raises(OutputParseError):
        wrap_llm(inner, retry=FAST, max_reasks=2).complete("x", schema=Verdict)
    assert len(inner.prompts) == 3


# ---- timeout -------------------------------------------------------------------------------------


def test_a_call_that_never_answers_times_out() -> None:
    async def hang(prompt: str, system: str | None) -> str:
        await asyncio.Event().wait()
        return "never"

    llm = wrap_llm(FunctionModel(hang), timeout=0.05, retry=FAST, max_retries=1)
    with pytest.raises(ModelTimeoutError):
        llm.complete("x")
    assert llm.usage.total.retries == {"timeout": 1}
    with pytest.raises(ConfigError):
        TimeoutModel(FunctionModel(hang), 0)


def test_a_timeout_model_passes_the_call_through_and_names_its_deadline() -> None:
    seen: list[tuple[str, str | None, object, str | None]] = []

    class Recording(Scripted):
        async def arequest(self, prompt, *, system=None, schema=None, label=None) -> Completion:
            seen.append((prompt, system, schema, label))
            return await super().arequest(prompt, system=system, schema=schema, label=label)

    model = TimeoutModel(Recording(['{"supported": true}']), 2)
    reply = asyncio.run(model.arequest("p", system="s", schema=Verdict, label="critic"))
    assert reply.text == '{"supported": true}'
    assert seen == [("p", "s", Verdict, "critic")]
    assert model.timeout == 2.0 and isinstance(model.timeout, float)
    assert repr(model) == "TimeoutModel(Recording(...), timeout=2)".replace(
        "Recording(...)", repr(model.inner)
    )

    async def hang(prompt: str, system: str | None) -> str:
        await asyncio.Event().wait()
        return "never"

    slow = TimeoutModel(FunctionModel(hang, name="m"), 0.05)
    with pytest.raises(ModelTimeoutError, match=r"^function:m did not answer within 0\.05 s$"):
        asyncio.run(slow.arequest("p"))
    for bad in (0, -1, -0.5, None):
        with pytest.raises(ConfigError, match="positive number of seconds"):
            TimeoutModel(FunctionModel(hang), bad)  # type: ignore[arg-type]


def test_a_wrapper_passes_everything_through_and_finds_the_layers_of_its_chain() -> None:
    from synth.llm.retry import RetryModel
    from synth.llm.spec import model_key
    from synth.llm.wrapper import WrapperModel

    seen: list[tuple[str, str | None, object, str | None]] = []
    closed: list[str] = []

    class Inner(Scripted):
        def identity(self) -> dict[str, object]:
            return {"provider": "scripted", "model": "s1", "endpoint": "e"}

        async def arequest(self, prompt, *, system=None, schema=None, label=None) -> Completion:
            seen.append((prompt, system, schema, label))
            return await super().arequest(prompt, system=system, schema=schema, label=label)

        def close(self) -> None:
            closed.append("inner")

    inner = Inner(['{"supported": true}'])
    middle = TimeoutModel(inner, 1.0)
    outer = WrapperModel(middle)
    assert (outer.provider, outer.model) == ("scripted", "s1")
    assert outer.identity() == {"provider": "scripted", "model": "s1", "endpoint": "e"}
    reply = asyncio.run(outer.arequest("p", system="s", schema=Verdict, label="filter"))
    assert reply.text == '{"supported": true}'
    assert seen == [("p", "s", Verdict, "filter")]
    assert outer.layer(WrapperModel) is outer and outer.layer(TimeoutModel) is middle
    assert outer.layer(RetryModel) is None
    assert outer.unwrap() is inner and middle.unwrap() is inner
    assert repr(outer) == f"WrapperModel({middle!r})"
    outer.close()
    assert closed == ["inner"]
    assert model_key(inner) == "scripted:s1"
    assert model_key(FunctionModel(lambda p, s: p, name="f")) == "function:f"

    class Unnamed(Scripted):
        provider = ""

    assert model_key(Unnamed([])) == "s1"  # no provider: the model name alone
    with pytest.raises(ConfigError, match="a wrapper needs a model, got str"):
        WrapperModel("openai:gpt-4o")  # type: ignore[arg-type]


# ---- limiter -------------------------------------------------------------------------------------


def test_at_most_max_concurrent_calls_are_in_flight() -> None:
    state = {"now": 0, "peak": 0}

    async def slow(prompt: str, system: str | None) -> str:
        state["now"] += 1
        state["peak"] = max(state["peak"], state["now"])
        await asyncio.sleep(0.01)
        state["now"] -= 1
        return prompt

    async def main() -> list[str]:
        return await asyncio.gather(*[llm.acomplete(str(i)) for i in range(12)])

    limiter = RateLimiter(3)
    llm = wrap_llm(FunctionModel(slow), limiter=limiter)
    assert asyncio.run(main()) == [str(i) for i in range(12)]
    assert state["peak"] == 3
    assert limiter.peak_in_flight == 3 and limiter.in_flight == 0  # the peak it reports is true


def test_the_limit_holds_across_threads_and_event_loops() -> None:
    lock, state = threading.Lock(), {"now": 0, "peak": 0}
    gate = threading.Barrier(2, timeout=5)

    def slow(prompt: str, system: str | None) -> str:
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        if prompt == "0":
            gate.wait()  # two calls are surely in flight together once
        elif prompt == "1":
            gate.wait()
        with lock:
            state["now"] -= 1
        return prompt

    llm = wrap_llm(FunctionModel(slow), max_concurrent=2)
    threads = [threading.Thread(target=llm.complete, args=(str(i),)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert state["peak"] == 2
    assert llm.usage.total.responses == 6


def test_window_budget_spends_waits_and_corrects() -> None:
    window = _Window(limit=3, window=10.0)
    assert window.try_acquire(1, now=0.0)[0] is not None
    assert window.try_acquire(1, now=1.0)[0] is not None
    entry, _ = window.try_acquire(1, now=2.0)
    blocked, wait = window.try_acquire(1, now=3.0)
    assert blocked is None and wait == pytest.approx(7.0)  # the first expires at 10
    assert window.try_acquire(1, now=10.0)[0] is not None
    tokens = _Window(limit=100, window=60.0)
    spent, _ = tokens.try_acquire(80, now=0.0)
    assert tokens.try_acquire(30, now=1.0)[0] is None
    tokens.adjust(spent, 50)  # the reply used fewer tokens than estimated
    assert tokens.try_acquire(30, now=1.0)[0] is not None
    big = _Window(limit=10, window=60.0)
    assert big.try_acquire(50, now=0.0)[0] is not None  # one oversize request may go alone


def test_window_fills_exactly_to_its_limit_and_waits_for_enough_to_expire() -> None:
    window = _Window(limit=3, window=10.0)
    for now in (0.0, 1.0, 2.0):
        assert window.try_acquire(1, now=now)[1] == 0.0  # the third fills it exactly
    # 3 more need all three to expire: the last one does at 12
    assert window.try_acquire(3, now=4.0) == (None, pytest.approx(8.0))
    assert window.try_acquire(1, now=4.0) == (None, pytest.approx(6.0))
    late = _Window(limit=1, window=10.0)
    late.try_acquire(1, now=0.0)
    assert late.try_acquire(1, now=9.5) == (None, pytest.approx(0.5))
    tokens = _Window(limit=100, window=60.0)
    spent, _ = tokens.try_acquire(80, now=0.0)
    tokens.adjust(spent, 50)
    assert tokens.try_acquire(50, now=1.0)[0] is not None  # 50 + 50: full
    assert tokens.try_acquire(1, now=1.0)[0] is None
    assert tokens.try_acquire(100, now=61.0)[0] is not None  # both expired, the corrected one too


def test_limited_model_spends_its_budgets_per_request(monkeypatch: pytest.MonkeyPatch) -> None:
    from synth.llm.limiter import LimitedModel
    from synth.llm.pricing import estimate_tokens

    acquired: list[float] = []
    adjusted: list[float] = []
    real_acquire, real_adjust = _Window.try_acquire, _Window.adjust
    monkeypatch.setattr(
        _Window,
        "try_acquire",
        lambda w, amount, now: acquired.append(amount) or real_acquire(w, amount, now),
    )
    monkeypatch.setattr(
        _Window,
        "adjust",
        lambda w, entry, amount: adjusted.append(amount) or real_adjust(w, entry, amount),
    )
    seen: list[tuple[str | None, object]] = []

    class Recording(Scripted):
        async def arequest(self, prompt, *, system=None, schema=None, label=None) -> Completion:
            seen.append((system, schema))
            return await super().arequest(prompt, system=system, schema=schema, label=label)

    no_output = Completion(text="{}", model="s1", input_tokens=7, output_tokens=None)
    inner = Recording(['{"supported": true}', no_output])
    limiter = RateLimiter(4, rpm=100, tpm=10_000)
    model = LimitedModel(inner, limiter)
    prompt, system = "one two three", "a long system prompt " * 20
    asyncio.run(model.arequest(prompt, system=system, schema=Verdict))
    # the reply counted 10 where 92 were estimated: later estimates are scaled toward its count
    second = limiter.scaled_estimate(estimate_tokens(prompt))
    assert second < estimate_tokens(prompt)
    asyncio.run(model.arequest(prompt))
    assert seen == [(system, Verdict), (None, None)]
    # per request: 1 of the rpm budget, then the estimate (system prompt included) of the tpm one
    assert acquired == [1, estimate_tokens(prompt, system=system), 1, second]
    assert estimate_tokens(prompt, system=system) > estimate_tokens(prompt)
    assert adjusted == [10 + 2, 7]  # corrected to what each reply used


def test_rpm_budget_paces_requests_so_the_server_never_says_429() -> None:
    from fake_openai import FakeOpenAI

    with FakeOpenAI(rpm=3, rpm_window=0.3) as server:
        limiter = RateLimiter(8, rpm=3, window=0.8)  # stricter than the server
        llm = make_llm("openai:m", base_url=server.url, limiter=limiter, max_retries=0)
        with llm:

            async def main() -> list[str]:
                return await asyncio.gather(*[llm.acomplete(f"q{i}") for i in range(7)])

            assert len(asyncio.run(main())) == 7
        assert server.outcomes() == {"ok": 7}


def test_limiter_settings_are_checked() -> None:
    with pytest.raises(ConfigError):
        RateLimiter(0)
    with pytest.raises(ConfigError):
        RateLimiter(4, rpm=-1)
    with pytest.raises(ConfigError):
        wrap_llm(FunctionModel(lambda p, s: p), limiter=RateLimiter(2), rpm=10)


def test_a_slot_held_outside_a_model_counts_against_max_concurrent() -> None:
    """A remote embedder's request takes a slot of the run's limiter, so model requests wait."""
    limiter = RateLimiter(1)
    order: list[str] = []
    model = wrap_llm(FunctionModel(lambda p, s: order.append(p) or "ok"), limiter=limiter)

    async def main() -> None:
        async with limiter.slot():
            assert limiter.in_flight == 1
            request = asyncio.ensure_future(model.acomplete("model"))
            # the request cannot finish while the slot is held (with no slot it would at once)
            done, _ = await asyncio.wait({request}, timeout=0.2)
            assert not done
            order.append("embedding done")
        await request

    asyncio.run(main())
    assert order == ["embedding done", "model"]
    assert limiter.in_flight == 0 and limiter.peak_in_flight == 1


def test_a_new_limiter_has_the_documented_defaults_and_slots_come_back_in_full() -> None:
    limiter = RateLimiter()
    # docs/models.md: 16 in flight by default; budgets are per minute
    assert (limiter.max_concurrent, limiter.rpm, limiter.tpm, limiter.window) == (
        16,
        None,
        None,
        60.0,
    )
    assert limiter.in_flight == 0 and limiter.peak_in_flight == 0  # nothing ran yet
    with pytest.raises(ConfigError, match=r"^max_concurrent must be at least 1, got 0$"):
        RateLimiter(0)

    async def hold_two_then_three() -> None:
        three = RateLimiter(3)
        async with three.slot(), three.slot():
            assert three.in_flight == 2
        assert three.in_flight == 0  # both slots free again, not just one
        async with three.slot(), three.slot(), three.slot():
            assert three.in_flight == 3 and three.peak_in_flight == 3

    asyncio.run(hold_two_then_three())


def test_tpm_budget_is_estimated_from_the_prompt(monkeypatch) -> None:
    calls = []
    real = _Window.try_acquire

    def spy(self, amount, now):
        if self.limit == 10_000:  # the tokens window's (the requests one counts too)
            calls.append(amount)
        return real(self, amount, now)

    monkeypatch.setattr(_Window, "try_acquire", spy)
    llm = wrap_llm(FunctionModel(lambda p, s: "ok"), tpm=10_000, max_tokens=100)
    llm.complete("one two three four")
    assert len(calls) == 1 and calls[0] > 100  # prompt tokens plus max_tokens


# ---- usage ---------------------------------------------------------------------------------------


def test_usage_by_label_and_model_and_as_json() -> None:
    shared = Usage()
    first = wrap_llm(Scripted(["a", "b"]), usage=shared)
    second = make_llm(lambda prompt, system: "c", usage=shared)
    first.complete("x", label="filter")
    first.complete("y", label="evolve")
    second.complete("z", label="evolve")
    assert shared.by_label()["evolve"].responses == 2
    assert shared.by_model()["scripted:s1"].input_tokens == 20
    assert shared.total.calls == 3
    data = json.loads(json.dumps(shared.to_dict()))
    assert data["by_label"]["filter"]["responses"] == 1
    merged = Usage().merge(shared).merge(shared)
    assert merged.total.responses == 6
    assert "responses=3" in repr(shared)


def test_usage_counts_each_event_exactly_and_reads_them_back_every_way() -> None:
    usage = Usage()
    usage.record("b:m", "filter", calls=2, responses=1, cached_responses=1, requests=3)
    usage.record("b:m", "filter", input_tokens=10, output_tokens=None, failure="timeout")
    usage.record("a:m", None, calls=1, requests=1, input_tokens=None, output_tokens=4)
    usage.record("a:m", "filter", retry="server")
    usage.record("a:m", "filter", retry="server")
    usage.record("a:m", None, retry="rate_limit")
    assert usage.counts("a:m", "filter").to_dict() == {
        "calls": 0,
        "responses": 0,
        "cached_responses": 0,
        "requests": 0,
        "cancelled": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "cached_input_tokens": 0,
        "cache_write_tokens": 0,
        "retries": {"server": 2},
        "failures": {},
    }
    assert usage.counts(label="unlabelled").retries == {"rate_limit": 1}
    assert usage.counts(label="filter").to_dict() == {
        "calls": 2,
        "responses": 1,
        "cached_responses": 1,
        "requests": 3,
        "cancelled": 0,
        "input_tokens": 10,
        "output_tokens": 0,
        "cached_input_tokens": 0,
        "cache_write_tokens": 0,
        "retries": {"server": 2},
        "failures": {"timeout": 1},
    }
    total = usage.total
    assert (total.calls, total.requests, total.input_tokens, total.output_tokens) == (3, 4, 10, 4)
    assert (total.total_tokens, total.total_retries, total.total_failures) == (14, 3, 1)
    assert total.to_dict()["retries"] == {"rate_limit": 1, "server": 2}
    assert list(total.to_dict()["retries"]) == ["rate_limit", "server"]  # sorted for JSON
    assert list(usage.by_model()) == ["a:m", "b:m"] and list(usage.by_label()) == [
        "filter",
        "unlabelled",
    ]
    assert usage.by_model()["a:m"].total_retries == 3 and usage.by_label()["filter"].calls == 2
    assert repr(usage) == (
        "Usage(calls=3, responses=1, cached=1, requests=4, tokens=10+4, retries=3, failures=1)"
    )
    copy = usage.pairs()
    copy[("a:m", "filter")].retries["server"] = 99  # a copy: the usage keeps its own counts
    assert usage.counts("a:m", "filter").retries == {"server": 2}
    assert usage.to_dict() == {
        "total": total.to_dict(),
        "by_model": {k: v.to_dict() for k, v in usage.by_model().items()},
        "by_label": {k: v.to_dict() for k, v in usage.by_label().items()},
    }
    usage.reset()
    assert usage.pairs() == {} and usage.total == UsageCounts()


def test_usage_and_meter_models_count_calls_failures_and_requests_sent() -> None:
    from synth.errors import CacheError
    from synth.llm.base import REQUESTS_SENT
    from synth.llm.usage import MeterModel, UsageModel

    usage = Usage()
    resent = Completion(
        text="ok", input_tokens=5, output_tokens=1, finish_reason="stop", extra={REQUESTS_SENT: 3}
    )
    cached = Completion(text="ok", finish_reason="stop", cached=True)
    inner = Scripted([resent, cached, ServerError("down"), CacheError("disk gone")])
    model = UsageModel(MeterModel(inner, usage), usage)
    first = asyncio.run(model.arequest("p", label="filter"))
    assert first.extra == {}  # the count was taken, not kept with the reply
    asyncio.run(model.arequest("p", label="filter"))
    for _ in range(2):
        with pytest.raises((ServerError, CacheError)):
            asyncio.run(model.arequest("p", label="evolve"))
    counts = usage.counts("scripted:s1", "filter")
    assert (counts.calls, counts.responses, counts.cached_responses) == (2, 2, 1)
    assert (counts.requests, counts.input_tokens, counts.output_tokens) == (3 + 1, 5, 1)
    assert usage.counts(label="evolve").failures == {"server": 1, "cache": 1}
    assert usage.counts(label="evolve").responses == 0
    assert UsageModel(inner).usage.total == UsageCounts()  # a usage of its own by default


def test_retry_after_headers_and_status_codes_become_typed_errors() -> None:
    from synth.llm._http import error_for_status, retry_after

    assert retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25  # ms wins
    assert retry_after({"retry-after": "3"}) == 3.0
    in_30s = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 0 < retry_after({"retry-after": in_30s}) <= 30  # an HTTP date
    assert retry_after({"retry-after": "soon"}) is None and retry_after(None) is None
    limited = error_for_status(429, "slow down", {"retry-after": "2"})
    assert isinstance(limited, RateLimitError) and limited.retry_after == 2.0
    assert isinstance(
        error_for_status(429, "quota", code="insufficient_quota"), AuthenticationError
    )
    kinds = {s: error_for_status(s, "x").kind for s in (400, 401, 403, 404, 408, 500, 503, 529)}
    assert kinds == {
        400: "bad_request",
        401: "auth",
        403: "auth",
        404: "bad_request",
        408: "timeout",
        500: "server",
        503: "server",
        529: "server",
    }


def test_a_429_carries_the_budgets_its_headers_state() -> None:
    from synth.llm._http import error_for_status
    from synth.llm._rate_headers import Budget, RateLimits

    headers = {
        "retry-after": "2",
        "x-ratelimit-limit-requests": "300",
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": "2s",
    }
    limited = error_for_status(429, "slow down", headers)
    assert isinstance(limited, RateLimitError) and limited.retry_after == 2.0
    assert limited.rate_limits == RateLimits(Budget(300, 0, 2.0), None)


def test_a_retry_after_that_cannot_be_used_gives_way_to_the_next_header() -> None:
    from synth.llm._http import retry_after

    assert retry_after({"retry-after-ms": "soon", "retry-after": "4"}) == 4.0
    assert retry_after({"retry-after-ms": "inf", "retry-after": "4"}) == 4.0
    assert retry_after({"retry-after-ms": "-5", "retry-after": "2"}) == 2.0
    assert retry_after({"retry-after": "0"}) == 0.0  # now is a wait of its own
    past = email.utils.formatdate(time.time() - 60, usegmt=True)
    assert retry_after({"retry-after": past}) == 0.0  # a date gone by: no wait


def test_each_status_becomes_its_error_carrying_the_servers_message() -> None:
    from synth.errors import BadRequestError, ModelError
    from synth.llm._http import error_for_status

    quota = error_for_status(429, "no credit", code="insufficient_quota")
    assert str(quota) == "no credit (the account's quota is spent)"
    refused = error_for_status(401, "bad key")
    assert str(refused) == (
        "bad key (the API key was refused: check the provider's key variable, e.g. "
        "OPENAI_API_KEY, and the base URL)"
    )
    for status, kind in [
        (429, RateLimitError),
        (408, ModelTimeoutError),
        (409, ServerError),
        (500, ServerError),
        (410, BadRequestError),
        (499, BadRequestError),
        (None, ModelError),
        (302, ModelError),
    ]:
        error = error_for_status(status, "the message")
        assert type(error) is kind and str(error) == "the message", status
    assert error_for_status(404, "gone").status == 404  # type: ignore[attr-defined]


def test_a_hopeless_servers_error_names_the_server_the_reason_the_fix_and_the_last_error() -> None:
    from synth.errors import BadRequestError, EndpointError
    from synth.llm._http import EndpointGuard

    guard = EndpointGuard(None, "chat", "check --base-url")
    noise = "no such\n   route " + "y" * 400
    error = guard.failed(BadRequestError(noise, status=404))  # a 404 trips it at once
    assert isinstance(error, EndpointError) and error.base_url == "the default server"
    last = ("no such route " + "y" * 400)[:300]
    assert str(error) == (
        "cannot use the chat server at the default server: it answers 404 Not Found (a wrong "
        f"path or model name); check --base-url (last error: {last})"
    )
    with pytest.raises(EndpointError):
        guard.check()
    refused = ServerError("connect failed")
    refused.unreachable = True  # type: ignore[attr-defined]
    error = EndpointGuard("http://127.0.0.1:9/v1", "embedding", "start it").failed(refused)
    assert error is not None and error.base_url == "http://127.0.0.1:9/v1"
    assert str(error).startswith(
        "cannot use the embedding server at http://127.0.0.1:9/v1: nothing answers there "
        "(connection refused or unknown host); start it"
    )


def test_invalid_requests_trip_the_guard_on_the_third_and_name_their_status() -> None:
    from synth.errors import BadRequestError
    from synth.llm._http import EndpointGuard

    for status, shown in ((422, "HTTP 422"), (None, "HTTP 400")):
        guard = EndpointGuard("http://h/v1", "chat", "fix it")
        assert guard.failed(BadRequestError("bad", status=status)) is None
        assert guard.failed(BadRequestError("bad", status=status)) is None
        error = guard.failed(BadRequestError("bad", status=status))
        assert error is not None
        assert f"it refuses every request as invalid ({shown}); fix it" in str(error)
    answered = EndpointGuard("http://h/v1", "chat", "fix it")
    answered.ok()
    assert answered.failed(BadRequestError("gone", status=404)) is None  # per item from now on
    answered.check()


def test_only_a_connection_never_made_is_unreachable() -> None:
    from synth.llm._http import unreachable

    def chain(depth: int, last: BaseException) -> BaseException:
        """``last`` as the cause of the cause ... of an error ``depth`` levels above it."""
        error = last
        for level in range(depth):
            wrapper = RuntimeError(f"level {level}")
            wrapper.__cause__ = error
            error = wrapper
        return error

    assert not unreachable(ValueError("a reply that did not parse"))
    assert unreachable(chain(7, ConnectionRefusedError()))  # the eighth exception looked at
    assert not unreachable(chain(8, ConnectionRefusedError()))  # past the eight looked at
    assert not unreachable(chain(12, ValueError("deep")))


def test_the_meter_passes_the_call_whole_and_failures_are_kept_under_their_model() -> None:
    from synth.errors import CacheError
    from synth.llm.base import REQUESTS_SENT
    from synth.llm.usage import MeterModel, UsageModel

    seen: list[tuple[object, str | None]] = []

    class Inner(Scripted):
        async def arequest(self, prompt, *, system=None, schema=None, label=None) -> Completion:
            seen.append((schema, label))
            return await super().arequest(prompt, system=system, schema=schema, label=label)

    usage = Usage()
    twice = Completion(
        text="{}", input_tokens=4, output_tokens=2, finish_reason="stop", extra={REQUESTS_SENT: 2}
    )
    inner = Inner([twice, ServerError("down"), ServerError("down"), CacheError("disk gone")])
    model = UsageModel(MeterModel(inner, usage), usage)
    reply = asyncio.run(model.arequest("p", schema=Verdict, label="judge"))
    assert reply.extra == {} and seen == [(Verdict, "judge")]
    for _ in range(3):
        with pytest.raises((ServerError, CacheError)):
            asyncio.run(model.arequest("p", label="judge"))
    assert usage.counts("scripted:s1", "judge").failures == {"server": 2, "cache": 1}
    assert usage.counts("scripted:s1", "judge").requests == 2 + 3
    assert usage.cost({"scripted:s1": (1.0, 10.0)}).total_usd == pytest.approx((4 + 20) / 1e6)
    counts = UsageCounts(retries={"server": 1}).add(UsageCounts(retries={"server": 2}))
    assert counts.retries == {"server": 3}


def test_a_sync_function_model_runs_more_calls_at_once_than_the_loops_default_pool() -> None:
    # the loop's default pool has min(32, cores + 4) threads; a run's limiter lets 64 out at once
    at_once = 40
    barrier = threading.Barrier(at_once, timeout=30)  # broken (an error) if they never meet

    def reply(prompt: str, system: str | None) -> str:
        barrier.wait()
        return prompt

    model = FunctionModel(reply)

    async def main() -> list[str]:
        done = await asyncio.gather(*(model.arequest(f"p{i}") for i in range(at_once)))
        return [c.text for c in done]

    assert asyncio.run(main()) == [f"p{i}" for i in range(at_once)]
