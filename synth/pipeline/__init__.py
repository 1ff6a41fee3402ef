"""Synthesizer: a folder of documents in, exactly N trustworthy goldens out.

The whole flow, in the order the data moves (each step names the module that does it)::

    1. ingest      load, chunk, embed, store            synth.store.ingest_documents
    2. select      seed chunks, fair across files       synth.contexts.select   } synth.contexts.seed_feed
    3. critic      score seeds, replace rejected ones   synth.contexts.critic   } (DocsFeed, one
    4. group       seed + similar neighbours            synth.contexts.group    }  Feed of several)
    5. inputs      questions from each context          synth.generate.inputs   }
    6. filter      critic-score, rewrite or drop        synth.generate.filter   } synth.generate.steps
    7. evolve      make inputs more demanding           synth.generate.evolve   } (the step list, walked
    8. style       scenario, task, format, personas     synth.generate.style    }  by synth.run.stages
    9. expected    cited, checked answers               synth.generate.expected }  one candidate at a time)
   10. dedup       drop near-duplicate inputs           synth.generate.dedup    } synth.run.stream
   11. top up      draw new contexts until N are kept                           } (the controller)
       dataset     goldens with their provenance        synth.dataset.Dataset

Conversations (``generate_conversational_goldens_from_*``, synth.run.conversations) take the same
flow with their own steps 5-9: write and check conversations, then check their follow-ups. Agent
goldens (``generate_goldens_from_tools``, synth.pipeline.tools) take it from tool plans instead of
contexts, with their own steps: write a request and its calls, check them, run them.

Candidates stream through steps 3 to 10 independently, at most ``max_concurrent`` requests in
flight (without one, as many as the server keeps up with: the limiter finds the level). Around the flow, ``synth.run``: a run's models, setup, directory, manifest and progress,
held by its ``session``. Randomness comes from ``seed`` alone: same seed, inputs, cache, goldens.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from synth._ids import joined_hash
from synth.contexts.config import ContextConstructionConfig
from synth.contexts.coverage import file_quotas
from synth.contexts.feed import Candidate, ListFeed, ScratchFeed
from synth.data import Chunk, Context
from synth.dataset import Dataset
from synth.dataset.refill import refill
from synth.dataset.update import UpdatePlan, merge_update, plan_update, write_update
from synth.errors import ConfigError
from synth.generate.config import EvolutionConfig, FiltrationConfig, GenerationConfig, StylingConfig
from synth.generate.conversation import ConversationConfig
from synth.generate.question_types import type_counts
from synth.generate.steps import ToolSettings
from synth.generate.tool_requests import KNOWLEDGE, TOOL_KINDS
from synth.ingest.web import WebOptions
from synth.pipeline.delivery import deliver, replayed
from synth.pipeline.given import (
    CHROMA_MODE,
    DOCUMENTS_MODE,
    ImportedIngest,
    NoStore,
    given_reads,
)
from synth.pipeline.question_types import combine, typed_runs
from synth.pipeline.sources import locate_source_files, source_locations
from synth.pipeline.sync import sync_twin, warns_if_short
from synth.pipeline.tools import MODE as TOOLS_MODE
from synth.pipeline.tools import (
    TOOL_KINDS_KEY,
    ExecuteArg,
    by_coverage,
    candidates,
    checked_kinds,
    executor_for,
    kind_plans,
    tag_kind,
    with_sources,
)
from synth.run.config import PipelineConfig, load_pipeline
from synth.run.conversations import CONTEXTS_MODE, DOCS_MODE, conversational
from synth.run.dir import fingerprint_paths
from synth.run.ingest import files_read, ingest_for_run, ingest_in_run, read_chunks
from synth.run.inputs import SCRATCH_BATCH, as_contexts, as_paths, candidates_from_goldens
from synth.run.manifest import merged as merged_manifest
from synth.run.models import ModelSettings, RunModels, checked_model
from synth.run.plan import Plan, plan_docs, planned_coverage
from synth.run.progress import Progress, as_progress
from synth.run.session import RunSession
from synth.run.setup import (
    RunConfigs,
    RunPlace,
    check_num_goldens,
    docs_feed,
    open_session,
    per_context_note,
)
from synth.stage.templates import PromptOverrides, PromptSet
from synth.tools.load import aload_tools
from synth.tools.tool import Tool

DocsArg = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


@dataclass(eq=False, repr=False, kw_only=True)
class Synthesizer(ModelSettings):
    """Makes goldens from documents, contexts, a scenario or example goldens; refills datasets.

    ``model`` and ``critic_model`` are ``"provider:model"`` specs, :class:`~synth.LLM` objects or
    callables ``fn(prompt, system) -> str`` (the critic defaults to the model); ``embedder`` is an
    embedder spec or object. Each stage has its config (DeepEval's names); ``use_context_critic``
    and ``use_filter`` switch those stages off; ``grounding_threshold`` and ``max_easy_share`` set
    the generation config's gates. ``run_dir`` (default ``.synth/runs/<run id>``) holds a run's
    stage outputs and manifest; ``cache`` is the response cache (a SQLite path, a mapping, None);
    ``prompts`` overrides stage templates (a table under a language code: that language's own
    templates). ``max_concurrent`` pins the requests in flight
    (default: found by the run, up to 256, cut on 429s and timeouts). ``rpm``/``tpm`` cap the
    requests and tokens all models spend per ``rate_window`` seconds (one budget, paced
    :data:`RATE_MARGIN` under the limit). ``batch`` (True or a :class:`~synth.BatchConfig`) sends
    every request through the provider's Batch API: half the price, replies within 24 hours.
    ``timeout``: seconds a request waits for its reply (default 120; a server silent that long
    stops the run, see :mod:`synth.llm.timeout`).
    ``source_files`` are relative to the working folder, or absolute with ``absolute_paths``.
    ``ray`` (a Ray address, or True for a Ray started for the run) ingests on a Ray cluster.
    ``web`` (:class:`~synth.ingest.web.WebOptions`) says how URLs among the document paths are
    read: rate per host, page cap, page size (a sitemap URL stands for its pages).
    ``progress`` shows each run's progress on stderr: True (default) plain text lines, False
    nothing, or any :class:`~synth.run.progress.Progress`. A model name that cannot work is
    refused here; nothing else is checked or connected until a ``generate_*`` call.
    """

    # the model arguments (model, critic_model, embedder, max_concurrent, rpm, tpm, rate_window,
    # batch, timeout, cache, base_url) are ModelSettings'; the rest are the stages' and the run's
    filtration_config: FiltrationConfig = field(default_factory=FiltrationConfig)
    evolution_config: EvolutionConfig = field(default_factory=EvolutionConfig)
    styling_config: StylingConfig = field(default_factory=StylingConfig)
    context_construction_config: ContextConstructionConfig = field(
        default_factory=ContextConstructionConfig
    )
    generation_config: GenerationConfig = field(default_factory=GenerationConfig)
    conversation_config: ConversationConfig = field(default_factory=ConversationConfig)
    use_context_critic: bool = True
    use_filter: bool = True
    grounding_threshold: float | None = None
    max_easy_share: float | None = None
    seed: int = 0
    run_dir: str | os.PathLike[str] | None = None
    prompts: PromptOverrides | PromptSet | None = None
    store_path: str | os.PathLike[str] = Path(".synth") / "chroma"
    store_url: str | None = None
    ray: str | bool | None = None
    web: WebOptions | None = None
    progress: Progress | bool | None = True
    absolute_paths: bool = False
    _session: RunSession | None = field(default=None, init=False, repr=False)
    _made: RunModels | None = field(default=None, init=False, repr=False)
    #: a call of several runs (one per question type): their manifests as one
    _merged: dict[str, Any] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        # a model name that cannot work is refused here, not at the first call; "gpt-4.1-mini"
        # is OpenAI's, as in DeepEval
        self.model = checked_model(self.model)
        self.critic_model = checked_model(self.critic_model, "critic_model")
        # a stage config given as None is its default, as when it is left out
        self.filtration_config = self.filtration_config or FiltrationConfig()
        self.evolution_config = self.evolution_config or EvolutionConfig()
        self.styling_config = self.styling_config or StylingConfig()
        contexts = self.context_construction_config or ContextConstructionConfig()
        self.context_construction_config = contexts
        generation = self.generation_config or GenerationConfig()
        self.generation_config = generation.with_gates(
            self.grounding_threshold, self.max_easy_share
        )

    @classmethod
    def from_pipeline(
        cls, pipeline: PipelineConfig | str | os.PathLike[str], **overrides: Any
    ) -> Synthesizer:
        """A Synthesizer set up by a pipeline file (or PipelineConfig); keyword arguments win."""
        config = pipeline if isinstance(pipeline, PipelineConfig) else load_pipeline(pipeline)
        options = config.synthesizer_options()
        options.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**options)

    # ---- what it owns for its runs: the models made once, the store, the last run's session ------
    @property
    def manifest(self) -> dict[str, Any] | None:
        """The manifest of the last run (also in its run directory), as last written; for a call
        of several runs (one per question type), theirs as one (each stays in its own folder)."""
        if self._merged is not None:
            return self._merged
        return self._session.manifest if self._session is not None else None

    @property
    def last_run_dir(self) -> Path | None:
        """The run directory of the last run."""
        return self._session.path if self._session is not None else None

    def _models(self) -> RunModels:
        """What makes and owns the models: on first use, from this Synthesizer's arguments."""
        if self._made is None:
            self._made = RunModels.of(self)
        return self._made

    def _ingest(self, paths: list[str], config: ContextConstructionConfig) -> tuple[Any, Any, Any]:
        """Stage 1: the store, the ingest under way and this run's chunks (ingest_for_run)."""
        embedder = self._models().embedder(config.embedder)
        return ingest_for_run(
            paths,
            config,
            embedder,
            store_path=self.store_path,
            store_url=self.store_url,
            ray=self.ray,
            web=self.web,
        )

    def _run(
        self, mode: str, key_inputs: dict[str, Any], num_goldens: int | None, configs: RunConfigs
    ) -> RunSession:
        place = RunPlace(run_dir=self.run_dir, progress=as_progress(self.progress))
        place = place.of_part(configs.part)
        self._session = open_session(mode, key_inputs, num_goldens, configs, self._models(), place)
        return self._session

    def mark_interrupted(self) -> None:
        """Record at once, from any thread, that the last run was interrupted (its manifest says
        so): for a process about to be ended by force before the run could unwind."""
        if self._session is not None:
            self._session.mark_interrupted()

    def close(self) -> None:
        """Release the clients and threads of the models and embedders made from specs, and the
        cache file (after Ctrl-C: ends requests still waiting on a server, so the process exits)."""
        if self._made is not None:
            self._made.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- the four ways in (each with a sync twin, made by sync_twin, after it) ---------------------
    @warns_if_short
    async def a_generate_goldens_from_docs(
        self,
        document_paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
        *,
        num_goldens: int | None = None,
        include_expected_output: bool | None = None,
        max_goldens_per_context: int | None = None,
        context_construction_config: ContextConstructionConfig | None = None,
        avoid_chunks: Iterable[str] = (),
        seed: int | None = None,
    ) -> Dataset:
        """Goldens from documents: ingest, then every stage; exactly ``num_goldens`` when the corpus
        allows (else as many as it can, the manifest says why), or ``max_goldens_per_context`` from
        each context the ``context_construction_config`` asks for. No context takes a chunk of
        ``avoid_chunks`` while others are left; ``seed`` replaces the Synthesizer's for the run."""
        paths = as_paths(document_paths)
        contexts = context_construction_config or self.context_construction_config
        configs = RunConfigs.of(self, include_expected_output, max_goldens_per_context, contexts)
        configs = configs.but(seed=seed, avoid_chunks=frozenset(avoid_chunks))
        return await self._each_type(functools.partial(self._docs_run, paths), configs, num_goldens)

    async def _each_type(
        self,
        run_one: Callable[[RunConfigs, int | None], Awaitable[Dataset]],
        configs: RunConfigs,
        num_goldens: int | None,
    ) -> Dataset:
        """``run_one`` once, or once per question type when the generation config asks for
        several (each exact in count); :attr:`manifest` is then theirs as one."""
        self._merged = None
        if not configs.generation.asks_types:
            return await run_one(configs, num_goldens)
        parts: list[tuple[str, dict[str, Any]]] = []

        async def one(typed: RunConfigs, n: int) -> Dataset:
            made = await run_one(typed, n)
            if self._session is not None and self._session.manifest is not None:
                parts.append((typed.part or "run", self._session.manifest))
            return made

        try:
            return await typed_runs(configs, num_goldens, one)
        finally:
            self._merged = merged_manifest(parts) if len(parts) > 1 else None

    async def _docs_run(
        self, paths: list[str], configs: RunConfigs, num_goldens: int | None, mode: str = "docs"
    ) -> Dataset:
        key_inputs = {"paths": fingerprint_paths(paths), **configs.avoid_key()}
        locations = source_locations(paths, absolute=self.absolute_paths)
        async with self._run(mode, key_inputs, num_goldens, configs) as run:
            if run.finished:
                return locate_source_files(replayed(run), locations)
            dataset = await self._docs(run, paths, configs, num_goldens)
            return locate_source_files(dataset, locations)

    async def _docs(
        self,
        run: RunSession,
        paths: list[str],
        configs: RunConfigs,
        num_goldens: int | None,
        ingest: Callable[[], tuple[Any, Any, list[Chunk]]] | None = None,
    ) -> Dataset:
        """Stage 1 (ingest; ``ingest`` replaces the files' when the chunks come from elsewhere:
        synth.pipeline.given), then the feed of contexts (stages 2-4) through the stream (5-10)."""
        contexts = configs.contexts
        assert contexts is not None
        embedder = self._models().embedder(contexts.embedder)
        ingest = ingest or functools.partial(self._ingest, paths, contexts)
        with ingest_in_run(run, paths, embedder, ingest) as (pending, chunks):
            feed = docs_feed(chunks, pending, configs, num_goldens, run, pending.raise_if_failed)
            files = files_read(pending.report)
            coverage = planned_coverage(feed, configs, num_goldens, files=files)
            quotas = file_quotas(coverage, num_goldens)
            target = configs.target(num_goldens, feed.wanted, quotas)
            if num_goldens is None:
                run.progress.note(per_context_note(target))
            return await deliver(run, feed, target, coverage)

    generate_goldens_from_docs = sync_twin(a_generate_goldens_from_docs)

    @warns_if_short
    async def a_generate_goldens_from_contexts(
        self,
        contexts: Sequence[Context | Sequence[str]],
        *,
        num_goldens: int | None = None,
        include_expected_output: bool | None = None,
        max_goldens_per_context: int | None = None,
        source_files: Sequence[Sequence[str] | str] | None = None,
    ) -> Dataset:
        """Goldens from given contexts (each a :class:`Context` or a list of texts), in order;
        without ``num_goldens``, ``max_goldens_per_context`` from each."""
        given = as_contexts(contexts, source_files)
        configs = RunConfigs.of(self, include_expected_output, max_goldens_per_context)
        return await self._contexts_run(given, configs, num_goldens)

    async def _contexts_run(
        self,
        given: list[Context],
        configs: RunConfigs,
        num_goldens: int | None,
        mode: str = "contexts",
    ) -> Dataset:
        key_inputs = {"contexts": [c.model_dump(mode="json") for c in given]}
        async with self._run(mode, key_inputs, num_goldens, configs) as run:
            if run.finished:
                return replayed(run)
            feed = ListFeed([Candidate(i, f"{c.id}#{i}", c) for i, c in enumerate(given)])
            return await deliver(run, feed, configs.target(num_goldens, len(given)))

    generate_goldens_from_contexts = sync_twin(a_generate_goldens_from_contexts)

    @warns_if_short
    async def a_generate_goldens_from_scratch(
        self, num_goldens: int, *, include_expected_output: bool | None = None
    ) -> Dataset:
        """``num_goldens`` goldens with no documents: the styling config's ``scenario``, ``task``
        and ``input_format`` describe what to write (all three are required)."""
        self.styling_config.require_scratch()
        check_num_goldens(num_goldens)
        configs = RunConfigs.of(self, include_expected_output, SCRATCH_BATCH)
        async with self._run("scratch", {}, num_goldens, configs) as run:
            if run.finished:
                return replayed(run)
            tries = 1 + self.context_construction_config.max_retries
            feed = ScratchFeed(SCRATCH_BATCH, -(-num_goldens // SCRATCH_BATCH) * tries)
            return await deliver(run, feed, configs.target(num_goldens, None))

    generate_goldens_from_scratch = sync_twin(a_generate_goldens_from_scratch)

    @warns_if_short
    async def a_generate_goldens_from_goldens(
        self,
        goldens: Any,
        *,
        num_goldens: int | None = None,
        max_goldens_per_golden: int | None = None,
        include_expected_output: bool | None = None,
    ) -> Dataset:
        """New goldens in the style of given ones (a Dataset, a list of goldens, or a path): each
        given golden's input, with a few others, is the style example, and its context (when it
        has one) bounds what the new inputs may ask."""
        given = list(Dataset.coerce(goldens))
        if not given:
            raise ConfigError("generate_goldens_from_goldens needs at least one golden")
        configs = RunConfigs.of(self, include_expected_output, max_goldens_per_golden)
        candidates = candidates_from_goldens(given)
        key_inputs = {"goldens": [g.model_dump(mode="json") for g in given]}
        async with self._run("goldens", key_inputs, num_goldens, configs) as run:
            if run.finished:
                return replayed(run)
            target = configs.target(num_goldens, len(candidates))
            return await deliver(run, ListFeed(candidates), target)

    generate_goldens_from_goldens = sync_twin(a_generate_goldens_from_goldens)

    # ---- from what the user already has: documents as objects, a Chroma collection
    # (synth.pipeline.given) ------------------------------------------------------------------
    @warns_if_short
    async def a_generate_goldens_from_documents(
        self,
        documents: Iterable[Any],
        *,
        num_goldens: int | None = None,
        chunk: bool = True,
        include_expected_output: bool | None = None,
        max_goldens_per_context: int | None = None,
    ) -> Dataset:
        """Goldens from the user's own documents or chunks: LangChain ``Document``s, LlamaIndex
        nodes, dicts with a text, strings (:mod:`synth.ingest.objects`). ``chunk=False`` takes
        each as one chunk as it is (chunks already cut); otherwise they are chunked as files are.
        Each golden's ``source_files`` name its documents' sources (``metadata["source"]``, ...)."""
        from synth.ingest.objects import as_documents

        given = as_documents(documents, unique=chunk)
        configs = RunConfigs.of(
            self, include_expected_output, max_goldens_per_context, self.context_construction_config
        )
        key = {
            "documents": joined_hash(f"{d.path}\x1e{d.text}" for d in given),
            "chunk": chunk,
        }
        names = list(dict.fromkeys(d.path for d in given))
        reads = given_reads(given, chunk)

        def ingest(config: ContextConstructionConfig) -> tuple[Any, Any, list[Chunk]]:
            from synth.run.ingest import ingest_for_run

            embedder = self._models().embedder(config.embedder)
            return ingest_for_run(
                names,
                config,
                embedder,
                store_path=self.store_path,
                store_url=self.store_url,
                reads=reads,
            )

        run_one = functools.partial(self._given_run, DOCUMENTS_MODE, key, names, ingest, True)
        return await self._each_type(run_one, configs, num_goldens)

    generate_goldens_from_documents = sync_twin(a_generate_goldens_from_documents)

    @warns_if_short
    async def a_generate_goldens_from_chroma(
        self,
        location: str | os.PathLike[str],
        collection: str,
        *,
        num_goldens: int | None = None,
        include_expected_output: bool | None = None,
        max_goldens_per_context: int | None = None,
    ) -> Dataset:
        """Goldens from a Chroma collection another program built (``location``: its folder, or
        a server's ``http://host:port``): its documents as the chunks, its stored vectors for
        grouping; nothing is embedded (see :mod:`synth.store.imported`)."""
        from synth.store.imported import read_chroma_collection

        imported = read_chroma_collection(location, collection)
        configs = RunConfigs.of(
            self, include_expected_output, max_goldens_per_context, self.context_construction_config
        )
        key = {
            "chroma": collection,
            "records": joined_hash(f"{c.id}\x1e{c.source}\x1e{c.text}" for c in imported.chunks),
        }
        names = sorted({chunk.source for chunk in imported.chunks})

        def ingest(config: ContextConstructionConfig) -> tuple[Any, Any, list[Chunk]]:
            batches = self._models().embedder(config.embedder).batches_embedded
            return NoStore(), ImportedIngest(imported, batches), list(imported.chunks)

        run_one = functools.partial(self._given_run, CHROMA_MODE, key, names, ingest, False)
        return await self._each_type(run_one, configs, num_goldens)

    generate_goldens_from_chroma = sync_twin(a_generate_goldens_from_chroma)

    async def _given_run(
        self,
        mode: str,
        key: dict[str, Any],
        names: list[str],
        ingest: Callable[[ContextConstructionConfig], tuple[Any, Any, list[Chunk]]],
        own_vectors: bool,
        configs: RunConfigs,
        num_goldens: int | None,
    ) -> Dataset:
        """A run from documents whose stage 1 is ``ingest``; ``own_vectors``: the run's embedder
        made the chunks' vectors (else no input vector is compared with them)."""
        run: RunSession
        async with self._run(mode, {**key, **configs.avoid_key()}, num_goldens, configs) as run:
            if run.finished:
                return replayed(run)
            if not own_vectors:
                run.settings.embeds_chunks = False
            assert configs.contexts is not None
            made = functools.partial(ingest, configs.contexts)
            return await self._docs(run, names, configs, num_goldens, ingest=made)

    # ---- conversational goldens: the same runs, with the conversation steps (synth.run.conversations)
    def _conversation_configs(
        self,
        per_context: int | None,
        contexts: ContextConstructionConfig | None,
        conversation: ConversationConfig | None,
    ) -> RunConfigs:
        configs = RunConfigs.of(self, None, per_context, contexts)
        return conversational(configs, conversation or self.conversation_config)

    @warns_if_short
    async def a_generate_conversational_goldens_from_docs(
        self,
        document_paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
        *,
        num_goldens: int | None = None,
        max_goldens_per_context: int | None = None,
        context_construction_config: ContextConstructionConfig | None = None,
        conversation_config: ConversationConfig | None = None,
        seed: int | None = None,
    ) -> Dataset:
        """:class:`~synth.ConversationalGolden` s from documents: exactly ``num_goldens`` when
        the corpus allows (else as many as it can, the manifest says why), or
        ``max_goldens_per_context`` conversations from each context; ``conversation_config``
        (default: the Synthesizer's) bounds their turns; ``seed`` replaces the Synthesizer's."""
        paths = as_paths(document_paths)
        contexts = context_construction_config or self.context_construction_config
        configs = self._conversation_configs(max_goldens_per_context, contexts, conversation_config)
        configs = configs.but(seed=seed, avoid_chunks=frozenset())
        return await self._docs_run(paths, configs, num_goldens, mode=DOCS_MODE)

    generate_conversational_goldens_from_docs = sync_twin(
        a_generate_conversational_goldens_from_docs
    )

    @warns_if_short
    async def a_generate_conversational_goldens_from_contexts(
        self,
        contexts: Sequence[Context | Sequence[str]],
        *,
        num_goldens: int | None = None,
        max_goldens_per_context: int | None = None,
        conversation_config: ConversationConfig | None = None,
        source_files: Sequence[Sequence[str] | str] | None = None,
    ) -> Dataset:
        """:class:`~synth.ConversationalGolden` s from given contexts (each a :class:`Context`
        or a list of texts), in order; without ``num_goldens``, ``max_goldens_per_context``
        from each."""
        given = as_contexts(contexts, source_files)
        configs = self._conversation_configs(max_goldens_per_context, None, conversation_config)
        return await self._contexts_run(given, configs, num_goldens, mode=CONTEXTS_MODE)

    generate_conversational_goldens_from_contexts = sync_twin(
        a_generate_conversational_goldens_from_contexts
    )

    # ---- agent goldens: a run per tool kind (synth.pipeline.tools) ----------------------------
    @warns_if_short
    async def a_generate_goldens_from_tools(
        self,
        tools: str | Sequence[Tool],
        *,
        num_goldens: int,
        kinds: Mapping[str, float] | None = None,
        execute: ExecuteArg = None,
        include_expected_output: bool | None = None,
        documents: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
    ) -> Dataset:
        """Goldens for an agent: exactly ``num_goldens`` user requests with the tool calls an agent
        should make (``expected_tools``), from ``tools`` (a tools file, an OpenAPI spec, an MCP
        server's URL or command, or :class:`~synth.tools.Tool` records). ``kinds`` weighs the
        kinds (default :data:`DEFAULT_KINDS`), each exact in count. ``execute`` runs each expected
        call and records its result (a ``module:function`` taking ``(name, arguments)``, or such
        a function; an MCP server's tools are run unless it is False); with results, the
        expected output is the agent's final reply (unless ``include_expected_output`` is False).

        ``documents`` (files, folders or URLs, as for ``generate_goldens_from_docs``) is the
        agent's knowledge base: the ``knowledge`` kind's goldens (default a fifth) are questions
        answered from it, each with its context and an expected output grounded in it, and no
        call expected."""
        check_num_goldens(num_goldens)
        paths = as_paths(documents) if documents is not None else None
        weights = checked_kinds(kinds, paths is not None)
        given = await aload_tools(tools) if isinstance(tools, str) else list(tools)
        if not given:
            raise ConfigError("generate_goldens_from_tools needs at least one tool")
        counts = type_counts(weights, num_goldens, order=TOOL_KINDS)
        made_kinds = [kind for kind, n in counts.items() if n > 0]
        plans = {kind: kind_plans(given, kind) for kind in made_kinds if kind != KNOWLEDGE}
        by_name = {tool.name: tool for tool in given}
        tries = 1 + self.context_construction_config.max_retries
        covered: Counter[str] = Counter()
        parts: list[tuple[str, int, Dataset]] = []
        manifests: list[tuple[str, dict[str, Any]]] = []  # each kind's run's, merged at the end
        knowledge: dict[str, Any] | None = None  # the documents' run's manifest
        self._merged = None
        async with executor_for(tools, execute) as executor:
            settings = ToolSettings(by_name, executor)
            for kind, n in counts.items():
                if n == 0:
                    continue
                part = kind if len(made_kinds) > 1 else None
                if kind == KNOWLEDGE:
                    assert paths is not None  # checked_kinds asks for documents
                    made, knowledge = await self._knowledge_run(
                        paths, n, part, include_expected_output
                    )
                    if knowledge is not None:
                        manifests.append((kind, knowledge))
                    tag_kind(made, kind)
                    parts.append((kind, n, made))
                    continue
                configs = RunConfigs.of(self, include_expected_output, 1)
                configs = dataclasses.replace(configs, tools=settings, filtration=None, part=part)
                ordered = by_coverage(plans[kind], covered)
                feed, quotas = candidates(ordered, by_name, n, tries)
                async with self._run(TOOLS_MODE, {"kind": kind}, n, configs) as run:
                    if run.finished:
                        made = replayed(run)
                    else:
                        target = dataclasses.replace(configs.target(n, len(feed)), quotas=quotas)
                        made = await deliver(run, ListFeed(feed), target)
                if run.manifest is not None:
                    manifests.append((kind, run.manifest))
                tag_kind(made, kind)
                for golden in made:
                    covered.update(call.name for call in golden.expected_tools or [])
                parts.append((kind, n, made))
        # the manifest the call reports: every kind's run's, summed (each stays in its folder)
        self._merged = merged_manifest(manifests) if len(manifests) > 1 else None
        if paths is not None and manifests:
            self._merged = with_sources(manifests, knowledge, tools, given)
        dataset = combine(parts, num_goldens)
        dataset.metadata[TOOL_KINDS_KEY] = dataset.metadata.pop("question_types")
        return dataset

    async def _knowledge_run(
        self, paths: list[str], n: int, part: str | None, include_expected_output: bool | None
    ) -> tuple[Dataset, dict[str, Any] | None]:
        """The ``knowledge`` goldens: a run from the documents (one per question type when the
        generation config asks for several), and its manifest."""
        contexts = self.context_construction_config
        configs = RunConfigs.of(self, include_expected_output, None, contexts)
        configs = dataclasses.replace(configs, part=part)
        made = await self._each_type(functools.partial(self._docs_run, paths), configs, n)
        return made, self.manifest  # a run per question type: theirs as one

    generate_goldens_from_tools = sync_twin(a_generate_goldens_from_tools)

    def plan_from_docs(
        self,
        document_paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
        *,
        num_goldens: int | None = None,
        max_goldens_per_context: int | None = None,
        include_expected_output: bool | None = None,
    ) -> Plan:
        """Ingest and select contexts, call no model, and say what a run would request and cost."""
        paths = as_paths(document_paths)
        contexts = self.context_construction_config
        configs = RunConfigs.of(self, include_expected_output, max_goldens_per_context, contexts)
        return plan_docs(paths, configs, self._ingest, self._models().names(), num_goldens)

    # ---- a dataset's upkeep after its run: refilled after a review, updated after its documents
    # changed. Both end at exactly N goldens: those kept untouched, the new ones made by
    # a_generate_goldens_from_docs from chunks the kept did not use, the replaced kept apart in a
    # file beside the dataset (the rules: synth.dataset.refill and synth.dataset.update) ------
    async def a_refill(self, dataset: Any, *, docs: DocsArg | None = None) -> Dataset:
        """A reviewed dataset, its rejected goldens replaced by new pending ones from chunks it
        did not use, from ``docs`` or its run's documents (a path is written back, the rejected
        kept in ``<file>.rejected.jsonl``; see :mod:`synth.dataset.refill`)."""
        generate = self.a_generate_goldens_from_docs
        return (await refill(dataset, docs, seed=self.seed, generate=generate)).dataset

    refill = sync_twin(a_refill)

    async def a_update(
        self, dataset: Any, docs: DocsArg, *, plan: UpdatePlan | None = None
    ) -> Dataset:
        """``dataset`` brought up to date with ``docs``: goldens whose chunks are all still there
        kept as they are, the stale and orphaned replaced by new pending ones from the changed and
        new files (a path is written back, beside it ``.retired.jsonl`` and ``.changes.json``;
        see :mod:`synth.dataset.update`). ``plan`` is :meth:`plan_update`'s, when already made."""
        paths = as_paths(docs)
        if plan is None:
            plan = self.plan_update(dataset, paths)
        if not plan.stale:
            return plan.dataset
        new = Dataset()  # only new files, nothing retired: the update records that it saw them
        if plan.retired:
            new = await self.a_generate_goldens_from_docs(
                paths, num_goldens=len(plan.retired), avoid_chunks=plan.avoid, seed=plan.seed
            )
        updated, retired = merge_update(plan, new)
        if isinstance(dataset, str | os.PathLike):
            write_update(dataset, updated, retired, plan)
        return updated

    update = sync_twin(a_update)

    def plan_update(self, dataset: Any, docs: DocsArg, *, embed: bool = True) -> UpdatePlan:
        """What :meth:`update` would do. ``embed``: ingest ``docs`` as a run does (unchanged files
        are not read; changed and new ones are embedded and stored, ready for the update);
        without it, no model request and nothing stored: the files are read and cut only."""
        paths = as_paths(docs)
        config = self.context_construction_config
        chunks = self._ingested_chunks(paths) if embed else read_chunks(config, paths)
        locations = source_locations(paths, absolute=self.absolute_paths)
        return plan_update(dataset, chunks, locations, seed=self.seed)

    def _ingested_chunks(self, paths: list[str]) -> list[Chunk]:
        """The corpus's chunks now, by the run's own ingest (unchanged files are not read again)."""
        store, pending, chunks = self._ingest(paths, self.context_construction_config)
        try:
            pending.finish()
        finally:
            pending.close()
            store.close()
        return list(chunks)


__all__ = ["Synthesizer"]
