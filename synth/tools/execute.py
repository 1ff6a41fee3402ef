"""Running the calls of a golden: through a Python function, or the MCP server the tools came from.

An executor is a ``module:function`` whose function takes ``(name, arguments)`` and returns the
result (sync or async), or an MCP server (:class:`~synth.tools.mcp.MCPSession`). A call that
fails raises :class:`ToolCallError` with the tool's own message, so the golden it belongs to is
dropped with it; a server that has gone away raises :class:`ToolServerGone`, which ends the run.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from synth.errors import SynthError


class ToolCallError(SynthError):
    """A tool call failed: its message is the tool's (or the executor's) own."""


class ToolServerGone(SynthError):
    """The MCP server the calls run through closed its connection: every later call would fail,
    so the run stops (its goldens so far are kept, and a rerun resumes) instead of paying for
    requests whose goldens can only be dropped."""


class Executor(Protocol):
    """Runs one tool call and returns what it gave."""

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """The call's result; ToolCallError when it failed."""
        ...


def parse_output(text: str) -> Any:
    """A tool's text result: the JSON it holds, else the text."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


class FunctionExecutor:
    """Runs calls through ``fn(name, arguments)``, a plain or an async function."""

    def __init__(self, fn: Callable[[str, dict[str, Any]], Any | Awaitable[Any]]) -> None:
        self.fn = fn

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        try:
            if inspect.iscoroutinefunction(self.fn):
                return await self.fn(name, dict(arguments))
            return await asyncio.to_thread(self.fn, name, dict(arguments))
        except ToolCallError:
            raise
        except Exception as exc:  # the user's tool failed: the golden is dropped with its error
            raise ToolCallError(f"{type(exc).__name__}: {exc}") from exc


__all__ = ["Executor", "FunctionExecutor", "ToolCallError", "ToolServerGone", "parse_output"]
