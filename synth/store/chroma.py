"""``ChunkStore``: chunks and their vectors in Chroma (its client in ``_chroma_client``).

Embedded by default (a PersistentClient under ``.synth/chroma`` in the working folder), or a Chroma
server when given ``url="http://host:port"``. One collection per embedder and chunking setup, in
cosine space, always fed our own vectors (Chroma's default embedding function would download a
model). Chunks already stored are never embedded again. Chroma's errors become StoreError here.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import sys
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from pydantic import BaseModel

from synth._ids import text_hash
from synth.data import Chunk
from synth.errors import ConfigError, StoreError
from synth.ingest import ChunkingConfig, as_chunking_config
from synth.llm._redact import redact_url
from synth.store._chroma_client import (
    chroma_errors,
    close_client,
    connect,
    open_collection,
    opening,
    with_scheme,
)
from synth.store._queries import column, query_matrix, source_filter
from synth.store.embedder import Embedder
from synth.store.embedders import make_embedder

logger = logging.getLogger("synth.store")

DEFAULT_STORE_PATH = ".synth/chroma"
#: records per page when reading a whole collection, or the chunks of some files: Chroma answers
#: each page of a filtered read by matching every row of the filter again, so a read should ask
#: for files that fit in one page (see synth.run.ingest.chunks_of_run)
READ_PAGE = 1000
#: vectors per read in :meth:`ChunkStore.get_embeddings`: Chroma answers a read with a Python
#: list of floats per vector, then a float64 array, about 15 KB a vector of 384 dimensions beside
#: what its own side holds; a read of Chroma's largest batch (5,461 ids) took 80 MB of Python
#: objects and 350 MB of the process's resident memory at once
_VECTORS_PER_READ = 512


#: what Chroma stores as a metadata value
MetadataValue = str | int | float | bool


class AddResult(BaseModel):
    """What one :meth:`ChunkStore.add` did."""

    embedded: int = 0  # chunks embedded and stored now
    reused: int = 0  # chunks already stored (or repeated in the same call): not embedded again


class PreparedChunks(NamedTuple):
    """Chunks ready to store: the new ones with their vectors, and what was already stored."""

    new: list[Chunk]
    vectors: np.ndarray  # one row per new chunk
    stored: set[str]  # ids already in the collection
    repeated: int  # chunks given more than once


class SourceStats(BaseModel):
    """How much of one source file is stored."""

    chunks: int = 0
    tokens: int = 0


# ---- a chunk as a Chroma record ----------------------------------------------------------------
# Chroma metadata holds only str, int, float and bool, never None: a missing page span is left out,
# and the chunk's own metadata dict travels as one JSON string, so the chunk is rebuilt exactly.
_EXTRA = "chunk_metadata"


def to_metadata(chunk: Chunk) -> dict[str, MetadataValue]:
    """The Chroma metadata of ``chunk`` (its text is stored as the record's document)."""
    meta: dict[str, MetadataValue] = {
        "source": chunk.source,
        "document_id": chunk.document_id,
        "index": chunk.index,
        "token_count": chunk.token_count,
    }
    if chunk.page_start is not None:
        meta["page_start"] = chunk.page_start
    if chunk.page_end is not None:
        meta["page_end"] = chunk.page_end
    if chunk.metadata:
        meta[_EXTRA] = json.dumps(chunk.metadata, ensure_ascii=False, sort_keys=True, default=str)
    return meta


#: every field of a Chunk, the set each rebuilt chunk shares as the fields it was given: all of
#: them are (a set of its own was 728 bytes a chunk, a third of a chunk read back from a store)
_EVERY_FIELD = set(Chunk.model_fields)


def from_record(chunk_id: str, text: str | None, meta: Mapping[str, Any] | None) -> Chunk:
    """Rebuild the Chunk stored under ``chunk_id``."""
    meta = meta or {}
    extra = meta.get(_EXTRA)
    chunk = Chunk(
        id=chunk_id,
        # a file's chunks share one string of its path and of its document's id, not one each
        document_id=sys.intern(str(meta.get("document_id", ""))),
        source=sys.intern(str(meta.get("source", ""))),
        index=int(meta.get("index", 0)),
        text=text or "",
        token_count=int(meta.get("token_count", 0)),
        page_start=_optional_int(meta.get("page_start")),
        page_end=_optional_int(meta.get("page_end")),
        metadata=json.loads(extra) if isinstance(extra, str) else {},
    )
    # setting a field adds its name to this set, which holds every name already
    object.__setattr__(chunk, "__pydantic_fields_set__", _EVERY_FIELD)
    return chunk


def _optional_int(value: Any) -> int | None:
    return None if value is None else int(value)


# ---- Collection names: from the embedder and the chunking parameters, never from a file name.
#
# A name reads like ``synth-hash-384-c1024o0-3f9c2a71d0``: a readable part (embedder spec, chunk
# size and overlap) cut to fit, then a digest of the full embedder identity and chunking config,
# so two setups that differ anywhere get different collections. Chroma's rules: 3-63 characters
# of ``[a-zA-Z0-9._-]``, starting and ending with an alphanumeric, no ``..``, not an IPv4
# address.
_PREFIX = "synth-"
_MAX = 63
_DIGEST = 10
_VALID = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9._-]*[a-zA-Z0-9]$")
_IPV4 = re.compile(r"^[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$")


