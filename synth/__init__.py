"""synth: turn a folder of documents into an evaluation dataset, then score systems against it.

Users import from here: every name in ``__all__`` (sorted; ``tests/test_public_api.py`` holds the
list) reports ``synth`` as its module, except the errors and warnings, which live in the public
``synth.errors``. Modules whose names start with ``_`` are private.

The packages, in the order the data flows (``docs/architecture.md`` adds the stages and where each runs)::

    data.py      the records that cross stages: Document, Page, Chunk, Context, Golden,
                 ConversationalGolden (its Turns)
    errors.py    one error tree rooted at SynthError, and the SynthWarning tree
    ingest/      stage 1a. one reader per format (text.py, docx.py, pdf.py; registry.py for your
                 own), load.py (load_documents, iter_load), chunking.py (token-aware chunks)
    store/       stage 1b. embedders (hash, local, openai; make_embedder), chroma.py (ChunkStore;
                 its client in _chroma_client.py, the only other chromadb user), ingest_run.py
                 (ingest_documents: load, chunk, embed, store; unchanged files are not read again)
    llm/         one adapter per provider behind LLM; retry, cache, rate limit and usage wrap a
                 model; make_llm and the one "provider:model" parser; pricing
    contexts/    stages 2-4. select.py (seed chunks, fair across files), critic.py (score seeds),
                 group.py (seed + similar neighbours), and the seed feed that the run draws from
    generate/    stages 5-10. one module per step (inputs, filter, evolve, style, expected,
                 dedup) behind one Step interface, in one ordered list; prompts/ as package data
    run/         what makes a run resumable and observable: config (PipelineConfig), the run
                 directory, session, stream, the steps runner, manifest, plan, progress, and
                 ingest for a run
    pipeline.py  Synthesizer: the four ways in (docs, contexts, scratch, goldens), read top to
                 bottom as the list of stages
    dataset/     Dataset (save, load, export) in __init__, one module per file format;
                 inspect.py (inspect_dataset: counts, grounding, leaks, near duplicates)
    evaluate/    score a system: judge, text and retrieval metrics, answers, preference,
                 agreement, statistics, compare, report, benchmark
    cli/         the ``synth`` command: one module per command; argument parsing and every rich
                 renderer live here and nowhere else
"""

# The imports are grouped by stage, in the order the data flows, not sorted as one block.
# ruff: noqa: I001, E402

# first, before the imports below take their second: Ctrl-C while the `synth` command starts
# ends it quietly with exit 130 (nothing changes when synth is imported as a library)
from synth._interrupt import quiet_startup as _quiet_startup

_quiet_startup()

import typing as _typing

from synth._lazy import lazy_names as _lazy_names
from synth._version import __version__ as __version__

