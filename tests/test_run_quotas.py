"""Per-file quotas in the run's controller (synth/run/quotas.py through synth/run/stream.py), with
the scripted feed and runner of tests/test_run_stream.py: a file at its quota has the rest of its
drafts held, a drop is replaced from its own file, and the held drafts fill a run that nothing
else can fill, in candidate order."""

from __future__ import annotations

import asyncio

from test_run_stream import Feed, Runner, ids, kept, run, stream_of

from synth.contexts.feed import Candidate
from synth.data import Context
from synth.generate.draft import Draft
from synth.run.quotas import HELD_DETAIL, FileQuotas, file_of, needed
from synth.run.slots import Slot
from synth.run.stream import NOT_NEEDED, Target


def of_files(*keys: str) -> list[Candidate]:
    """Candidates in this order, each from the file its key starts with (``a1`` from ``a``)."""
    return [
        Candidate(i, key, Context(id=key, chunk_ids=[key], texts=["t"], source_files=[key[0]]))
        for i, key in enumerate(keys)
    ]


def test_a_file_at_its_quota_has_the_rest_of_a_context_held_and_not_needed() -> None:
    feed = Feed(of_files("a0", "a1", "b0"))
    runner = Runner({**kept("a0"), **kept("a1"), **kept("b0")})
    target = Target(per_context=2, num_goldens=4, quotas={"a": 3, "b": 1})
    result = run(stream_of(feed, runner, target))
    assert ids(result.goldens) == ["a0-0", "a0-1", "a1-0", "b0-0"]
    left = [d for s in result.committed for d in s.drafts or [] if not d.kept]
    assert [(d.id, d.drop_reason, d.drop_detail) for d in left] == [
        ("a1-1", NOT_NEEDED, HELD_DETAIL),
        ("b0-1", NOT_NEEDED, None),  # past N: not needed as before
    ]
    assert result.not_needed == 2 and result.shortfall == []


def test_a_drop_is_replaced_from_its_own_file_and_a_full_files_candidate_is_not_run() -> None:
    feed = Feed(of_files("a0", "b0", "b1", "a1"), eager=True)
    script = {"a0": [("x", "vague"), ("y", "vague")], **kept("b0"), **kept("b1"), **kept("a1")}
    runner = Runner(script)
    target = Target(per_context=2, num_goldens=4, quotas={"a": 2, "b": 2})
    result = run(stream_of(feed, runner, target))
    assert ids(result.goldens) == ["b0-0", "b0-1", "a1-0", "a1-1"]
    assert "b1" not in runner.started  # file b had its quota in view: b1 never ran
    without = run(
        stream_of(
            Feed(of_files("a0", "b0", "b1", "a1"), eager=True),
            Runner(script),
            Target(per_context=2, num_goldens=4),
        )
    )
    assert ids(without.goldens) == ["b0-0", "b0-1", "b1-0", "b1-1"]  # the seat order alone


def test_when_a_file_cannot_give_its_quota_the_held_drafts_fill_the_run_in_order() -> None:
    feed = Feed(of_files("a0", "b0", "b1", "b2"))
    script = {"a0": [("x", "vague"), ("y", "vague")], **kept("b0"), **kept("b1"), **kept("b2")}
    runner = Runner(script)
    target = Target(per_context=2, num_goldens=4, quotas={"a": 2, "b": 2})
    result = run(stream_of(feed, runner, target))
    assert ids(result.goldens) == ["b0-0", "b0-1", "b1-0", "b1-1"]
    assert result.shortfall == [] and "b2" not in runner.started


def test_the_quotas_count_kept_goldens_and_what_started_slots_expect() -> None:
    quotas = FileQuotas({"a": 3, "b": 2})
    [a0, b0] = of_files("a0", "b0")
    assert file_of(a0) == "a" and quotas.open("a", {"a": 2}) and not quotas.open("b", {"b": 2})
    assert quotas.missing([], []) == {"a": 3, "b": 2}
    assert quotas.wants(b0, {"b": 1}) and not quotas.wants(a0, {"b": 1})
    quotas.lifted = True
    assert quotas.open("b", {"b": 9}) and quotas.open("c", {})


def started(slot: Slot) -> Slot:
    """``slot`` as the stream starts it: with a task (done at once)."""

    async def start() -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(asyncio.sleep(0))
        await task
        return task

    slot.task = asyncio.run(start())
    return slot


