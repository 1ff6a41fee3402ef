"""Running evaluations: user code on threads, at most ``n_jobs`` calls at once, results in order.

The evaluators are written once, async; the public functions run them with :func:`run_jobs`, which
gives the event loop a thread pool of ``n_jobs`` workers for the user's sync functions (systems,
retrievers, callable judges) and a semaphore that bounds every call.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import warnings
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from synth.dataset._public import public_text
from synth.errors import ConfigError, FailedItemsWarning
from synth.evaluate.retrieved import context_texts
from synth.llm._redact import redact_text
from synth.llm.base import run_sync

if TYPE_CHECKING:
    from synth.evaluate.report import Evaluation

T = TypeVar("T")
P = ParamSpec("P")
E = TypeVar("E", bound="Evaluation")


def check_n_jobs(n_jobs: int) -> int:
    """Return ``n_jobs`` when it is a positive integer."""
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs < 1:
        raise ConfigError(f"n_jobs must be a positive integer, got {n_jobs!r}")
    return n_jobs


def check_on_error(on_error: str) -> str:
    """Return ``on_error`` when it is ``"raise"`` or ``"record"``."""
    if on_error not in ("raise", "record"):
        raise ConfigError(f"on_error must be 'raise' or 'record', got {on_error!r}")
    return on_error


def run_jobs(n_jobs: int, main: Callable[[asyncio.Semaphore], Coroutine[Any, Any, T]]) -> T:
    """Run ``main(limiter)`` to completion with ``n_jobs`` worker threads and an n_jobs semaphore."""
    check_n_jobs(n_jobs)

    async def runner() -> T:
        loop = asyncio.get_running_loop()
        loop.set_default_executor(
            ThreadPoolExecutor(max_workers=n_jobs, thread_name_prefix="synth-eval")
        )
        return await main(asyncio.Semaphore(n_jobs))

    return run_sync(runner())


async def call_user(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call a user's function: awaited when async, on a worker thread when sync."""
    if inspect.iscoroutinefunction(fn):
        return await fn(*args, **kwargs)
    result = await asyncio.to_thread(fn, *args, **kwargs)
    if inspect.isawaitable(result):
        result = await result
    return result


async def limited(limiter: asyncio.Semaphore, awaitable: Awaitable[T]) -> T:
    """Await ``awaitable`` while holding one of the limiter's slots."""
    try:
        async with limiter:
            return await awaitable
    except BaseException:
        if inspect.iscoroutine(awaitable):
            awaitable.close()  # cancelled before it started: it will never run, say so quietly
        raise


async def gather_all(awaitables: Iterable[Awaitable[T]]) -> list[T]:
    """Return the results of ``awaitables`` run at once, in order; on a failure, raise it.

    Unlike ``asyncio.gather``, the first failure cancels the others and waits for them, so no call
    is left running, and no error of theirs is left unretrieved for ``asyncio.run`` to print as a
    traceback at shutdown (a refused API key fails every call at about the same time).
    """
    tasks = [asyncio.ensure_future(awaitable) for awaitable in awaitables]
    if not tasks:
        return []
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        errors = [t.exception() for t in tasks if t in done and not t.cancelled()]
        error = next((e for e in errors if e is not None), None)
    finally:  # also when this task itself is cancelled
        for task in tasks:
            task.cancel()  # a no-op for the finished ones
        await asyncio.gather(*tasks, return_exceptions=True)  # waits, and retrieves every error
    if error is not None:
        raise error
    return [task.result() for task in tasks]  # a task cancelled from elsewhere raises, as gather


def system_output(output: Any) -> tuple[str, list[str] | None]:
    """Return ``(answer, contexts or None)`` from what a system returned.

    A system returns a string, a mapping with ``"answer"`` (and optionally the ``"contexts"`` it
    retrieved, which then replace the dataset's), or an object with ``.answer`` (and ``.contexts``).
    """
    if isinstance(output, str):
        return output, None
    if isinstance(output, Mapping):
        if not isinstance(output.get("answer"), str):
            raise TypeError(
                f"the system returned a mapping without an 'answer' string: {sorted(output)}"
            )
        contexts = output.get("contexts")
        return output["answer"], (context_texts(contexts) if contexts is not None else None)
    answer = getattr(output, "answer", None)
    if isinstance(answer, str):
        contexts = getattr(output, "contexts", None)
        return answer, (context_texts(contexts) if contexts is not None else None)
    raise TypeError(
        f"the system returned {type(output).__name__}; return a string, a mapping with 'answer' "
        "or an object with .answer"
    )


def failure_summary(report: Evaluation) -> str | None:
    """One line saying how many items of ``report`` failed, by source, and the first failure;
    None when none did."""
    failed = report.failed_items
    if not failed:
        return None
    sources: Counter[str] = Counter()
    for item in report.items:
        sources.update(source.rsplit("/", 1)[-1] for source in item.errors)
    by = ", ".join(f"{source} {n}" for source, n in sources.most_common())
    first = next(item for item in report.items if item.errors)
    source, error = next(iter(first.errors.items()))
    return (
        f"{failed} of {len(report.items)} items failed ({by}); the first, item {first.id}: "
        f"{source}: {error}"
    )


def warn_failed_items(report: Evaluation, stacklevel: int) -> None:
    """Warn with :class:`~synth.errors.FailedItemsWarning` when items of ``report`` failed."""
    summary = failure_summary(report)
    if summary is not None:
        warnings.warn(summary, FailedItemsWarning, stacklevel=stacklevel + 1)


def warns_on_failures(evaluate: Callable[P, E]) -> Callable[P, E]:
    """``evaluate`` warning in its caller's place when items of its report failed (see
    :func:`warn_failed_items`); ``__wrapped__`` is ``evaluate`` itself, for callers that report
    the failures their own way."""

    @functools.wraps(evaluate)
    def checked(*args: P.args, **kwargs: P.kwargs) -> E:
        report = evaluate(*args, **kwargs)
        warn_failed_items(report, stacklevel=2)
        return report

    return checked


def describe(exc: BaseException) -> str:
    """Return ``"Kind: message"`` for an error recorded in a report, credentials and local
    folders hidden.

    The error is the user's own code's (a system, a retriever), and its message may quote the
    request that failed, key and all, or a file it could not open; a report is shared (a baseline
    is committed, a summary shown on a pull request), so the message goes through the redaction
    every provider error passes through (:func:`synth.llm._redact.redact_text`), and its paths
    name the working and the home folder ``.`` and ``~`` (:func:`synth.dataset._public.public_text`).
    """
    message = public_text(redact_text(str(exc)))
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


__all__ = [
    "call_user",
    "check_n_jobs",
    "check_on_error",
    "describe",
    "failure_summary",
    "gather_all",
    "limited",
    "run_jobs",
    "system_output",
    "warn_failed_items",
    "warns_on_failures",
]
