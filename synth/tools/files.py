"""Tools from a JSON file of definitions: OpenAI function calling or Anthropic tool use.

The file holds a list of tools, or an object with one under ``tools`` (a request body). Each tool
is OpenAI's ``{"type": "function", "function": {"name", "description", "parameters"}}``, its
bare ``function`` object, or Anthropic's ``{"name", "description", "input_schema"}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from synth.errors import ConfigError
from synth.tools.tool import Tool


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
    return Tool(
        name=name,
        description=str(entry.get("description") or ""),
        input_schema=dict(schema),
        source=source,
    )


__all__ = ["tools_from_definitions"]
