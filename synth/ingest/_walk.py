"""Find the files to load: walk folders in sorted order, flag what is not to be read, name each.

A file's display path is the walked folder's own name followed by the path inside it
(``sample_docs/guides/setup.md``), whatever the folder was called on the command line
(``./sample_docs``, ``/home/me/project/sample_docs``): ids derived from it stay the same across
machines and working folders. A file given directly is named by its file name.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple


class Candidate(NamedTuple):
    file: Path  # where it is on disk
    display: str  # the path shown to the user
    fallback: str  # a longer unambiguous name, used when two files share a display path
    status: str | None = None  # "error" or "skipped" when it is not to be read
    reason: str = ""
    is_folder: bool = False


def walk(paths: Iterable[str | os.PathLike[str]]) -> Iterator[Candidate]:
    """Every file under ``paths`` in order, hidden entries and oddities flagged with a reason."""
    for given in paths:
        path = Path(given)
        as_typed = _posix(os.path.normpath(os.fspath(given)))
        if path.is_dir():
            root_name = Path(os.path.abspath(path)).name
            yield from _walk_folder(path, root_name, as_typed)
        elif path.is_file():
            yield Candidate(path, path.name, as_typed)
        elif path.exists() or path.is_symlink():
            yield Candidate(path, as_typed, as_typed, "skipped", "not a regular file")
        else:
            yield Candidate(path, as_typed, as_typed, "error", "no such file or folder")


def _walk_folder(folder: Path, prefix: str, typed_prefix: str) -> Iterator[Candidate]:
    try:
        entries = sorted(folder.iterdir(), key=lambda entry: entry.name)
    except OSError as exc:
        name = _join(prefix, "")
        yield Candidate(folder, name, name, "error", f"cannot list folder: {exc.strerror or exc}")
        return
    for entry in entries:
        display = _join(prefix, entry.name)
        fallback = _join(typed_prefix, entry.name)
        if entry.is_dir():
            if entry.name.startswith("."):
                yield Candidate(
                    entry, display + "/", fallback + "/", "skipped", "hidden folder", True
                )
            elif entry.is_symlink():
                reason = "symlinked folder not followed"
                yield Candidate(entry, display + "/", fallback + "/", "skipped", reason, True)
            else:
                yield from _walk_folder(entry, display, fallback)
        elif entry.name.startswith("."):
            yield Candidate(entry, display, fallback, "skipped", "hidden file")
        elif entry.name.startswith("~$"):
            yield Candidate(entry, display, fallback, "skipped", "Office lock file")
        elif not entry.is_file():
            yield Candidate(entry, display, fallback, "skipped", "not a regular file")
        else:
            yield Candidate(entry, display, fallback)


def _join(prefix: str, name: str) -> str:
    return f"{prefix}/{name}" if prefix else name


def _posix(path: str) -> str:
    return path.replace(os.sep, "/") if os.sep != "/" else path
