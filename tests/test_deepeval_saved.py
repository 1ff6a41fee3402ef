"""Files deepeval's own ``EvaluationDataset.save_as`` writes (deepeval 4.3.1), read by synth.

The texts below are what ``save_as("jsonl" | "json" | "csv")`` wrote for two single-turn goldens
and two conversational ones (one with no turns yet); tests/test_interop.py makes them with the
real deepeval and reads them the same way.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from synth import ConversationalGolden, Dataset, Golden, Turn
from synth.errors import DatasetError

_NULLS = {
    "name": None,
    "comments": None,
    "tools_called": None,
    "expected_tools": None,
    "token_cost": None,
    "input_token_count": None,
    "output_token_count": None,
    "custom_column_key_values": None,
    "expectations": None,
}
SINGLE_JSONL = [
    {
        "input": "Which pump runs at night?",
        "actual_output": None,
        "expected_output": "P-4.",
        "retrieval_context": None,
        "context": "Pump P-4 runs nightly.|P-3: standby.",
        "source_file": "manual.pdf",
        "additional_metadata": {"seed": 7},
        **_NULLS,
    },
    {
        "input": "Bare?",
        "actual_output": "yes",
        "expected_output": None,
        "retrieval_context": "r1|r2",
        "context": "",
        "source_file": None,
        "additional_metadata": None,
        **_NULLS,
    },
]
_TURN_NULLS = {
    "user_id": None,
    "retrieval_context": None,
    "tools_called": None,
    "mcp_tools_called": None,
    "mcp_resources_called": None,
    "mcp_prompts_called": None,
    "metadata": None,
}
TALKS = [
    {
        "scenario": "A technician asks when pumps run.",
        "turns": None,
        "expected_outcome": "They learn P-4 runs at night.",
        "user_description": "night-shift tech",
        "persona": {"characteristics": "night-shift tech"},
        "context": ["P-4 runs nightly."],
        "name": None,
        "comments": None,
        "additional_metadata": None,
        "custom_column_key_values": None,
        "expectations": None,
    },
    {
        "scenario": "Second.",
        "turns": [
            {"role": "user", "content": "Hi?", **_TURN_NULLS},
            {"role": "assistant", "content": "Hello.", **_TURN_NULLS},
        ],
        "expected_outcome": None,
        "user_description": None,
        "persona": None,
        "context": None,
        "name": None,
        "comments": None,
        "additional_metadata": None,
        "custom_column_key_values": None,
        "expectations": None,
    },
]
TALKS_CSV = (
    "scenario,turns,expected_outcome,user_description,context,name,comments,additional_metadata,"
    "custom_column_key_values,expectations\r\n"
    "A technician asks when pumps run.,,They learn P-4 runs at night.,night-shift tech,"
    "P-4 runs nightly.,,,,,\r\n"
    'Second.,"[{""role"": ""user"", ""content"": ""Hi?"", ""user_id"": null, '
    '""metadata"": null}, {""role"": ""assistant"", ""content"": ""Hello."", '
    '""user_id"": null, ""metadata"": null}]",,,,,,,,\r\n'
)
SINGLE_CSV = (
    "input,actual_output,expected_output,retrieval_context,context,name,comments,source_file,"
    "tools_called,expected_tools,token_cost,input_token_count,output_token_count,"
    "additional_metadata,custom_column_key_values,expectations\r\n"
    "Which pump runs at night?,,P-4.,,Pump P-4 runs nightly.|P-3: standby.,night,,manual.pdf,"
    ',,,,,"{""seed"": 7}",,\r\n'
    "Bare?,yes,,r1|r2,,,,,,,,,,,,\r\n"
)


def _write_jsonl(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_deepevals_jsonl_lists_joined_with_a_bar_are_split_again(tmp_path: Path) -> None:
    first, second = Dataset.load(_write_jsonl(tmp_path / "single.jsonl", SINGLE_JSONL))
    assert first.context == ["Pump P-4 runs nightly.", "P-3: standby."]
    assert first.retrieval_context is None
    assert (first.source_files, first.metadata) == (["manual.pdf"], {"seed": 7})
    assert second.context == []  # "" is the empty list, as deepeval reads it
    assert second.retrieval_context == ["r1", "r2"]


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_deepevals_conversations_without_turns_are_read_as_scenarios(
    suffix: str, tmp_path: Path
) -> None:
    path = tmp_path / f"talks{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps(TALKS, indent=4), encoding="utf-8")
    else:
        _write_jsonl(path, TALKS)
    scenario, played = Dataset.load(path)
    assert isinstance(scenario, ConversationalGolden) and scenario.turns == []
    assert scenario.scenario == "A technician asks when pumps run."
    assert scenario.input == scenario.scenario  # what single-turn tools ask
    assert scenario.expected_output == scenario.expected_outcome == "They learn P-4 runs at night."
    assert scenario.user_description == "night-shift tech"
    assert scenario.context == ["P-4 runs nightly."]
    assert scenario.metadata == {}  # the persona only repeats user_description
    assert isinstance(played, ConversationalGolden)
    assert [(t.role, t.content, t.metadata) for t in played.turns] == [
        ("user", "Hi?", {}),
        ("assistant", "Hello.", {}),
    ]


def test_deepevals_conversation_csv_is_read_with_its_turns(tmp_path: Path) -> None:
    path = tmp_path / "talks.csv"
    path.write_text(TALKS_CSV, encoding="utf-8")
    scenario, played = Dataset.load(path)
    assert isinstance(scenario, ConversationalGolden) and scenario.turns == []
    assert scenario.context == ["P-4 runs nightly."]
    assert scenario.expected_outcome == "They learn P-4 runs at night."
    assert isinstance(played, ConversationalGolden)
    assert [t.content for t in played.turns] == ["Hi?", "Hello."]


def test_deepevals_csv_keeps_its_other_cells_in_metadata(tmp_path: Path) -> None:
    path = tmp_path / "single.csv"
    path.write_text(SINGLE_CSV, encoding="utf-8")
    first, second = Dataset.load(path)
    assert first.context == ["Pump P-4 runs nightly.", "P-3: standby."]
    assert first.metadata == {"seed": 7, "name": "night"}
    assert second.retrieval_context == ["r1", "r2"] and second.metadata == {}


def test_a_deepeval_turns_other_fields_ride_in_its_metadata(tmp_path: Path) -> None:
    talk = dict(TALKS[1])
    talk["turns"] = [
        {"role": "user", "content": "Hi?", **_TURN_NULLS, "user_id": "u7"},
        {**_TURN_NULLS, "role": "assistant", "content": "Hello.", "metadata": {"m": 1}},
    ]
    (golden,) = Dataset.load(_write_jsonl(tmp_path / "t.jsonl", [talk]))
    assert isinstance(golden, ConversationalGolden)
    assert [t.metadata for t in golden.turns] == [{"user_id": "u7"}, {"m": 1}]


def test_a_scenario_survives_synths_own_formats_and_the_deepeval_export(tmp_path: Path) -> None:
    (scenario, _) = Dataset.load(_write_jsonl(tmp_path / "talks.jsonl", TALKS))
    for name in ("a.json", "a.jsonl", "a.csv", "a.parquet"):
        assert list(Dataset.load(Dataset([scenario]).save(tmp_path / name))) == [scenario]
    exported = Dataset([scenario]).export(tmp_path / "d.json", format="deepeval")
    assert list(Dataset.load(exported)) == [scenario]


def test_a_scenario_has_no_chat_messages(tmp_path: Path) -> None:
    scenario = ConversationalGolden(scenario="s", turns=[])
    with pytest.raises(DatasetError, match="no turns yet"):
        Dataset([scenario]).export(tmp_path / "m.jsonl", format="messages")


def test_a_conversation_with_no_turns_needs_a_scenario_that_is_its_input() -> None:
    with pytest.raises(ValidationError, match="needs a scenario"):
        ConversationalGolden(input="q", turns=[])
    with pytest.raises(ValidationError, match="input must be the scenario"):
        ConversationalGolden(scenario="s", input="q", turns=[])
    golden = ConversationalGolden(scenario="s", expected_outcome="o", turns=[])
    assert (golden.input, golden.expected_output, golden.history) == ("s", "o", [])
    edited = golden.edited(input="s2", expected_output="o2")
    assert (edited.scenario, edited.expected_outcome, edited.turns) == ("s2", "o2", [])
    played = ConversationalGolden(scenario="s", turns=[Turn(role="user", content="q")])
    assert played.input == "q"


def test_a_single_turn_golden_is_still_refused_a_scenario_without_turns() -> None:
    with pytest.raises(DatasetError, match="'scenario' is set but the golden has no turns"):
        Dataset([{"input": "q", "scenario": "s"}])
    assert Dataset([{"input": "q", "scenario": None}])[0] == Golden(input="q")


@pytest.mark.parametrize("records", [SINGLE_JSONL, TALKS], ids=["single-turn", "conversational"])
def test_synth_evaluate_takes_a_file_deepeval_saved(
    records: list[dict[str, object]], tmp_path: Path
) -> None:
    import subprocess
    import sys

    path = _write_jsonl(tmp_path / "saved.jsonl", records)
    done = subprocess.run(
        [sys.executable, "-m", "synth", "evaluate", str(path), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    # read whole: DeepEval saves goldens without answers, so with no --system there is nothing to
    # score, and the one line that says so counts what was read
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr.startswith(
        f"synth: error: nothing was scored: none of the {len(records)} goldens has a stored answer"
    )
    assert done.stderr.count("\n") == 1
