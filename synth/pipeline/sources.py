"""Where a golden's ``source_files`` point: paths that open from where the run was started.

The store names a file by its display path (the walked folder's own name and the path inside it:
``sample_docs/guides/setup.md``, whatever the folder was called on the command line), so chunk
ids and the store's identity of a file do not depend on the working folder. A golden records the
file as the user can open it: relative to the working folder (``../docs/setup.md``), or absolute
when asked. The run directory keeps the display paths; the paths are worked out when the dataset
is returned, so a run resumed or replayed from another folder still gets paths that open there.
A golden whose paths differ from the display paths keeps those in ``metadata["corpus_files"]``,
which its published copies name instead (paths on the owner's disk are not shared).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from synth.dataset import Dataset
from synth.dataset._public import CORPUS_FILES_KEY


def source_locations(paths: Sequence[str], *, absolute: bool = False) -> dict[str, str]:
    """Each file's display path under ``paths`` -> its path from the working folder (or absolute).

    Walks ``paths`` as ingest does (same names, same order) without reading any file.
    """
    from synth.ingest.load import FileToLoad, iter_load
    from synth.ingest.report import FileStatus

    locations: dict[str, str] = {}

    def note(found: FileToLoad) -> FileStatus:
        locations[found.path] = _location(found.file, absolute)
        return FileStatus(path=found.path, status="skipped")

    from synth.ingest.web import is_url

    # a page is named by its URL, which opens from anywhere: no location to find, no fetch
    for _ in iter_load([p for p in paths if not is_url(p)], skip=note):
        pass
    return locations


def _location(file: os.PathLike[str], absolute: bool) -> str:
    full = os.path.abspath(file)
    if not absolute:
        try:
            full = os.path.relpath(full)
        except ValueError:  # another drive (Windows): only the absolute path opens
            pass
    return full.replace(os.sep, "/") if os.sep != "/" else full


def locate_source_files(dataset: Dataset, locations: dict[str, str]) -> Dataset:
    """``dataset`` with each golden's ``source_files`` mapped through ``locations`` (in place;
    a name not among them, such as a file no longer there, is kept as it is).

    A golden whose paths change keeps the corpus's names in ``metadata["corpus_files"]``: they
    are what its published copies name (see ``synth/dataset/_public.py``)."""
    for index, golden in enumerate(dataset.goldens):
        located = [locations.get(name, name) for name in golden.source_files]
        if located != golden.source_files:
            metadata = {**golden.metadata, CORPUS_FILES_KEY: list(golden.source_files)}
            update = {"source_files": located, "metadata": metadata}
            dataset.goldens[index] = golden.model_copy(update=update)
    return dataset


__all__ = ["locate_source_files", "source_locations"]
