"""The thin sync layer over the async ``a_generate_*`` methods, and the shortfall warning."""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec

from synth.dataset import Dataset
from synth.errors import ShortfallWarning
from synth.llm.base import run_sync

P = ParamSpec("P")


def warn_if_short(dataset: Dataset, stacklevel: int) -> None:
    """Warn with :class:`~synth.errors.ShortfallWarning` when ``dataset`` holds fewer goldens
    than were asked, naming the cause that stopped the run first."""
    short = dataset.shortfall
    if short is not None:
        warnings.warn(
            f"{short} (the dataset's shortfall and the run's manifest list every drop)",
            ShortfallWarning,
            stacklevel=stacklevel + 1,
        )


def warns_if_short(
    method: Callable[P, Coroutine[Any, Any, Dataset]],
) -> Callable[P, Coroutine[Any, Any, Dataset]]:
    """``method`` warning when it delivered fewer goldens than asked (see :func:`warn_if_short`);
    ``__wrapped__`` is ``method`` itself, for its sync twin, which warns in its caller's place."""

    @functools.wraps(method)
    async def checked(*args: P.args, **kwargs: P.kwargs) -> Dataset:
        dataset = await method(*args, **kwargs)
        warn_if_short(dataset, stacklevel=2)  # the line that awaited the call
        return dataset

    return checked


def sync_twin(method: Callable[P, Coroutine[Any, Any, Dataset]]) -> Callable[P, Dataset]:
    """The sync twin of an async ``a_<name>`` method: same parameters, run to completion; its
    docstring is the method's, after a line naming it."""
    unchecked: Callable[P, Coroutine[Any, Any, Dataset]] = getattr(method, "__wrapped__", method)

    @functools.wraps(method)
    def twin(*args: P.args, **kwargs: P.kwargs) -> Dataset:
        dataset = run_sync(unchecked(*args, **kwargs))
        warn_if_short(dataset, stacklevel=2)  # the line that called the twin
        return dataset

    twin.__name__ = method.__name__.removeprefix("a_")
    twin.__qualname__ = method.__qualname__.replace(".a_", ".", 1)
    own = inspect.cleandoc(method.__doc__ or "")
    twin.__doc__ = f"The sync twin of :meth:`{method.__name__}`.\n\n{own}"
    return twin


__all__ = ["sync_twin", "warn_if_short", "warns_if_short"]
