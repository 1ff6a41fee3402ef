"""evaluate_preference: both orders, position consistency, ties, panels, answer sources."""

from __future__ import annotations

import json
import math

import pytest

from synth import ConfigError, PreferenceEvaluation, evaluate_preference, read_report

DATASET = [
    {
        "id": "q1",
        "question": "Capital of France?",
        "reference": "Paris",
        "contexts": ["Paris is the capital."],
    },
    {"id": "q2", "question": "Largest planet?", "reference": "Jupiter"},
    {"id": "q3", "question": "Smallest planet?", "reference": "Mercury"},
]
MINE = ["Paris", "Jupiter", "Mercury"]
THEIRS = ["Lyon", "Saturn", "Mercury"]


def fair_judge(prompt: str, system: str | None) -> str:
    """Prefers the answer that matches the reference, whatever the order; ties when both do."""
    reference = prompt.split("<reference>\n")[1].split("\n</reference>")[0]
    first = prompt.split("<answer_a>\n")[1].split("\n</answer_a>")[0]
    second = prompt.split("<answer_b>\n")[1].split("\n</answer_b>")[0]
    if (first == reference) == (second == reference):
        return json.dumps({"winner": "tie", "reason": "same"})
    return json.dumps({"winner": "answer_a" if first == reference else "answer_b", "reason": ""})


def always_first(prompt: str, system: str | None) -> str:
    return '{"winner": "answer_a", "reason": "The first one."}'


def test_a_fair_judge_is_position_consistent() -> None:
    duel = evaluate_preference(
        DATASET, MINE, THEIRS, judges={"fair": fair_judge}, names=("mine", "theirs")
    )
    summary = duel.summary["fair"]
    assert summary == {
        "n": 3,
        "wins": {"mine": 2, "theirs": 0},
        "ties": 1,
        "position_consistency": 1.0,
        "win_rate": pytest.approx(2.5 / 3),
        "errors": 0,
    }
    assert [item.scores for item in duel.items] == [
        {"preference": 1.0},
        {"preference": 1.0},
        {"preference": 0.5},
    ]  # one judge: its score is the preference, with no second copy under its name
    assert duel.metrics["preference"] == pytest.approx(2.5 / 3)


def test_panel_of_a_fair_and_a_biased_judge(tmp_path) -> None:
    duel = evaluate_preference(
        DATASET,
        MINE,
        THEIRS,
        judges={"fair": fair_judge, "biased": always_first},
        names=("mine", "theirs"),
        keep_verdicts=True,
    )
    assert duel.summary["biased"]["position_consistency"] == 0.0
    assert duel.summary["biased"]["ties"] == 3
    assert [item.scores["preference"] for item in duel.items] == [0.75, 0.75, 0.5]
    assert duel.usage["fair"]["responses"] == 6 and duel.usage["biased"]["responses"] == 6
    verdict = duel.items[0].verdicts["preference/biased"]
    assert verdict["a_first"]["winner"] == "answer_a" and verdict["consistent"] is False
    assert "preference" in duel.agreement
    for suffix in ("json", "jsonl", "yaml", "toml"):
        duel.write(tmp_path / f"duel.{suffix}")
        again = read_report(tmp_path / f"duel.{suffix}")
        assert isinstance(again, PreferenceEvaluation) and again == duel


def test_answers_by_id_or_from_systems_and_failures() -> None:
    by_id = {"q1": "Paris", "q2": "Jupiter", "q3": "Mercury"}

    def baseline(question: str) -> str:
        if question.startswith("Smallest"):
            raise RuntimeError("baseline crashed")
        return "Lyon"

    duel = evaluate_preference(DATASET, by_id, baseline, judges={"fair": fair_judge})
    assert duel.errors == {"system": 1, "fair": 0}
    assert duel.items[2].errors["system"] == "RuntimeError: baseline crashed"
    assert math.isnan(duel.items[2].scores["preference"])
    assert duel.summary["fair"]["n"] == 2 and duel.summary["fair"]["wins"] == {"a": 2, "b": 0}


def test_judge_failures_are_counted() -> None:
    def broken(prompt: str, system: str | None) -> str:
        return '{"winner": "neither"}'

    duel = evaluate_preference(DATASET, MINE, THEIRS, judges={"broken": broken})
    assert duel.errors["broken"] == 3 and duel.summary["broken"]["n"] == 0
    assert math.isnan(duel.summary["broken"]["position_consistency"])


def test_bad_arguments() -> None:
    with pytest.raises(ConfigError):
        evaluate_preference(DATASET, MINE[:2], THEIRS, judges={"fair": fair_judge})
    with pytest.raises(ConfigError):
        evaluate_preference(DATASET, MINE, THEIRS, judges=None)
    with pytest.raises(ConfigError):
        evaluate_preference(DATASET, MINE, THEIRS, judges={"f": fair_judge}, names=("x", "x"))
    with pytest.raises(ConfigError):
        evaluate_preference(DATASET, {"q1": "Paris"}, THEIRS, judges={"f": fair_judge})


def test_a_dataset_of_goldens_is_taken_as_is(tmp_path) -> None:
    from synth import Dataset, Golden, benchmark

    goldens = [
        Golden(input=item["question"], expected_output=item["reference"],
               retrieval_context=item.get("contexts"),
               context=["not shown when retrieval_context is set" if item.get("contexts")
                        else "the context, shown when there is no retrieval_context"])
        for item in DATASET
    ]  # fmt: skip
    prompts: list[str] = []

    def judge(prompt: str, system: str | None) -> str:
        prompts.append(prompt)
        return fair_judge(prompt, system)

    dataset = Dataset(goldens)
    duel = evaluate_preference(dataset, MINE, THEIRS, judges={"fair": judge})
    assert duel.summary["fair"]["wins"] == {"a": 2, "b": 0}  # expected_output is the reference
    assert "Paris is the capital." in prompts[0] and "not shown" not in prompts[0]
    assert all("not shown" not in p for p in prompts)
    assert sum("shown when there is no retrieval_context" in p for p in prompts) == 4
    dataset.save(tmp_path / "goldens.json")
    by_path = evaluate_preference(tmp_path / "goldens.json", MINE, THEIRS, judges={"fair": judge})
    assert by_path.summary == duel.summary
    board = benchmark({"mine": lambda q: MINE[[g.input for g in goldens].index(q)],
                       "theirs": lambda q: THEIRS[[g.input for g in goldens].index(q)]},
                      goldens)  # fmt: skip
    assert [row.system for row in board.leaderboard] == ["mine", "theirs"]
    assert board.leaderboard[0].metrics["exact_match"] == 1.0
