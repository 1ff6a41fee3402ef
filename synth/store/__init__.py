"""Embedders, the Chroma chunk store, and ``ingest_documents``: load, chunk, embed and store."""

from synth.store.chroma import DEFAULT_STORE_PATH, AddResult, ChunkStore, SourceStats
from synth.store.embedder import Embedder
from synth.store.embedders import make_embedder
from synth.store.hash_embedder import HashEmbedder
from synth.store.ingest_run import IngestedFile, IngestReport, ingest_documents
from synth.store.local_embedder import LocalEmbedder
from synth.store.openai_embedder import OpenAIEmbedder

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