# The names are imported when first read (``synth.Golden``, ``from synth import Golden``), not
# with the package: ``synth --help`` and ``synth export`` need none of the pipeline, the store or
# the judges, and importing all of them took most of a second. Type checkers read the imports below.
if _typing.TYPE_CHECKING:
    # ---- records and errors ----------------------------------------------------------------------
    from synth.data import Chunk, Context, ConversationalGolden, Document, Golden, Page, Turn
    from synth.errors import (
        AuthenticationError,
        BadRequestError,
        CacheError,
        ConfigError,
        DatasetError,
        EndpointError,
        FailedItemsWarning,
        HubError,
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

    # ---- ingest (stage 1a) -----------------------------------------------------------------------
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

    # ---- store (stage 1b) ------------------------------------------------------------------------
    from synth.store import (
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

    # ---- llm (the models every LLM stage and judge calls) ----------------------------------------
    from synth.llm import (
        PRICES,
        CostEstimate,
        Price,
        RateLimiter,
        RetryConfig,
        SQLiteCache,
        Usage,
        estimate_cost,
        estimate_tokens,
        make_llm,
        parse_model_spec,
        wrap_llm,
    )
    from synth.llm.base import LLM, Completion, FunctionModel
    from synth.llm.batch import BatchConfig
    from synth.llm.structured import parse_verdict

    # ---- contexts (stages 2-4) and generate (stages 5-10): their configs -------------------------
    from synth.contexts import ContextConstructionConfig
    from synth.generate import (
        ConversationConfig,
        Evolution,
        EvolutionConfig,
        FiltrationConfig,
        GenerationConfig,
        PromptSet,
        StylingConfig,
    )

    # ---- run and pipeline ------------------------------------------------------------------------
    from synth.pipeline import Synthesizer
    from synth.run.config import PipelineConfig, load_pipeline
    from synth.run.plan import Plan
    from synth.run.progress import Progress

    # ---- dataset ---------------------------------------------------------------------------------
    from synth.dataset import Dataset, Shortfall
    from synth.dataset.inspect import DatasetInspection, inspect_dataset

    # ---- evaluate --------------------------------------------------------------------------------
    from synth.evaluate.agreement import cohen_kappa, fleiss_kappa, krippendorff_alpha
    from synth.evaluate.answers import AnswerEvaluation, evaluate_answers
    from synth.evaluate.benchmark import BenchmarkResult, LeaderboardRow, PairComparison, benchmark
    from synth.evaluate.compare import Comparison, MetricComparison, compare_reports
    from synth.evaluate.retrieved import context_ids, context_texts
    from synth.evaluate.judge import JudgeResult, LLMJudge
    from synth.evaluate.preference import (
        PreferenceEvaluation,
        PreferenceSummary,
        evaluate_preference,
    )
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

#: where each public name lives (space-separated), module by module in the order above (tests/test_public_api.py
#: checks that it names the same things as the imports under TYPE_CHECKING)
_EXPORTS: dict[str, str] = {
    "synth.data": "Chunk Context ConversationalGolden Document Golden Page Turn",
    "synth.errors": (
        "AuthenticationError BadRequestError CacheError ConfigError DatasetError EndpointError "
        "FailedItemsWarning HubError IncompleteCompletionError IngestError ModelConnectionError "
        "ModelError ModelTimeoutError OutputParseError RateLimitError ServerError ShortfallWarning "
        "StoreError SynthError SynthWarning"
    ),
    "synth.ingest": (
        "ChunkingConfig FileStatus LoadedFile LoadReport chunk_documents iter_chunks iter_load "
        "load_documents register_loader"
    ),
    "synth.store": (
        "ChunkStore Embedder HashEmbedder IngestedFile IngestReport LocalEmbedder OpenAIEmbedder "
        "SourceStats ingest_documents make_embedder"
    ),
    "synth.llm": (
        "PRICES CostEstimate Price RateLimiter RetryConfig SQLiteCache Usage estimate_cost "
        "estimate_tokens make_llm parse_model_spec wrap_llm"
    ),
    "synth.llm.base": "LLM Completion FunctionModel",
    "synth.llm.batch": "BatchConfig",
    "synth.llm.structured": "parse_verdict",
    "synth.contexts": "ContextConstructionConfig",
    "synth.generate": (
        "ConversationConfig Evolution EvolutionConfig FiltrationConfig GenerationConfig PromptSet "
        "StylingConfig"
    ),
    "synth.pipeline": "Synthesizer",
    "synth.run.config": "PipelineConfig load_pipeline",
    "synth.run.plan": "Plan",
    "synth.run.progress": "Progress",
    "synth.dataset": "Dataset Shortfall",
    "synth.dataset.inspect": "DatasetInspection inspect_dataset",
    "synth.evaluate.agreement": "cohen_kappa fleiss_kappa krippendorff_alpha",
    "synth.evaluate.answers": "AnswerEvaluation evaluate_answers",
    "synth.evaluate.benchmark": "BenchmarkResult LeaderboardRow PairComparison benchmark",
    "synth.evaluate.compare": "Comparison MetricComparison compare_reports",
    "synth.evaluate.retrieved": "context_ids context_texts",
    "synth.evaluate.judge": "JudgeResult LLMJudge",
    "synth.evaluate.preference": "PreferenceEvaluation PreferenceSummary evaluate_preference",
    "synth.evaluate.report": "Evaluation ItemResult read_report",
    "synth.evaluate.retrieval": (
        "RetrievalEvaluation average_precision evaluate_retrieval hit_rate_at_k ndcg_at_k "
        "precision_at_k recall_at_k reciprocal_rank"
    ),
    "synth.evaluate.stats": "bootstrap_interval sign_flip_test",
    "synth.evaluate.text": "exact_match normalize_answer token_f1",
}
_HOME = {name: module for module, names in _EXPORTS.items() for name in names.split()}

__all__ = [
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
    "Turn",
    "Usage",
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


def _as_synth(module: str, value: _typing.Any) -> _typing.Any:
    """Names read as ``synth.X`` in reprs, tracebacks and pickles, wherever they are defined (as
    httpx does); the error tree keeps ``synth.errors``, its public home, which users catch by."""
    if callable(value) and module != "synth.errors":
        value.__module__ = "synth"
    return value


__getattr__, __dir__ = _lazy_names(globals(), _HOME, _as_synth)
