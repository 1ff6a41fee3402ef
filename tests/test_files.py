"""The one atomic writer: all of the new content or the old file, flushed to disk, no litter."""

from __future__ import annotations

import errno
import locale
import os
from pathlib import Path

import pytest

from synth._files import atomic_path, check_writable, os_error_line, write_atomic
from synth.evaluate.report import Evaluation


def test_write_atomic_replaces_the_file_and_keeps_line_endings(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "er" / "file.txt"
    assert write_atomic(target, "one\r\ntwo\n") == target
    write_atomic(target, "é\r\n")
    assert target.read_bytes() == "é\r\n".encode()
    assert [p.name for p in target.parent.iterdir()] == ["file.txt"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "file.txt"
    target.write_text("old", encoding="utf-8")
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half", encoding="utf-8")
        raise RuntimeError("killed mid-write")
    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["file.txt"]


def test_the_file_and_its_folder_are_flushed_before_and_after_the_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        events.append("folder" if os.path.isdir(f"/proc/self/fd/{fd}") else "file")
        real_fsync(fd)

    def replace(src: str, dst: str) -> None:
        events.append("rename")
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    write_atomic(tmp_path / "file.txt", "text")
    if not Path("/proc/self/fd").is_dir():  # pragma: no cover (no /proc to tell them apart)
        assert events == ["file", "rename", "file"]
    else:
        assert events == ["file", "rename", "folder"]


def test_an_evaluation_report_that_cannot_be_written_leaves_the_old_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "report.json"
    Evaluation(metrics={"m": 0.5}).write(path)
    before = path.read_bytes()

    def refuse(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError):
        Evaluation(metrics={"m": 0.9}).write(path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_a_file_rewritten_often_can_skip_flushing_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flushed: list[int] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        flushed.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    write_atomic(tmp_path / "manifest.json", "{}", sync_folder=False)
    assert len(flushed) == 1  # the file, not the folder
    assert (tmp_path / "manifest.json").read_text(encoding="utf-8") == "{}"


def test_write_atomic_writes_utf8_whatever_the_locale_says(tmp_path: Path) -> None:
    # a machine whose locale is ASCII (or cp1252 on Windows) must still get UTF-8 files
    target = tmp_path / "file.txt"
    saved = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        write_atomic(target, "caf\u00e9 \u20ac \U0001f600")
    finally:
        locale.setlocale(locale.LC_CTYPE, saved)
    assert target.read_bytes() == "caf\u00e9 \u20ac \U0001f600".encode()


def test_a_folder_that_refuses_to_be_flushed_still_gets_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # some file systems cannot fsync a folder (EINVAL); the rename is done by then, so that is fine
    calls: list[int] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 2:  # the file first, then its folder
            raise OSError(22, "Invalid argument")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    write_atomic(tmp_path / "file.txt", "text")
    assert len(calls) == 2
    assert (tmp_path / "file.txt").read_text(encoding="utf-8") == "text"
    assert [p.name for p in tmp_path.iterdir()] == ["file.txt"]


def test_a_file_where_a_folder_should_be_is_said_so_naming_the_file_asked_for(
    tmp_path: Path,
) -> None:
    (tmp_path / "goldens.jsonl").write_text("{}\n")
    target = tmp_path / "goldens.jsonl" / "sub" / "report.json"
    for attempt in (lambda: write_atomic(target, "x"), lambda: check_writable(target)):
        with pytest.raises(NotADirectoryError) as caught:
            attempt()
        assert os_error_line(caught.value) == (
            f"{target}: {tmp_path / 'goldens.jsonl'} is a file, not a folder"
        )  # not "[Errno 17] File exists: ..."
    assert (tmp_path / "goldens.jsonl").read_text() == "{}\n"


def test_a_failed_write_names_the_target_not_its_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "report.json"

    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", str(args[0]))

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(PermissionError) as caught:
        write_atomic(target, "x")
    assert os_error_line(caught.value) == f"{target}: permission denied"
    assert not list(tmp_path.iterdir())


def test_check_writable_refuses_a_folder_and_an_unwritable_one_and_allows_new_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    check_writable(tmp_path / "new" / "deeper" / "report.json")  # made when written
    with pytest.raises(IsADirectoryError):
        check_writable(tmp_path)
    monkeypatch.setattr(os, "access", lambda path, mode: Path(path) != tmp_path)
    with pytest.raises(PermissionError) as caught:
        check_writable(tmp_path / "new" / "report.json")
    assert os_error_line(caught.value) == (
        f"{tmp_path / 'new' / 'report.json'}: no permission to write to {tmp_path}"
    )


@pytest.mark.parametrize(
    ("error", "line"),
    [
        (
            OSError(errno.ENOSPC, "No space left on device", "out.json"),
            "cannot write out.json: the disk is full (No space left on device)",
        ),
        (
            OSError(errno.EDQUOT, "Disk quota exceeded"),
            "cannot write: the disk is full (Disk quota exceeded)",
        ),
        (
            OSError(errno.ENOSPC, "", "out.json"),
            "cannot write out.json: the disk is full (no space left on device)",
        ),
        (PermissionError(errno.EACCES, "Permission denied", "x.json"), "x.json: permission denied"),
        # two files named: the error's own line, which names both
        (
            OSError(errno.EXDEV, "Invalid cross-device link", "a", None, "b"),
            "[Errno 18] Invalid cross-device link: 'a' -> 'b'",
        ),
        (OSError(errno.EIO, "Input/output error"), "[Errno 5] Input/output error"),
        (OSError("no errno at all"), "no errno at all"),
    ],
)
def test_an_os_error_is_one_line_a_full_disk_said_as_such(error: OSError, line: str) -> None:
    assert os_error_line(error) == line


def test_check_writable_says_what_is_wrong_with_an_output_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(IsADirectoryError) as folder:
        check_writable(tmp_path)
    assert folder.value.errno == errno.EISDIR
    assert os_error_line(folder.value) == f"{tmp_path}: it is a folder; name a file"
    (tmp_path / "taken").write_text("x")
    with pytest.raises(NotADirectoryError) as blocked:
        check_writable(tmp_path / "taken" / "out.json")
    assert blocked.value.errno == errno.ENOTDIR
    # an existing file that cannot be written is named itself, its writable folder not
    existing = tmp_path / "report.json"
    existing.write_text("{}")
    check_writable(existing)
    asked: list[tuple[str, int]] = []

    def access(path: object, mode: int) -> bool:
        asked.append((str(path), mode))
        return Path(str(path)) != existing

    monkeypatch.setattr(os, "access", access)
    with pytest.raises(PermissionError) as denied:
        check_writable(existing)
    assert denied.value.errno == errno.EACCES
    assert os_error_line(denied.value) == f"{existing}: no permission to write to {existing}"
    assert asked == [(str(tmp_path), os.W_OK), (str(existing), os.W_OK)]
