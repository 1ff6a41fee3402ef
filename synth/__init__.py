"""synth: turn a folder of documents into an evaluation dataset, then score systems against it.

Everything public is importable from here; modules whose names start with ``_`` are private.
Each section below belongs to one stage of the flow: ingest, store, contexts, generate, dataset,
evaluate.
"""

# The imports are grouped by stage, in the order the data flows, not sorted as one block.
# ruff: noqa: I001, E402

# first, before the imports below take their second: Ctrl-C while the `synth` command starts
# ends it quietly with exit 130 (nothing changes when synth is imported as a library)
from synth._interrupt import quiet_startup as _quiet_startup

_quiet_startup()

from synth.data import Chunk, Context, Document, Golden, Page
from synth.errors import (
    AuthenticationError,
    BadRequestError,
    CacheError,
    ConfigError,
    DatasetError,
    EndpointError,
    FailedItemsWarning,
    IncompleteCompletionError,
    IngestError,
    ModelConnectionError,
    ModelError,
    ModelTimeoutError,
    OutputParseError,
    RateLimitError,
    ServerError,
    ShortfallWarning,
    StoreError,
    SynthError,
    SynthWarning,
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
from synth.pipeline import PipelineConfig, Synthesizer, load_pipeline

# ---- dataset -------------------------------------------------------------------------------------
from synth.dataset import Dataset, Shortfall

# ---- evaluate ------------------------------------------------------------------------------------
from synth.evaluate.agreement import cohen_kappa, fleiss_kappa, krippendorff_alpha
from synth.evaluate.answers import AnswerEvaluation, evaluate_answers
from synth.evaluate.benchmark import BenchmarkResult, LeaderboardRow, PairComparison, benchmark
from synth.evaluate.compare import Comparison, MetricComparison, compare_reports
from synth.evaluate.contexts import context_ids, context_texts
from synth.evaluate.judge import JudgeResult, LLMJudge
from synth.evaluate.preference import PreferenceEvaluation, PreferenceSummary, evaluate_preference
from synth.evaluate.report import Evaluation, ItemResult, read_report
from synth.evaluate.retrieval import (
    RetrievalEvaluation,
    average_precision,
    evaluate_retrieval,
    hit_rate_at_k,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    reciprocal_rank,
)
from synth.evaluate.stats import bootstrap_interval, sign_flip_test
from synth.evaluate.text import exact_match, normalize_answer, token_f1

__version__ = "0.1.0"

__all__ = [
    # pipeline
    "PipelineConfig",
    "Synthesizer",
    "load_pipeline",
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
    # evaluate
    "AnswerEvaluation",
    "BenchmarkResult",
    "Comparison",
    "Evaluation",
    "ItemResult",
    "JudgeResult",
    "LLMJudge",
    "LeaderboardRow",
    "MetricComparison",
    "PairComparison",
    "PreferenceEvaluation",
    "PreferenceSummary",
    "RetrievalEvaluation",
    "average_precision",
    "benchmark",
    "bootstrap_interval",
    "cohen_kappa",
    "compare_reports",
    "context_ids",
    "context_texts",
    "evaluate_answers",
    "evaluate_preference",
    "evaluate_retrieval",
    "exact_match",
    "fleiss_kappa",
    "hit_rate_at_k",
    "krippendorff_alpha",
    "ndcg_at_k",
    "normalize_answer",
    "precision_at_k",
    "read_report",
    "recall_at_k",
    "reciprocal_rank",
    "sign_flip_test",
    "token_f1",
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
    "EndpointError",
    "FailedItemsWarning",
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
    "Shortfall",
    "ShortfallWarning",
    "StoreError",
    "SynthError",
    "SynthWarning",
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
