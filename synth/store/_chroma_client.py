"""The Chroma client under a ChunkStore: connecting (one process at a time to a folder), opening
the collection, closing, and chromadb's errors as StoreError. With ``chroma.py``, the only module
that imports chromadb, which it does inside the functions that need it.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlsplit

from synth._files import disk_full, file_in_the_way
from synth.errors import ConfigError, StoreError
from synth.ingest import ChunkingConfig
from synth.llm._redact import redact_text, redact_url

#: the file in an embedded store's folder that one process at a time locks to open the store
OPENING_LOCK = ".synth-opening.lock"


@contextlib.contextmanager
def opening(path: Path | None) -> Iterator[None]:
    """For an embedded store (``path``): hold the folder's opening lock, so one process at a time
    opens it. Chroma makes its tables the first time a folder is opened, and two processes doing
    that at once fail with "table collections already exists" (two first runs in one folder);
    the second now waits for the first, then opens the store it made. A server (``path`` None)
    needs no lock, nor does a platform without ``fcntl``."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover (not on this platform)
        fcntl = None  # type: ignore[assignment]
    if path is None or fcntl is None:
        yield
        return
    with chroma_errors(f"open the store at {path}", path):
        path.mkdir(parents=True, exist_ok=True)
        handle = open(path / OPENING_LOCK, "a")  # noqa: SIM115 (closed below, which unlocks)
    with handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)  # Ctrl-C while waiting ends the wait
        yield


def connect(path: Path | None, url: str | None) -> Any:
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False)
    if url is None:
        assert path is not None
        with chroma_errors(f"open the store at {path}", path):
            path.mkdir(parents=True, exist_ok=True)
            return chromadb.PersistentClient(path=str(path), settings=settings)
    host, port, ssl = parse_url(url)
    with chroma_errors(f"connect to the Chroma server at {url}"):  # redacted by chroma_errors
        return chromadb.HttpClient(host=host, port=port, ssl=ssl, settings=settings)


def close_client(client: Any) -> None:
    """Close a chromadb client, and for a server client its HTTP connection pools too.

    chromadb's ``close()`` releases the client's system but leaves the HTTP sessions (the
    client's and its admin client's) open until garbage collection. Every HttpClient has systems
    of its own, so closing those sessions touches no other client.
    """
    sessions = [
        getattr(getattr(owner, "_server", None), "_session", None)
        for owner in (client, getattr(client, "_admin_client", None))
    ]
    with chroma_errors("close the store"):
        client.close()
    for session in sessions:
        if session is not None and hasattr(session, "close"):
            session.close()


def with_scheme(url: str) -> str:
    """``url`` with ``http://`` in front when it has no scheme (``host:port`` is accepted)."""
    return url if "://" in url else f"http://{url}"


def parse_url(url: str) -> tuple[str, int, bool]:
    parts = urlsplit(with_scheme(url))
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"store URL must look like http://host:port, got {redact_url(url)!r}")
    if parts.path not in ("", "/") or parts.query:
        raise ConfigError(
            f"store URL must be http://host:port without a path, got {redact_url(url)!r}"
        )
    try:
        port = parts.port
    except ValueError:
        raise ConfigError(f"store URL has an invalid port: {redact_url(url)!r}") from None
    ssl = parts.scheme == "https"
    return parts.hostname, port or (443 if ssl else 8000), ssl


#: what chromadb's errors say when the disk is full (its own words, SQLite's, the OS's)
_FULL_DISK_WORDS = ("no space left", "disk is full", "os error 28", "quota exceeded")
#: free space below which a store's disk counts as full when Chroma fails there (chromadb says
#: "Error in compaction" and little more when its files cannot grow)
FULL_BELOW = 16 * 2**20


@contextlib.contextmanager
def chroma_errors(action: str, folder: Path | None = None) -> Iterator[None]:
    """Turn what chromadb (and its HTTP client) raises into StoreError; for an embedded store in
    ``folder``, a failure on a full disk is said as such (chromadb's errors are looked up, not
    imported)."""
    import httpx

    try:
        yield
    except (ValueError, httpx.HTTPError, OSError, StoreError) as exc:
        if isinstance(exc, ConfigError | StoreError):
            raise
        _translate(exc, action, folder)
    except Exception as exc:
        errors = sys.modules.get("chromadb.errors")
        if errors is None or not isinstance(exc, errors.ChromaError):
            raise
        _translate(exc, action, folder)


def disk_full_at(message: str, folder: Path | None) -> bool:
    """Whether a Chroma failure with ``message`` in ``folder`` came from a full disk: its words
    say so, or the folder's disk has less than :data:`FULL_BELOW` bytes free."""
    if any(words in message.lower() for words in _FULL_DISK_WORDS):
        return True
    if folder is None:
        return False
    try:
        return shutil.disk_usage(folder).free < FULL_BELOW
    except OSError:
        return False


