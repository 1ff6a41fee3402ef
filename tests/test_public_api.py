"""The public surface: ``synth.__all__`` is exactly the documented list, everything in it is
importable, and nothing heavy is imported early."""

from __future__ import annotations

import importlib
import subprocess
import sys

import synth

#: what users import; docs/architecture.md shows the same list (tests/test_docs.py checks it there)
EXPORTED = [
    "AnswerEvaluation",
    "AuthenticationError",
    "BadRequestError",
    "BatchConfig",
    "BenchmarkResult",
    "CacheError",
    "Chunk",
    "ChunkStore",
    "ChunkingConfig",
    "Comparison",
    "Completion",
    "ConfigError",
    "Context",
    "ContextConstructionConfig",
    "ConversationConfig",
    "ConversationalGolden",
    "CostEstimate",
    "Dataset",
    "DatasetError",
    "DatasetInspection",
    "Document",
    "Embedder",
    "EndpointError",
    "Evaluation",
    "Evolution",
    "EvolutionConfig",
    "FailedItemsWarning",
    "FileStatus",
    "FiltrationConfig",
    "FunctionModel",
    "GenerationConfig",
    "Golden",
    "HashEmbedder",
    "HubError",
    "IncompleteCompletionError",
    "IngestError",
    "IngestReport",
    "IngestedFile",
    "ItemResult",
    "JudgeResult",
    "LLM",
    "LLMJudge",
    "LeaderboardRow",
    "LoadReport",
    "LoadedFile",
    "LocalEmbedder",
    "MetricComparison",
    "ModelConnectionError",
    "ModelError",
    "ModelTimeoutError",
    "OpenAIEmbedder",
    "OutputParseError",
    "PRICES",
    "Page",
    "PairComparison",
    "PipelineConfig",
    "Plan",
    "PreferenceEvaluation",
    "PreferenceSummary",
    "Price",
    "Progress",
    "PromptSet",
    "RateLimitError",
    "RateLimiter",
    "RetrievalEvaluation",
    "RetryConfig",
    "SQLiteCache",
    "ServerError",
    "Shortfall",
    "ShortfallWarning",
    "SourceStats",
    "StoreError",
    "StylingConfig",
    "SynthError",
    "SynthWarning",
    "Synthesizer",
    "ToolCall",
    "ToolCallEvaluation",
    "Turn",
    "Usage",
    "WebOptions",
    "assert_answer",
    "average_precision",
    "benchmark",
    "bootstrap_interval",
    "chunk_documents",
    "cohen_kappa",
    "compare_reports",
    "context_ids",
    "context_texts",
    "estimate_cost",
    "estimate_tokens",
    "evaluate_answers",
    "evaluate_preference",
    "evaluate_retrieval",
    "evaluate_tool_calls",
    "exact_match",
    "fleiss_kappa",
    "hit_rate_at_k",
    "ingest_documents",
    "inspect_dataset",
    "iter_chunks",
    "iter_load",
    "krippendorff_alpha",
    "load_documents",
    "load_pipeline",
    "make_embedder",
    "make_llm",
    "ndcg_at_k",
    "normalize_answer",
    "parse_model_spec",
    "parse_verdict",
    "precision_at_k",
    "read_report",
    "recall_at_k",
    "reciprocal_rank",
    "register_loader",
    "sign_flip_test",
    "token_f1",
    "wrap_llm",
]


def test_all_is_the_documented_list() -> None:
    assert synth.__all__ == EXPORTED


def test_all_is_sorted() -> None:
    assert synth.__all__ == sorted(synth.__all__)


def test_each_name_is_the_one_its_listed_module_holds() -> None:
    """``synth.X`` is the very object of the module the one list names (never a copy)."""
    wrong = [
        name
        for name in synth.__all__
        if getattr(synth, name) is not getattr(importlib.import_module(synth._HOME[name]), name)
    ]
    assert wrong == []


def test_internal_machinery_is_not_exported() -> None:
    internal = {"AddResult", "ContextScore", "Deduplicator", "Draft", "SeedSelector", "StageStats"}
    internal |= {"UsageCounts"}
    assert internal.isdisjoint(synth.__all__)
    assert {"Plan", "Progress"} <= set(synth.__all__)  # the API returns and accepts these


def test_all_names_exist_and_are_unique() -> None:
    assert len(synth.__all__) == len(set(synth.__all__))
    missing = [name for name in synth.__all__ if not hasattr(synth, name)]
    assert missing == []


def test_public_names_are_exported() -> None:
    """Every public attribute that is a class or function defined in synth is in ``__all__``."""
    undeclared = [
        name
        for name, value in vars(synth).items()
        if not name.startswith("_")
        and getattr(value, "__module__", "").startswith("synth")
        and (isinstance(value, type) or callable(value))
        and name not in synth.__all__
    ]
    assert undeclared == []


def test_import_does_not_load_optional_sdks() -> None:
    code = (
        "import sys, synth; "
        "heavy = [m for m in ('anthropic', 'google.genai', 'sentence_transformers', 'torch') "
        "if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_errors_share_one_root() -> None:
    errors = [getattr(synth, n) for n in synth.__all__ if n.endswith("Error")]
    assert errors and all(issubclass(e, synth.SynthError) for e in errors)
    assert issubclass(synth.ConfigError, ValueError)
    assert issubclass(synth.RateLimitError, synth.ModelError)


def test_warnings_share_one_root() -> None:
    found = [getattr(synth, n) for n in synth.__all__ if n.endswith("Warning")]
    assert {w.__name__ for w in found} == {"SynthWarning", "ShortfallWarning", "FailedItemsWarning"}
    assert all(issubclass(w, synth.SynthWarning) for w in found)
    assert issubclass(synth.SynthWarning, UserWarning)  # shown by Python's default filters
    assert not issubclass(synth.SynthWarning, synth.SynthError)
