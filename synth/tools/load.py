"""load_tools: the tools of any source, told apart by what it is."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from synth._interrupt import as_main_task
from synth.errors import ConfigError
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
    read, holds no tool, names one tool twice, or (a definitions file, a server) gives a tool an
    input schema that is not a JSON schema of an object."""
    if is_server(source):
        tools = await list_mcp_tools(source)
        for tool in tools:
            check_input_schema(tool.input_schema, f"{source}: tool {tool.name!r}")
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


def check_input_schema(schema: Mapping[str, Any], where: str) -> None:
    """ConfigError unless ``schema`` is a valid JSON schema of an object: the arguments of every
    call are checked against it (a broken one would fail a run midway, after its calls are paid
    for). An OpenAPI spec's schemas are checked by its validator, in OpenAPI's own dialect."""
    from jsonschema import exceptions, validators

    kind = schema.get("type", "object")
    if kind != "object":
        raise ConfigError(f"{where}: its input schema is of type {kind!r}; a tool takes an object")
    try:
        validators.validator_for(schema).check_schema(schema)
    except exceptions.SchemaError as exc:
        where_in = "/".join(str(part) for part in exc.absolute_path) or "the schema"
        raise ConfigError(
            f"{where}: its input schema is not a valid JSON schema ({where_in}: {exc.message})"
        ) from None


def load_tools(source: str) -> list[Tool]:
    """:func:`aload_tools`, from sync code."""
    return asyncio.run(as_main_task(aload_tools(source)))


def _from_file(path: Path) -> list[Tool]:
    if not path.is_file():
        raise ConfigError(f"{path}: no such file")
    if path.suffix in (".yaml", ".yml"):
        return read_openapi(path)
    try:
        value = json.loads(path.read_text(encoding="utf-8-sig"))  # a BOM some editors add
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the tools file ({exc})") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
    if is_openapi(value):
        return tools_from_openapi(value, str(path))
    return tools_from_definitions(value, str(path))


# ---- Tools from a JSON file of definitions: OpenAI function calling or Anthropic tool use.
#
# The file holds a list of tools, or an object with one under ``tools`` (a request body). Each
# tool is OpenAI's ``{"type": "function", "function": {"name", "description", "parameters"}}``,
# its bare ``function`` object, or Anthropic's ``{"name", "description", "input_schema"}``.
def tools_from_definitions(value: Any, where: str) -> list[Tool]:
    """The tools a parsed JSON document defines; ConfigError naming the bad entry."""
    if isinstance(value, Mapping) and "tools" in value:
        value = value["tools"]
    if not isinstance(value, list):
        raise ConfigError(f'{where}: expected a list of tool definitions (or {{"tools": [...]}})')
    return [_tool(entry, f"{where}: tool {i}", where) for i, entry in enumerate(value)]


def _tool(entry: Any, where: str, source: str) -> Tool:
    if not isinstance(entry, Mapping):
        raise ConfigError(f"{where}: expected an object")
    if entry.get("type") == "function" and isinstance(entry.get("function"), Mapping):
        entry = entry["function"]
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"{where}: has no 'name'")
    schema = entry.get("parameters", entry.get("input_schema", {"type": "object"}))
    if not isinstance(schema, Mapping):
        raise ConfigError(f"{where} ({name}): its parameters are not a JSON schema object")
    check_input_schema(schema, f"{where} ({name})")
    return Tool(
        name=name,
        description=str(entry.get("description") or ""),
        input_schema=dict(schema),
        source=source,
    )


__all__ = ["aload_tools", "check_input_schema", "is_server", "load_tools"]
