"""Per-file quotas in the run's controller (synth/run/quotas.py through synth/run/stream.py), with
the scripted feed and runner of tests/test_run_stream.py: a file at its quota has the rest of its
drafts held, a drop is replaced from its own file, and the held drafts fill a run that nothing
else can fill, in candidate order."""

from __future__ import annotations

from test_run_stream import Feed, Runner, ids, kept, run, stream_of

from synth.contexts.feed import Candidate
from synth.data import Context
from synth.run.quotas import HELD_DETAIL, FileQuotas, file_of
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