def collection_name(embedder: Embedder, chunking: BaseModel) -> str:
    """The collection that holds ``embedder``'s vectors of chunks cut with ``chunking``."""
    params: dict[str, Any] = chunking.model_dump(mode="json")
    key = getattr(chunking, "key", None)
    if callable(key):  # ChunkingConfig.key() also carries the splitter version
        params["key"] = key()
    readable = f"{embedder.name}-c{params.get('chunk_size')}o{params.get('chunk_overlap')}"
    slug = re.sub(r"[^a-zA-Z0-9_-]+", "-", readable).strip("-_")
    blob = json.dumps(
        {"embedder": embedder.identity(), "chunking": params},
        sort_keys=True,
        separators=(",", ":"),
    )
    digest = text_hash(blob, _DIGEST)
    room = _MAX - len(_PREFIX) - len(digest) - 1
    slug = slug[:room].rstrip("-_")
    return f"{_PREFIX}{slug}-{digest}" if slug else f"{_PREFIX}{digest}"


def check_collection_name(name: str) -> str:
    """Return ``name`` when Chroma accepts it as a collection name, else raise ConfigError."""
    if (
        not isinstance(name, str)
        or not 3 <= len(name) <= _MAX
        or not _VALID.match(name)
        or ".." in name
        or _IPV4.match(name)
    ):
        raise ConfigError(
            f"invalid collection name {name!r}: use 3-63 letters, digits, '.', '_' or '-', "
            "starting and ending with a letter or digit"
        )
    return name


