"""Goldens with tool calls keep every call and argument through synth's own files and tables, and
goldens without them look as they always have."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synth import Dataset, DatasetError, Golden, ToolCall
from synth.dataset._records import FIELDS, golden_from_record


def agent_goldens() -> list[Golden]:
    return [
        Golden(
            input="Book the 9:00 slot with Dr. Ruiz, then email me the confirmation.",
            expected_tools=[
                ToolCall(
                    name="book_slot",
                    input_parameters={"doctor": "Ruiz", "time": "09:00", "notes": None},
                    output={"booking_id": 41},
                ),
                ToolCall(name="send_email", input_parameters={"booking_id": 41, "cc": ["a", "b"]}),
            ],
            metadata={"tool_kind": "sequence"},
        ),
        Golden(input="What's the capital of France?", expected_tools=[]),
        Golden(input="A plain question?", expected_output="A plain answer."),
    ]


@pytest.mark.parametrize("name", ["g.jsonl", "g.json", "g.csv", "g.parquet"])
def test_every_call_and_argument_survives_each_file_format(name: str, tmp_path: Path) -> None:
    original = Dataset(agent_goldens(), {"seed": 1})
    back = Dataset.load(original.save(tmp_path / name))
    assert back.goldens == original.goldens
    assert back.goldens[1].expected_tools == []  # "no tool" is not "not about tools"
    assert back.goldens[2].expected_tools is None


def test_every_call_survives_pandas_and_hugging_face() -> None:
    original = Dataset(agent_goldens(), {"seed": 1})
    assert Dataset.from_pandas(original.to_pandas()).goldens == original.goldens
    assert Dataset.from_hf(original.to_hf()).goldens == original.goldens


def test_a_golden_about_no_tools_is_written_without_tool_fields(tmp_path: Path) -> None:
    path = Dataset([Golden(input="q")]).save(tmp_path / "g.jsonl")
    assert set(json.loads(path.read_text(encoding="utf-8"))) == set(FIELDS)
    path = Dataset(agent_goldens()).save(tmp_path / "g.jsonl")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [("expected_tools" in row, "tools_called" in row) for row in rows] == [
        (True, False),
        (True, False),
        (False, False),
    ]


def test_a_synth_record_with_tool_calls_is_read_strictly_as_synths() -> None:
    record = {"input": "q", "expected_tools": [{"name": "t", "input_parameters": {"a": 1}}]}
    golden = golden_from_record(record, "w")
    assert golden.expected_tools == [ToolCall(name="t", input_parameters={"a": 1})]
    with pytest.raises(DatasetError, match="unknown field 'colour'"):
        golden_from_record({**record, "colour": "red"}, "w")


def test_a_deepeval_record_brings_its_tool_calls_without_their_null_decorations() -> None:
    call = {"name": "t", "description": None, "reasoning": None, "input_parameters": {"a": 1}}
    record = {"input": "q", "additional_metadata": {}, "tools_called": [call], "comments": None}
    golden = golden_from_record(record, "w")
    assert golden.tools_called == [ToolCall(name="t", input_parameters={"a": 1})]
    assert golden.expected_tools is None


def test_a_bad_tool_call_is_named_by_its_position_and_field() -> None:
    with pytest.raises(DatasetError, match=r"field 'expected_tools': call 1 field 'name'"):
        golden_from_record({"input": "q", "expected_tools": [{"name": "a"}, {"name": " "}]}, "w")
    with pytest.raises(DatasetError, match=r"call 0 field 'colour': unknown"):
        golden_from_record({"input": "q", "expected_tools": [{"name": "a", "colour": 1}]}, "w")
    with pytest.raises(DatasetError, match=r"field 'tools_called': expected a list of tool calls"):
        golden_from_record({"input": "q", "tools_called": "t"}, "w")


@pytest.mark.parametrize("tool", ["deepeval", "judgeval", "judgeval-legacy", "ragas"])
def test_each_tools_export_reads_back_with_every_call_and_argument(
    tool: str, tmp_path: Path
) -> None:
    agents = [g for g in agent_goldens() if g.expected_tools is not None]
    agents[1] = agents[1].model_copy(
        update={"tools_called": [ToolCall(name="search", input_parameters={"q": "x"})]}
    )
    suffix = ".jsonl" if tool == "ragas" else ".json"
    path = Dataset(agents).export(tmp_path / f"out{suffix}", format=tool)  # type: ignore[arg-type]
    back = Dataset.load(path).goldens
    assert [g.expected_tools for g in back] == [g.expected_tools for g in agents]
    assert [g.tools_called for g in back] == [g.tools_called for g in agents]


def test_the_ragas_export_is_a_multi_turn_sample_with_reference_tool_calls(tmp_path: Path) -> None:
    first = agent_goldens()[0]
    path = Dataset([first]).export(tmp_path / "r.jsonl", format="ragas")
    row = json.loads(path.read_text(encoding="utf-8"))
    assert row["user_input"] == [{"content": first.input, "type": "human"}]
    assert row["reference_tool_calls"] == [
        {"name": "book_slot", "args": {"doctor": "Ruiz", "time": "09:00", "notes": None}},
        {"name": "send_email", "args": {"booking_id": 41, "cc": ["a", "b"]}},
    ]
    with pytest.raises(DatasetError, match="mix agent goldens"):
        Dataset(agent_goldens()).export(tmp_path / "mixed.jsonl", format="ragas")


def test_the_deepeval_export_holds_tool_calls_only_for_agents(tmp_path: Path) -> None:
    path = Dataset(agent_goldens()).export(tmp_path / "d.json", format="deepeval")
    rows = json.loads(path.read_text(encoding="utf-8"))
    assert rows[0]["expected_tools"][0] == {
        "name": "book_slot",
        "input_parameters": {"doctor": "Ruiz", "time": "09:00", "notes": None},
        "output": {"booking_id": 41},
    }
    assert rows[1]["expected_tools"] == [] and "expected_tools" not in rows[2]
