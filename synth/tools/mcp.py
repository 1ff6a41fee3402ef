"""Tools of a live MCP server, through the official ``mcp`` SDK.

A server is a streamable HTTP URL (``http://127.0.0.1:8000/mcp``) or a command line that starts
one over stdio (``python server.py``). :func:`list_mcp_tools` lists its tools;
:class:`MCPSession` keeps one connection open to call them (:mod:`synth.tools.execute`).
"""

from __future__ import annotations

import contextlib
import shlex
from types import TracebackType
from typing import Any

from synth.errors import ConfigError
from synth.tools.execute import ToolCallError, parse_output
from synth.tools.tool import Tool


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

    def __init__(self, source: str) -> None:
        self.source = source
        self._stack = contextlib.AsyncExitStack()
        self._client: Any = None

    async def __aenter__(self) -> MCPSession:
        from mcp import Client

        client = Client(_server(self.source))
        try:
            self._client = await self._stack.enter_async_context(client)
        except (OSError, ValueError, RuntimeError) as exc:
            await self._stack.aclose()
            raise ConfigError(f"cannot reach the MCP server {self.source}: {exc}") from None
        except BaseExceptionGroup as group:  # anyio's task group wraps a refused connection
            await self._stack.aclose()
            first = group.exceptions[0] if group.exceptions else group
            raise ConfigError(f"cannot reach the MCP server {self.source}: {first}") from None
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._stack.aclose()

    async def list_tools(self) -> list[Tool]:
        """Every tool the server lists, following its pages."""
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
        ToolCallError with the server's message when the call failed."""
        result = await self._client.call_tool(name, arguments)
        texts = [getattr(part, "text", "") for part in result.content or []]
        if result.is_error:
            raise ToolCallError(" ".join(texts).strip() or f"{name} failed")
        structured = result.structured_content
        if isinstance(structured, dict) and set(structured) == {"result"}:
            return structured["result"]  # the SDK's wrapping of a result that is not an object
        if structured is not None:
            return structured
        return parse_output("\n".join(texts))


def _unwrapped(schema: dict[str, Any] | None) -> dict[str, Any] | None:
    if not schema:
        return None
    properties = schema.get("properties") or {}
    if set(properties) == {"result"}:
        return dict(properties["result"])
    return dict(schema)


async def list_mcp_tools(source: str) -> list[Tool]:
    """The tools of the MCP server ``source`` (a URL, or a command that starts it over stdio)."""
    async with MCPSession(source) as session:
        return await session.list_tools()


__all__ = ["MCPSession", "is_url", "list_mcp_tools"]
