"""Tools an agent may call, read from where teams keep them: the ingest of an agent's test set.

A source is a JSON file of tool definitions (OpenAI function calling or Anthropic tools,
:mod:`synth.tools.load`), an OpenAPI 3 spec (each operation a tool, :mod:`synth.tools.openapi`)
or a live MCP server (a command started over stdio, or a streamable HTTP URL,
:mod:`synth.tools.mcp`); :func:`load_tools` tells them apart. Every source gives the same
:class:`Tool` record. :mod:`synth.tools.execute` runs a call, through a Python function or the
MCP server, where the tools can be run.
"""

from synth.tools.load import load_tools
from synth.tools.tool import Tool

__all__ = ["Tool", "load_tools"]
