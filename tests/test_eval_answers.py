"""evaluate_answers: systems, datasets, missing inputs, failures, n_jobs order, panels, usage."""

from __future__ import annotations

import asyncio
import inspect
import json
import math
import threading
from pathlib import Path
from types import SimpleNamespace

import krippendorff
import numpy as np
import pytest
from judge_replies import faithfulness_reply

from synth import (
    AnswerEvaluation,
    ConfigError,
    Dataset,
    FailedItemsWarning,
    Golden,
    LLMJudge,
    evaluate_answers,
    read_report,
)


class Judge:
    """A thread-safe scripted judge: replies by the kind of prompt, records every prompt."""

    def __init__(self, rating: int = 4, supported: tuple[bool, ...] = (True, False)) -> None:
        self.rating = rating
        self.supported = supported
        self.prompts: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, prompt: str, system: str | None) -> str:
        with self.lock:
            self.prompts.append(prompt)
        if '"claims"' in prompt:
            return json.dumps(faithfulness_reply(prompt, self.supported))
        if '"true_positives"' in prompt:
            return json.dumps(
                {"true_positives": ["a"], "false_positives": [], "false_negatives": ["b"]}
            )
        if '"verdicts"' in prompt:
            n = prompt.count("<context index=")
            return json.dumps(
                {"verdicts": [{"index": i, "relevant": True} for i in range(1, n + 1)]}
            )
        if '"statements"' in prompt:
            return json.dumps({"statements": [{"statement": "s", "attributable": True}]})
        return json.dumps({"score": self.rating, "reason": "r"})


DATASET = [
    {
        "id": "q1",
        "question": "Capital of France?",
        "reference": "Paris",
        "contexts": ["Paris is the capital."],
    },
    {
        "id": "q2",
        "question": "Largest planet?",
        "reference": ["Jupiter", "planet Jupiter"],
        "contexts": ["Jupiter."],
    },
    {"id": "q3", "question": "No reference here?", "contexts": ["Some text."]},
    {"id": "q4", "question": "No contexts here?", "reference": "Yes"},
]


def test_system_return_shapes_and_contexts_replacement() -> None:
    judge = Judge()

    def system(question: str):
        if question.startswith("Capital"):
            return {"answer": "Paris", "contexts": [{"text": "RETRIEVED PASSAGE"}]}
        if question.startswith("Largest"):
            return SimpleNamespace(answer="Jupiter")
        return "Yes"

    report = evaluate_answers(system, DATASET, judges={"j": judge}, metrics=["faithfulness"])
    assert [item.answer for item in report.items] == ["Paris", "Jupiter", "Yes", "Yes"]
    faithfulness_prompts = [p for p in judge.prompts if '"claims"' in p]
    assert len(faithfulness_prompts) == 3  # q4 has no contexts: no call
    assert (
        "RETRIEVED PASSAGE" in faithfulness_prompts[0]
        and "Paris is the capital." not in faithfulness_prompts[0]
    )
    assert math.isnan(report.items[3].scores["faithfulness"])
    assert report.coverage["faithfulness"] == 3
    assert report.coverage["exact_match"] == 3  # q3 has no reference
    assert math.isnan(report.items[2].scores["exact_match"])
    assert report.items[2].skipped == {"exact_match": "no reference", "token_f1": "no reference"}
    assert report.items[3].skipped == {"faithfulness": "no contexts"}
    assert report.metrics["exact_match"] == 1.0


def test_stored_answers_with_system_none() -> None:
    items = [dict(DATASET[0], answer="Lyon"), dict(DATASET[1])]  # q2 has no stored answer
    report = evaluate_answers(None, items)
    assert report.metrics == {"exact_match": 0.0, "token_f1": 0.0}
    assert report.coverage == {"exact_match": 1, "token_f1": 1}
    assert report.config["system"] == "stored answers"
    assert report.judges == {} and report.usage == {} and report.errors == {"system": 0}


