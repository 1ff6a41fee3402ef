"""The progress display's record and the display that shows nothing (synth/run/progress.py)."""

from __future__ import annotations

from synth.run.progress import NullProgress, Progress, Snapshot


def test_a_snapshot_starts_empty_and_each_keeps_its_own_stage_list() -> None:
    first, second = Snapshot(), Snapshot()
    assert (first.title, first.stages, first.goldens, first.target) == ("", [], 0, None)
    assert (first.in_flight, first.requests, first.cached, first.retries) == (0, 0, 0, 0)
    assert first.cost_usd == 0.0 and isinstance(first.cost_usd, float)
    first.stages.append(("critic", 1, 2))
    assert second.stages == []  # not one list shared by every snapshot


def test_the_null_display_takes_every_call_and_shows_nothing() -> None:
    shown: Progress = NullProgress()
    asked: list[str] = []

    def snapshot() -> Snapshot:
        asked.append("snapshot")
        return Snapshot()

    assert shown.start(snapshot) is None
    assert shown.note("a line") is None
    assert shown.stop() is None
    assert asked == []  # it never even looks
