"""``synth generate --tools``: its flags, and the call that makes goldens for an agent."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from synth.errors import ConfigError

if TYPE_CHECKING:
    from synth.dataset import Dataset
    from synth.pipeline import Synthesizer


def add_tool_flags(p: argparse.ArgumentParser) -> None:
    """Declare ``--tools``, ``--tools-exec`` and ``--tool-kinds`` on ``p``."""
    p.add_argument(
        "--tools",
        metavar="SOURCE",
        help="make goldens for an agent from its tools: a JSON file of OpenAI or Anthropic tool "
        "definitions, an OpenAPI 3 spec (.json/.yaml), an MCP server's URL, or the command that "
        "starts one over stdio (quoted); each golden a request and the calls expected. With "
        "document PATHs too (before or after), they are the agent's knowledge base: the "
        "knowledge kind's goldens are answered from them",
    )
    p.add_argument(
        "--tools-exec",
        metavar="MODULE:FUNCTION",
        help="with --tools: run each expected call through FUNCTION(name, arguments) and record "
        "its result (an MCP server's tools are run on the server unless this is 'none')",
    )
    p.add_argument(
        "--tool-kinds",
        metavar="KIND=SHARE,...",
        help="with --tools: the kinds and their shares, each exact in count (default "
        "single_call=0.4,sequence=0.2,parallel=0.2,no_tool=0.1,missing_argument=0.1; with "
        "documents single_call=0.3,sequence=0.15,parallel=0.15,no_tool=0.1,"
        "missing_argument=0.1,knowledge=0.2)",
    )


def parse_kinds(text: str) -> dict[str, float]:
    """``single_call=0.5,sequence=0.5`` as a mapping (a kind alone weighs 1)."""
    kinds: dict[str, float] = {}
    for part in text.split(","):
        name, _, share = part.strip().partition("=")
        if not name:
            continue
        try:
            kinds[name.strip()] = float(share) if share else 1.0
        except ValueError:
            raise ConfigError(f"--tool-kinds: {part.strip()!r} is not KIND=SHARE") from None
        if kinds[name.strip()] < 0:
            raise ConfigError(f"--tool-kinds: the share of {name.strip()} must be 0 or more")
    if not kinds:
        raise ConfigError("--tool-kinds: name at least one kind")
    return kinds


def check_tool_flags(args: argparse.Namespace) -> None:
    """Refuse the flags that make no sense together, before any request."""
    tools = getattr(args, "tools", None)
    if tools is None:
        for flag in ("tools_exec", "tool_kinds"):
            if getattr(args, flag, None) is not None:
                raise ConfigError(f"--{flag.replace('_', '-')} needs --tools SOURCE")
        if not args.paths and getattr(args, "from_chroma", None) is None:
            raise ConfigError(
                "name the documents to generate from (PATH ...), --from-chroma PATH:COLLECTION "
                "or --tools SOURCE"
            )
        return
    if getattr(args, "from_chroma", None) is not None:
        raise ConfigError(
            "--tools reads the agent's documents from files, folders or URLs (PATH ...), not "
            "from --from-chroma"
        )
    for flag in ("plan", "conversational"):
        if getattr(args, flag, False):
            raise ConfigError(f"--{flag} does not apply to --tools")


def make_tool_goldens(
    synthesizer: Synthesizer, args: argparse.Namespace, num_goldens: int | None
) -> Dataset:
    """The goldens ``--tools`` asks for: exactly ``num_goldens`` (``--goldens``) of them, the
    document PATHs (if any) the agent's knowledge base."""
    if num_goldens is None:
        raise ConfigError("--tools needs --goldens N")
    kinds = parse_kinds(args.tool_kinds) if args.tool_kinds else None
    execute: Any = None
    if args.tools_exec is not None:
        execute = False if args.tools_exec.lower() == "none" else args.tools_exec
    return synthesizer.generate_goldens_from_tools(
        args.tools,
        num_goldens=num_goldens,
        kinds=kinds,
        execute=execute,
        documents=args.paths or None,
    )


__all__ = ["add_tool_flags", "check_tool_flags", "make_tool_goldens", "parse_kinds"]
