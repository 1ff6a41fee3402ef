"""load_tools: the tools of any source, told apart by what it is."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from synth._interrupt import as_main_task
from synth.errors import ConfigError
from synth.tools.files import tools_from_definitions
from synth.tools.mcp import is_url, list_mcp_tools
from synth.tools.openapi import is_openapi, read_openapi, tools_from_openapi
from synth.tools.tool import Tool

_FILE_SUFFIXES = (".json", ".yaml", ".yml")


def is_server(source: str) -> bool:
    """Whether ``source`` names an MCP server (a URL, or a command) rather than a file."""
    return is_url(source) or not (Path(source).is_file() or source.endswith(_FILE_SUFFIXES))


async def aload_tools(source: str) -> list[Tool]:
    """The tools of ``source``: an MCP server's URL or command, an OpenAPI spec (JSON or YAML), or
    a JSON file of OpenAI or Anthropic tool definitions. ConfigError (one line) when it cannot be
    read, holds no tool, or names one tool twice."""
    if is_server(source):
        tools = await list_mcp_tools(source)
    else:
        tools = _from_file(Path(source))
    if not tools:
        raise ConfigError(f"{source}: no tools")
    seen: set[str] = set()
    for tool in tools:
        if tool.name in seen:
            raise ConfigError(f"{source}: two tools are named {tool.name!r}")
        seen.add(tool.name)
    return tools


def load_tools(source: str) -> list[Tool]:
    """:func:`aload_tools`, from sync code."""
    return asyncio.run(as_main_task(aload_tools(source)))


def _from_file(path: Path) -> list[Tool]:
    if not path.is_file():
        raise ConfigError(f"{path}: no such file")
    if path.suffix in (".yaml", ".yml"):
        return read_openapi(path)
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the tools file ({exc})") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
    if is_openapi(value):
        return tools_from_openapi(value, str(path))
    return tools_from_definitions(value, str(path))


__all__ = ["aload_tools", "is_server", "load_tools"]
