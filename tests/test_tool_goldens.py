"""Agent goldens end to end: the real openai SDK over HTTP to the fake server (answering from the
JSON schema alone, a share of its tool calls spoiled), tools from a real MCP server (the SDK's
own, over stdio), an OpenAPI spec and an OpenAI tools file. Exactly N goldens of each asked kind,
every expected call valid against its tool's schema, every tool covered, the spoiled ones dropped
with their reasons, the calls run where the tools can be."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import fake_openai
import pytest
import tool_replies
from jsonschema import validate
from tool_sources import server_command, write_openai_tools, write_openapi

from synth import Dataset, Synthesizer
from synth.generate.tool_checks import schema_errors
from synth.pipeline.tools import candidates, depends, kind_plans
from synth.tools import Tool, load_tools

ALL_KINDS = {
    "single_call": 0.4,
    "sequence": 0.2,
    "parallel": 0.2,
    "no_tool": 0.1,
    "missing_argument": 0.1,
}


def synthesizer(url: str, tmp_path: Path, **kw: Any) -> Synthesizer:
    return Synthesizer(
        "openai:fake-model",
        base_url=url,
        embedder="hash",
        cache=None,
        run_dir=tmp_path / "run",
        progress=False,
        **kw,
    )


def drops(run_dir: Path) -> Counter[str]:
    """Drop reasons over every kind's run (each has its own manifest)."""
    found: Counter[str] = Counter()
    for manifest in run_dir.rglob("manifest.json"):
        for row in json.loads(manifest.read_text(encoding="utf-8"))["stages"]:
            found.update(row.get("dropped") or {})
    return found


def check_goldens(dataset: Dataset, tools: list[Tool], n: int, kinds: dict[str, float]) -> None:
    by_name = {t.name: t for t in tools}
    assert len(dataset) == n and dataset.shortfall is None
    asked = {k: v["asked"] for k, v in dataset.metadata["tool_kinds"].items()}
    assert Counter(g.metadata["tool_kind"] for g in dataset) == Counter(asked)
    assert set(asked) == {k for k in kinds if asked.get(k)}
    for golden in dataset:
        calls = golden.expected_tools
        assert calls is not None
        kind = golden.metadata["tool_kind"]
        assert len(calls) == {"single_call": 1, "sequence": 2, "parallel": 2}.get(kind, 0)
        for call in calls:
            validate(call.input_parameters, by_name[call.name].input_schema)
        if kind == "missing_argument":
            assert (
                golden.metadata["missing_argument"] in by_name[golden.metadata["tools"][0]].required
            )
    assert len({g.input for g in dataset}) == n  # no two goldens the same request
    covered = {c.name for g in dataset for c in g.expected_tools or []}
    if n >= 2 * len(tools):
        assert covered == set(by_name)


@pytest.fixture
def environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-tools-not-a-real-key")


def test_an_mcp_server_gives_exactly_n_valid_goldens_despite_spoiled_calls(
    environment: None, tmp_path: Path
) -> None:
    tools = load_tools(server_command())
    spoiled: Counter[str] = Counter()
    reply = tool_replies.spoiling(0.3, {t.name: t.required for t in tools}, spoiled)
    with fake_openai.FakeOpenAI(reply=reply) as server:
        with synthesizer(server.url, tmp_path, seed=3) as synth:
            dataset = synth.generate_goldens_from_tools(
                server_command(), num_goldens=12, kinds=ALL_KINDS
            )
            manifest = synth.manifest
    check_goldens(dataset, tools, 12, ALL_KINDS)
    dropped = drops(tmp_path / "run")
    # the call's manifest is every kind's run's, summed: the same drops, each run named
    assert manifest is not None and sorted(manifest["parts"]) == sorted(
        dataset.metadata["tool_kinds"]
    )
    summed: Counter[str] = Counter()
    for row in manifest["stages"]:
        summed.update(row.get("dropped") or {})
    assert +summed == +dropped and manifest["delivered"] == 12
    # each spoiled call that was checked was dropped for what was wrong with it (a spare still
    # running when the run had its goldens is never checked: hence at most)
    caught = {reason: dropped[reason] for reason in tool_replies.SPOILS if dropped[reason]}
    assert caught and all(n <= spoiled[reason] for reason, n in caught.items()), (caught, spoiled)
    # the calls ran on the server: each result recorded, the sequence fed by its first call
    for golden in dataset:
        for call in golden.expected_tools or []:
            assert call.output is not None
        if golden.metadata["tool_kind"] == "sequence":
            first, then = golden.expected_tools or []
            assert (first.name, then.name) == ("find_customer", "list_orders")
            assert then.input_parameters["customer_id"] == first.output["customer_id"]
        if golden.expected_tools:
            assert golden.expected_output  # the agent's final reply, from the results


def test_an_openapi_spec_gives_every_kind_and_covers_every_operation(
    environment: None, tmp_path: Path
) -> None:
    spec = str(write_openapi(tmp_path / "library.yaml"))
    tools = load_tools(spec)
    with fake_openai.FakeOpenAI(mode="generic", seed=2) as server:
        with synthesizer(server.url, tmp_path) as synth:
            dataset = synth.generate_goldens_from_tools(spec, num_goldens=20, kinds=ALL_KINDS)
    check_goldens(dataset, tools, 20, ALL_KINDS)
    assert all(c.output is None for g in dataset for c in g.expected_tools or [])  # not run


