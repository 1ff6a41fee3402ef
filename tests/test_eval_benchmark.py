"""benchmark: every system on the same items, judge calls cached, leaderboard and comparisons."""

from __future__ import annotations

import json
import threading

import pytest

from synth import BenchmarkResult, ConfigError, FailedItemsWarning, benchmark

DATASET = [
    {
        "id": f"q{n}",
        "question": f"What is {n} + {n}?",
        "reference": str(2 * n),
        "contexts": [f"{n} + {n} = {2 * n}."],
    }
    for n in range(8)
]


def good(question: str) -> str:
    n = int(question.split()[2])
    return str(2 * n)


def sloppy(question: str) -> str:
    n = int(question.split()[2])
    return str(2 * n) if n % 2 else "no idea"


def copycat(question: str) -> str:
    return good(question)


class CountingJudge:
    """Rates an answer 5 when it holds a digit, else 1; counts calls."""

    def __init__(self) -> None:
        self.calls = 0
        self.lock = threading.Lock()

    def __call__(self, prompt: str, system: str | None) -> str:
        with self.lock:
            self.calls += 1
        answer = prompt.split("<answer>\n")[1].split("\n</answer>")[0]
        return json.dumps({"score": 5 if any(c.isdigit() for c in answer) else 1, "reason": ""})


def test_two_systems_leaderboard_and_comparison(tmp_path) -> None:
    judge = CountingJudge()
    result = benchmark(
        {"sloppy": sloppy, "good": good},
        DATASET,
        judges={"j": judge},
        metrics=["answer_relevance"],
        rank_by="answer_relevance",
    )
    assert result.rank_by == "answer_relevance"
    assert [row.system for row in result.leaderboard] == ["good", "sloppy"]
    assert [row.rank for row in result.leaderboard] == [1, 2]
    assert result.leaderboard[0].metrics["answer_relevance"] == 1.0
    assert result.leaderboard[1].metrics["answer_relevance"] == 0.5
    assert result.leaderboard[1].metrics["exact_match"] == 0.5
    low, high = result.leaderboard[1].intervals["answer_relevance"]
    assert 0.0 <= low <= 0.5 <= high <= 1.0
    # the same items, in the same order, for every system
    assert [i.id for i in result.reports["good"].items] == [
        i.id for i in result.reports["sloppy"].items
    ]
    (pair,) = result.comparisons
    assert (pair.a, pair.b) == ("sloppy", "good")
    row = pair.comparison["exact_match"]
    assert row.delta == 0.5 and row.n == 8 and row.exact
    assert row.p_value == pytest.approx(2 / 16)  # four +1 differences, four zeros
    assert result.comparison("good", "sloppy")["exact_match"].delta == -0.5
    # the odd items got the same answer from both systems: those judge calls came from the cache
    assert judge.calls == 12
    assert result.reports["good"].usage["j"]["cached_responses"] == 4
    assert result.usage["j"]["responses"] == 16 and result.usage["j"]["cached_responses"] == 4
    for suffix in ("json", "yaml", "toml"):
        result.write(tmp_path / f"bench.{suffix}")
        assert BenchmarkResult.read(tmp_path / f"bench.{suffix}") == result


def test_a_persistent_cache_makes_a_rerun_free() -> None:
    judge, cache = CountingJudge(), {}
    systems = {"good": good, "copy": copycat}
    first = benchmark(
        systems, DATASET, judges={"j": judge}, metrics=["answer_relevance"], cache=cache
    )
    assert judge.calls == 8  # the copy gives the same answers: all its judge calls hit the cache
    assert first.reports["copy"].usage["j"]["cached_responses"] == 8
    again = benchmark(
        systems, DATASET, judges={"j": judge}, metrics=["answer_relevance"], cache=cache
    )
    assert judge.calls == 8
    assert again.usage["j"]["cached_responses"] == again.usage["j"]["responses"] == 16
    assert again.leaderboard == first.leaderboard


def test_ranking_without_judges_and_bad_arguments() -> None:
    result = benchmark({"sloppy": sloppy, "good": good, "copy": copycat}, DATASET)
    assert result.rank_by == "token_f1"
    assert [row.system for row in result.leaderboard] == ["good", "copy", "sloppy"]  # stable ties
    assert len(result.comparisons) == 3
    with pytest.raises(ConfigError):
        benchmark({}, DATASET)
    with pytest.raises(ConfigError):
        benchmark({"x": "not callable"}, DATASET)  # type: ignore[dict-item]
    with pytest.raises(ConfigError):
        benchmark({"good": good}, DATASET, rank_by="nope")


def test_a_judge_with_its_own_cache_keeps_it() -> None:
    from synth import LLMJudge

    judge, own = CountingJudge(), {}
    systems = {"good": good, "copy": copycat}
    kwargs = {"judges": {"j": LLMJudge(judge, cache=own)}, "metrics": ["answer_relevance"]}
    benchmark(systems, DATASET, **kwargs)
    assert judge.calls == 8 and len(own) == 8  # the judge's cache held every reply
    again = benchmark(systems, DATASET, **kwargs)
    assert judge.calls == 8 and again.usage["j"]["cached_responses"] == 16
    other = {}
    benchmark(systems, DATASET, cache=other, **kwargs)  # cache= given: it is the one used
    assert judge.calls == 16 and len(other) == 8


def test_an_unknown_ranking_metric_is_refused_before_anything_runs() -> None:
    asked: list[str] = []

    def system(question: str) -> str:
        asked.append(question)
        return "0"

    judge = CountingJudge()
    kwargs = {"judges": {"j": judge}, "metrics": ["answer_relevance"]}
    with pytest.raises(ConfigError) as info:
        benchmark({"a": system, "b": good}, DATASET, rank_by="answer_relevanse", **kwargs)
    message = str(info.value)
    assert "cannot rank by 'answer_relevanse'; did you mean 'answer_relevance'?" in message
    assert "the metrics are exact_match, token_f1, answer_relevance" in message
    with pytest.raises(ConfigError, match="nothing to rank by"):
        benchmark({"a": system}, DATASET, text_metrics=[])
    assert asked == [] and judge.calls == 0
    # a panel judge's own score is a metric of the reports, so it may rank
    panel = {"judges": {"j": judge, "k": CountingJudge()}, "metrics": ["answer_relevance"]}
    result = benchmark({"a": system, "b": good}, DATASET, rank_by="answer_relevance/j", **panel)
    assert result.rank_by == "answer_relevance/j" and len(asked) == len(DATASET)


def test_failed_items_give_one_warning_naming_each_system() -> None:
    def flaky(question: str) -> str:
        if question == DATASET[0]["question"]:
            raise RuntimeError("backend down")
        return "Paris"

    with pytest.warns(FailedItemsWarning) as caught:
        result = benchmark({"ok": lambda q: "Paris", "flaky": flaky}, DATASET)
    assert len(caught) == 1 and caught[0].filename == __file__
    message = str(caught[0].message)
    assert message.startswith(f"flaky: 1 of {len(DATASET)} items failed (system 1)")
    assert "ok:" not in message
    assert {row.system: row.errors for row in result.leaderboard} == {"ok": 0, "flaky": 1}