class ChunkStore:
    """Chunks of documents with their embeddings, in one Chroma collection.

    ``embedder`` is an :class:`Embedder` or a spec string (``None`` picks the default);
    ``chunking`` is the :class:`~synth.ingest.ChunkingConfig` the chunks were cut with (or its
    parameters as a dict). Both name the collection unless ``collection`` is given.

    A store whose folder is not there yet (:attr:`new`) makes the folder at once and opens Chroma
    at its first call: a first run has nothing stored to read, and its first write comes after
    the embeddings, while the run's first model requests are out (Chroma's import and client
    are 0.5 s of a core, which the first request no longer waits for).
    """

    def __init__(
        self,
        embedder: Embedder | str | None = None,
        *,
        path: str | os.PathLike[str] = DEFAULT_STORE_PATH,
        url: str | None = None,
        chunking: ChunkingConfig | Mapping[str, Any] | None = None,
        collection: str | None = None,
    ) -> None:
        self.embedder = make_embedder(embedder)
        self._owns_embedder = self.embedder is not embedder  # made here: closed by close()
        self.chunking = as_chunking_config(chunking)
        self.url = with_scheme(url) if url else url  # one spelling in every message, redacted
        self.path = None if url else Path(path)
        self.collection_name = (
            check_collection_name(collection)
            if collection is not None
            else collection_name(self.embedder, self.chunking)
        )
        self._lock = threading.RLock()  # one Chroma call at a time, whichever thread makes it
        #: the folder did not exist: nothing is stored yet
        self.new = self.path is not None and not self.path.exists()
        self._client: Any = None
        self._batch = 0
        self._closed = False
        self._opened = False  # Chroma was opened once (by _connect)
        try:
            if self.new:  # Chroma opens at the first call (see _calling); the folder is made now
                assert self.path is not None
                with chroma_errors(f"open the store at {self.path}", self.path):
                    self.path.mkdir(parents=True, exist_ok=True)
            else:
                self._connect()
        except BaseException:
            self._close_embedder()
            raise

    def _connect(self) -> None:
        """Open the client and the collection (once one process at a time may)."""
        with opening(self.path):
            client = connect(self.path, self.url)
            try:
                self._collection, self._batch = open_collection(
                    client, self.collection_name, self.embedder.name, self.chunking
                )
            except BaseException:
                close_client(client)
                raise
            self._client = client
            self._opened = True

    @property
    def known_empty(self) -> bool:
        """Nothing is stored, known without asking Chroma: the store is new and Chroma was never
        opened (it opens at the first call, so nothing was written through it)."""
        return self.new and not self._opened

    def rest(self) -> None:
        """Let an embedded store's Chroma go until a call needs it again (it is opened again then).

        Chroma keeps a collection's whole HNSW index in memory from its first call on, its own
        copy of every vector included: 330 MB at 200,000 chunks of 384 dimensions, held for the
        rest of a run that has read what it needs. A store on a server holds nothing here."""
        if self.path is None:
            return
        with self._lock:
            client, self._client = self._client, None
            if client is not None and not self._closed:
                with chroma_errors("close the store", self.path):
                    close_client(client)

    # ---- writing ---------------------------------------------------------------------------------
    def add(
        self,
        chunks: Iterable[Chunk],
        *,
        marks: Mapping[str, Mapping[str, MetadataValue]] | None = None,
        assume_new: bool = False,
    ) -> AddResult:
        """Store ``chunks``, embedding only those whose ids are not stored yet.

        ``marks`` maps chunk ids to extra metadata stored with those chunks (merged into the
        stored metadata of a chunk that is already there); marked chunks are stored after the
        others, so a mark never exists without the rest of its call's chunks. ``assume_new``
        skips looking up which ids are stored (for a caller that knows none is: Chroma would
        ignore a stored one).
        """
        return self.commit(self.prepare(chunks, assume_new=assume_new), marks=marks)

    def prepare(self, chunks: Iterable[Chunk], *, assume_new: bool = False) -> PreparedChunks:
        """The first half of :meth:`add`: find which chunks are new and embed them."""
        unique: dict[str, Chunk] = {}
        repeated = 0
        for chunk in chunks:
            if chunk.id in unique:
                repeated += 1
            else:
                unique[chunk.id] = chunk
        stored = set() if assume_new or not unique else self._existing_ids(list(unique))
        new = [chunk for chunk_id, chunk in unique.items() if chunk_id not in stored]
        vectors = self.embedder.embed_array([chunk.text for chunk in new], label="ingest")
        return PreparedChunks(new, vectors, stored, repeated)

    def commit(
        self,
        prepared: PreparedChunks,
        *,
        marks: Mapping[str, Mapping[str, MetadataValue]] | None = None,
    ) -> AddResult:
        """The second half of :meth:`add`: store what :meth:`prepare` made, with ``marks``."""
        marks = marks or {}
        order = sorted(range(len(prepared.new)), key=lambda i: prepared.new[i].id in marks)
        step = min(self._max_batch, max(self.embedder.batch_size, 1) * 8)
        for start in range(0, len(order), step):
            rows = order[start : start + step]
            batch = [prepared.new[i] for i in rows]
            with self._calling("add chunks"):
                self._collection.add(
                    ids=[chunk.id for chunk in batch],
                    embeddings=prepared.vectors[rows],
                    documents=[chunk.text for chunk in batch],
                    metadatas=[
                        {**to_metadata(chunk), **marks.get(chunk.id, {})} for chunk in batch
                    ],
                )
        self.update_metadata({i: mark for i, mark in marks.items() if i in prepared.stored})
        return AddResult(
            embedded=len(prepared.new), reused=len(prepared.stored) + prepared.repeated
        )

    def update_metadata(self, updates: Mapping[str, Mapping[str, MetadataValue]]) -> None:
        """Merge ``updates`` (chunk id -> metadata keys) into stored chunks' metadata."""
        for batch in self._batches(list(updates)):
            with self._calling("update chunk metadata"):
                self._collection.update(ids=batch, metadatas=[dict(updates[i]) for i in batch])

    def delete_documents(self, document_ids: Iterable[str]) -> None:
        """Remove every stored chunk of these documents (by ``Chunk.document_id``)."""
        for batch in self._batches(sorted(set(document_ids))):
            where = (
                {"document_id": batch[0]} if len(batch) == 1 else {"document_id": {"$in": batch}}
            )
            with self._calling("delete chunks"):
                self._collection.delete(where=where)

    # ---- reading ---------------------------------------------------------------------------------
    def count(self) -> int:
        """How many chunks are stored."""
        with self._calling("count chunks"):
            return int(self._collection.count())

    def get(self, ids: Sequence[str], *, missing_ok: bool = False) -> list[Chunk]:
        """The stored chunks with these ids, in the order asked; StoreError names missing ids
        (``missing_ok``: those not stored are left out instead)."""
        records = self._get_by_ids(
            list(ids), include=["documents", "metadatas"], missing_ok=missing_ok
        )
        return [
            from_record(i, records[i]["document"], records[i]["metadata"])
            for i in ids
            if i in records
        ]

    def get_embeddings(self, ids: Sequence[str]) -> np.ndarray:
        """The stored vectors of these chunks, one unit row per id in the order asked (float32)."""
        ids = list(ids)
        if not ids:
            return np.zeros((0, self.embedder.dimension), dtype=np.float32)
        # each batch's vectors go straight into one matrix: a run reads every chunk's vectors
        # at once, and a dict of the batches' rows, then a list of them, then the matrix held
        # three copies of a store's vectors (900 MB for 200,000 chunks of 384 dimensions)
        unique = list(dict.fromkeys(ids))
        place = {chunk_id: row for row, chunk_id in enumerate(unique)}
        matrix: np.ndarray | None = None
        found = np.zeros(len(unique), dtype=bool)
        step = min(self._max_batch, _VECTORS_PER_READ)
        for start in range(0, len(unique), step):
            with self._calling("get chunks"):
                answer = self._collection.get(
                    ids=unique[start : start + step], include=["embeddings"]
                )
            rows = [place[chunk_id] for chunk_id in answer["ids"]]
            if not rows:
                continue
            vectors = np.asarray(answer["embeddings"], dtype=np.float32)
            if matrix is None:  # the stored length, whatever the embedder says
                matrix = np.zeros((len(unique), vectors.shape[1]), dtype=np.float32)
            matrix[rows] = vectors
            found[rows] = True
        if matrix is None or not found.all():  # StoreError names the ids missing
            self._get_by_ids([unique[row] for row in np.flatnonzero(~found)], include=[])
        assert matrix is not None
        if len(unique) == len(ids):
            return matrix
        return matrix[[place[chunk_id] for chunk_id in ids]]

    def chunks(self, source: str | Sequence[str] | None = None) -> list[Chunk]:
        """Every stored chunk (or those of one source file, or of several), ordered by source then
        index."""
        where = source_filter(source)
        found = [
            from_record(chunk_id, document, metadata)
            for chunk_id, document, metadata in self._scan(where, ["documents", "metadatas"])
        ]
        return sorted(found, key=lambda chunk: (chunk.source, chunk.index, chunk.id))

    def ids(self, source: str | None = None) -> list[str]:
        """The ids of every stored chunk (or those of one source file), in no particular order."""
        where = {"source": source} if source is not None else None
        return [chunk_id for chunk_id, _, _ in self._scan(where, [])]

    def first_chunks(self) -> Iterator[tuple[str, Mapping[str, Any]]]:
        """The id and stored metadata of each stored document's first chunk (index 0)."""
        for chunk_id, _, metadata in self._scan({"index": 0}, ["metadatas"]):
            yield chunk_id, metadata or {}

    def sources(self) -> dict[str, SourceStats]:
        """Each stored source file with its number of chunks and tokens, sorted by path."""
        stats: dict[str, SourceStats] = {}
        for _, _, metadata in self._scan(None, ["metadatas"]):
            source = str((metadata or {}).get("source", ""))
            entry = stats.setdefault(source, SourceStats())
            entry.chunks += 1
            entry.tokens += int((metadata or {}).get("token_count", 0))
        return dict(sorted(stats.items()))

    def query(
        self,
        embeddings: np.ndarray | Sequence[Sequence[float]],
        n_results: int = 10,
        *,
        source: str | Sequence[str] | None = None,
        exclude_ids: Iterable[str] | None = None,
    ) -> list[list[tuple[str, float]]]:
        """The nearest stored chunks to each query vector, as ``(chunk_id, cosine_similarity)``.

        One list per query vector, most similar first, at most ``n_results`` long. ``source``
        keeps chunks of that file (or those files); ``exclude_ids`` are never returned.
        Similarity is the true cosine, ``1 - cosine distance``, in [-1, 1].
        """
        return [
            [(hit[0], hit[1]) for hit in hits]
            for hits in self._nearest(embeddings, n_results, source, exclude_ids, [])
        ]

    def query_chunks(
        self,
        embeddings: np.ndarray | Sequence[Sequence[float]],
        n_results: int = 10,
        *,
        source: str | Sequence[str] | None = None,
    ) -> list[list[tuple[Chunk, float, np.ndarray]]]:
        """:meth:`query` with each hit's chunk and stored vector: ``(chunk, similarity, vector)``,
        in one store call where :meth:`query`, :meth:`get` and :meth:`get_embeddings` take three."""
        include = ["documents", "metadatas", "embeddings"]
        return [
            [
                (
                    from_record(chunk_id, answer["documents"][row], answer["metadatas"][row]),
                    similarity,
                    np.asarray(answer["embeddings"][row], dtype=np.float32),
                )
                for chunk_id, similarity, answer, row in hits
            ]
            for hits in self._nearest(embeddings, n_results, source, None, include)
        ]

    def _nearest(
        self,
        embeddings: np.ndarray | Sequence[Sequence[float]],
        n_results: int,
        source: str | Sequence[str] | None,
        exclude_ids: Iterable[str] | None,
        include: list[str],
    ) -> list[list[tuple[str, float, dict[str, Any], int]]]:
        """Per query vector: ``(chunk_id, similarity, answer, row)`` of its hits, where ``row``
        indexes the query's own lists in ``answer`` (for the fields in ``include``)."""
        queries = query_matrix(embeddings, n_results)
        excluded = set(exclude_ids or ())
        if len(queries) == 0:
            return []
        # Chroma answers with fewer when fewer are stored (none from an empty collection), so
        # there is no count to ask first
        fetch = n_results + len(excluded)
        where = source_filter(source)
        results: list[list[tuple[str, float, dict[str, Any], int]]] = []
        for start in range(0, len(queries), self._max_batch):
            batch = queries[start : start + self._max_batch]
            with self._calling("query"):
                answer = self._collection.query(
                    query_embeddings=batch,
                    n_results=fetch,
                    where=where,
                    include=["distances", *include],  # type: ignore[list-item]
                )
            for number, (ids, distances) in enumerate(
                zip(answer["ids"], answer["distances"] or [], strict=True)
            ):
                own = {key: column(answer, key, number) for key in include}
                hits = [
                    (chunk_id, 1.0 - float(distance), own, row)
                    for row, (chunk_id, distance) in enumerate(zip(ids, distances, strict=True))
                    if chunk_id not in excluded
                ]
                results.append(hits[:n_results])
        return results

    def search(
        self,
        texts: Sequence[str],
        n_results: int = 10,
        *,
        source: str | Sequence[str] | None = None,
        exclude_ids: Iterable[str] | None = None,
    ) -> list[list[tuple[str, float]]]:
        """Embed ``texts`` with this store's embedder and :meth:`query` with them."""
        return self.query(
            self.embedder.embed_array(texts), n_results, source=source, exclude_ids=exclude_ids
        )

    def describe(self) -> dict[str, Any]:
        """Where the chunks live and what made them (for reports; never a key)."""
        return {
            "collection": self.collection_name,
            "location": redact_url(self.url) or str(self.path),
            "embedder": self.embedder.name,
            "chunking": self.chunking.model_dump(mode="json"),
        }

    def close(self) -> None:
        """Release the Chroma client (its files, or its HTTP connections) and an embedder made
        from a spec; safe to call twice."""
        with self._lock:
            closed, self._closed = self._closed, True
            client = self._client
        if not closed:
            if client is not None:  # None: resting (see rest)
                close_client(client)
            self._close_embedder()

    def _close_embedder(self) -> None:
        if self._owns_embedder:
            self.embedder.close()

    def __enter__(self) -> ChunkStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        where = redact_url(self.url) or str(self.path)
        return f"ChunkStore({self.collection_name!r} at {where!r})"

    # ---- internals ---------------------------------------------------------------------------------
    @property
    def _max_batch(self) -> int:
        """The largest batch the client takes (Chroma opened for it when it is not yet)."""
        self._open()
        return self._batch

    @_max_batch.setter
    def _max_batch(self, size: int) -> None:
        self._open()
        self._batch = size

    def _open(self) -> None:
        if self._client is None:
            with self._calling("open the store"):
                pass

    @contextlib.contextmanager
    def _calling(self, action: str) -> Iterator[None]:
        """One Chroma call: alone (a background writer may share this store), errors translated."""
        with self._lock, chroma_errors(action, self.path):
            if self._closed:
                raise StoreError(f"the store at {self.path or redact_url(self.url)} is closed")
            if self._client is None:  # resting: opened again
                self._connect()
            yield

    def _batches(self, ids: list[str]) -> Iterator[list[str]]:
        """``ids`` in batches of the client's largest (none, and Chroma not opened, when empty)."""
        for start in range(0, len(ids), step := self._max_batch if ids else 1):
            yield ids[start : start + step]

    def _existing_ids(self, ids: list[str]) -> set[str]:
        found: set[str] = set()
        for batch in self._batches(ids):
            with self._calling("look up stored chunks"):
                answer = self._collection.get(ids=batch, include=[])
            found.update(answer["ids"])
        return found

    def _get_by_ids(
        self, ids: list[str], include: list[str], missing_ok: bool = False
    ) -> dict[str, dict[str, Any]]:
        records: dict[str, dict[str, Any]] = {}
        unique = list(dict.fromkeys(ids))
        for start in range(0, len(unique), self._max_batch):
            with self._calling("get chunks"):
                answer = self._collection.get(
                    ids=unique[start : start + self._max_batch], include=include
                )
            for row, chunk_id in enumerate(answer["ids"]):
                records[chunk_id] = {
                    "document": column(answer, "documents", row),
                    "metadata": column(answer, "metadatas", row),
                    "embedding": column(answer, "embeddings", row),
                }
        missing = [] if missing_ok else [i for i in unique if i not in records]
        if missing:
            shown = ", ".join(repr(m) for m in missing[:5])
            more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
            raise StoreError(
                f"{len(missing)} chunk id(s) not in collection {self.collection_name!r}: "
                f"{shown}{more}"
            )
        return records

    def _scan(
        self, where: dict[str, Any] | None, include: list[str]
    ) -> Iterator[tuple[str, str | None, Mapping[str, Any] | None]]:
        offset = 0
        while True:
            with self._calling("read chunks"):
                answer = self._collection.get(
                    where=where, include=include, limit=READ_PAGE, offset=offset
                )
            ids = answer["ids"]
            for row, chunk_id in enumerate(ids):
                yield (
                    chunk_id,
                    column(answer, "documents", row),
                    column(answer, "metadatas", row),
                )
            if len(ids) < READ_PAGE:
                return
            offset += len(ids)


__all__ = [
    "DEFAULT_STORE_PATH",
    "READ_PAGE",
    "AddResult",
    "ChunkStore",
    "MetadataValue",
    "PreparedChunks",
    "SourceStats",
]