def test_a_judge_sees_a_reference_only_when_there_is_exactly_one() -> None:
    judge = Judge()
    report = evaluate_answers(
        lambda q: "Jupiter",
        DATASET[:2],
        judges={"j": judge},
        metrics=["answer_correctness", "context_precision", "context_recall"],
    )
    correctness = [p for p in judge.prompts if '"true_positives"' in p]
    assert len(correctness) == 1 and "<reference>\nParis\n</reference>" in correctness[0]
    precision = [p for p in judge.prompts if '"verdicts"' in p]
    assert len(precision) == 2  # precision needs no reference; q2's two references stay out
    assert "<reference>" in precision[0] and "<reference>" not in precision[1]
    assert all("planet Jupiter" not in p for p in judge.prompts)
    assert math.isnan(report.items[1].scores["answer_correctness"])
    assert math.isnan(report.items[1].scores["context_recall"])
    assert report.items[1].skipped == {
        "answer_correctness": "several references",
        "context_recall": "several references",
    }
    assert report.items[0].scores["answer_correctness"] == pytest.approx(1 / (1 + 0.5))
    assert report.items[1].scores["exact_match"] == 1.0  # several references go to text metrics


#: what a failing request's message may quote: a key, a password in a URL, a bearer token
LEAKY = (
    "POST http://alice:hunter2pass@rag.internal:8080/query failed (key sk-test-SECRETVALUE123, "
    "Authorization: Bearer tok-SECRET-456)"
)


def test_a_failing_systems_and_judges_errors_are_recorded_without_credentials() -> None:
    """A report is shared (a baseline committed, a summary on a pull request): the message of an
    error the user's code raised is kept, its credentials hidden as a provider error's are."""

    def system(question: str) -> str:
        if question.startswith("Largest"):
            raise RuntimeError(LEAKY)
        return "Paris"

    def judge(prompt: str, system: str | None) -> str:
        raise ConnectionError(LEAKY)

    with pytest.warns(FailedItemsWarning) as caught:
        report = evaluate_answers(
            system, DATASET, judges={"j": judge}, metrics=["answer_relevance"]
        )
    recorded = json.dumps([item.errors for item in report.items])
    assert "RuntimeError: POST http://<redacted>@rag.internal:8080/query failed" in recorded
    assert "the judge function raised ConnectionError: POST" in recorded
    for secret in ("hunter2pass", "SECRETVALUE123", "tok-SECRET-456"):
        assert secret not in recorded
        assert secret not in str(caught[0].message)


def test_a_failing_systems_error_names_no_local_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file the user's system could not open is named from the working folder (``.``) or the
    home folder (``~``): the report shows neither the account nor the disk's layout."""
    home = tmp_path / "alice-7f3"
    project = home / "work" / "rag"
    project.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(project)

    def system(question: str) -> str:
        if question.startswith("Largest"):
            raise FileNotFoundError(f"{project}/index.faiss, {home}/.cache/m.bin, {home}-old/x")
        return "Paris"

    with pytest.warns(FailedItemsWarning) as caught:
        report = evaluate_answers(system, DATASET)
    recorded = report.items[1].errors["system"]
    assert recorded == f"FileNotFoundError: ./index.faiss, ~/.cache/m.bin, {home}-old/x"
    assert str(project) not in str(caught[0].message)


def test_failures_are_recorded_and_counted() -> None:
    def system(question: str) -> str:
        if question.startswith("Largest"):
            raise RuntimeError("model down")
        return "Paris"

    def flaky_judge(prompt: str, system: str | None) -> str:
        return "not json" if "No reference" in prompt else json.dumps({"score": 5, "reason": ""})

    with pytest.warns(FailedItemsWarning) as caught:
        report = evaluate_answers(
            system, DATASET, judges={"j": flaky_judge}, metrics=["answer_relevance"]
        )
    assert [w.filename for w in caught] == [__file__]  # the caller's line
    assert str(caught[0].message).startswith(
        "2 of 4 items failed (system 1, j 1); the first, item q2: system: RuntimeError: model down"
    )
    assert report.failed_items == 2
    assert report.errors == {"system": 1, "j": 1}
    assert report.items[1].errors == {"system": "RuntimeError: model down"}
    assert report.items[1].answer is None and math.isnan(report.items[1].scores["answer_relevance"])
    assert report.items[2].errors["answer_relevance/j"].startswith("invalid_output:")
    assert report.coverage["answer_relevance"] == 2
    assert report.usage["j"]["failures"] == 1 and report.usage["j"]["responses"] == 3
    with pytest.raises(RuntimeError, match="model down"):
        evaluate_answers(system, DATASET, on_error="raise")


