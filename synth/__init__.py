"""synth: turn a folder of documents into an evaluation dataset, then score systems against it.

Users import from here: every name in ``__all__`` (sorted; ``tests/test_public_api.py`` holds the
list), each read from the module it lives in (``_EXPORTS`` below). Modules whose names start with
``_`` are private.

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
    pipeline/    Synthesizer: the four ways in (docs, contexts, scratch, goldens), read top to
                 bottom as the list of stages
    dataset/     Dataset (save, load, export) in __init__, one module per file format;
                 inspect.py (inspect_dataset: counts, grounding, leaks, near duplicates)
    evaluate/    score a system: judge, text and retrieval metrics, answers, preference,
                 agreement, statistics, compare, report, benchmark
    cli/         the ``synth`` command: one module per command; argument parsing and every rich
                 renderer live here and nowhere else
"""

# ruff: noqa: E402

# first, before the imports below take their second: Ctrl-C while the `synth` command starts
# ends it quietly with exit 130 (nothing changes when synth is imported as a library)
from synth._interrupt import quiet_startup as _quiet_startup

_quiet_startup()

from synth._lazy import lazy_names as _lazy_names
from synth._version import __version__ as __version__

# The names are imported when first read (``synth.Golden``, ``from synth import Golden``), not
# with the package: ``synth --help`` and ``synth export`` need none of the pipeline, the store or
# the judges, and importing all of them took most of a second.
#: the public names (space-separated), by the module each lives in, in the order the data flows:
#: the one list of them (``__all__`` is made from it; tests/test_public_api.py holds it too)
_EXPORTS: dict[str, str] = {
    "synth.data": "Chunk Context ConversationalGolden Document Golden Page ToolCall Turn",
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
    "synth.ingest.web": "WebOptions",
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
    "synth.evaluate.assertions": "assert_answer",
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
    "synth.evaluate.tools": "ToolCallEvaluation evaluate_tool_calls",
}
_HOME = {name: module for module, names in _EXPORTS.items() for name in names.split()}

__all__ = sorted(_HOME)

__getattr__, __dir__ = _lazy_names(globals(), _HOME)
