"""What ``synth evaluate`` and ``synth benchmark`` share: the judging flags, the keyword arguments
they become, closing the judges the flags made, and the exit code of a report whose items failed.

Without ``--n-jobs``, the judges made from provider specs share one adaptive limiter (it finds
how many calls to keep in flight, up to 256, as a generation run does: :mod:`synth.llm._aimd`),
and the user's own functions (systems, callable judges, retrievers) keep :data:`USER_JOBS` calls at
once. ``--n-jobs N`` pins every call to N at once, as the Python API's ``n_jobs`` does. The
adaptive level starts at the number of judge calls the command will make (up to the ceiling), and
never below a generation run's start (:data:`synth.run.models.RUN_START`): the judge calls are
all independent and known at once, so every one of them leaves in the first round trip, not the
8 a bare limiter starts at nor a generation run's 64 (60 items with two metrics left 56 calls a
round trip behind, waiting for the first replies); a server that refuses that many at once cuts
the level at its first replies."""

from __future__ import annotations

import argparse
import functools
import sys
import threading
from collections.abc import Callable
from typing import Any

from synth.cli._exits import EXIT_OK, EXIT_PARTIAL

#: calls of a user's function (system, callable judge, retriever) at once without --n-jobs
USER_JOBS = 4
#: the most judge calls in flight the adaptive limiter goes up to without --n-jobs
JUDGE_CEILING = 256


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
    p.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help="seconds a judge request waits for its reply (default: 120); a judge server that "
        "sends no reply at all that long stops the command (exit 2)",
    )
    p.add_argument(
        "--n-jobs",
        type=int,
        metavar="N",
        help=f"calls at once, fixed (default: judge models' calls found by the command, up to "
        f"{JUDGE_CEILING}, cut on 429s and timeouts; your own functions' {USER_JOBS} at once)",
    )
    p.add_argument("--keep-verdicts", action="store_true", help="keep every verdict in the report")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap and tests (0)")
    p.add_argument("--json", action="store_true", help="print the result as JSON, not tables")


def judge_limiter(calls: int = 0) -> Any:
    """The adaptive limiter the judges made from provider specs share without ``--n-jobs``: up
    to :data:`JUDGE_CEILING`, starting at ``calls`` (the judge calls the command will make), at
    least at a generation run's start."""
    from synth.llm.limiter import RateLimiter
    from synth.run.models import RUN_START

    start = min(JUDGE_CEILING, max(RUN_START, calls))
    return RateLimiter(JUDGE_CEILING, adaptive=True, start=start)


def judge_calls(args: argparse.Namespace, criteria: dict[str, str], items: int) -> int:
    """The most judge calls ``items`` items cost: one per item, judge metric and judge (an item
    that lacks a metric's input costs fewer; a text metric the gate's ``--metric`` names costs
    none)."""
    from synth.evaluate.answers import judge_metric_names
    from synth.evaluate.text import TEXT_METRICS

    named = None if args.metric is None else [m for m in args.metric if m not in TEXT_METRICS]
    metrics = judge_metric_names(named, criteria, bool(args.judge))
    return items * len(metrics) * len(args.judge)


def judging_kwargs(args: argparse.Namespace, items: int = 0) -> dict[str, Any]:
    """The keyword arguments of :func:`~synth.evaluate.answers.evaluate_answers` (and of
    :func:`~synth.evaluate.benchmark.benchmark`) that the judging flags name; ``items``: how
    many items will be judged, when known (the judges' limiter starts at their calls)."""
    from synth.errors import ConfigError
    from synth.evaluate._specs import judge_models, split_name
    from synth.llm.timeout import SilenceBreaker

    if args.n_jobs is not None and args.n_jobs < 1:
        raise ConfigError(f"--n-jobs must be at least 1, got {args.n_jobs}")
    if args.timeout is not None and not args.timeout > 0:
        raise ConfigError(f"--timeout must be positive, got {args.timeout:g}")
    criteria = {}
    for raw in args.criteria:
        name, rubric = split_name(raw)
        if name is None:
            raise ConfigError(f"--criteria takes NAME=RUBRIC, got {raw!r}")
        criteria[name] = rubric
    text = args.text_metric
    if text is not None and [t.lower() for t in text] == ["none"]:
        text = []
    adaptive = args.n_jobs is None
    limiter = None
    if adaptive:
        limiter = judge_limiter(judge_calls(args, criteria, items) if items and args.judge else 0)
    # one breaker for every judge: a server that never answers stops the command at its first
    # request's deadline, not after every call's timeouts and retries (a quarter of an hour)
    judges = judge_models(
        args.judge,
        base_url=args.base_url,
        limiter=limiter,
        breaker=SilenceBreaker(),
        timeout=args.timeout,
    )
    kwargs: dict[str, Any] = {
        "judges": {name: user_function(model, args) for name, model in judges.items()} or None,
        "metrics": args.metric,
        "criteria": criteria or None,
        "n_jobs": JUDGE_CEILING if adaptive else args.n_jobs,
        "keep_verdicts": args.keep_verdicts,
        "seed": args.seed,
    }
    if text is not None:
        kwargs["text_metrics"] = text
    return kwargs


def user_function(fn: Any, args: argparse.Namespace) -> Any:
    """``fn`` called at most :data:`USER_JOBS` times at once when ``--n-jobs`` is not given (a
    model made by synth is returned as is: its limiter paces it)."""
    from synth.llm.base import LLM

    if args.n_jobs is not None or isinstance(fn, LLM) or not callable(fn):
        return fn
    return at_most(fn, USER_JOBS)


def at_most(fn: Callable[..., Any], n: int) -> Callable[..., Any]:
    """``fn`` (sync or async) run by at most ``n`` callers at once; the others wait their turn."""
    import asyncio  # here, not with the module: `synth --help` must not pay for asyncio
    import inspect

    if inspect.iscoroutinefunction(fn):
        turns = asyncio.Semaphore(n)

        @functools.wraps(fn)
        async def bounded_async(*args: Any, **kwargs: Any) -> Any:
            async with turns:
                return await fn(*args, **kwargs)

        return bounded_async
    gate = threading.BoundedSemaphore(n)

    @functools.wraps(fn)
    def bounded(*args: Any, **kwargs: Any) -> Any:
        with gate:
            return fn(*args, **kwargs)

    return bounded


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


__all__ = [
    "JUDGE_CEILING",
    "USER_JOBS",
    "add_judging_arguments",
    "at_most",
    "close_models",
    "failed_items_code",
    "judging_kwargs",
    "user_function",
]