def test_one_judge_gives_one_score_per_metric_and_a_panel_one_per_judge_too() -> None:
    """A lone judge's score is the metric's own: no second row under the judge's name."""
    metrics = ["faithfulness", "answer_relevance"]
    stored = [dict(item, answer="Paris") for item in DATASET]
    alone = evaluate_answers(None, stored, judges={"j": Judge()}, metrics=metrics)
    assert list(alone.metrics) == ["exact_match", "token_f1", *metrics]
    assert list(alone.intervals) == list(alone.coverage) == list(alone.metrics)
    assert all("/" not in key for item in alone.items for key in item.scores)
    assert list(alone.judges) == ["j"]  # the judge is named once, with its identity
    panel = evaluate_answers(None, stored, judges={"j": Judge(), "k": Judge()}, metrics=metrics)
    assert list(panel.metrics) == [
        "exact_match", "token_f1",
        "faithfulness/j", "faithfulness/k", "faithfulness",
        "answer_relevance/j", "answer_relevance/k", "answer_relevance",
    ]  # fmt: skip
    assert panel.metrics["faithfulness"] == alone.metrics["faithfulness"]


def test_n_jobs_runs_items_at_once_and_keeps_dataset_order() -> None:
    # the first item cannot finish before the second has started: only concurrency gets past it
    second_started = threading.Event()
    threads = set()

    def system(question: str) -> str:
        threads.add(threading.current_thread().name)
        if question.startswith("Capital"):
            assert second_started.wait(timeout=30), "items did not run concurrently"
            return "Paris"
        second_started.set()
        return "Jupiter"

    report = evaluate_answers(system, DATASET[:2], n_jobs=2)
    assert [item.id for item in report.items] == ["q1", "q2"]
    assert [item.answer for item in report.items] == ["Paris", "Jupiter"]
    assert len(threads) == 2


def test_n_jobs_keeps_order_for_many_items_with_judges() -> None:
    items = [{"id": f"i{n}", "question": f"q{n}", "reference": str(n)} for n in range(40)]
    judge = Judge()
    report = evaluate_answers(
        lambda q: q[1:], items, judges={"j": judge}, metrics=["answer_relevance"], n_jobs=8
    )
    assert [item.id for item in report.items] == [f"i{n}" for n in range(40)]
    assert [item.answer for item in report.items] == [str(n) for n in range(40)]
    assert report.metrics["exact_match"] == 1.0 and len(judge.prompts) == 40


def test_async_system_is_awaited() -> None:
    async def system(question: str) -> str:
        return "Paris"

    report = evaluate_answers(system, DATASET[:1])
    assert report.items[0].answer == "Paris"


def test_panel_agreement_is_krippendorff_alpha_between_judges() -> None:
    items = [{"id": str(n), "question": f"q{n}", "answer": "a"} for n in range(6)]
    ratings_a = [1, 2, 3, 4, 5, 5]
    ratings_b = [1, 3, 3, 5, 4, 5]

    def rater(ratings):
        def judge(prompt, system):
            n = int(prompt.split("<question>\nq")[1][0])
            return json.dumps({"score": ratings[n], "reason": ""})

        return judge

    report = evaluate_answers(
        None,
        items,
        judges={"a": rater(ratings_a), "b": rater(ratings_b)},
        metrics=["answer_relevance"],
    )
    scores = np.array([[(r - 1) / 4 for r in ratings_a], [(r - 1) / 4 for r in ratings_b]])
    expected = krippendorff.alpha(reliability_data=scores, level_of_measurement="interval")
    assert report.agreement["answer_relevance"] == pytest.approx(expected, abs=1e-12)
    means = (scores[0] + scores[1]) / 2
    assert [item.scores["answer_relevance"] for item in report.items] == pytest.approx(list(means))
    assert report.metrics["answer_relevance"] == pytest.approx(means.mean())
    assert set(report.judges) == {"a", "b"}


