"""Load documents from files and folders: one status per file met, the readable ones as Documents.

``iter_load`` streams one ``LoadedFile`` per file, so a large corpus never sits in memory at once;
``load_documents`` collects them into a ``LoadReport``. A file that cannot be read becomes an
``"error"`` with a one-line reason and the others go on; hidden files and unsupported types are
``"skipped"`` and listed, never silently dropped. ``iter_load``'s ``skip`` hook sees each file
before it is opened and can answer for it (say, because it is already stored and unchanged).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import NamedTuple

from synth._ids import document_id
from synth._language import LANGUAGE_KEY, document_languages
from synth.data import Chunk, Document
from synth.errors import ConfigError, IngestError, ReaderMissing
from synth.ingest._util import one_line
from synth.ingest.chunking import ChunkingConfig, iter_chunks
from synth.ingest.registry import Loader, resolve_loaders
from synth.ingest.report import FileStatus, LoadedFile, LoadReport
from synth.ingest.web import REDIRECTED_FROM, WebOptions, is_url, iter_pages

logger = logging.getLogger("synth.ingest")

PathsArg = str | os.PathLike[str] | Iterable[str | os.PathLike[str]]


class FileToLoad(NamedTuple):
    """A file ``iter_load`` is about to read, as its ``skip`` hook sees it."""

    file: Path  # where it is on disk
    path: str  # its display path: ``Document.path`` and ``FileStatus.path`` if it is read
    suffix: str  # the registered suffix that chose its loader (".pdf", ".tar.gz", ...)
    loader: Loader  # what would read it


#: ``iter_load``'s hook: a FileStatus to report instead of reading the file, or None to read it
SkipHook = Callable[[FileToLoad], FileStatus | None]


def load_documents(
    paths: PathsArg,
    *,
    loaders: Mapping[str, Loader] | None = None,
    password: str | None = None,
    web: WebOptions | None = None,
) -> LoadReport:
    """Read every supported file under ``paths`` (files or folders, walked recursively; http(s)
    URLs are fetched, a sitemap standing for its pages: see :mod:`synth.ingest.web`).

    ``loaders`` maps extra suffixes to loaders for this call only (see ``register_loader``);
    ``password`` opens encrypted PDFs; ``web`` says how URLs are read. Never raises for a bad
    file: see ``LoadReport.files``.
    """
    report = LoadReport()
    for status, document in iter_load(paths, loaders=loaders, password=password, web=web):
        report.files.append(status)
        if document is not None:
            report.documents.append(document)
    logger.info("loaded %s", report.summary())
    return report


def iter_load(
    paths: PathsArg,
    *,
    loaders: Mapping[str, Loader] | None = None,
    password: str | None = None,
    skip: SkipHook | None = None,
    web: WebOptions | None = None,
) -> Iterator[LoadedFile]:
    """One ``LoadedFile`` per file met, in walk order; the streaming form of ``load_documents``.

    ``skip`` is called with each file that has a loader, just before it would be opened; when it
    returns a ``FileStatus``, that status is yielded (with no document) and the file is not read.
    Files flagged on the walk (hidden, unsupported, already loaded) never reach it.
    """
    for item in iter_files(paths, loaders=loaders, password=password, skip=skip, web=web):
        yield item if isinstance(item, LoadedFile) else load_file(item)


def iter_files(
    paths: PathsArg,
    *,
    loaders: Mapping[str, Loader] | None = None,
    password: str | None = None,
    skip: SkipHook | None = None,
    web: WebOptions | None = None,
) -> Iterator[LoadedFile | FileToLoad]:
    """:func:`iter_load` before the reading: each file met, in walk order, as the
    ``LoadedFile`` already known of it (flagged on the walk, or answered by ``skip``) or as the
    ``FileToLoad`` that :func:`load_file` reads (here, or in another process). The pages of the
    URLs among ``paths`` come after the files, fetched as they are met (a page's mirror file is
    what is read; ``web``'s ``state_dir`` holds them, ``.synth/web`` when it names none)."""
    table = resolve_loaders(loaders, password)
    seen_files: dict[Path, str] = {}
    seen_names: set[str] = set()
    given = _as_path_list(paths)
    urls = [str(path) for path in given if is_url(path)]
    for candidate in walk([path for path in given if not is_url(path)]):
        if candidate.status is not None:
            yield _status_only(candidate, candidate.status, candidate.reason)
            continue
        suffix, loader = _find_loader(candidate.file.name, table)
        if loader is None:
            reason = f"unsupported type {suffix}" if suffix else "unsupported type (no extension)"
            yield _status_only(candidate, "skipped", reason)
            continue
        real = candidate.file.resolve()
        if real in seen_files:
            yield _status_only(candidate, "skipped", f"already loaded as {seen_files[real]}")
            continue
        display = _unique_name(candidate, seen_names)
        seen_files[real] = display
        if skip is not None:
            answer = skip(FileToLoad(candidate.file, display, suffix, loader))
            if answer is not None:
                yield LoadedFile(answer, None)
                continue
        yield FileToLoad(candidate.file, display, suffix, loader)
    if urls:
        yield from _pages(urls, web or WebOptions(), seen_names, skip)


def _pages(
    urls: list[str], web: WebOptions, seen: set[str], skip: SkipHook | None
) -> Iterator[LoadedFile | FileToLoad]:
    """The pages of ``urls`` as files to load (their mirror files), ``skip`` asked of each."""
    for page in iter_pages(urls, web.in_folder(Path(".synth") / "web"), seen):
        if isinstance(page, LoadedFile):
            yield page
            continue
        item = FileToLoad(page.file, page.name, ".html", page.reader)
        answer = skip(item) if skip is not None else None
        yield LoadedFile(answer, None) if answer is not None else item


def load_file(item: FileToLoad) -> LoadedFile:
    """Read one file :func:`iter_files` met: its status, and its Document when it could be read."""
    file, display, suffix, loader = item
    base = FileStatus(path=display, status="error", suffix=suffix, file=os.path.abspath(file))
    try:
        output = loader(file)
    except ReaderMissing as exc:  # an optional extra not installed: the file is not ours to read
        return LoadedFile(base.model_copy(update={"status": "skipped", "reason": str(exc)}), None)
    except IngestError as exc:
        return _failed(base, str(exc))
    except OSError as exc:
        return _failed(base, f"cannot read file: {exc.strerror or one_line(exc)}")
    except ValueError as exc:  # ConfigError is a ValueError too, but a user loader may raise it
        return _failed(base, one_line(exc))
    document = _as_document(output, suffix)
    if not document.text.strip():
        return _failed(base, "no text")
    metadata = {**document.metadata, "suffix": suffix, "size_bytes": file.stat().st_size}
    languages = document_languages(document.text)
    metadata["languages"] = languages  # [] when no sample had one: its chunks are not looked at
    if languages:
        metadata[LANGUAGE_KEY] = languages[0]
    document = document.model_copy(
        update={
            "id": document_id(display, document.text),
            "path": display,
            "metadata": metadata,
        }
    )
    status = base.model_copy(
        update={
            "status": "ok",
            "reason": _note(metadata),
            "document_id": document.id,
            "pages": len(document.pages) or None,
            "chars": len(document.text),
            "warnings": int(metadata.get("warnings", 0)),
        }
    )
    return LoadedFile(status, document)


def read_chunked(
    item: FileToLoad, chunking: ChunkingConfig
) -> tuple[FileStatus, str | None, list[Chunk]]:
    """One file read (:func:`load_file`) and all its chunks at once: its status, its document id
    and chunks (none when it could not be read). What a file costs where it is read elsewhere (a
    Ray task, the read worker) and handed back whole."""
    loaded = load_file(item)
    document = loaded.document
    if document is None:
        return loaded.status, None, []
    return loaded.status, document.id, list(iter_chunks([document], chunking))


def _as_document(output: object, suffix: str) -> Document:
    if isinstance(output, Document):
        return output
    if isinstance(output, str):
        return Document(id="", path="", text=output)
    raise ConfigError(
        f"the loader for {suffix} returned {type(output).__name__}; expected str or Document"
    )


#: the units a reader leaves out when they have no text: (what they are, the metadata keys of
#: their count and of those left out), as :func:`synth.ingest._blocks.units_document` counts them
_UNITS_LEFT_OUT = (
    ("slides", "slide_count", "slides_without_text"),
    ("sheets", "sheet_count", "empty_sheets"),
    ("chapters", "chapter_count", "chapters_without_text"),
)


def _note(metadata: Mapping[str, object]) -> str:
    """A one-line remark on a file that loaded but not completely."""
    notes = []
    empty = metadata.get("pages_without_text")
    if empty:
        notes.append(f"{empty} of {metadata.get('page_count')} pages have no text")
    failed = metadata.get("pages_failed")
    if failed:
        notes.append(f"text extraction failed on {failed} pages")
    unsaved = metadata.get("formulas_without_values")
    if unsaved:
        notes.append(f"{unsaved} formula cells have no saved result, so are not read")
    for units, count_key, empty_key in _UNITS_LEFT_OUT:
        if metadata.get(empty_key):
            notes.append(f"{metadata[empty_key]} of {metadata.get(count_key)} {units} have no text")
    if metadata.get(REDIRECTED_FROM):
        notes.append(f"redirected from {metadata[REDIRECTED_FROM]}")
    return "; ".join(notes)


def _failed(base: FileStatus, reason: str) -> LoadedFile:
    reason = " ".join(reason.split()) or "unreadable"
    logger.debug("cannot load %s: %s", base.path, reason)
    return LoadedFile(base.model_copy(update={"reason": reason}), None)


def _status_only(candidate: Candidate, status: str, reason: str) -> LoadedFile:
    suffix = "" if candidate.is_folder else candidate.file.suffix.lower()
    file_status = FileStatus(
        path=candidate.display,
        status=status,  # type: ignore[arg-type]
        reason=reason,
        suffix=suffix,
        file=os.path.abspath(candidate.file),
    )
    return LoadedFile(file_status, None)


def _find_loader(name: str, table: Mapping[str, Loader]) -> tuple[str, Loader | None]:
    """The longest registered suffix the name ends with (so ``.tar.gz`` can beat ``.gz``)."""
    lowered = name.lower()
    matches = [
        suffix for suffix in table if lowered.endswith(suffix) and len(lowered) > len(suffix)
    ]
    if not matches:
        return Path(lowered).suffix, None
    best = max(matches, key=len)
    return best, table[best]


def _unique_name(candidate: Candidate, seen: set[str]) -> str:
    """The display path, made unique within this run when two files would share it."""
    for name in (candidate.display, candidate.fallback):
        if name not in seen:
            seen.add(name)
            return name
    number = 2
    while f"{candidate.fallback} ({number})" in seen:
        number += 1
    name = f"{candidate.fallback} ({number})"
    seen.add(name)
    return name


def _as_path_list(paths: PathsArg) -> list[str | os.PathLike[str]]:
    if isinstance(paths, str | os.PathLike):
        return [paths]
    return list(paths)


# ---- Find the files to load: walk folders in sorted order, flag what is not to be read, name
# each.
#
# A file's display path is the walked folder's own name followed by the path inside it
# (``sample_docs/guides/setup.md``), whatever the folder was called on the command line
# (``./sample_docs``, ``/home/me/project/sample_docs``): ids derived from it stay the same across
# machines and working folders. A file given directly is named by its file name.
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


__all__ = [
    "FileToLoad",
    "SkipHook",
    "iter_files",
    "iter_load",
    "load_documents",
    "load_file",
    "read_chunked",
]
