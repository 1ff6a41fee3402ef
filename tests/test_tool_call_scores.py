"""Scoring an agent's tool calls against the expected ones: each match mode, each argument mode,
per-tool and per-kind breakdowns with bootstrap intervals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synth import ConfigError, Dataset, Golden, ToolCall, evaluate_tool_calls
from synth.cli import main
from synth.evaluate.tools import tool_call_score
from synth.tools import Tool

A = ToolCall(name="a", input_parameters={"x": 1})
B = ToolCall(name="b", input_parameters={"y": "k"})
C = ToolCall(name="c")


@pytest.mark.parametrize(
    ("called", "exact", "in_order", "any_order"),
    [
        ([A, B], 1.0, 1.0, 1.0),
        ([B, A], 0.0, 0.5, 1.0),
        ([A, C, B], 0.0, 2 / 3, 2 / 3),  # an extra call costs as a missing one
        ([A], 0.0, 0.5, 0.5),
        ([], 0.0, 0.0, 0.0),
    ],
)
def test_each_match_mode_scores_the_calls(
    called: list[ToolCall], exact: float, in_order: float, any_order: float
) -> None:
    for match, want in (("exact", exact), ("in_order", in_order), ("any_order", any_order)):
        assert tool_call_score([A, B], called, match=match) == pytest.approx(want), match


def test_no_call_expected_scores_one_only_when_none_is_made() -> None:
    assert tool_call_score([], []) == 1.0 and tool_call_score([], [A]) == 0.0


def test_schema_argument_match_takes_any_valid_arguments() -> None:
    schemas = {"a": {"type": "object", "properties": {"x": {"type": "integer"}}}}
    other = ToolCall(name="a", input_parameters={"x": 7})
    wrong = ToolCall(name="a", input_parameters={"x": "7"})
    assert tool_call_score([A], [other]) == 0.0
    assert tool_call_score([A], [other], arguments="schema", schemas=schemas) == 1.0
    assert tool_call_score([A], [wrong], arguments="schema", schemas=schemas) == 0.0


def agent_set(n: int = 60) -> list[Golden]:
    return [
        Golden(
            input=f"request {i}",
            expected_tools=[ToolCall(name=f"t{i % 3}", input_parameters={"n": i})],
            metadata={"tool_kind": "single_call" if i % 2 else "sequence"},
        )
        for i in range(n)
    ]


def scripted_agent(request: str) -> list[dict[str, object]]:
    """Right four times in five; the fifth time a wrong call (a wrong tool, or a wrong type)."""
    i = int(request.split()[1])
    if i % 5 == 4:
        return (
            [{"name": "nope", "arguments": {"n": i}}]
            if i % 2
            else [{"name": f"t{i % 3}", "arguments": {"n": str(i)}}]
        )
    return [{"name": f"t{i % 3}", "arguments": {"n": i}}]


@pytest.mark.parametrize("match", ["exact", "in_order", "any_order"])
@pytest.mark.parametrize("arguments", ["exact", "schema"])
def test_one_wrong_call_in_five_scores_near_four_fifths_with_an_interval_covering_it(
    match: str, arguments: str
) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    tools = [Tool(name=f"t{k}", input_schema=schema) for k in range(3)]
    report = evaluate_tool_calls(
        agent_set(), scripted_agent, match=match, arguments=arguments, tools=tools
    )
    assert report.overall.score == pytest.approx(0.8)
    assert report.overall.low < 0.8 < report.overall.high and report.overall.n == 60
    assert set(report.per_tool) == {"t0", "t1", "t2"}
    assert sum(s.n for s in report.per_kind.values()) == 60
    for score in (*report.per_tool.values(), *report.per_kind.values()):
        assert score.low <= score.score <= score.high
    wrong = report.items[4]
    assert wrong.score == 0.0 and wrong.called[0].input_parameters == {"n": "4"}


def test_without_a_system_the_goldens_own_calls_are_scored() -> None:
    goldens = [g.model_copy(update={"tools_called": g.expected_tools}) for g in agent_set(5)]
    assert evaluate_tool_calls(goldens).overall.score == 1.0
    with pytest.raises(ConfigError, match="no golden has expected_tools"):
        evaluate_tool_calls([Golden(input="q")])
    with pytest.raises(ConfigError, match="unknown tool call match"):
        evaluate_tool_calls(goldens, match="fuzzy")


AGENT = """
def run(question):
    i = int(question.split()[1])
    name = "nope" if i % 5 == 4 else f"t{i % 3}"
    return {"answer": "done", "tool_calls": [{"name": name, "arguments": {"n": i}}]}
"""


def test_synth_evaluate_scores_a_systems_tool_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my_agent.py").write_text(AGENT, encoding="utf-8")
    Dataset(agent_set(30)).save(tmp_path / "agent.jsonl")
    argv = ["evaluate", "agent.jsonl", "--system", "my_agent:run", "--tool-calls", "in_order"]
    assert main([*argv, "--json", "-o", "scores.json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["overall"]["score"] == pytest.approx(0.8)
    assert report["items"][4]["called"][0]["name"] == "nope"  # the calls side by side
    assert json.loads((tmp_path / "scores.json").read_text(encoding="utf-8")) == report
    assert main(argv) == 0
    assert "tool correctness (in_order, arguments exact): 0.800" in capsys.readouterr().out
    assert main([*argv, "--tool-arguments", "schema"]) == 2
    assert "needs --tools SOURCE" in capsys.readouterr().err


def test_judged_arguments_ask_the_judge_only_when_they_differ() -> None:
    asked: list[str] = []

    def judge(prompt: str, system: str | None = None) -> str:
        asked.append(prompt)
        called = prompt.split("<called>")[1].split("</called>")[0]
        same = "Oslo" in called
        return json.dumps({"reason": "the same city" if same else "another city", "same": same})

    expected = [ToolCall(name="fly", input_parameters={"to": "OSL"})]
    goldens = [
        Golden(input="Fly me to Oslo", expected_tools=expected, tools_called=called)
        for called in (
            [ToolCall(name="fly", input_parameters={"to": "OSL"})],
            [ToolCall(name="fly", input_parameters={"to": "Oslo"})],
            [ToolCall(name="fly", input_parameters={"to": "Rome"})],
        )
    ]
    report = evaluate_tool_calls(goldens, arguments="judged", judge=judge)
    assert [item.score for item in report.items] == [1.0, 1.0, 0.0]
    assert len(asked) == 2  # equal arguments need no judge
    assert asked[0].count("<request>") == 1 and "Fly me to Oslo" in asked[0]
    with pytest.raises(ConfigError, match="needs a judge model"):
        evaluate_tool_calls(goldens, arguments="judged")
