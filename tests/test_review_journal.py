"""The review journal: decisions saved at once beside the dataset, read as part of it, folded in."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
import report_data

from synth import Dataset, DatasetError
from synth.dataset._journal import journal_path
from synth.dataset.review import status_of
from synth.review import ReviewStore, _store


@pytest.fixture(params=[".jsonl", ".json", ".csv"])
def dataset_file(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    return report_data.dataset(6).save(tmp_path / f"goldens{request.param}")


def _killed_review(path: Path) -> list[str]:
    """Two decisions and an edit by a store that is never closed (a server killed mid-review)."""
    store = ReviewStore(path, reviewer="ann")
    store.decide(store.keys[0], "accepted")
    store.decide(store.keys[1], "rejected", "trivial")
    store.edit(store.keys[2], input="Reworded?")
    return store.keys


def test_a_decision_is_read_with_the_dataset_before_it_is_folded_in(dataset_file: Path) -> None:
    _killed_review(dataset_file)
    assert journal_path(dataset_file).exists()
    loaded = Dataset.load(dataset_file)
    assert [status_of(g) for g in loaded][:4] == ["accepted", "rejected", "accepted", "pending"]
    assert loaded[1].metadata["review"]["reason"] == "trivial"
    assert loaded[2].input == "Reworded?"
    assert loaded[2].metadata["review"]["original"]["input"].startswith("Question 2")


def test_the_next_review_folds_a_killed_ones_journal_into_the_file(dataset_file: Path) -> None:
    _killed_review(dataset_file)
    with ReviewStore(dataset_file, reviewer="bob") as store:
        assert not journal_path(dataset_file).exists()  # folded in when the store opened
        assert status_of(store.goldens[1]) == "rejected"
    on_disk = Dataset.load(dataset_file)
    assert [status_of(g) for g in on_disk][:3] == ["accepted", "rejected", "accepted"]


def test_closing_the_store_folds_everything_and_removes_the_journal(dataset_file: Path) -> None:
    with ReviewStore(dataset_file, reviewer="ann") as store:
        for key in store.keys:
            store.decide(key, "accepted")
    assert not journal_path(dataset_file).exists()
    assert {status_of(g) for g in Dataset.load(dataset_file)} == {"accepted"}


def test_a_flush_folds_the_decisions_into_the_file_while_the_review_goes_on(
    dataset_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_store, "QUIET", 3600.0)  # no fold in the background meanwhile
    monkeypatch.setattr(_store, "LATEST", 3600.0)
    with ReviewStore(dataset_file, reviewer="ann") as store:
        store.decide(store.keys[1], "rejected", "trivial")
        assert journal_path(dataset_file).exists()
        store.flush()
        assert not journal_path(dataset_file).exists()  # in the file itself now
        assert status_of(Dataset.load(dataset_file)[1]) == "rejected"
        store.decide(store.keys[2], "accepted")  # the file's new stat is the store's own
        assert status_of(Dataset.load(dataset_file)[2]) == "accepted"


@pytest.mark.parametrize(
    ("quiet", "latest"),
    [(0.05, 3600.0), (3600.0, 0.05)],
    ids=["after-a-pause", "at-the-latest-while-decisions-go-on"],
)
def test_the_background_folds_the_journal_after_a_pause_or_at_the_latest(
    dataset_file: Path, monkeypatch: pytest.MonkeyPatch, quiet: float, latest: float
) -> None:
    """Either limit alone brings the fold: QUIET seconds without a decision, or LATEST after the
    first decision when they keep coming (here, the other limit an hour)."""
    monkeypatch.setattr(_store, "QUIET", quiet)
    monkeypatch.setattr(_store, "LATEST", latest)
    store = ReviewStore(dataset_file, reviewer="ann")
    folded = threading.Event()
    real_write = store._writer.write

    def write(*args: Any) -> None:
        real_write(*args)
        folded.set()

    monkeypatch.setattr(store._writer, "write", write)
    store.decide(store.keys[2], "accepted")
    assert folded.wait(60)  # a bound for a failure, never reached when it works
    store.close()
    assert status_of(Dataset.load(dataset_file)[2]) == "accepted"


def test_a_fold_that_failed_in_the_background_is_done_at_close(
    dataset_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The background fold fails (a full disk, say); the decision stays in the journal, the fold
    is not tried again in a loop (only after the next decision, or at close), and closing the
    store folds it into the file."""
    monkeypatch.setattr(_store, "QUIET", 0.0)  # fold as soon as a decision is journaled
    store = ReviewStore(dataset_file, reviewer="ann")
    failed = threading.Event()
    settled = threading.Event()  # the folder, after the failure, waits or tries again
    real_write, real_wait = store._writer.write, store._wake.wait
    attempts: list[bool] = []
    disk_full = True

    def write(*args: Any) -> None:
        attempts.append(disk_full)
        if len(attempts) > 1:
            settled.set()
        if disk_full:
            failed.set()
            raise OSError(28, "No space left on device")
        real_write(*args)

    def wait(timeout: float | None = None) -> bool:
        if failed.is_set():
            settled.set()
        return real_wait(timeout)

    monkeypatch.setattr(store._writer, "write", write)
    monkeypatch.setattr(store._wake, "wait", wait)
    store.decide(store.keys[1], "rejected", "trivial")
    assert failed.wait(60) and settled.wait(60)  # bounds for a failure, never reached when it works
    assert attempts == [True]  # the folder waits: no fold after fold on the same decisions
    assert status_of(Dataset.load(dataset_file)[1]) == "rejected"  # from the journal
    disk_full = False
    store.close()
    assert attempts == [True, False]
    assert not journal_path(dataset_file).exists()
    assert status_of(Dataset.load(dataset_file)[1]) == "rejected"


