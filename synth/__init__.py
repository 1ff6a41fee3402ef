"""synth: turn a folder of documents into an evaluation dataset, then score systems against it.

Everything public is importable from here; modules whose names start with ``_`` are private.
Each section below belongs to one stage of the flow: ingest, store, contexts, generate, dataset,
evaluate.
"""

from synth.data import Chunk, Context, Document, Golden, Page
from synth.errors import (
    AuthenticationError,
    BadRequestError,
    CacheError,
    ConfigError,
    DatasetError,
    IncompleteCompletionError,
    IngestError,
    ModelConnectionError,
    ModelError,
    ModelTimeoutError,
    OutputParseError,
    RateLimitError,
    ServerError,
    StoreError,
    SynthError,
)
from synth.llm.base import LLM, Completion, FunctionModel
from synth.llm.structured import parse_verdict

# ---- ingest --------------------------------------------------------------------------------------
from synth.ingest import (
    ChunkingConfig,
    FileStatus,
    LoadedFile,
    LoadReport,
    chunk_documents,
    iter_chunks,
    iter_load,
    load_documents,
    register_loader,
)

# ---- store ---------------------------------------------------------------------------------------
from synth.store import (
    AddResult,
    ChunkStore,
    Embedder,
    HashEmbedder,
    IngestedFile,
    IngestReport,
    LocalEmbedder,
    OpenAIEmbedder,
    SourceStats,
    ingest_documents,
    make_embedder,
)

# ---- llm -----------------------------------------------------------------------------------------
from synth.llm import (
    PRICES,
    CostEstimate,
    Price,
    RateLimiter,
    RetryConfig,
    SQLiteCache,
    Usage,
    UsageCounts,
    estimate_cost,
    estimate_tokens,
    make_llm,
    parse_model_spec,
    wrap_llm,
)

# ---- contexts and generate -----------------------------------------------------------------------
from synth.contexts import ContextConstructionConfig, ContextScore, SeedSelector
from synth.generate import (
    Deduplicator,
    Draft,
    Evolution,
    EvolutionConfig,
    FiltrationConfig,
    GenerationConfig,
    PromptSet,
    StageStats,
    StylingConfig,
)

# ---- pipeline ------------------------------------------------------------------------------------

# ---- dataset -------------------------------------------------------------------------------------
from synth.dataset import Dataset

# ---- evaluate ------------------------------------------------------------------------------------

__version__ = "0.1.0"

__all__ = [
    # llm
    "PRICES",
    "CostEstimate",
    "Price",
    "RateLimiter",
    "RetryConfig",
    "SQLiteCache",
    "Usage",
    "UsageCounts",
    "estimate_cost",
    "estimate_tokens",
    "make_llm",
    "parse_model_spec",
    "wrap_llm",
    # store
    "AddResult",
    "ChunkStore",
    "Embedder",
    "HashEmbedder",
    "IngestedFile",
    "IngestReport",
    "LocalEmbedder",
    "OpenAIEmbedder",
    "SourceStats",
    "ingest_documents",
    "make_embedder",
    "LLM",
    "AuthenticationError",
    "BadRequestError",
    "CacheError",
    "Chunk",
    "ChunkingConfig",
    "Completion",
    "ConfigError",
    "Context",
    "Dataset",
    "DatasetError",
    "Document",
    "FileStatus",
    "FunctionModel",
    "Golden",
    "IncompleteCompletionError",
    "IngestError",
    "LoadReport",
    "LoadedFile",
    "ModelConnectionError",
    "ModelError",
    "ModelTimeoutError",
    "OutputParseError",
    "Page",
    "RateLimitError",
    "ServerError",
    "StoreError",
    "SynthError",
    # contexts and generate
    "ContextConstructionConfig",
    "ContextScore",
    "Deduplicator",
    "Draft",
    "Evolution",
    "EvolutionConfig",
    "FiltrationConfig",
    "GenerationConfig",
    "PromptSet",
    "SeedSelector",
    "StageStats",
    "StylingConfig",
    "chunk_documents",
    "iter_chunks",
    "iter_load",
    "load_documents",
    "parse_verdict",
    "register_loader",
]
