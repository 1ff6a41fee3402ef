"""``PendingIngest``: an ingest whose files are all read, while its last writes may still run."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from synth.data import Chunk
from synth.store._report import IngestReport
from synth.store._writer import BackgroundWriter
from synth.store.chroma import AddResult, ChunkStore, PreparedChunks

logger = logging.getLogger("synth.store")


class PendingIngest:
    """An ingest whose files are all read and chunked, while its last writes may still run.

    ``report`` has every file and the chunk and token totals at once; ``embedded`` and ``reused``
    are complete after :meth:`finish`. ``chunks`` holds, by path, the chunks of the files read now
    (with ``keep_chunks``), so a caller can start on them before they are stored, and
    :meth:`get_embeddings` gives their vectors before they are stored, where it can.
    """

    def __init__(
        self,
        report: IngestReport,
        writer: BackgroundWriter[Any],
        added: AddResult,
        store: ChunkStore,
    ) -> None:
        self.report = report
        self.chunks: dict[str, list[Chunk]] = {}
        self._writer = writer
        self._added = added
        self._store = store
        self._embedder = store.embedder
        self._lock = threading.Lock()
        self._done = False
        #: set once the vectors of the chunks embedded now are known (or known not to come)
        self._embedded = threading.Event()
        self._vectors: dict[str, np.ndarray] | None = None
        #: the embedder's ``batches_embedded`` once every chunk is embedded (at :meth:`publish`
        #: of held writes' vectors, else once every write is done: :meth:`finish`)
        self.embedder_batches: int | None = None

    def publish(self, prepared: Iterable[PreparedChunks] | None) -> None:
        """Hand over the vectors of every chunk embedded now, before they are stored (None: they
        will not all be known before the store has them); called once, by the writer."""
        if prepared is not None:
            # every chunk is embedded (held writes embed them all first): what the embedder sent
            # from now on is not the ingest's (a run's deduplication shares it)
            self.embedder_batches = self._embedder.batches_embedded
            self._vectors = {
                chunk.id: row
                for batch in prepared
                for chunk, row in zip(batch.new, batch.vectors, strict=True)
            }
        self._embedded.set()

    def get_embeddings(self, ids: Sequence[str]) -> np.ndarray:
        """The vectors of these chunks, one float32 row per id in the order asked (from any thread).

        When every one of them was embedded by this ingest and the writer has published them, they
        come from memory, while they may still be being stored; otherwise from the store, once
        every chunk is stored (:meth:`finish`; a failed write raises here)."""
        self._embedded.wait()
        vectors = self._vectors
        if vectors is not None and ids and all(i in vectors for i in ids):
            return np.asarray([vectors[i] for i in ids], dtype=np.float32)
        self.finish()
        return self._store.get_embeddings(ids)

    def raise_if_failed(self) -> None:
        """Raise the error of a write that failed so far, without waiting for the others."""
        self._writer.raise_if_failed()

    def finish(self) -> IngestReport:
        """Wait until every chunk is stored (from any thread; once is enough) and return the
        complete report; a failed write raises here."""
        with self._lock:
            if not self._done:
                try:
                    self._writer.finish()
                finally:
                    self._embedded.set()  # every write is over: nothing more is published
                self._done = True
                if self.embedder_batches is None:
                    self.embedder_batches = self._embedder.batches_embedded
                self.report.embedded = self._added.embedded
                self.report.reused += self._added.reused
                log_report(self.report)
        return self.report

    def close(self, then: Callable[[], None] | None = None) -> None:
        """Stop after the write under way (the others are dropped); raises nothing. For a caller
        that failed before :meth:`finish`. With ``then`` (closing the store), return at once:
        the write under way ends in the writer's thread, which calls ``then()`` after it (a run
        stopped by Ctrl-C does not wait for it to record that it stopped)."""
        with self._lock:
            if not self._done:
                self._done = True
                if then is not None:
                    self._writer.cancel_then(then)
                    then = None
                else:
                    self._writer.cancel()
        self._embedded.set()  # nothing more is published: a waiter reads the store
        if then is not None:
            then()


def log_report(report: IngestReport) -> None:
    counts = report.counts()
    logger.info(
        "ingest: %d files (%d ok, %d error, %d skipped; %d unchanged, not read), %d chunks, "
        "%d tokens, %d embedded, %d reused, %d earlier versions removed, into %s",
        len(report.files),
        counts["ok"],
        counts["error"],
        counts["skipped"],
        report.unchanged,
        report.chunks,
        report.tokens,
        report.embedded,
        report.reused,
        report.removed,
        report.collection,
    )


__all__ = ["PendingIngest", "log_report"]
