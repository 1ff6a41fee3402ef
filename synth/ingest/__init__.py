"""Ingest: read files into Documents (one reader per format) and cut them into Chunks."""

from synth.ingest.chunking import (
    ChunkingConfig,
    as_chunking_config,
    chunk_documents,
    iter_chunks,
    make_chunking_config,
)
from synth.ingest.load import (
    FileToLoad,
    SkipHook,
    iter_files,
    iter_load,
    load_documents,
    load_file,
    read_chunked,
)
from synth.ingest.registry import (
    Loader,
    register_loader,
    registered_loaders,
    unregister_loader,
)
from synth.ingest.report import FileStatus, LoadedFile, LoadReport

__all__ = [
    "ChunkingConfig",
    "FileStatus",
    "FileToLoad",
    "LoadReport",
    "LoadedFile",
    "Loader",
    "SkipHook",
    "as_chunking_config",
    "chunk_documents",
    "iter_chunks",
    "iter_files",
    "iter_load",
    "load_documents",
    "load_file",
    "make_chunking_config",
    "read_chunked",
    "register_loader",
    "registered_loaders",
    "unregister_loader",
]
