"""What one ingest run knows of the files already stored: which to skip, which versions went stale.

``FileMemory.skip`` is ``iter_load``'s hook. Before each file is opened it compares the file on
disk with the fingerprints the store holds for that path (see ``_fingerprint``): an unchanged
file is answered for with its stored row and never read; any other file is hashed first, so the
fingerprint written after it is stored describes the very bytes that were read.
"""

from __future__ import annotations

import logging
import os
import time

from synth.ingest import FileStatus, FileToLoad, Loader
from synth.store._fingerprint import (
    SETTLED,
    STAT,
    DiskState,
    StoredFile,
    fingerprint,
    is_settled,
    setup_key,
    sha256_of,
    stat_key,
    stored_file,
)
from synth.store.chroma import ChunkStore, MetadataValue

logger = logging.getLogger("synth.store")


class FileMemory:
    """The stored versions of each file path in ``store``, read once when the run starts."""

    def __init__(self, store: ChunkStore) -> None:
        self._store = store
        #: True when the collection held nothing: no look-ups are needed (a new store is not
        #: asked: its Chroma opens at its first write, once the run's first requests are out)
        self.empty = store.known_empty or store.count() == 0
        self._versions: dict[str, list[StoredFile]] = {}
        if not self.empty:
            for chunk_id, meta in store.first_chunks():
                version = stored_file(chunk_id, meta)
                self._versions.setdefault(str(meta.get("source", "")), []).append(version)
        self._setups: dict[int, tuple[Loader, str]] = {}
        self._unchanged: dict[str, StoredFile] = {}
        self._read: dict[str, tuple[DiskState, str]] = {}
        #: stored stats to refresh (touched but identical files), by first-chunk id
        self.refresh: dict[str, dict[str, MetadataValue]] = {}

    def skip(self, pending: FileToLoad) -> FileStatus | None:
        """``iter_load``'s hook: the stored row of an unchanged file, else None (read it)."""
        self._read.pop(pending.path, None)
        now = time.time_ns()
        try:
            info = os.stat(pending.file)
        except OSError:
            return None  # the loader will say why it cannot be read
        setup = self._setup(pending.loader)
        stat = stat_key(info)
        settled = is_settled(info, now)
        known = [v for v in self._versions.get(pending.path, ()) if v.sha256 and v.setup == setup]
        for version in known:
            if version.settled and version.stat == stat:
                return self._reuse(pending, version)
        try:
            digest = sha256_of(pending.file)
        except OSError:
            return None
        for version in known:
            if version.sha256 == digest:
                if (version.stat, version.settled) != (stat, settled):
                    self.refresh[version.chunk_id] = {STAT: stat, SETTLED: settled}
                return self._reuse(pending, version)
        self._read[pending.path] = (DiskState(stat, digest, settled), setup)
        return None

    def unchanged(self, path: str) -> StoredFile | None:
        """The stored version ``skip`` answered with for ``path``, if it did."""
        return self._unchanged.pop(path, None)

    def fingerprint(
        self, path: str, file: str, *, chunks: int, tokens: int, note: str
    ) -> dict[str, MetadataValue] | None:
        """The fingerprint of the file just read as ``path``; None if it changed while read."""
        before = self._read.pop(path, None)
        if before is None:
            return None
        state, setup = before
        try:
            after = stat_key(os.stat(file))
        except OSError:
            return None
        if after != state.stat:
            logger.debug("%s changed while it was read: no fingerprint kept", path)
            return None
        return fingerprint(state, setup, chunks=chunks, tokens=tokens, note=note)

    def stale(self, path: str, document_id: str) -> list[str]:
        """Ids of the other stored documents of ``path``: older versions of the file just read."""
        versions = self._versions.get(path, ())
        return sorted({v.document_id for v in versions if v.document_id != document_id})

    def _reuse(self, pending: FileToLoad, version: StoredFile) -> FileStatus:
        self._unchanged[pending.path] = version
        return FileStatus(
            path=pending.path,
            status="ok",
            reason=version.note,
            suffix=pending.suffix,
            file=os.path.abspath(pending.file),
            document_id=version.document_id,
        )

    def _setup(self, loader: Loader) -> str:
        known = self._setups.get(id(loader))
        if known is None or known[0] is not loader:
            known = (loader, setup_key(self._store.chunking, self._store.embedder, loader))
            self._setups[id(loader)] = known
        return known[1]


__all__ = ["FileMemory"]
