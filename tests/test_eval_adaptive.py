"""``synth evaluate`` without ``--n-jobs``: the judges' calls find their own concurrency.

Judges made from provider specs share one adaptive limiter (synth.llm._aimd), so 60 items with two
metrics keep far more than the old 4 calls in flight; ``--n-jobs N`` pins every call to N; the
user's own functions stay at USER_JOBS at once. Counted by the fake server and by the functions
themselves, never timed.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI
from judge_replies import faithfulness_reply

from synth.cli import main
from synth.cli._judging import USER_JOBS, at_most


def judge_reply(request: dict) -> dict:
    prompt = "\n".join(str(m.get("content", "")) for m in request["messages"])
    if '"claims"' in prompt:
        return faithfulness_reply(prompt, [True])
    return {"score": 4, "reason": "fine"}


@pytest.fixture
def answered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-adaptive")
    monkeypatch.chdir(tmp_path)
    items = [
        {
            "id": f"q{i}",
            "question": f"What is item {i}?",
            "reference": f"Item {i}.",
            "contexts": [f"Item {i} is item {i}."],
            "answer": f"Item {i}.",
        }
        for i in range(60)
    ]
    (tmp_path / "data.json").write_text(json.dumps(items), encoding="utf-8")
    return tmp_path


def _evaluate(server: FakeOpenAI, *extra: str) -> int:
    return main(["evaluate", "data.json", "--judge", "openai:judge", "--base-url", server.url,
                 "--metric", "faithfulness", "--metric", "answer_relevance", "--json", *extra])  # fmt: skip


def test_judge_calls_rise_past_the_old_default_without_n_jobs(answered: Path, capsys) -> None:
    with FakeOpenAI(reply=judge_reply, latency=0.2) as server:
        assert _evaluate(server) == 0, capsys.readouterr().err
        assert server.outcomes() == {"ok": 120}  # one call per item and metric, none repeated
        assert server.peak_in_flight > 16


def test_n_jobs_pins_the_calls_in_flight(answered: Path, capsys) -> None:
    with FakeOpenAI(reply=judge_reply, latency=0.05) as server:
        assert _evaluate(server, "--n-jobs", "3") == 0, capsys.readouterr().err
        assert server.outcomes() == {"ok": 120}
        assert server.peak_in_flight <= 3


def test_a_judge_server_that_refuses_is_found_without_n_jobs(answered: Path, capsys) -> None:
    """A server that refuses more than 6 calls at once: the level comes down, every call ends.
    The first round trip, all 120 calls, is refused beyond the 6 (a 429 costs no tokens), and
    each halving of the level that follows less: fewer than twice the start in all, then none."""
    with FakeOpenAI(reply=judge_reply, latency=0.05, max_in_flight=6, retry_after=0.01) as server:
        assert _evaluate(server) == 0, capsys.readouterr().err
        outcomes = server.outcomes()
        assert outcomes["ok"] == 120
        refused = outcomes.get("concurrency_limit", 0)
        assert refused < 2 * 120


def test_a_user_function_runs_at_most_n_at_once() -> None:
    lock, running, peak = threading.Lock(), [0], [0]

    def slow(x: int) -> int:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.01)
        with lock:
            running[0] -= 1
        return x

    bounded = at_most(slow, USER_JOBS)
    threads = [threading.Thread(target=bounded, args=(i,)) for i in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert 1 <= peak[0] <= USER_JOBS and bounded.__wrapped__ is slow  # type: ignore[attr-defined]


def test_an_async_user_function_stays_async_and_bounded() -> None:
    import asyncio
    import inspect

    running, peak = [0], [0]

    async def answer(x: int) -> int:
        running[0] += 1
        peak[0] = max(peak[0], running[0])
        await asyncio.sleep(0.01)
        running[0] -= 1
        return x

    bounded = at_most(answer, 2)
    assert inspect.iscoroutinefunction(bounded)

    async def main() -> list[int]:
        return list(await asyncio.gather(*[bounded(i) for i in range(10)]))

    assert asyncio.run(main()) == list(range(10))
    assert 1 <= peak[0] <= 2


def test_the_judge_limiter_starts_at_the_calls_to_make_within_its_bounds() -> None:
    from synth.cli._judging import JUDGE_CEILING, judge_limiter
    from synth.run.models import RUN_START

    assert judge_limiter().concurrency()["start"] == RUN_START  # calls not known
    assert judge_limiter(10).concurrency()["start"] == RUN_START
    assert judge_limiter(120).concurrency()["start"] == 120
    assert judge_limiter(10_000).concurrency()["start"] == JUDGE_CEILING


def held_until(total: int, reply, *, deadline: float = 20.0):
    """``reply``, given only once ``total`` requests have arrived (or at ``deadline`` seconds, so
    a client that waits for a reply before sending the rest fails the count, not the run)."""
    arrived, ready = [0], threading.Condition()

    def held(request: dict) -> dict:
        with ready:
            arrived[0] += 1
            ready.notify_all()
            ready.wait_for(lambda: arrived[0] >= total, timeout=deadline)
        return reply(request)

    return held


def test_every_judge_call_of_both_metrics_leaves_before_the_first_reply(
    answered: Path, capsys
) -> None:
    """60 items with two metrics: all 120 calls are in flight at once, none waiting for a reply
    to free a slot (a generation run's start, 64, left 56 of them a round trip behind). The
    server holds every reply until all 120 have arrived, so the count does not depend on how
    fast the machine is."""
    with FakeOpenAI(reply=held_until(120, judge_reply)) as server:
        assert _evaluate(server) == 0, capsys.readouterr().err
        assert server.outcomes() == {"ok": 120}
        assert server.peak_in_flight == 120


def test_the_gate_sends_every_judge_call_before_the_first_reply(answered: Path, capsys) -> None:
    """``synth gate`` knows its items before it makes its judges, as ``evaluate`` does: all 120
    calls in flight at once (held by the server until all have arrived)."""
    with FakeOpenAI(reply=held_until(120, judge_reply)) as server:
        code = main(["gate", "data.json", "--baseline", "baseline.json", "--update-baseline",
                     "--judge", "openai:judge", "--base-url", server.url,
                     "--metric", "faithfulness", "--metric", "answer_relevance"])  # fmt: skip
        assert code == 0, capsys.readouterr().err
        assert server.outcomes() == {"ok": 120}
        assert server.peak_in_flight == 120


def test_the_benchmark_sends_every_judge_call_before_the_first_reply(
    answered: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """``synth benchmark`` reads its items before it makes its judges: one system's 60 answers
    with two metrics put all 120 judge calls in flight at once."""
    (answered / "echo_system.py").write_text("def answer(question):\n    return 'Item.'\n")
    monkeypatch.syspath_prepend(str(answered))
    with FakeOpenAI(reply=held_until(120, judge_reply)) as server:
        code = main(["benchmark", "data.json", "--system", "echo=echo_system:answer",
                     "--judge", "openai:judge", "--base-url", server.url,
                     "--metric", "faithfulness", "--metric", "answer_relevance"])  # fmt: skip
        assert code == 0, capsys.readouterr().err
        assert server.outcomes() == {"ok": 120}
        assert server.peak_in_flight == 120
