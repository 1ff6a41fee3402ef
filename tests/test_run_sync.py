"""The sync twins of the async ``a_generate_*`` methods and the shortfall warning
(synth/pipeline/sync.py): the twin runs the method once and warns once, in its caller's place."""

from __future__ import annotations

import sys
import warnings
from typing import Any

import pytest

from synth.dataset import Dataset
from synth.errors import ShortfallWarning
from synth.pipeline.sync import sync_twin, warn_if_short, warns_if_short

SHORT = {"num_goldens": 4, "delivered": 1, "shortfall": ["every given context was used"]}
FULL = {"num_goldens": 2, "delivered": 2}
#: under mutmut every function runs through a trampoline, one frame more between the caller and
#: the warning, so where a warning points is checked only outside it
MUTMUT = "mutmut" in sys.modules
WARNING = (
    "delivered 1 of 4 goldens: every given context was used (the dataset's shortfall and the "
    "run's manifest list every drop)"
)


class Maker:
    """An async method like a Synthesizer's, counting its calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    @warns_if_short
    async def a_make_goldens(self, metadata: dict[str, Any], *, extra: int = 0) -> Dataset:
        """Make goldens, asynchronously.

        It says more here."""
        self.calls.append((metadata, extra))
        return Dataset([], metadata)

    make_goldens = sync_twin(a_make_goldens)


def test_warn_if_short_names_the_shortfall_in_the_callers_place() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_if_short(Dataset([], SHORT), stacklevel=1)  # the line of this test
        warn_if_short(Dataset([], FULL), stacklevel=1)
        warn_if_short(Dataset([]), stacklevel=1)
    assert [(w.category, str(w.message)) for w in caught] == [(ShortfallWarning, WARNING)]
    assert caught[0].filename == __file__ or MUTMUT


def test_the_async_method_warns_once_at_the_line_that_awaited_it() -> None:
    import asyncio

    maker = Maker()

    async def caller() -> Dataset:
        return await maker.a_make_goldens(SHORT, extra=3)  # the line the warning names

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dataset = asyncio.run(caller())
    assert dataset.metadata == SHORT and maker.calls == [(SHORT, 3)]
    assert [(w.category, str(w.message)) for w in caught] == [(ShortfallWarning, WARNING)]
    line = caller.__code__.co_firstlineno + 1
    assert (caught[0].filename, caught[0].lineno) == (__file__, line) or MUTMUT
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(asyncio.run(maker.a_make_goldens(FULL))) == 0  # nothing short: no warning


def test_the_twin_runs_the_method_once_and_warns_once_at_its_callers_line() -> None:
    maker = Maker()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dataset = maker.make_goldens(SHORT, extra=5)
    assert dataset.metadata == SHORT and maker.calls == [(SHORT, 5)]
    assert [(w.category, str(w.message)) for w in caught] == [(ShortfallWarning, WARNING)]
    assert caught[0].filename == __file__ or MUTMUT
    with pytest.warns(ShortfallWarning, match="delivered 1 of 4"):
        maker.make_goldens(SHORT)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert maker.make_goldens(FULL).metadata == FULL


def test_the_twin_is_named_and_documented_after_its_method() -> None:
    twin = Maker.make_goldens
    assert twin.__name__ == "make_goldens"
    assert twin.__qualname__ == "Maker.make_goldens"
    assert twin.__doc__ == (
        "The sync twin of :meth:`a_make_goldens`.\n\nMake goldens, asynchronously.\n\n"
        "It says more here."
    )
    assert twin.__wrapped__ is Maker.a_make_goldens  # functools.wraps: the signature shows


def test_a_twin_of_a_method_without_a_docstring_or_a_check() -> None:
    async def a_bare(n: int) -> Dataset:
        return Dataset([], {"num_goldens": n, "delivered": 0})

    twin = sync_twin(a_bare)
    assert twin.__doc__ == "The sync twin of :meth:`a_bare`.\n\n"
    assert twin.__name__ == "bare"
    assert twin.__qualname__.endswith("<locals>.bare")
    with pytest.warns(ShortfallWarning, match="delivered 0 of 2"):
        twin(2)  # the twin warns even when the method did not


def test_a_twin_made_now_runs_the_unchecked_method_and_warns_once() -> None:
    # made inside the test, not at import: mutmut switches its mutants on only while tests run
    twin = sync_twin(Maker.a_make_goldens)
    maker = Maker()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        twin(maker, SHORT)
    assert [str(w.message) for w in caught] == [WARNING]  # the method's own check not run too
    assert twin.__name__ == "make_goldens" and twin.__qualname__ == "Maker.make_goldens"
