"""``synth evaluate --tool-calls MODE``: score a system's tool calls against the expected ones."""

from __future__ import annotations

import argparse
from pathlib import Path

from synth.errors import ConfigError


def add_tool_call_flags(p: argparse.ArgumentParser) -> None:
    """Declare ``--tool-calls``, ``--tool-arguments`` and ``--tools`` on ``p``."""
    p.add_argument(
        "--tool-calls",
        choices=("exact", "in_order", "any_order"),
        help="score the tool calls (tools_called, or those --system returns) against each "
        "golden's expected_tools, matched exactly, in order or in any order",
    )
    p.add_argument(
        "--tool-arguments",
        choices=("exact", "schema", "judged"),
        default="exact",
        help="with --tool-calls: a call's arguments must equal the expected ones, be valid "
        "against the tool's schema (given by --tools), or be judged the same by --judge (exact)",
    )
    p.add_argument(
        "--tools",
        metavar="SOURCE",
        help="with --tool-calls: the tools (a tools file, an OpenAPI spec, an MCP server) whose "
        "schemas --tool-arguments schema checks against",
    )


def run_tool_scores(args: argparse.Namespace) -> int:
    """Score the tool calls, print the scores (or JSON), write ``-o`` as JSON; exit 0."""
    from synth._callables import load_callable
    from synth.cli._status import dataset_with_status
    from synth.evaluate.tools import evaluate_tool_calls
    from synth.tools import load_tools

    if args.retriever:
        raise ConfigError("--tool-calls scores tool calls alone; drop --retriever")
    if args.output and Path(args.output).suffix.lower() != ".json":
        raise ConfigError(f"{args.output}: a tool call report is written as .json")
    judges = args.judge or []
    if (args.tool_arguments == "judged") != bool(judges) or len(judges) > 1:
        raise ConfigError("--tool-arguments judged takes one --judge (and --judge only with it)")
    if args.tool_arguments == "schema" and not args.tools:
        raise ConfigError("--tool-arguments schema needs --tools SOURCE")
    tools = load_tools(args.tools) if args.tools else []
    system = load_callable(args.system) if args.system else None
    report = evaluate_tool_calls(
        dataset_with_status(args.dataset, args.status),
        system,
        match=args.tool_calls,
        arguments=args.tool_arguments,
        tools=tools,
        judge=judges[0] if judges else None,
        seed=args.seed or 0,
    )
    text = report.model_dump_json(indent=2)
    page = None
    if args.output:
        from synth._files import write_atomic

        write_atomic(args.output, text + "\n")  # a crash mid-write leaves the old file whole
    if args.report:
        from synth.cli.report import write_beside
        from synth.report import evaluation_report

        page = write_beside(args.output, evaluation_report(report, source=args.output))
    if args.json:
        print(text)
        return 0
    overall = report.overall
    print(
        f"tool correctness ({report.match}, arguments {report.arguments}): {overall.score:.3f} "
        f"[{overall.low:.3f}, {overall.high:.3f}] over {overall.n} goldens"
    )
    for title, rows in (("kind", report.per_kind), ("tool", report.per_tool)):
        for name, score in rows.items():
            print(
                f"  {title} {name}: {score.score:.3f} [{score.low:.3f}, {score.high:.3f}] n={score.n}"
            )
    if args.output:
        print(f"wrote {args.output}")
    if page is not None:
        print(f"report: {page}")
    return 0


__all__ = ["add_tool_call_flags", "run_tool_scores"]
