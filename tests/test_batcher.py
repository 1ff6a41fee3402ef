"""The batcher on its own: a batch model made outside any run, what arrives while a job is being
sent, and errors nobody expected (each reaches the requests waiting, none hangs).

The first test goes over HTTP to the fake server's Batch API (tests/fake_batches.py); the others
use :class:`~scripted_batches.ScriptedAPI`, a Batch API in memory, to script what the provider does. Every wait is
bounded by ``asyncio.wait_for``: a batcher that hangs fails the test instead of blocking it.
"""

from __future__ import annotations

import asyncio

import pytest
from fake_openai import FakeOpenAI
from scripted_batches import FAST, ScriptedAPI, ask, bounded

from synth.llm._batcher import Batcher
from synth.llm.base import Completion
from synth.llm.batch import BatchModel
from synth.llm.factory import make_llm

KEY = "sk-batcher-test-not-a-real-key-0123456789"


def test_a_batch_model_made_outside_any_run_answers_its_requests_over_http(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    echo = lambda request: "re: " + request["messages"][-1]["content"]  # noqa: E731
    with FakeOpenAI(reply=echo) as server:
        server.batches.delay = 0.05
        llm = make_llm("openai:fake-model", base_url=server.url, batch=FAST, cache=None)
        prompts = [f"question {i}" for i in range(5)]
        replies = bounded(lambda: asyncio.gather(*(llm.arequest(p) for p in prompts)))
        assert [r.text for r in replies] == [f"re: {p}" for p in prompts]
        assert len(server.batches.submitted) == 1  # one job for the wave
        assert server.request_count("chat") == 0
    assert llm.usage.total.requests == len(prompts)  # type: ignore[attr-defined]
    batch = llm.layer(BatchModel)  # type: ignore[attr-defined]
    (job,) = batch.batcher.report["jobs"].values()
    assert job["state"] == "completed" and job["requests"] == len(prompts)


def test_an_unexpected_error_while_a_job_is_sent_reaches_every_waiting_request() -> None:
    api = ScriptedAPI()
    api.submit_errors.append(RuntimeError("the SDK changed its mind"))
    batcher = Batcher(api, FAST, "openai:m")

    async def scenario() -> list[BaseException | Completion]:
        return await asyncio.gather(*ask(batcher, "a", "b"), return_exceptions=True)

    outcomes = bounded(scenario)
    assert all(isinstance(o, RuntimeError) and "changed its mind" in str(o) for o in outcomes)
    # the next request is sent as usual
    assert [c.text for c in bounded(lambda: asyncio.gather(*ask(batcher, "c")))] == ["C"]


def test_an_unexpected_error_while_a_job_is_followed_reaches_its_requests() -> None:
    api = ScriptedAPI()
    api.statuses.append(KeyError("state"))
    batcher = Batcher(api, FAST, "openai:m")

    async def scenario() -> list[BaseException | Completion]:
        return await asyncio.gather(*ask(batcher, "a", "b"), return_exceptions=True)

    assert all(isinstance(o, KeyError) for o in bounded(scenario))


def test_a_request_that_arrives_while_a_job_is_being_sent_goes_out_in_the_next_job() -> None:
    api = ScriptedAPI()
    batcher = Batcher(api, FAST, "openai:m")

    async def scenario() -> list[str]:
        api.gate = asyncio.Event()
        first = ask(batcher, "a", "b")
        while not api.submitting:  # the first job is on its way
            await asyncio.sleep(0.005)
        late = ask(batcher, "c")
        await asyncio.sleep(FAST.settle * 3)  # c is queued and settled while a, b are sent
        api.gate.set()
        return [c.text for c in await asyncio.gather(*first, *late)]

    assert bounded(scenario) == ["A", "B", "C"]
    assert [[cid for cid, _ in lines] for lines in api.jobs.values()] == [["a", "b"], ["c"]]
