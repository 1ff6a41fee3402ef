"""The one way synth replaces a file: all of the new content, or the old file untouched.

Run manifests, datasets and evaluation reports are all written through :func:`atomic_path`: the
content goes to a temporary file in the same folder (so the final rename never crosses file
systems), is flushed to disk, and is renamed over the target; then the folder itself is flushed, so
after a power cut the target names either the old file or the whole new one, never an empty one.
A write that fails or is interrupted removes its temporary file and leaves the target as it was.

A write that fails names the file it was writing (:func:`writing`): a write or flush on an open
file raises an OSError that names none, and on a full disk that error alone says nothing of where.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path

#: the errors of a write that found no room: the disk, or the user's quota on it, is full
DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})


@contextlib.contextmanager
def writing(path: str | os.PathLike[str]) -> Iterator[None]:
    """Writes to ``path`` inside the block: an OSError that names no file is raised again naming
    ``path`` (same errno, so the same OSError subclass)."""
    try:
        yield
    except OSError as exc:
        if exc.filename is not None or exc.errno is None:
            raise
        raise OSError(exc.errno, exc.strerror or str(exc), os.fspath(path)) from exc


def disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` is a write that failed for want of room on the disk."""
    return isinstance(exc, OSError) and exc.errno in DISK_FULL


def os_error_line(exc: OSError) -> str:
    """One line for an OSError: a full disk said as such, with the file being written."""
    if disk_full(exc):
        where = f"cannot write {exc.filename}" if exc.filename else "cannot write"
        return f"{where}: the disk is full ({exc.strerror or 'no space left on device'})"
    if exc.filename is not None and exc.strerror and exc.filename2 is None:
        # "out/e.json: permission denied", not "[Errno 13] Permission denied: 'out/e.json'"
        return f"{exc.filename}: {exc.strerror[:1].lower()}{exc.strerror[1:]}"
    return str(exc)


def check_writable(path: str | os.PathLike[str]) -> None:
    """Raise an OSError naming ``path`` when it cannot be written: a file stands where one of its
    folders would be, or the folder it would be made in is not writable. A command checks its
    output so before the work whose result it holds; missing folders are fine (they are made)."""
    target = Path(path)
    if target.is_dir():
        raise IsADirectoryError(errno.EISDIR, "it is a folder; name a file", os.fspath(path))
    folder = target.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise _not_a_folder(folder, path)
    if not os.access(folder, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        where = target if target.exists() else folder
        raise PermissionError(errno.EACCES, f"no permission to write to {where}", os.fspath(path))


def _not_a_folder(folder: Path, path: str | os.PathLike[str]) -> OSError:
    return NotADirectoryError(errno.ENOTDIR, f"{folder} is a file, not a folder", os.fspath(path))


def file_in_the_way(folder: Path, error: BaseException) -> Path | None:
    """The file that stands where ``folder``, or a folder above it, would be, when ``error`` is
    what making ``folder`` raised ("File exists", "Not a directory"); None when it is another
    error or no file is in the way."""
    if not isinstance(error, FileExistsError | NotADirectoryError):
        return None
    return next((p for p in (folder, *folder.parents) if p.is_file()), None)


def _make_folder(target: Path) -> None:
    """Make ``target``'s folders; a file in the way is said as such, not as 'File exists'."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        blocker = file_in_the_way(target.parent, exc)
        if blocker is None:
            raise
        raise _not_a_folder(blocker, target) from exc


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str], *, sync_folder: bool = True) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; if the block succeeds, it becomes ``path``.

    The block may write the temporary file any way it likes (a library writing to a path
    included); missing parent folders are created first. ``sync_folder=False`` skips flushing the
    folder after the rename, for a file rewritten often whose previous version is as good.
    """
    target = Path(path)
    _make_folder(target)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with writing(target):
            yield tmp
            _flush_file(tmp)
            os.replace(tmp, target)
        if sync_folder:
            _flush_folder(target.parent)
    except OSError as exc:
        if exc.filename == os.fspath(tmp):  # the user named the target, never this file
            exc.filename = os.fspath(target)
        raise
    finally:
        tmp.unlink(missing_ok=True)


def write_atomic(path: str | os.PathLike[str], text: str, *, sync_folder: bool = True) -> Path:
    """Replace ``path`` with ``text`` in UTF-8, line endings exactly as given; return the path."""
    with (
        atomic_path(path, sync_folder=sync_folder) as tmp,
        open(tmp, "w", encoding="utf-8", newline="") as handle,
    ):
        handle.write(text)
    return Path(path)


def _flush_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _flush_folder(folder: Path) -> None:
    # a rename is only durable once the folder's entry is on disk; some platforms (Windows) cannot
    # open a folder to flush it, and there the rename is all we can do
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


__all__ = [
    "DISK_FULL",
    "atomic_path",
    "check_writable",
    "disk_full",
    "file_in_the_way",
    "os_error_line",
    "write_atomic",
    "writing",
]