def test_an_openai_tools_file_run_through_a_function(environment: None, tmp_path: Path) -> None:
    path = str(write_openai_tools(tmp_path / "tools.json"))
    tools = load_tools(path)
    ran: list[str] = []

    def run_tool(name: str, arguments: dict[str, Any]) -> Any:
        ran.append(name)
        if name == "airport_info":
            raise RuntimeError("the airport service is down")
        return {"flight_id": 42} if name == "lookup_flight" else {"ok": True}

    kinds = {"single_call": 0.5, "sequence": 0.5}
    with fake_openai.FakeOpenAI(mode="generic", seed=4) as server:
        with synthesizer(server.url, tmp_path) as synth:
            dataset = synth.generate_goldens_from_tools(
                path, num_goldens=10, kinds=kinds, execute=run_tool
            )
    assert len(dataset) == 10
    names = {c.name for g in dataset for c in g.expected_tools or []}
    assert "airport_info" not in names and "airport_info" in ran  # its call failed: dropped
    assert drops(tmp_path / "run")["tool_error"] >= 1
    for golden in dataset:
        if golden.metadata["tool_kind"] == "sequence":
            first, then = golden.expected_tools or []
            assert then.input_parameters["flight_id"] == 42 == first.output["flight_id"]
    del tools


def test_tools_depend_when_a_result_names_a_required_argument() -> None:
    find = Tool(name="find", output_schema={"properties": {"user_id": {"type": "integer"}}})
    orders = Tool(
        name="orders",
        input_schema={"type": "object", "properties": {"user_id": {}}, "required": ["user_id"]},
    )
    titled = Tool(name="t", output_schema={"type": "string", "title": "user_id"})
    said = Tool(name="s", description="Returns the user_id of a name.")
    assert depends(find, orders) and depends(said, orders)
    assert not depends(orders, find) and not depends(titled, orders)  # a keyword is no field
    assert [p.tools for p in kind_plans([find, orders], "sequence")] == [("find", "orders")]


def test_each_tool_gets_its_share_of_a_kind_as_a_quota() -> None:
    a, b, c = (Tool(name=n) for n in "abc")
    plans = kind_plans([a, b, c], "single_call")
    made, quotas = candidates(plans, {t.name: t for t in (a, b, c)}, 7, 2)
    assert quotas == {"tools/a": 3, "tools/b": 2, "tools/c": 2}
    assert len(made) == 3 * 3 * 2 and len({m.key for m in made}) == len(made)


def test_arguments_are_checked_against_the_tool_schema() -> None:
    tool = Tool(
        name="t",
        input_schema={
            "type": "object",
            "properties": {"n": {"type": "integer"}, "s": {"type": "string"}},
            "required": ["n"],
        },
    )
    assert schema_errors(tool, {"n": 1}) == []
    assert schema_errors(tool, {"s": "x"})[0][0] == "missing_required_argument"
    assert schema_errors(tool, {"n": "1"})[0] == (
        "invalid_arguments",
        "t: n: '1' is not of type 'integer'",
    )


def test_a_finished_tools_run_is_replayed_without_a_request(
    environment: None, tmp_path: Path
) -> None:
    path = str(write_openai_tools(tmp_path / "tools.json"))
    kinds = {"single_call": 0.5, "parallel": 0.5}
    with fake_openai.FakeOpenAI(mode="generic", seed=8) as server:
        with synthesizer(server.url, tmp_path) as synth:
            first = synth.generate_goldens_from_tools(path, num_goldens=4, kinds=kinds)
        asked = server.request_count("chat")
        with synthesizer(server.url, tmp_path) as synth:
            again = synth.generate_goldens_from_tools(path, num_goldens=4, kinds=kinds)
        assert server.request_count("chat") == asked  # each kind's run replayed from its folder
    assert [g.expected_tools for g in again] == [g.expected_tools for g in first]
    assert [g.input for g in again] == [g.input for g in first]


def test_a_run_stops_when_its_mcp_server_goes_away(environment: None, tmp_path: Path) -> None:
    """The server's only tool ends it: the first call run closes the connection, and the run
    stops there with one error naming the server, instead of asking for goldens whose calls can
    only fail (each paid for, then dropped as a tool error)."""
    import sys

    from synth.tools.execute import ToolServerGone

    crashing = f"{sys.executable} {Path(__file__).with_name('mcp_misbehaving.py')} crashing"
    with fake_openai.FakeOpenAI() as server:
        with synthesizer(server.url, tmp_path, seed=3) as synth:
            with pytest.raises(
                ToolServerGone, match="closed its connection during a call to crash"
            ):
                synth.generate_goldens_from_tools(
                    crashing, num_goldens=12, kinds={"single_call": 1.0}
                )
        asked = sum(r.path.endswith("/chat/completions") for r in server.requests)
    # the requests already out when the call ran (24 at seeds 1 to 3), not a run topped up again
    # and again for 12 goldens whose calls all fail (96 when the server's end only drops them)
    assert asked <= 48, asked
