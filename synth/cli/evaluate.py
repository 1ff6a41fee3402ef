"""``synth evaluate``: a dataset and a system (or a retriever) in; the report's tables out."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from synth.cli._flags import add_status_argument, dataset_with_status, refuse_no_goldens
from synth.cli._judging import (
    USER_JOBS,
    add_judging_arguments,
    close_models,
    failed_items_code,
    judging_kwargs,
    user_function,
)
from synth.cli.report import add_report_flag, check_report_flag, check_report_output, write_beside
from synth.errors import ConfigError

if TYPE_CHECKING:
    from synth.evaluate.report import Evaluation


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Declare ``synth evaluate`` and its arguments on ``sub``."""
    p = sub.add_parser(
        "evaluate",
        help="score a system's answers (or retrieval) on a dataset",
        description="Ask a system every question of DATASET and score its answers with the text "
        "metrics (exact match, token F1) and each judge; or, with --retriever, score the ranked "
        "context ids against each item's context_ids. Without --system the stored answers "
        "(actual_output) are scored; when nothing at all could be scored it is an error (exit 2), "
        "not an empty pass. Prints tables; -o writes the report (.json, .jsonl, .yaml, .toml).",
    )
    p.add_argument("dataset", help="a saved dataset (.json, .jsonl, .csv, .parquet)")
    p.add_argument(
        "--system",
        metavar="MODULE:FUNCTION",
        help="fn(question) -> answer; a conversation's last question comes with the turns "
        "before it: fn(question, history=[{role, content}, ...])",
    )
    p.add_argument(
        "--retriever", metavar="MODULE:FUNCTION", help="fn(question) -> ranked ids or hits"
    )
    p.add_argument(
        "-k", action="append", type=int, metavar="K", help="retrieval cut-off; repeatable (10)"
    )
    p.add_argument("-o", "--output", metavar="REPORT", help="write the report here")
    add_report_flag(p, "the report")
    add_status_argument(p)
    add_judging_arguments(p)
    add_tool_call_flags(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Score the dataset, write and print the report; EXIT_PARTIAL when items failed."""
    check_report_flag(args)
    if args.tool_calls:
        return run_tool_scores(args)
    from synth.evaluate import _io

    check_report_output(args.output, _io.format_of)
    report = _retrieval_report(args) if args.retriever else _answers_report(args)
    # the tables' imports (rich) only now: nothing of them is needed before the judges' requests
    from synth.cli._evaluate_view import evaluation_tables, show
    from synth.evaluate._jobs import failure_summary

    refuse_no_goldens(len(report.items), args.dataset)
    _refuse_an_empty_score(report, asked_a_system=bool(args.system or args.retriever))
    page = None
    if args.output:
        report.write(args.output)
    if args.report:
        from synth.report import evaluation_report

        page = write_beside(args.output, evaluation_report(report, source=args.output))
    if args.json:
        print(_io.dumps(report.to_document(), "json"), end="")
    else:
        show(evaluation_tables(report))
        if args.output:
            print(f"wrote {args.output}")
        if page is not None:
            print(f"report: {page}")
    return failed_items_code([("", failure_summary(report))])


def _retrieval_report(args: argparse.Namespace) -> Evaluation:
    from synth._callables import load_callable
    from synth.errors import ConfigError
    from synth.evaluate.retrieval import evaluate_retrieval

    if args.system or args.judge:
        raise ConfigError("--retriever scores retrieval alone; drop --system and --judge")
    return evaluate_retrieval(
        load_callable(args.retriever),
        dataset_with_status(args.dataset, args.status),
        k=args.k or 10,
        n_jobs=args.n_jobs or USER_JOBS,
        seed=args.seed,
    )


def _answers_report(args: argparse.Namespace) -> Evaluation:
    from synth._callables import load_callable
    from synth.evaluate._items import as_items
    from synth.evaluate.answers import evaluate_answers

    system = user_function(load_callable(args.system), args) if args.system else None
    # read first: the judges' limiter starts at the number of calls the items will cost
    items = as_items(dataset_with_status(args.dataset, args.status))
    kwargs = judging_kwargs(args, items=len(items))
    try:
        return evaluate_answers(system, items, **kwargs)
    finally:
        close_models(kwargs["judges"])


def _refuse_an_empty_score(report: Evaluation, asked_a_system: bool) -> None:
    """A ConfigError when no metric scored any item and none failed: a table of empty means with
    exit 0 would read as a pass in CI (goldens with no stored answer and no ``--system``)."""
    from synth.errors import ConfigError

    if not report.items or any(report.coverage.values()) or report.failed_items:
        return
    n = len(report.items)
    why = (
        f"your system's answers to the {n} goldens gave no metric its inputs"
        if asked_a_system
        else f"none of the {n} goldens has a stored answer (actual_output) to score: pass "
        "--system module:function to ask your system, or a file of answered goldens"
    )
    raise ConfigError(f"nothing was scored: {why}")


# ---- ``synth evaluate --tool-calls MODE``: score a system's tool calls against the expected
# ones.
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


__all__ = ["add_parser", "run"]