def _translate(exc: BaseException, action: str, folder: Path | None = None) -> NoReturn:
    """Raise ``exc`` again as one StoreError line, with any key redacted."""
    blocker = file_in_the_way(folder, exc) if folder is not None else None
    if blocker is not None:  # "d.jsonl is a file, not a folder", not "[Errno 17] File exists"
        raise StoreError(f"cannot {action}: {blocker} is a file, not a folder") from None
    message = " ".join(str(exc).split()) or type(exc).__name__
    if disk_full_at(message, folder) or disk_full(exc):
        where = f" holding {folder}" if folder is not None else ""
        raise StoreError(
            f"cannot {action}: the disk{where} is full; free some space and run the same "
            f"command again (Chroma said: {message[:300]})"
        ) from exc
    clean = redact_text(f"cannot {action}: {message}")
    if clean != f"cannot {action}: {message}":  # chromadb's exception may hold it too
        raise StoreError(clean) from None
    raise StoreError(clean) from exc


def open_collection(
    client: Any, name: str, embedder: str, chunking: ChunkingConfig
) -> tuple[Any, int]:
    """The collection ``name`` (made in cosine space when missing, labelled with ``embedder``, the
    embedder's name, and the ``chunking``) and the client's largest batch. StoreError when the
    collection is not in cosine space or holds another embedder's vectors."""
    with chroma_errors("open the collection"):
        max_batch = max(1, int(client.get_max_batch_size()))
        collection = client.get_or_create_collection(
            name,
            configuration={"hnsw": {"space": "cosine"}},
            metadata=_collection_metadata(embedder, chunking),
            embedding_function=None,
        )
    _check_collection(collection, name, embedder)
    return collection, max_batch


def _collection_metadata(
    embedder: str, chunking: ChunkingConfig
) -> dict[str, str | int | float | bool]:
    params = chunking.model_dump(mode="json")
    meta: dict[str, str | int | float | bool] = {"synth_embedder": embedder}
    for key, value in params.items():
        if isinstance(value, str | int | float | bool):
            meta[f"synth_{key}"] = value
    return meta


def _check_collection(collection: Any, name: str, embedder: str) -> None:
    """Refuse a collection that is not in cosine space or holds another embedder's vectors."""
    with warnings.catch_warnings():
        # reading the configuration of a collection made without an embedding function warns
        warnings.simplefilter("ignore", DeprecationWarning)
        with chroma_errors("read the collection configuration"):
            config = collection.configuration or {}
    hnsw = config.get("hnsw") or {}
    space = hnsw.get("space") if isinstance(hnsw, Mapping) else None
    if space is not None and space != "cosine":
        raise StoreError(
            f"collection {name!r} uses {space!r} distance, not cosine; "
            "choose another collection name"
        )
    owner = (collection.metadata or {}).get("synth_embedder")
    if owner is not None and owner != embedder:
        raise StoreError(
            f"collection {name!r} holds vectors from {owner}, "
            f"not {embedder}; choose another collection name"
        )


#: records per page when reading another program's collection
RECORDS_PER_READ = 1000


def read_records(
    path: Path | None, url: str | None, name: str
) -> Iterator[tuple[list[str], list[Any], list[Any], list[Any]]]:
    """Every record of the collection ``name`` (made by any program), a page at a time:
    ``(ids, documents, metadatas, embeddings)``. Opened with no embedding function, so nothing
    is ever embedded by Chroma's default one; StoreError when it cannot be opened or read."""
    client = connect(path, url)
    try:
        with chroma_errors(f"open the collection {name!r}", path):
            collection = client.get_collection(name, embedding_function=None)
        offset = 0
        while True:
            with chroma_errors(f"read the collection {name!r}", path):
                answer = collection.get(
                    include=["documents", "metadatas", "embeddings"],
                    limit=RECORDS_PER_READ,
                    offset=offset,
                )
            ids = list(answer["ids"])
            if ids:
                yield (
                    ids,
                    list(answer.get("documents") or [None] * len(ids)),
                    list(answer.get("metadatas") or [None] * len(ids)),
                    list(answer["embeddings"] if answer.get("embeddings") is not None else []),
                )
            if len(ids) < RECORDS_PER_READ:
                return
            offset += len(ids)
    finally:
        close_client(client)


__all__ = [
    "OPENING_LOCK",
    "RECORDS_PER_READ",
    "chroma_errors",
    "close_client",
    "connect",
    "disk_full_at",
    "open_collection",
    "opening",
    "parse_url",
    "read_records",
    "with_scheme",
]
