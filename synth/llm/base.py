"""The one interface every model has, and the callable model.

An adapter (openai, anthropic, gemini, a Python callable) implements :meth:`LLM.arequest`: one
request, one :class:`Completion`. Retry, cache, rate limits, timeouts and usage counting are models
that wrap another model (``synth.llm.retry``, ``cache``, ``limiter``, ``timeout``, ``usage``) and
override ``arequest`` too. ``acomplete``/``complete`` are the same for everyone: they call
``arequest``, refuse a reply that stopped early and, when a schema is given, parse strictly.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import threading
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, ParamSpec, TypeVar

from pydantic import BaseModel

from synth._interrupt import as_main_task
from synth.llm.structured import parse_verdict

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")
P = ParamSpec("P")


@dataclass(frozen=True)
class Completion:
    """One model reply with what it cost.

    ``input_tokens`` counts every prompt token, those the provider served from its prompt cache
    (``cached_input_tokens``, billed cheaper) and those it wrote to it (``cache_write_tokens``,
    Anthropic's, billed dearer) included, whatever each provider's own usage calls them.
    """

    text: str
    model: str = ""
    input_tokens: int | None = None
    output_tokens: int | None = None
    finish_reason: str | None = None
    cached: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    cached_input_tokens: int | None = None
    cache_write_tokens: int | None = None


#: key of ``Completion.extra`` where an adapter that sent several requests for one reply says how many
REQUESTS_SENT = "requests_sent"

#: normalized finish reasons of a reply that stopped early (adapters map their provider's names)
INCOMPLETE_FINISH_REASONS = frozenset({"length", "content_filter"})


def check_complete(completion: Completion) -> Completion:
    """Return ``completion``, or raise :class:`IncompleteCompletionError` when it stopped early."""
    if completion.finish_reason in INCOMPLETE_FINISH_REASONS:
        from synth.errors import IncompleteCompletionError

        why = "cut off at the token limit" if completion.finish_reason == "length" else "filtered"
        raise IncompleteCompletionError(
            f"the reply of {completion.model or 'the model'} was {why}",
            finish_reason=completion.finish_reason,
            text=completion.text,
        )
    return completion


class LLM(ABC):
    """A model: ``complete(prompt, system=..., schema=...)`` and its async twin ``acomplete``."""

    provider: str = ""
    model: str = ""

    def identity(self) -> dict[str, Any]:
        """What identifies this model in a report or cache key: never an API key."""
        return {"provider": self.provider, "model": self.model}

    @abstractmethod
    async def arequest(
        self,
        prompt: str,
        *,
        system: str | None = None,
        schema: type[BaseModel] | None = None,
        label: str | None = None,
    ) -> Completion:
        """Make one request and return the reply as received (schema is a hint to the provider)."""

    async def acomplete(
        self,
        prompt: str,
        *,
        system: str | None = None,
        schema: type[M] | None = None,
        label: str | None = None,
    ) -> Any:
        """Return the reply text, or with ``schema`` the reply parsed strictly into it."""
        completion = check_complete(
            await self.arequest(prompt, system=system, schema=schema, label=label)
        )
        if schema is None:
            return completion.text
        return parse_verdict(completion.text, schema)

    def complete(
        self,
        prompt: str,
        *,
        system: str | None = None,
        schema: type[M] | None = None,
        label: str | None = None,
    ) -> Any:
        """Sync twin of :meth:`acomplete`."""
        return run_sync(self.acomplete(prompt, system=system, schema=schema, label=label))

    def close(self) -> None:
        """Release what the model holds (clients, threads); a no-op unless it made them itself."""
        return None

    def __enter__(self: T) -> T:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.provider}:{self.model})"


class FunctionModel(LLM):
    """Any callable ``fn(prompt, system) -> str`` (sync or async) as a model."""

    provider = "function"

    def __init__(
        self, fn: Callable[[str, str | None], str | Awaitable[str]], name: str | None = None
    ):
        if not callable(fn):
            from synth.errors import ConfigError

            raise ConfigError(f"a function model needs a callable, got {type(fn).__name__}")
        self.fn = fn
        self.model = name or getattr(fn, "__qualname__", None) or type(fn).__name__

    async def arequest(
        self,
        prompt: str,
        *,
        system: str | None = None,
        schema: type[BaseModel] | None = None,
        label: str | None = None,
    ) -> Completion:
        # an object whose ``__call__`` is async is awaited here too: run in a thread, the
        # coroutine it returns would never be awaited if the request were cancelled meanwhile
        text: object
        if _is_async(self.fn):
            reply = self.fn(prompt, system)
            text = await reply if inspect.isawaitable(reply) else reply
        else:
            # not asyncio.to_thread: the loop's default pool has min(32, cores + 4) threads, which
            # would cap a callable model's concurrency far below the limiter's
            context = contextvars.copy_context()
            call = functools.partial(context.run, self.fn, prompt, system)
            text = await asyncio.get_running_loop().run_in_executor(_function_pool(), call)
            if inspect.isawaitable(text):
                text = await text
        return Completion(text=str(text), model=self.model)


def _is_async(fn: object) -> bool:
    """An ``async def`` function, or an object whose ``__call__`` is one."""
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)


_POOL_LOCK = threading.Lock()
_POOL: ThreadPoolExecutor | None = None
#: threads shared by every sync callable model (their calls usually wait on I/O)
FUNCTION_THREADS = 64


def _function_pool() -> ThreadPoolExecutor:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(FUNCTION_THREADS, "synth-fn")
        return _POOL


async def in_io_thread(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` in a thread of the pool sync callable models use: for calls that
    wait on the network (a remote embedder's), which the loop's default pool, of
    ``min(32, cores + 4)`` threads, would queue far below the limiter's level."""
    call = functools.partial(contextvars.copy_context().run, fn, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(_function_pool(), call)


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from sync code, even when a loop is already running here.
    It runs as its loop's main task: Ctrl-C in the ``synth`` command interrupts it at once
    (:func:`synth._interrupt.as_main_task`)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(as_main_task(coro))
    result: dict[str, Any] = {}

    def runner() -> None:
        try:
            result["value"] = asyncio.run(as_main_task(coro))
        except BaseException as exc:  # re-raised in the caller's thread
            result["error"] = exc

    thread = threading.Thread(target=runner)
    thread.start()
    thread.join()
    if "error" in result:
        raise result["error"]
    value: T = result["value"]
    return value


def sync_twin(method: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, T]:
    """The sync twin of an async ``a<name>`` (or ``a_<name>``) method: same parameters, run to
    completion by :func:`run_sync`; its docstring is the method's, after a line naming it."""

    @functools.wraps(method)
    def twin(*args: P.args, **kwargs: P.kwargs) -> T:
        return run_sync(method(*args, **kwargs))

    name = method.__name__
    twin.__name__ = name.removeprefix("a_") if name.startswith("a_") else name[1:]
    twin.__qualname__ = method.__qualname__.removesuffix(name) + twin.__name__
    own = inspect.cleandoc(method.__doc__ or "")
    twin.__doc__ = f"The sync twin of :meth:`{name}`.\n\n{own}"
    return twin


__all__ = [
    "sync_twin",
    "INCOMPLETE_FINISH_REASONS",
    "REQUESTS_SENT",
    "LLM",
    "Completion",
    "FunctionModel",
    "check_complete",
    "run_sync",
]
