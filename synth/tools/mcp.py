"""Tools of a live MCP server, through the official ``mcp`` SDK.

A server is a streamable HTTP URL (``http://127.0.0.1:8000/mcp``) or a command line that starts
one over stdio (``python server.py``). :func:`list_mcp_tools` lists its tools;
:class:`MCPSession` keeps one connection open to call them (:mod:`synth.tools.execute`).

Every request waits at most :data:`TIMEOUT_SECONDS` for its answer: a server that never answers
(or writes something other than MCP messages) is refused with one line when connecting or
listing, and a call that never returns fails as a tool call does, dropping its golden. A server
that closes its connection ends the run: every later call would fail.
"""

from __future__ import annotations

import contextlib
import shlex
from types import TracebackType
from typing import Any

from synth.errors import ConfigError
from synth.tools.execute import ToolCallError, ToolServerGone, parse_output
from synth.tools.tool import Tool

#: how long a request to the server (connecting, listing, a tool call) waits for its answer
TIMEOUT_SECONDS = 60.0


def is_url(source: str) -> bool:
    """Whether ``source`` names an MCP server by URL."""
    return source.startswith(("http://", "https://"))


def _server(source: str) -> Any:
    if is_url(source):
        return source
    from mcp import StdioServerParameters

    words = shlex.split(source)
    if not words:
        raise ConfigError("the MCP server command is empty")
    return StdioServerParameters(command=words[0], args=words[1:])


class MCPSession:
    """One open connection to an MCP server (an async context manager)."""

    def __init__(self, source: str, *, timeout: float = TIMEOUT_SECONDS) -> None:
        self.source = source
        self.timeout = timeout
        self._stack = contextlib.AsyncExitStack()
        self._client: Any = None

    async def __aenter__(self) -> MCPSession:
        from mcp import Client, MCPError

        client = Client(_server(self.source), read_timeout_seconds=self.timeout)
        try:
            self._client = await self._stack.enter_async_context(client)
        except (OSError, ValueError, RuntimeError, MCPError) as exc:
            await self._stack.aclose()
            raise ConfigError(f"cannot reach the MCP server {self.source}: {exc}") from None
        except BaseExceptionGroup as group:  # anyio's task groups wrap a refused connection
            await self._stack.aclose()
            why = _first_leaf(group)
            raise ConfigError(f"cannot reach the MCP server {self.source}: {why}") from None
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._stack.aclose()

    async def list_tools(self) -> list[Tool]:
        """Every tool the server lists, following its pages; ConfigError when it fails to."""
        from mcp import MCPError

        try:
            return await self._list_tools()
        except MCPError as exc:
            raise ConfigError(
                f"the MCP server {self.source} did not list its tools: {exc}"
            ) from None

    async def _list_tools(self) -> list[Tool]:
        tools: list[Tool] = []
        cursor = None
        while True:
            if cursor is None:
                result = await self._client.list_tools()
            else:
                from mcp_types import PaginatedRequestParams

                result = await self._client.list_tools(params=PaginatedRequestParams(cursor=cursor))
            for tool in result.tools:
                tools.append(
                    Tool(
                        name=tool.name,
                        description=tool.description or "",
                        input_schema=dict(tool.input_schema or {"type": "object"}),
                        output_schema=_unwrapped(tool.output_schema),
                        source=self.source,
                    )
                )
            cursor = getattr(result, "next_cursor", None)
            if not cursor:
                return tools

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """What the tool returned: its structured content, else its text (JSON parsed when it is);
        ToolCallError with the server's message when the call failed or timed out, ToolServerGone
        when the server went away."""
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED

        try:
            result = await self._client.call_tool(name, arguments)
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                raise ToolServerGone(
                    f"the MCP server {self.source} closed its connection during a call to {name}: "
                    "the run stops here (rerun to resume once the server is up)"
                ) from None
            raise ToolCallError(f"the MCP server failed the call: {exc}") from exc
        texts = [getattr(part, "text", "") for part in result.content or []]
        if result.is_error:
            raise ToolCallError(" ".join(texts).strip() or f"{name} failed")
        structured = result.structured_content
        if isinstance(structured, dict) and set(structured) == {"result"}:
            return structured["result"]  # the SDK's wrapping of a result that is not an object
        if structured is not None:
            return structured
        return parse_output("\n".join(texts))


def _first_leaf(error: BaseException) -> BaseException:
    """The first error inside nested exception groups (the one that says what went wrong)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def _unwrapped(schema: dict[str, Any] | None) -> dict[str, Any] | None:
    if not schema:
        return None
    properties = schema.get("properties") or {}
    if set(properties) == {"result"}:
        return dict(properties["result"])
    return dict(schema)


async def list_mcp_tools(source: str, *, timeout: float = TIMEOUT_SECONDS) -> list[Tool]:
    """The tools of the MCP server ``source`` (a URL, or a command that starts it over stdio)."""
    async with MCPSession(source, timeout=timeout) as session:
        return await session.list_tools()


__all__ = ["TIMEOUT_SECONDS", "MCPSession", "is_url", "list_mcp_tools"]
