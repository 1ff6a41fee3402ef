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

# ---- store ---------------------------------------------------------------------------------------

# ---- llm -----------------------------------------------------------------------------------------

# ---- contexts and generate -----------------------------------------------------------------------

# ---- pipeline ------------------------------------------------------------------------------------

# ---- dataset -------------------------------------------------------------------------------------

# ---- evaluate ------------------------------------------------------------------------------------

__version__ = "0.1.0"

__all__ = [
    "LLM",
    "AuthenticationError",
    "BadRequestError",
    "CacheError",
    "Chunk",
    "Completion",
    "ConfigError",
    "Context",
    "DatasetError",
    "Document",
    "FunctionModel",
    "Golden",
    "IncompleteCompletionError",
    "IngestError",
    "ModelConnectionError",
    "ModelError",
    "ModelTimeoutError",
    "OutputParseError",
    "Page",
    "RateLimitError",
    "ServerError",
    "StoreError",
    "SynthError",
    "parse_verdict",
]
