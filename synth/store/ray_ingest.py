"""Ingest on a Ray cluster: files read, chunked and embedded as Ray tasks, stored by this process.

This process walks the folders and makes the skip-unchanged check (``FileMemory.skip``: each
file's stat, and its SHA-256 when that is not enough) exactly as a single-process ingest does.
Each file to read becomes one task running what this process would run, ``load_file``,
``iter_chunks`` and the embedder, and sending back the file's status, chunks and vectors. The
results are taken in walk order, and the one writer here stores them (in an embedded store or a
Chroma server), so the report, the chunk ids and the fingerprints are a single-process ingest's.

The embedder is made in each worker from its spec (once per worker process) when the spec makes
the same embedder, else shipped as it is; the local neural one runs on a GPU where the cluster
has them (each task then asks Ray for a share of one). A remote embedder (``openai:...``) is not run in the
tasks: its key stays in this process, with the run's rate limits and usage counts; the workers
then only read and chunk. Every node must see the files at the same path (a shared file system).
Ray is the optional ``ray`` extra, imported only here, when an ingest asks for it.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from synth.data import Chunk
from synth.errors import ConfigError
from synth.ingest import (
    ChunkingConfig,
    FileStatus,
    FileToLoad,
    LoadedFile,
    SkipHook,
    iter_files,
    read_chunked,
)
from synth.ingest.web import WebOptions
from synth.store._reads import FileRead, web_options
from synth.store.embedder import Embedder
from synth.store.embedders import make_embedder
from synth.store.local_embedder import LocalEmbedder

if TYPE_CHECKING:
    from synth.store.chroma import ChunkStore

logger = logging.getLogger("synth.store")

#: the address that starts a Ray for the ingest alone, in this machine, and stops it after
LOCAL = "local"
#: files in flight per CPU of the cluster: a worker done with one file finds the next waiting
FILES_PER_CPU = 2

#: how a worker makes the embedder: its spec and batch size, or the embedder itself
EmbedderSpec = tuple[str, int] | Embedder | None


def ray_address(value: str | bool | None) -> str | None:
    """The Ray address an ingest option names: None for none, :data:`LOCAL` for True or ``""``."""
    if value is None or value is False:
        return None
    if value is True or not str(value).strip():
        return LOCAL
    return str(value).strip()


class RayReads:
    """Reads an ingest's files as Ray tasks on the cluster at ``address`` (see the module
    docstring); ``embedder`` is the store's, served with the vectors the workers made."""

    def __init__(self, address: str | bool, embedder: Embedder) -> None:
        self.address = ray_address(address) or LOCAL
        self.embedder = ServedEmbedder(embedder)
        self._spec = worker_spec(embedder)
        #: files sent to the cluster (each one task), for reports and the bench
        self.tasks = 0

    def __call__(
        self,
        paths: Sequence[str | os.PathLike[str]],
        store: ChunkStore,
        *,
        password: str | None,
        skip: SkipHook,
        web: WebOptions | None = None,
    ) -> Iterator[FileRead]:
        ray = _import_ray()
        started = connect(ray, self.address)
        options = web_options(web, store)  # pages are fetched here, their mirror files read there
        try:
            yield from self._reads(ray, paths, store.chunking, password, skip, options)
        finally:
            if started:
                ray.shutdown()

    def _reads(
        self,
        ray: Any,
        paths: Sequence[str | os.PathLike[str]],
        chunking: ChunkingConfig,
        password: str | None,
        skip: SkipHook,
        web: WebOptions | None = None,
    ) -> Iterator[FileRead]:
        resources = ray.cluster_resources()
        task = ray.remote(read_file).options(**task_resources(resources, self._spec))
        spec = ray.put(self._spec)  # once, not with every file
        window = FILES_PER_CPU * max(1, int(resources.get("CPU", 1)))
        waiting: deque[Any] = deque()  # LoadedFile (nothing to read) or a task's ObjectRef
        for item in iter_files(paths, password=password, skip=skip, web=web):
            if isinstance(item, LoadedFile):
                waiting.append(item)
            else:
                waiting.append(task.remote(item, chunking, spec))
                self.tasks += 1
            while len(waiting) > window:
                yield self._take(ray, waiting.popleft())
        while waiting:
            yield self._take(ray, waiting.popleft())

    def _take(self, ray: Any, head: Any) -> FileRead:
        if isinstance(head, LoadedFile):
            return FileRead(head.status)
        status, document_id, chunks, vectors = ray.get(head)
        if vectors is not None:
            self.embedder.offer(chunks, vectors)
        return FileRead(status, document_id, chunks)


def read_file(
    item: FileToLoad, chunking: ChunkingConfig, spec: EmbedderSpec
) -> tuple[FileStatus, str | None, list[Chunk], np.ndarray | None]:
    """One file read, chunked and (unless ``spec`` is None) embedded: the task each worker runs."""
    status, document_id, chunks = read_chunked(item, chunking)
    vectors = None
    if spec is not None and chunks:
        vectors = _worker_embedder(spec).embed_array([c.text for c in chunks], label="ingest")
    return status, document_id, chunks, vectors