def test_keep_verdicts_and_criteria() -> None:
    judge = Judge(rating=3)
    report = evaluate_answers(
        lambda q: "Paris",
        DATASET[:1],
        judges={"j": judge},
        metrics=["faithfulness"],
        criteria={"politeness": "The answer is polite."},
        keep_verdicts=True,
    )
    verdict = report.items[0].verdicts["faithfulness/j"]
    assert verdict["claims"][0] == "c0" and verdict["verdicts"][0]["supported"] is True
    assert report.items[0].verdicts["politeness/j"] == {"reason": "r", "score": 3}
    assert report.metrics["politeness"] == 0.5
    plain = evaluate_answers(
        lambda q: "Paris", DATASET[:1], judges={"j": judge}, metrics=["faithfulness"]
    )
    assert plain.items[0].verdicts == {}


def test_datasets_of_every_shape(tmp_path) -> None:
    goldens = [
        Golden(input="Capital of France?", expected_output="Paris", retrieval_context=["Paris is the capital."],
               context=["ignored when retrieval_context is set"]),
        Golden(input="Largest planet?", expected_output="Jupiter", context=["Jupiter is large."],
               actual_output="Saturn", metadata={"id": "planet"}),
    ]  # fmt: skip
    judge = Judge()
    by_list = evaluate_answers(
        lambda q: "Paris", goldens, judges={"j": judge}, metrics=["faithfulness"]
    )
    assert [item.id for item in by_list.items] == ["0", "planet"]
    assert "Paris is the capital." in judge.prompts[0] and "ignored" not in judge.prompts[0]
    assert "Jupiter is large." in judge.prompts[1]
    by_dataset = evaluate_answers(
        lambda q: "Paris", Dataset(goldens), judges={"j": Judge()}, metrics=["faithfulness"]
    )
    Dataset(goldens).save(tmp_path / "goldens.jsonl")
    by_path = evaluate_answers(
        lambda q: "Paris",
        tmp_path / "goldens.jsonl",
        judges={"j": Judge()},
        metrics=["faithfulness"],
    )
    assert by_dataset == by_list and by_path.metrics == by_list.metrics
    stored = evaluate_answers(None, goldens)  # actual_output is the stored answer
    assert stored.items[1].answer == "Saturn" and stored.coverage["exact_match"] == 1
    (tmp_path / "guide.json").write_text(json.dumps(DATASET), encoding="utf-8")
    by_guide_file = evaluate_answers(lambda q: "Paris", str(tmp_path / "guide.json"))
    assert [item.id for item in by_guide_file.items] == ["q1", "q2", "q3", "q4"]


def test_bad_arguments_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="did you mean 'faithfulness'"):
        evaluate_answers(None, DATASET, judges={"j": Judge()}, metrics=["faithfullness"])
    with pytest.raises(ConfigError, match="need judges"):
        evaluate_answers(None, DATASET, metrics=["faithfulness"])
    with pytest.raises(ConfigError, match="did you mean 'token_f1'"):
        evaluate_answers(None, DATASET, text_metrics=["token_f2"])
    with pytest.raises(ConfigError):
        evaluate_answers(None, DATASET, judges={"a/b": Judge()})
    with pytest.raises(ConfigError):
        evaluate_answers(None, DATASET, n_jobs=0)
    with pytest.raises(ConfigError):
        evaluate_answers(None, [{"id": "x", "question": "q"}, {"id": "x", "question": "r"}])
    with pytest.raises(ConfigError):
        evaluate_answers(None, DATASET[0])
    with pytest.raises(ConfigError):
        evaluate_answers("not callable", DATASET)


