"""The thin sync layer over the async ``a_generate_*`` methods, and the shortfall warning."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec

from synth.dataset import Dataset
from synth.errors import ShortfallWarning
from synth.llm.base import sync_twin as base_sync_twin

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
    """The sync twin of an async ``a_<name>`` method (:func:`synth.llm.base.sync_twin`), warning
    in its caller's place when it delivered fewer goldens than asked."""
    plain = base_sync_twin(getattr(method, "__wrapped__", method))  # unwarned: the twin warns

    @functools.wraps(plain)
    def twin(*args: P.args, **kwargs: P.kwargs) -> Dataset:
        dataset = plain(*args, **kwargs)
        warn_if_short(dataset, stacklevel=2)  # the line that called the twin
        return dataset

    twin.__wrapped__ = method  # type: ignore[attr-defined]  # what inspect and help() show
    return twin


__all__ = ["sync_twin", "warn_if_short", "warns_if_short"]
