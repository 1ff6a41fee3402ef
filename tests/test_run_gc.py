"""The garbage collector during a run: the heap from before the run is frozen, then let go, when
the program asked for it; a library call alone leaves the collector alone."""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from synth_replies import Replies

from synth import FunctionModel, Synthesizer
from synth.run.gc import freeze_heap_during_runs, frozen_heap

SAMPLE = Path(__file__).resolve().parent.parent / "sample_docs"


@pytest.fixture(autouse=True)
def clean_collector() -> Iterator[None]:
    assert gc.get_freeze_count() == 0 and gc.isenabled()
    freeze_heap_during_runs()  # what the synth command asks for
    yield
    freeze_heap_during_runs(False)
    gc.unfreeze()
    gc.enable()


class Cycle:
    """Garbage only the collector can free (it refers to itself)."""

    def __init__(self) -> None:
        self.me = self


def test_the_heap_from_before_is_frozen_during_the_block_and_collected_after() -> None:
    before = Cycle()
    old = weakref.ref(before)
    del before  # garbage now, in a cycle: only the collector frees it
    with frozen_heap():
        assert gc.get_freeze_count() > 0
        gc.collect()
        assert old() is not None  # frozen, so not collected
        during = Cycle()
        new = weakref.ref(during)
        del during
        gc.collect()  # what the block made is collected as usual
        assert new() is None and old() is not None
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert old() is None


def test_overlapping_runs_share_one_freeze_until_the_last_ends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the calls are counted, not the frozen objects: a frozen object that another thread of the
    # process lets go of leaves the count at any moment
    calls = record_collector_calls(monkeypatch)
    first, second = frozen_heap(), frozen_heap()
    with ExitStack() as left_open:  # whatever fails, both runs end (the next test starts clean)
        first.__enter__()
        left_open.callback(first.__exit__, None, None, None)
        second.__enter__()
        left_open.callback(second.__exit__, None, None, None)
        assert calls == ["freeze"] and gc.get_freeze_count() > 0
        left_open.pop_all()
        first.__exit__(None, None, None)  # the first ends while the second still runs
        assert calls == ["freeze"] and gc.get_freeze_count() > 0
        second.__exit__(None, None, None)
    assert calls == ["freeze", "unfreeze"] and gc.get_freeze_count() == 0


def record_collector_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The freeze and unfreeze calls made from now on, in order."""
    calls: list[str] = []
    monkeypatch.setattr(gc, "freeze", lambda real=gc.freeze: (calls.append("freeze"), real())[1])
    monkeypatch.setattr(
        gc, "unfreeze", lambda real=gc.unfreeze: (calls.append("unfreeze"), real())[1]
    )
    return calls


def test_a_caller_s_own_freeze_or_disabled_collector_is_left_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # what the block does to the collector is recorded, not inferred from the frozen count (a
    # frozen object another thread lets go of leaves the count, whoever froze it)
    calls = record_collector_calls(monkeypatch)
    gc.freeze()
    calls.clear()
    with frozen_heap():
        assert gc.get_freeze_count() > 0
    assert calls == []  # neither frozen again nor undone: it was not ours
    assert gc.get_freeze_count() > 0
    gc.unfreeze()
    gc.disable()
    calls.clear()
    with frozen_heap():
        assert gc.get_freeze_count() == 0
    assert calls == [] and not gc.isenabled()


def test_an_error_in_the_block_still_unfreezes() -> None:
    with pytest.raises(RuntimeError), frozen_heap():
        raise RuntimeError("boom")
    assert gc.get_freeze_count() == 0


def freeze_counts_seen_by_a_run() -> list[int]:
    """The frozen count the model saw at each request of a four-golden run from the documents."""
    seen: list[int] = []
    lock = threading.Lock()
    replies = Replies()

    async def model(prompt: str, system: str | None = None) -> str:
        with lock:
            seen.append(gc.get_freeze_count())
        return await replies(prompt, system)

    synth = Synthesizer(FunctionModel(model, name="replies"), embedder="hash", seed=1)
    dataset = synth.generate_goldens_from_docs(SAMPLE, num_goldens=4)
    assert len(dataset) == 4
    return seen


def test_a_run_freezes_while_it_asks_and_unfreezes_when_it_ends() -> None:
    seen = freeze_counts_seen_by_a_run()
    assert seen and min(seen) > 0
    assert gc.get_freeze_count() == 0


def test_a_library_call_alone_leaves_the_collector_alone() -> None:
    freeze_heap_during_runs(False)
    with frozen_heap():
        assert gc.get_freeze_count() == 0
    seen = freeze_counts_seen_by_a_run()
    assert seen and max(seen) == 0
    assert gc.get_freeze_count() == 0
