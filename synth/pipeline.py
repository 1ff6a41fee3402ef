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
flow with their own steps 5-9: write and check conversations, then check their follow-ups.

Candidates stream through steps 3 to 10 independently, at most ``max_concurrent`` requests in
flight (without one, as many as the server keeps up with: the limiter finds the level). Around the flow, ``synth.run``: a run's models, setup, directory, manifest and progress,
held by its ``session``. Randomness comes from ``seed`` alone: same seed, inputs, cache, goldens.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, MutableMapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any

from synth.contexts.config import ContextConstructionConfig
from synth.contexts.coverage import file_quotas
from synth.contexts.feed import Candidate, ListFeed, ScratchFeed
from synth.data import Chunk, Context
from synth.dataset import Dataset
from synth.errors import ConfigError
from synth.generate.config import EvolutionConfig, FiltrationConfig, GenerationConfig, StylingConfig
from synth.generate.conversation import ConversationConfig
from synth.generate.templates import PromptOverrides, PromptSet
from synth.ingest.web import WebOptions
from synth.run.config import PipelineConfig, load_pipeline
from synth.run.conversations import ConversationalModes
from synth.run.dir import fingerprint_paths
from synth.run.given import GivenSources
from synth.run.ingest import files_read, ingest_in_run
from synth.run.inputs import SCRATCH_BATCH, as_contexts, as_paths, candidates_from_goldens
from synth.run.models import DEFAULT_CACHE, BatchArg, ModelArg, RunModels, checked_model
from synth.run.owner import RunOwner
from synth.run.plan import Plan, plan_docs, planned_coverage
from synth.run.progress import Progress
from synth.run.question_types import typed_runs
from synth.run.session import RunSession
from synth.run.setup import RunConfigs, check_num_goldens, docs_feed, per_context_note
from synth.run.sources import locate_source_files, source_locations
from synth.run.sync import sync_twin, warns_if_short
from synth.run.upkeep import DatasetUpkeep


@dataclass(eq=False, repr=False)
class Synthesizer(RunOwner, DatasetUpkeep, ConversationalModes, GivenSources):
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

    model: ModelArg = None
    _: KW_ONLY
    critic_model: ModelArg = None
    embedder: Any = None
    max_concurrent: int | None = None
    rpm: float | None = None
    tpm: float | None = None
    rate_window: float = 60.0
    batch: BatchArg = None
    timeout: float | None = None
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
    cache: str | os.PathLike[str] | MutableMapping[str, str] | None = DEFAULT_CACHE
    prompts: PromptOverrides | PromptSet | None = None
    base_url: str | None = None
    store_path: str | os.PathLike[str] = Path(".synth") / "chroma"
    store_url: str | None = None
    ray: str | bool | None = None
    web: WebOptions | None = None
    progress: Progress | bool | None = True
    absolute_paths: bool = False
    _session: RunSession | None = field(default=None, init=False, repr=False)
    _made: RunModels | None = field(default=None, init=False, repr=False)

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
        if configs.generation.asks_types:  # one run per question type, each exact in count
            return await typed_runs(configs, num_goldens, functools.partial(self._docs_run, paths))
        return await self._docs_run(paths, configs, num_goldens)

    async def _docs_run(
        self, paths: list[str], configs: RunConfigs, num_goldens: int | None, mode: str = "docs"
    ) -> Dataset:
        key_inputs = {"paths": fingerprint_paths(paths), **configs.avoid_key()}
        locations = source_locations(paths, absolute=self.absolute_paths)
        async with self._run(mode, key_inputs, num_goldens, configs) as run:
            if run.finished:
                return locate_source_files(run.replay(), locations)
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
        synth.run.given), then the feed of contexts (stages 2-4) through the stream (5-10)."""
        contexts = configs.contexts
        assert contexts is not None
        embedder = self._models().embedder(contexts.embedder)
        ingest = ingest or functools.partial(self._ingest, paths, contexts)
        with ingest_in_run(run, paths, embedder, ingest) as (pending, chunks):
            feed = docs_feed(chunks, pending, configs, num_goldens, run, pending.raise_if_failed)
            files = files_read(pending.report)
            coverage = planned_coverage(feed, configs, num_goldens, files=files)
            target = configs.target(num_goldens, feed.wanted)
            target.quotas = file_quotas(coverage, num_goldens)
            if num_goldens is None:
                run.progress.note(per_context_note(target))
            return await run.execute(feed, target, coverage)

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
                return run.replay()
            feed = ListFeed([Candidate(i, f"{c.id}#{i}", c) for i, c in enumerate(given)])
            return await run.execute(feed, configs.target(num_goldens, len(given)))

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
                return run.replay()
            tries = 1 + self.context_construction_config.max_retries
            feed = ScratchFeed(SCRATCH_BATCH, -(-num_goldens // SCRATCH_BATCH) * tries)
            return await run.execute(feed, configs.target(num_goldens, None))

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
                return run.replay()
            target = configs.target(num_goldens, len(candidates))
            return await run.execute(ListFeed(candidates), target)

    generate_goldens_from_goldens = sync_twin(a_generate_goldens_from_goldens)

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


__all__ = ["Synthesizer"]