def task_resources(cluster: Mapping[str, float], spec: EmbedderSpec) -> dict[str, float]:
    """What each file's task asks Ray for: one CPU, and when the workers run the local neural
    embedder on a cluster with GPUs, a share of one (GPUs / CPUs, so every CPU gets a task): Ray
    hides the GPUs from a task that asks for none, and sentence-transformers would use the CPU."""
    gpus, cpus = float(cluster.get("GPU", 0)), float(cluster.get("CPU", 1))
    neural = isinstance(spec, LocalEmbedder) or (
        isinstance(spec, tuple) and spec[0].startswith("local:")
    )
    if gpus <= 0 or not neural:
        return {"num_cpus": 1}
    return {"num_cpus": 1, "num_gpus": min(1.0, gpus / max(cpus, 1.0))}


def worker_spec(embedder: Embedder) -> EmbedderSpec:
    """How the workers get ``embedder``: None (a remote one stays here), its spec when the spec
    makes the same embedder again, else the embedder itself (it must pickle)."""
    if embedder.remote:
        return None
    try:
        again = make_embedder(embedder.name, batch_size=embedder.batch_size)
    except ConfigError:
        return embedder
    if type(again) is type(embedder) and again.identity() == embedder.identity():
        return (embedder.name, embedder.batch_size)
    return embedder


#: the embedders made in this worker process, by spec (a model loads once per worker)
_EMBEDDERS: dict[tuple[str, int], Embedder] = {}


def _worker_embedder(spec: tuple[str, int] | Embedder) -> Embedder:
    if isinstance(spec, Embedder):
        return spec
    if spec not in _EMBEDDERS:
        _EMBEDDERS[spec] = make_embedder(spec[0], batch_size=spec[1])
    return _EMBEDDERS[spec]


#: seconds a cluster's address has to accept a connection before joining it is given up
PROBE_SECONDS = 5.0
#: the port of a ``ray://`` address that names none (Ray Client's)
CLIENT_PORT = 10001


def probe(address: str) -> None:
    """Raise ConfigError, one line, when nothing accepts a connection at ``address`` (a
    ``host:port`` or ``ray://host[:port]``; ``auto`` is Ray's to find) within
    :data:`PROBE_SECONDS`. Ray itself waits for a cluster that is not there for minutes, its
    retries filling stderr, before it gives up."""
    client = address.startswith("ray://")
    where = address.removeprefix("ray://").split("/", 1)[0]
    host, sep, port = where.rpartition(":")
    if not sep:
        host, port = where, str(CLIENT_PORT) if client else ""
    if not host or not port.isdigit():
        return  # not a host and port (``auto``): Ray's to resolve
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=PROBE_SECONDS).close()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ConfigError(
            f"cannot join the Ray cluster at {address}: nothing answers at {host}:{port} ({reason})"
        ) from None


def connect(ray: Any, address: str) -> bool:
    """Join the Ray cluster at ``address`` (or start one here, for :data:`LOCAL`); True when this
    call started Ray in this process (and so must shut it down)."""
    if ray.is_initialized():
        return False
    if address != LOCAL:
        probe(address)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    options: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False}
    if address == LOCAL:
        options["include_dashboard"] = False
    try:
        ray.init(address=address, **options)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"cannot join the Ray cluster at {address}: {first}") from None
    return True


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "ingest with Ray needs the 'ray' extra: pip install 'synth[ray]'"
        ) from None
    return ray


# ---- ``ServedEmbedder``: the vectors of chunks embedded elsewhere (by Ray workers), served to
# the store.
#
# The store asks its embedder for the vectors of the chunks it does not hold yet, by text. A text
# whose vector a worker sent back is answered from memory, and let go; any other text is embedded
# by the embedder it stands for. Its name, identity and dimension are that embedder's, so the
# store's collection, the files' fingerprints and the run's counts are those of a single-process
# ingest.
class ServedEmbedder(Embedder):
    """``inner``, with the vectors handed over by :meth:`offer` served without embedding again."""

    def __init__(self, inner: Embedder) -> None:
        super().__init__(batch_size=inner.batch_size)
        self.inner = inner
        self.name = inner.name
        self.remote = inner.remote
        self.notice = inner.notice
        self._vectors: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()  # offered by the reading thread, taken by the writer's

    # the counts are the inner embedder's: what it embedded here, never what a worker did
    batches_embedded = property(lambda self: self.inner.batches_embedded, lambda self, value: None)
    texts_embedded = property(lambda self: self.inner.texts_embedded, lambda self, value: None)

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def identity(self) -> dict[str, Any]:
        return self.inner.identity()

    def offer(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> None:
        """Keep the vectors a worker made for ``chunks`` (unit rows, in the chunks' order)."""
        with self._lock:
            for chunk, row in zip(chunks, vectors, strict=True):
                self._vectors[chunk.text] = row

    def embed_array(self, texts: Sequence[str], *, label: str | None = None) -> np.ndarray:
        """The offered vectors of ``texts``, the others embedded by the inner embedder."""
        texts = list(texts)
        with self._lock:
            served = [self._vectors.pop(text, None) for text in texts]
        missing = [text for text, row in zip(texts, served, strict=True) if row is None]
        fresh = iter(self.inner.embed_array(missing, label=label) if missing else ())
        rows = [row if row is not None else next(fresh) for row in served]
        if not rows:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.asarray(rows, dtype=np.float32)

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        return self.inner.embed_array(texts)

    def share(self, *, limiter: Any = None, usage: Any = None) -> None:
        self.inner.share(limiter=limiter, usage=usage)


__all__ = [
    "LOCAL",
    "RayReads",
    "connect",
    "ray_address",
    "read_file",
    "task_resources",
    "worker_spec",
]
