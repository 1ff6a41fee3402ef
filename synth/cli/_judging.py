"""What ``synth evaluate`` and ``synth benchmark`` share: the judging flags, the keyword arguments
they become, closing the judges the flags made, and the exit code of a report whose items failed."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from synth.cli._exits import EXIT_OK, EXIT_PARTIAL


def add_judging_arguments(p: argparse.ArgumentParser) -> None:
    """Declare the judges, metrics and sampling flags on ``p``."""
    p.add_argument(
        "--judge",
        action="append",
        default=[],
        metavar="[NAME=]SPEC",
        help="a judge: provider:model (openai, anthropic, gemini) or module:function "
        "fn(prompt, system) -> str; repeat for a panel",
    )
    p.add_argument(
        "--metric",
        action="append",
        metavar="NAME",
        help="judge metric: faithfulness, answer_relevance, context_precision, context_recall, "
        "answer_correctness (default with judges and no --criteria: faithfulness and "
        "answer_relevance); repeatable",
    )
    p.add_argument(
        "--text-metric",
        action="append",
        metavar="NAME",
        help="exact_match or token_f1 (default: both); 'none' for neither",
    )
    p.add_argument(
        "--criteria",
        action="append",
        default=[],
        metavar="NAME=RUBRIC",
        help="a judge metric: the answer rated 1-5 against RUBRIC; repeatable (alone, it "
        "replaces the default metrics: add them with --metric)",
    )
    p.add_argument("--base-url", help="OpenAI-compatible server for openai:<model> judges")
    p.add_argument("--n-jobs", type=int, default=4, metavar="N", help="calls at once (4)")
    p.add_argument("--keep-verdicts", action="store_true", help="keep every verdict in the report")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap and tests (0)")
    p.add_argument("--json", action="store_true", help="print the result as JSON, not tables")


def judging_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of :func:`~synth.evaluate.answers.evaluate_answers` (and of
    :func:`~synth.evaluate.benchmark.benchmark`) that the judging flags name."""
    from synth.errors import ConfigError
    from synth.evaluate._specs import judge_models, split_name

    criteria = {}
    for raw in args.criteria:
        name, rubric = split_name(raw)
        if name is None:
            raise ConfigError(f"--criteria takes NAME=RUBRIC, got {raw!r}")
        criteria[name] = rubric
    text = args.text_metric
    if text is not None and [t.lower() for t in text] == ["none"]:
        text = []
    kwargs: dict[str, Any] = {
        "judges": judge_models(args.judge, base_url=args.base_url) or None,
        "metrics": args.metric,
        "criteria": criteria or None,
        "n_jobs": args.n_jobs,
        "keep_verdicts": args.keep_verdicts,
        "seed": args.seed,
    }
    if text is not None:
        kwargs["text_metrics"] = text
    return kwargs


def close_models(judges: dict[str, Any] | None) -> None:
    """Close the judge models ``--judge`` made from provider specs (not a user's callables)."""
    from synth.llm.base import LLM

    for model in (judges or {}).values():
        if isinstance(model, LLM):
            model.close()


def failed_items_code(summaries: list[tuple[str, str | None]]) -> int:
    """EXIT_PARTIAL, after one line on stderr per report whose items failed; else EXIT_OK."""
    failed = [(name, line) for name, line in summaries if line is not None]
    if not failed:
        return EXIT_OK
    sys.stdout.flush()  # the tables first, then the lines that explain the exit code
    for name, line in failed:
        print(f"synth: {name}{line} (exit code {EXIT_PARTIAL})", file=sys.stderr)
    return EXIT_PARTIAL


__all__ = ["add_judging_arguments", "close_models", "failed_items_code", "judging_kwargs"]