def test_usage_counts_cached_responses_and_judge_objects_are_not_mutated() -> None:
    cache: dict = {}
    judge = LLMJudge(Judge(), name="ignored")
    first = evaluate_answers(lambda q: "Paris", DATASET[:2], judges={"j": judge}, cache=cache)
    second = evaluate_answers(lambda q: "Paris", DATASET[:2], judges={"j": judge}, cache=cache)
    assert first.usage["j"]["responses"] == 4 and first.usage["j"]["cached_responses"] == 0
    assert second.usage["j"] == {
        "responses": 4, "cached_responses": 4, "input_tokens": 0, "output_tokens": 0, "failures": 0,
    }  # fmt: skip
    assert judge.usage.responses == 0  # each run counts on its own copy
    assert first.metrics == second.metrics


def test_report_round_trips_in_every_format_with_nan_and_none(tmp_path) -> None:
    with pytest.warns(FailedItemsWarning, match="items failed"):
        report = evaluate_answers(
            lambda q: None if q.startswith("No") else "Paris",  # a None answer is a system failure
            DATASET,
            judges={"one": Judge(), "two": Judge(rating=2)},
            keep_verdicts=True,
        )
    assert any(math.isnan(v) for item in report.items for v in item.scores.values())
    assert any(item.answer is None for item in report.items)
    for suffix in ("json", "jsonl", "yaml", "yml", "toml"):
        path = report.write(tmp_path / f"report.{suffix}")
        again = AnswerEvaluation.read(path)
        assert again == report, suffix
        assert read_report(path) == report
    lines = (tmp_path / "report.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1 + len(DATASET)
    assert "report" in json.loads(lines[0]) and [json.loads(line)["id"] for line in lines[1:]] == [
        "q1",
        "q2",
        "q3",
        "q4",
    ]
    strict = json.loads(
        (tmp_path / "report.json").read_text(encoding="utf-8"), parse_constant=lambda c: 1 / 0
    )
    assert strict["kind"] == "answers"  # valid JSON: NaN written as null
    assert "nan" in (tmp_path / "report.toml").read_text(encoding="utf-8")
    assert report.to_pandas().shape == (4, 3 + len(report.metrics))


def test_unnamed_judges_get_names_without_a_slash() -> None:
    from synth import FunctionModel

    judges = [FunctionModel(Judge(), name="org/model"), FunctionModel(Judge(), name="org/model")]
    report = evaluate_answers(None, [dict(DATASET[0], answer="Paris")], judges=judges,
                              metrics=["answer_relevance"], text_metrics=[])  # fmt: skip
    assert list(report.metrics) == [
        "answer_relevance/org_model",
        "answer_relevance/org_model-2",
        "answer_relevance",
    ]
    with pytest.raises(ConfigError, match="without '/'"):  # a name the caller chose is not changed
        evaluate_answers(None, DATASET, judges={"org/model": Judge()})


def test_every_items_long_verdicts_are_asked_for_before_any_short_one() -> None:
    # one call at a time: the judge sees the calls in the order they are sent
    items = [
        {"id": f"i{n}", "question": f"q{n}", "answer": "a", "contexts": ["c"]} for n in range(6)
    ]
    judge = Judge()
    evaluate_answers(
        None, items, judges={"j": judge}, metrics=["answer_relevance", "faithfulness"], n_jobs=1
    )
    kinds = ["claims" if '"claims"' in prompt else "rating" for prompt in judge.prompts]
    assert kinds == ["claims"] * 6 + ["rating"] * 6


def test_a_short_call_cancelled_while_it_waits_its_turn_is_closed_not_left_unawaited() -> None:
    from synth.evaluate.answers import _after_a_turn

    async def call() -> None:  # pragma: no cover - cancelled before it starts
        raise AssertionError("it ran")

    async def main() -> str:
        inner = call()
        task = asyncio.ensure_future(_after_a_turn(inner))
        await asyncio.sleep(0)  # the task is now waiting its turn
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return inspect.getcoroutinestate(inner)

    assert asyncio.run(main()) == inspect.CORO_CLOSED