def draft(key: str, source: str) -> Draft:
    context = Context(id=key, chunk_ids=[key], texts=["t"], source_files=[source])
    return Draft(id=key, input=f"q {key}?", context=context)


def test_a_candidate_without_a_context_or_files_is_of_the_file_named_empty() -> None:
    assert file_of(Candidate(0, "k", None)) == ""
    no_files = Context(id="k", chunk_ids=["k"], texts=["t"], source_files=[])
    assert file_of(Candidate(1, "k", no_files)) == ""
    two = Context(id="k", chunk_ids=["k"], texts=["t"], source_files=["b", "a"])
    assert file_of(draft("k", "z")) == "z" and file_of(Candidate(2, "k", two)) == "b"


def test_a_golden_counts_for_the_file_of_the_candidate_it_was_offered_from() -> None:
    quotas = FileQuotas({"a": 2, "b": 2})
    [a0] = of_files("a0")
    moved, own = draft("m", "b"), draft("o", "b")
    quotas.offered(moved, a0)  # its own context names b, its candidate's file is a
    assert quotas.kept([moved, own]) == {"a": 1, "b": 1}  # a draft never offered: its own file


def test_a_file_without_a_quota_is_closed_and_never_missing() -> None:
    quotas = FileQuotas({"a": 2})
    [c0, c1] = of_files("c0", "c1")
    assert not quotas.open("c", {}) and quotas.full(c0, [])
    running = [started(Slot(c0, 0)), started(Slot(c1, 2))]  # alive none, and two
    assert quotas.missing([], running[:1]) == {"a": 2}
    assert quotas.missing([], running) == {"a": 2}
    assert quotas.missing([draft("x", "c"), draft("y", "c")], running) == {"a": 2}


def test_what_a_file_misses_is_its_quota_less_kept_goldens_and_started_slots() -> None:
    quotas = FileQuotas({"a": 3, "b": 2})
    [a0, a1, b0] = of_files("a0", "a1", "b0")
    goldens = [draft("g", "a")]
    running = [started(Slot(a0, 1)), Slot(a1, 2), started(Slot(b0, 2))]  # a1 is parked
    assert quotas.missing(goldens, running) == {"a": 1}  # b's started slot fills it
    assert quotas.missing(goldens, []) == {"a": 2, "b": 2}


def test_the_held_slots_expect_their_drafts_not_offered_or_else_their_expected_yield() -> None:
    quotas = FileQuotas({"a": 1})
    [a0, a1, a2, a3] = of_files("a0", "a1", "a2", "a3")
    done = Slot(a0, 3, drafts=[], offers=[(draft(k, "a"), None) for k in ("x", "y", "z")])
    whole = Slot(a1, 2, drafts=[], offers=[(draft(k, "a"), None) for k in ("u", "v")])
    quotas.hold(done, 1)  # its first draft was offered: two left
    quotas.hold(whole)
    quotas.hold(started(Slot(a2, 2)))  # still running: what it is expected to give
    quotas.hold(Slot(a3, 2))  # parked, never started: nothing
    assert quotas.held_expected() == 2 + 2 + 2
    assert [d.id for d in quotas.release()] == ["y", "z", "u", "v"]
    assert quotas.held == [] and quotas.held_expected() == 0


def test_without_quotas_a_slot_is_needed_while_those_ahead_fall_short_of_n() -> None:
    slots = [Slot(c, e) for c, e in zip(of_files("a0", "b0", "a1"), (2, 1, 1), strict=True)]
    assert needed(slots, [draft("g", "a")], 4, None) == {0: True, 1: True, 2: False}
    assert needed(slots, [], 4, None) == {0: True, 1: True, 2: True}


def test_with_quotas_a_slot_is_needed_while_its_own_file_falls_short() -> None:
    quotas = FileQuotas({"a": 2, "b": 1})
    candidates = of_files("a1", "b0", "a2", "b1", "c0")
    goldens = [draft("g", "a")]
    quotas.offered(goldens[0], candidates[0])
    slots = [Slot(c, 1) for c in candidates]
    # a has 1 of 2 kept: a1 needed, a2 not; b has none: b0 needed, b1 not; c has no quota
    flags = needed(slots, goldens, 9, quotas)
    assert flags == {0: True, 1: True, 2: False, 3: False, 4: False}
