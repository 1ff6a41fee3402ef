"""Agent goldens' exports loaded by the real deepeval, judgeval and ragas (each in its own
environment, built as tests/test_interop.py builds them): every call and argument intact."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_interop import environments, load_with  # noqa: F401 (the module's fixture)

from synth import Dataset, Golden, ToolCall

pytestmark = [pytest.mark.interop, pytest.mark.slow]


def agent_goldens() -> list[Golden]:
    book = ToolCall(
        name="book_slot",
        input_parameters={"doctor": "Ruiz", "time": "09:00", "slots": [1, 2], "note": None},
        output={"booking_id": 41, "ok": True},
    )
    mail = ToolCall(name="send_email", input_parameters={"booking_id": 41, "to": "é@x.org"})
    return [
        Golden(
            input="Book 9:00 with Dr. Ruiz, then mail me the confirmation.",
            expected_output="Booked (#41); the confirmation is on its way.",
            expected_tools=[book, mail],
            metadata={"tool_kind": "sequence"},
        ),
        Golden(input="What's a good name for a cat?", expected_tools=[]),
        Golden(
            input="Find flights to Oslo.",
            expected_tools=[ToolCall(name="search", input_parameters={"to": "OSL"})],
            tools_called=[ToolCall(name="search", input_parameters={"to": "Oslo"})],
            actual_output="Here are three flights.",
        ),
    ]


def _calls(calls: list[ToolCall] | None) -> Any:
    return None if calls is None else [c.model_dump() for c in calls]


def test_deepeval_reads_the_calls_as_its_tool_call_objects(
    environments: dict[str, Path],  # noqa: F811
    tmp_path: Path,
) -> None:
    path = Dataset(agent_goldens()).export(tmp_path / "agent.json", format="deepeval")
    read = load_with("deepeval-tools", path, environments, tmp_path)
    for row, golden in zip(read, agent_goldens(), strict=True):
        assert row["expected_tools"] == _calls(golden.expected_tools)
        assert row["tools_called"] == _calls(golden.tools_called)


def test_judgeval_keeps_the_calls_as_example_properties(
    environments: dict[str, Path],  # noqa: F811
    tmp_path: Path,
) -> None:
    path = Dataset(agent_goldens()).export(tmp_path / "agent.judgeval.json", format="judgeval")
    read = load_with("judgeval", path, environments, tmp_path)
    for rows in (read["uploaded"], read["created"]):
        for row, golden in zip(rows, agent_goldens(), strict=True):
            assert row["expected_tools"] == _calls(golden.expected_tools)
            assert row["tools_called"] == _calls(golden.tools_called)


def test_ragas_reads_multi_turn_samples_with_reference_tool_calls(
    environments: dict[str, Path],  # noqa: F811
    tmp_path: Path,
) -> None:
    path = Dataset(agent_goldens()).export(tmp_path / "agent.jsonl", format="ragas")
    read = load_with("ragas-tools", path, environments, tmp_path)
    for sample, golden in zip(read, agent_goldens(), strict=True):
        assert sample["messages"][0]["content"] == golden.input
        assert sample["reference"] == golden.expected_output
        assert sample["reference_tool_calls"] == [
            {"name": c.name, "args": c.input_parameters} for c in golden.expected_tools or []
        ]
    system = read[2]["messages"][1]
    assert system["type"] == "ai" and system["tool_calls"] == [
        {"name": "search", "args": {"to": "Oslo"}}
    ]