def test_a_decision_made_while_the_file_is_folded_is_taken_not_refused(
    dataset_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fold's own write changes the file's stat: a decision made while it writes is not a
    change by something else, and it stays in the journal for the next fold."""
    monkeypatch.setattr(_store, "QUIET", 3600.0)  # the test's fold is the only one
    monkeypatch.setattr(_store, "LATEST", 3600.0)
    store = ReviewStore(dataset_file, reviewer="ann")
    real_write = store._writer.write
    during: list[str] = []

    def write(*args: Any) -> None:
        real_write(*args)
        if not during:  # the file is written, the fold not yet done
            during.append(status_of(store.decide(store.keys[3], "rejected", "duplicate")))

    monkeypatch.setattr(store._writer, "write", write)
    store.decide(store.keys[1], "accepted")
    store.flush()
    assert during == ["rejected"]
    assert journal_path(dataset_file).exists()  # the decision made meanwhile, still to fold
    store.close()
    assert not journal_path(dataset_file).exists()
    saved = [status_of(g) for g in Dataset.load(dataset_file)]
    assert saved[1] == "accepted" and saved[3] == "rejected"


def test_saving_over_the_file_supersedes_its_journal(dataset_file: Path) -> None:
    _killed_review(dataset_file)
    Dataset(report_data.dataset(2).goldens).save(dataset_file)
    assert not journal_path(dataset_file).exists()
    assert [status_of(g) for g in Dataset.load(dataset_file)] == ["pending"] * 4


def test_a_last_line_cut_off_by_a_crash_is_skipped(dataset_file: Path) -> None:
    _killed_review(dataset_file)
    with journal_path(dataset_file).open("a", encoding="utf-8") as journal:
        journal.write('{"key": "c00')  # a decision never answered
    assert status_of(Dataset.load(dataset_file)[1]) == "rejected"


def test_a_journal_naming_a_golden_the_file_lacks_is_an_error(tmp_path: Path) -> None:
    path = report_data.dataset(2).save(tmp_path / "goldens.jsonl")
    line = {"key": "nope", "input": "q", "expected_output": None, "review": {}}
    journal_path(path).write_text(json.dumps(line) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="line 1: names a golden that goldens.jsonl does not"):
        Dataset.load(path)


def test_an_edit_to_a_conversation_rewrites_its_last_turns(tmp_path: Path) -> None:
    from synth import ConversationalGolden, Turn

    talk = ConversationalGolden(
        scenario="A technician checks the pumps.",
        turns=[
            Turn(role="user", content="Which pump runs at night?"),
            Turn(role="assistant", content="P-4."),
            Turn(role="user", content="From when?"),
            Turn(role="assistant", content="From 22:00.", metadata={"grounding": 1.0}),
        ],
    )
    path = Dataset([talk]).save(tmp_path / "talks.jsonl")
    store = ReviewStore(path, reviewer="ann")  # never closed: the journal carries the edit
    store.edit(store.keys[0], input="And from when does it run?", expected_output="22:00 to 6:00.")
    loaded = Dataset.load(path)[0]
    assert isinstance(loaded, ConversationalGolden)
    assert [t.content for t in loaded.turns] == [
        "Which pump runs at night?",
        "P-4.",
        "And from when does it run?",
        "22:00 to 6:00.",
    ]
    assert loaded.turns[-1].metadata == {"grounding": 1.0}
    assert loaded.input == "And from when does it run?"
    assert loaded.metadata["review"]["original"]["input"] == "From when?"
    store.close()
    assert Dataset.load(path)[0].turns[-2].content == "And from when does it run?"
