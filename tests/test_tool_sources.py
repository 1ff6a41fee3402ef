"""Tools are read from an OpenAI or Anthropic definitions file, an OpenAPI 3 spec and a live MCP
server (the SDK's own, over stdio), into one Tool record; a bad source is one clear error."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from local_servers import free_port, stop
from tool_sources import (
    SERVER,
    anthropic_tools,
    openapi_spec,
    server_command,
    write_openai_tools,
    write_openapi,
)

from synth import ConfigError
from synth.tools import load_tools
from synth.tools.execute import ToolCallError, ToolServerGone
from synth.tools.mcp import MCPSession, list_mcp_tools


def test_openai_and_anthropic_files_give_the_same_tools(tmp_path: Path) -> None:
    openai = load_tools(str(write_openai_tools(tmp_path / "openai.json")))
    path = tmp_path / "anthropic.json"
    path.write_text(json.dumps(anthropic_tools()), encoding="utf-8")
    anthropic = load_tools(str(path))
    assert [t.name for t in openai] == [t.name for t in anthropic][:5]
    assert [t.input_schema for t in openai] == [t.input_schema for t in anthropic]
    book = openai[1]
    assert book.name == "book_seat" and book.required == ["flight_id", "passenger"]
    assert book.source == str(tmp_path / "openai.json")


def test_each_openapi_operation_is_a_tool_with_parameters_and_body(tmp_path: Path) -> None:
    tools = {t.name: t for t in load_tools(str(write_openapi(tmp_path / "api.yaml")))}
    assert len(tools) == 10
    add = tools["addBook"]
    assert add.required == ["body"]
    assert add.parameters["body"]["required"] == ["title"]  # the $ref resolved
    get = tools["getBook"]  # a path-level parameter is every operation's
    assert get.required == ["book_id"] and get.parameters["book_id"]["minimum"] == 1
    assert "author_id" in json.dumps(get.output_schema)
    assert tools["searchBooks"].required == ["q"]  # limit is optional
    assert "GET /books" in tools["searchBooks"].description


def test_an_invalid_openapi_spec_is_refused_with_its_error(tmp_path: Path) -> None:
    spec = openapi_spec()
    del spec["paths"]["/books"]["get"]["responses"]
    path = tmp_path / "api.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"api.json: invalid OpenAPI spec: .*responses"):
        load_tools(str(path))


def test_an_openapi_ref_to_nowhere_or_to_another_file_is_one_line(tmp_path: Path) -> None:
    for ref in ("#/components/schemas/Gone", "other.yaml#/Book"):
        spec = openapi_spec()
        spec["components"]["schemas"]["NewBook"]["properties"]["title"] = {"$ref": ref}
        path = tmp_path / "api.json"
        path.write_text(json.dumps(spec), encoding="utf-8")
        with pytest.raises(ConfigError) as raised:
            load_tools(str(path))
        message = str(raised.value)
        assert message.startswith(f"{path}: invalid OpenAPI spec: cannot resolve $ref ")
        assert ref.split("#")[0] in message and "\n" not in message
        assert len(message) - len(str(path)) < 150  # the spec is not quoted


def test_a_tools_file_saved_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(anthropic_tools()).encode())
    assert load_tools(str(path))[0].name == anthropic_tools()["tools"][0]["name"]


def test_an_mcp_server_lists_its_tools_with_their_schemas() -> None:
    tools = {t.name: t for t in load_tools(server_command())}
    assert len(tools) == 6
    orders = tools["list_orders"]
    assert orders.required == ["customer_id"]
    assert orders.parameters["status"]["enum"] == ["open", "shipped", "any"]
    assert "customer_id" in json.dumps(tools["find_customer"].output_schema)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('[{"function": {}}]', "tool 0: has no 'name'"),
        ('{"a": 1}', "expected a list of tool definitions"),
        ("[1,", "not valid JSON"),
        ("[]", "no tools"),
        ('[{"name": "a"}, {"name": "a"}]', "two tools are named 'a'"),
        ('[{"name": "f", "parameters": {"type": "string"}}]', "input schema is of type 'string'"),
        (
            '[{"name": "f", "input_schema": {"type": "object", "properties": {"x": "text"}}}]',
            r"tool 0 \(f\): its input schema is not a valid JSON schema \(properties/x: ",
        ),
        (
            '[{"name": "f", "parameters": {"type": "object", "required": "abc"}}]',
            r"not a valid JSON schema \(required: 'abc' is not of type 'array'\)",
        ),
        ('{"swagger": "2.0", "paths": {}}', "a Swagger 2.0 spec; synth reads OpenAPI 3"),
    ],
)
def test_a_bad_tools_file_is_one_clear_error(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "tools.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        load_tools(str(path))


def test_a_missing_file_and_an_unreachable_server_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file"):
        load_tools(str(tmp_path / "nope.json"))
    with pytest.raises(ConfigError, match="cannot reach the MCP server"):
        load_tools(str(tmp_path / "no-such-command"))


def _listening(port: int, process: subprocess.Popen[bytes], deadline: float) -> None:
    """Return once the server accepts connections (it may take a second to start)."""
    while time.monotonic() < deadline:
        assert process.poll() is None, "the MCP server exited"
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError("the MCP server did not start listening")


def test_an_mcp_server_over_streamable_http_lists_and_runs_its_tools() -> None:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(SERVER), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _listening(port, process, time.monotonic() + 60)
        url = f"http://127.0.0.1:{port}/mcp"
        tools = load_tools(url)
        assert {t.name for t in tools} >= {"find_customer", "list_orders"}
        assert all(t.source == url for t in tools)

        async def call() -> object:
            async with MCPSession(url) as session:
                found = await session.call("find_customer", {"email": "ann@x.org"})
                with pytest.raises(ToolCallError, match="list_orders"):
                    await session.call("list_orders", {"customer_id": -1})
                return found

        assert asyncio.run(call()) == {"customer_id": 1009, "name": "ann"}
    finally:
        stop(process)


MISBEHAVING = Path(__file__).with_name("mcp_misbehaving.py")


def _misbehaving(mode: str) -> str:
    return f"{sys.executable} {MISBEHAVING} {mode}"


def test_an_mcp_server_that_never_answers_is_refused_once_its_time_is_up() -> None:
    listing = list_mcp_tools(_misbehaving("silent"), timeout=1)
    with pytest.raises(ConfigError, match=r"cannot reach the MCP server .*timed out"):
        asyncio.run(asyncio.wait_for(listing, 30))  # a TimeoutError here: it would have hung


def test_an_mcp_server_that_exits_at_start_is_one_line_naming_why() -> None:
    with pytest.raises(ConfigError) as raised:
        load_tools(_misbehaving("exit"))
    message = str(raised.value)
    assert "cannot reach the MCP server" in message and "Connection closed" in message
    assert "TaskGroup" not in message and "\n" not in message


def test_an_mcp_server_without_tools_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"mcp_misbehaving.py empty: no tools"):
        load_tools(_misbehaving("empty"))


def test_a_tool_call_that_hangs_or_ends_the_server_fails_as_a_tool_call() -> None:
    async def calls() -> None:
        async with MCPSession(_misbehaving("faulty"), timeout=1) as session:
            assert {t.name for t in await session.list_tools()} == {"wait", "crash"}
            with pytest.raises(ToolCallError, match="timed out"):
                await session.call("wait", {"seconds": 3600})
            with pytest.raises(
                ToolServerGone, match="closed its connection during a call to crash"
            ):
                await session.call("crash", {"code": 1})

    asyncio.run(calls())
