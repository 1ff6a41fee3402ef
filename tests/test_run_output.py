"""The claim on a run's output file (synth/run/output.py), in this process: the lock file's place
and content, each refusal's exact line, and a release that leaves another run's lock alone."""

from __future__ import annotations

import fcntl
import os
import re
from pathlib import Path

import pytest

from synth.errors import ConfigError
from synth.run.output import OutputClaim, _holder, claim_output, lock_path


def test_the_lock_is_hidden_next_to_the_output_and_names_this_process(tmp_path: Path) -> None:
    output = tmp_path / "goldens.jsonl"
    assert lock_path(output) == tmp_path / ".goldens.jsonl.lock"
    lock_path(output).write_text("a much longer line left by an earlier run\n")
    with claim_output(output) as claim:
        assert claim.output == output and claim.lock == lock_path(output)
        text = lock_path(output).read_text()
        assert re.fullmatch(rf"{os.getpid()} \d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d\n", text)
    assert not claim.held and not lock_path(output).exists()
    with claim_output(output) as claim:  # a lock file made by the claim: rw-r--r--
        assert oct(os.stat(claim.lock).st_mode & 0o777) == oct(0o644 & ~_umask())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_claim_held_elsewhere_is_refused_with_its_holder(tmp_path: Path) -> None:
    output = tmp_path / "goldens.jsonl"
    with claim_output(output) as claim:
        stamp = lock_path(output).read_text().split(" ", 1)[1].strip()
        with pytest.raises(ConfigError) as refused:
            claim_output(output)
        assert str(refused.value) == (
            f"cannot write {output}: another synth run (process {os.getpid()}, started {stamp}) "
            "is writing it; wait for it to finish or choose another -o"
        )
        assert claim.held  # the refusal left the claim alone


def test_an_unwritable_folder_is_one_line(tmp_path: Path) -> None:
    output = tmp_path / "missing" / "goldens.jsonl"
    with pytest.raises(ConfigError) as refused:
        claim_output(output)
    assert str(refused.value) == (
        f"cannot write {output}: files cannot be created in {output.parent} "
        "(No such file or directory); choose another -o"
    )


def test_release_leaves_a_lock_file_that_is_not_its_own(tmp_path: Path) -> None:
    output = tmp_path / "goldens.jsonl"
    claim = claim_output(output)
    # another run removed the file and made its own in between
    lock_path(output).unlink()
    lock_path(output).write_text("123 2025-01-02 03:04:05\n")
    claim.release()
    assert lock_path(output).read_text() == "123 2025-01-02 03:04:05\n"
    assert not claim.held
    claim.release()  # a second release does nothing
    assert lock_path(output).exists()


def test_a_claim_that_holds_nothing_releases_nothing(tmp_path: Path) -> None:
    lock = tmp_path / ".x.lock"
    lock.write_text("")
    claim = OutputClaim(tmp_path / "x", lock, None)
    assert not claim.held
    claim.release()
    assert lock.exists()


@pytest.mark.parametrize(
    ("text", "holder"),
    [
        ("4242 2025-01-02 03:04:05\n", " (process 4242, started 2025-01-02 03:04:05)"),
        ("4242\n", " (process 4242)"),
        ("  4242  \n", " (process 4242)"),
        ("not a pid here\n", ""),
        ("4242 " + "x" * 300, " (process 4242, started " + "x" * 195 + ")"),  # 200 bytes read
        ("", ""),
    ],
)
def test_the_holder_is_read_from_the_lock_file(tmp_path: Path, text: str, holder: str) -> None:
    path = tmp_path / "lock"
    path.write_text(text)
    fd = os.open(path, os.O_RDONLY)
    try:
        assert _holder(fd) == holder
    finally:
        os.close(fd)


def test_the_holder_of_an_unreadable_lock_is_not_named(tmp_path: Path) -> None:
    fd = os.open(tmp_path, os.O_RDONLY)  # a folder: reading it fails
    try:
        assert _holder(fd) == ""
    finally:
        os.close(fd)


def test_a_release_after_the_lock_file_went_missing_still_ends_the_claim(tmp_path: Path) -> None:
    output = tmp_path / "goldens.jsonl"
    claim = claim_output(output)
    lock_path(output).unlink()
    claim.release()
    assert not claim.held


@pytest.mark.parametrize("replaced", [False, True])
def test_a_lock_file_removed_while_it_was_being_locked_is_opened_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, replaced: bool
) -> None:
    """The previous holder removed the file (and maybe a third run made a new one) between this
    run's open and its lock: the lock taken is on a file nobody else will see, so it opens again."""
    output = tmp_path / "goldens.jsonl"
    real_flock = fcntl.flock
    calls: list[int] = []

    def flock(fd: int, operation: int) -> None:
        calls.append(fd)
        if len(calls) == 1:
            lock_path(output).unlink()
            if replaced:
                lock_path(output).write_text("")
        real_flock(fd, operation)

    monkeypatch.setattr(fcntl, "flock", flock)
    with claim_output(output) as claim:
        assert len(calls) == 2 and claim.held
        assert os.fstat(claim._fd).st_ino == os.stat(lock_path(output)).st_ino  # type: ignore[arg-type]
        assert lock_path(output).read_text().startswith(f"{os.getpid()} ")
    assert not lock_path(output).exists()


def test_the_holder_of_a_lock_file_that_is_not_text_is_not_named(tmp_path: Path) -> None:
    path = tmp_path / "lock"
    path.write_bytes(b"\xff\xfe 2025-01-02\n")
    fd = os.open(path, os.O_RDONLY)
    try:
        assert _holder(fd) == ""
    finally:
        os.close(fd)
