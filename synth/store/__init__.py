"""Embedders, the Chroma chunk store, and ``ingest_documents``: load, chunk, embed and store.

Each name is imported from its module the first time it is read (as :mod:`synth` does), so that
a module of this package (an embedder, the readers' hook) can be imported without Chroma's side
of it (numpy, the embedders, the SDK's error types).
"""

import typing as _typing

from synth._lazy import lazy_names as _lazy_names

if _typing.TYPE_CHECKING:
    from synth.store.chroma import DEFAULT_STORE_PATH, AddResult, ChunkStore, SourceStats
    from synth.store.embedder import Embedder
    from synth.store.embedders import make_embedder
    from synth.store.hash_embedder import HashEmbedder
    from synth.store.ingest_run import IngestedFile, IngestReport, ingest_documents
    from synth.store.local_embedder import LocalEmbedder
    from synth.store.openai_embedder import OpenAIEmbedder

#: each public name's module
_HOME = {
    "DEFAULT_STORE_PATH": "synth.store.chroma",
    "AddResult": "synth.store.chroma",
    "ChunkStore": "synth.store.chroma",
    "SourceStats": "synth.store.chroma",
    "Embedder": "synth.store.embedder",
    "make_embedder": "synth.store.embedders",
    "HashEmbedder": "synth.store.hash_embedder",
    "IngestedFile": "synth.store.ingest_run",
    "IngestReport": "synth.store.ingest_run",
    "ingest_documents": "synth.store.ingest_run",
    "LocalEmbedder": "synth.store.local_embedder",
    "OpenAIEmbedder": "synth.store.openai_embedder",
}


__getattr__, __dir__ = _lazy_names(globals(), _HOME)

__all__ = [
    "DEFAULT_STORE_PATH",
    "AddResult",
    "ChunkStore",
    "Embedder",
    "HashEmbedder",
    "IngestReport",
    "IngestedFile",
    "LocalEmbedder",
    "OpenAIEmbedder",
    "SourceStats",
    "ingest_documents",
    "make_embedder",
]
