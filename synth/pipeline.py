"""Synthesizer: a folder of documents in, exactly N trustworthy goldens out.

The whole flow, in the order the data moves (each step names the module that does it)::

    1. ingest      load, chunk, embed, store            synth.store.ingest_documents
    2. select      seed chunks, fair across files       synth.contexts.select   } synth.run.feeds
    3. critic      score seeds, replace rejected ones   synth.contexts.critic   } (DocsFeed)
    4. group       seed + similar neighbours            synth.contexts.group    }
    5. inputs      questions from each context          synth.generate.inputs   }
    6. filter      critic-score, rewrite or drop        synth.generate.filter   } synth.run.stages
    7. evolve      make inputs more demanding           synth.generate.evolve   } (one candidate
    8. style       scenario, task, format, personas     synth.generate.style    }  at a time)
    9. expected    grounded answers                     synth.generate.expected }
   10. dedup       drop near-duplicate inputs           synth.generate.dedup    } synth.run.stream
   11. top up      draw new contexts until N are kept                           } (the controller)
       dataset     goldens with their provenance        synth.dataset.Dataset

Candidates stream through steps 3 to 10 independently, with at most ``max_concurrent`` requests in
flight. Around the flow: the run directory (``synth.run.dir``: every stage's output as it is
produced, so a killed run resumes where it stopped), the manifest (``synth.run.manifest``) and the
progress display (``synth.run.progress``), held together by ``synth.run.session``. Randomness comes from ``seed`` only, derived per item,
so a run with the same seed, inputs and a warm cache gives the same goldens field for field.
"""

from __future__ import annotations

import functools
import os
import random
import warnings
from collections.abc import Callable, Coroutine, Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import Any, ParamSpec

from synth.contexts.config import ContextConstructionConfig
from synth.data import Chunk, Context
from synth.dataset import Dataset
from synth.errors import ConfigError, ShortfallWarning
from synth.generate.config import (
    EvolutionConfig,
    FiltrationConfig,
    GenerationConfig,
    StylingConfig,
)
from synth.generate.templates import PromptSet
from synth.llm.base import LLM, run_sync
from synth.llm.factory import make_llm, parse_model_spec
from synth.llm.limiter import RateLimiter
from synth.llm.sqlite_cache import SQLiteCache
from synth.llm.usage import Usage, UsageModel
from synth.run.config import PipelineConfig, load_pipeline
from synth.run.dir import fingerprint_paths
from synth.run.feeds import (
    Candidate,
    DocsFeed,
    ListFeed,
    ScratchFeed,
    context_from_texts,
)
from synth.run.ingest import ingest_for_run, ingest_row
from synth.run.inputs import as_contexts, as_paths, short_hash
from synth.run.plan import Plan, make_plan
from synth.run.progress import Progress
from synth.run.session import RunSession
from synth.run.sources import locate_source_files, source_locations
from synth.run.stages import StageSettings
from synth.run.stream import Target

#: the model used when none is named and an OpenAI key (or server) is available
DEFAULT_MODEL = "openai:gpt-4.1-mini"
#: the response cache every run shares, relative to the working folder
DEFAULT_CACHE = Path(".synth") / "cache.sqlite"
#: inputs asked for per request when generating from scratch
SCRATCH_BATCH = 5
#: rpm/tpm budgets are paced over a window this much longer than the one given (60 s -> 63 s)
RATE_MARGIN = 0.05

ModelArg = str | LLM | Callable[..., Any] | None
P = ParamSpec("P")


def default_model_spec(base_url: str | None = None) -> str | None:
    """The model a run uses when none is named, from the API keys set (None when no key is)."""
    if os.environ.get("OPENAI_API_KEY") or base_url or os.environ.get("OPENAI_BASE_URL"):
        return DEFAULT_MODEL
    if os.environ.get("ANTHROPIC_API_KEY"):
        return "anthropic:claude-haiku-4-5"
    if os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY"):
        return "gemini:gemini-2.5-flash"
    return None


NO_MODEL = (
    "no model named and no API key found: pass model= (a 'provider:model' spec, an LLM or a "
    "callable), or set OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY"
)


def warn_if_short(dataset: Dataset, stacklevel: int) -> None:
    """Warn with :class:`~synth.errors.ShortfallWarning` when ``dataset`` holds fewer goldens
    than were asked, naming the cause that stopped the run first."""
    short = dataset.shortfall
    if short is not None:
        warnings.warn(
            f"{short} (the dataset's shortfall and the run's manifest list every drop)",
            ShortfallWarning,
            stacklevel=stacklevel + 1,
        )


def _warns_if_short(
    method: Callable[P, Coroutine[Any, Any, Dataset]],
) -> Callable[P, Coroutine[Any, Any, Dataset]]:
    """``method`` warning when it delivered fewer goldens than asked (see :func:`warn_if_short`);
    ``__wrapped__`` is ``method`` itself, for its sync twin, which warns in its caller's place."""

    @functools.wraps(method)
    async def checked(*args: P.args, **kwargs: P.kwargs) -> Dataset:
        dataset = await method(*args, **kwargs)
        warn_if_short(dataset, stacklevel=2)  # the line that awaited the call
        return dataset

    return checked


def _sync_twin(method: Callable[P, Coroutine[Any, Any, Dataset]], doc: str) -> Callable[P, Dataset]:
    """The sync twin of an async ``a_<name>`` method: same parameters, run to completion."""
    unchecked = getattr(method, "__wrapped__", method)

    @functools.wraps(method)
    def twin(*args: P.args, **kwargs: P.kwargs) -> Dataset:
        dataset = run_sync(unchecked(*args, **kwargs))
        warn_if_short(dataset, stacklevel=2)  # the line that called the twin
        return dataset

    twin.__name__ = method.__name__.removeprefix("a_")
    twin.__qualname__ = method.__qualname__.replace(".a_", ".", 1)
    twin.__doc__ = doc
    return twin


class Synthesizer:
    """Generates goldens from documents, contexts, a scenario, or example goldens.

    ``model`` and ``critic_model`` are ``"provider:model"`` specs, :class:`~synth.LLM` objects or
    callables ``fn(prompt, system) -> str`` (the critic defaults to the model); ``embedder`` is an
    embedder spec or object. Each stage has its config (DeepEval's names);
    ``use_context_critic``/``use_filter`` switch those stages off. ``run_dir`` (default
    ``.synth/runs/<run id>``) holds the run's stage outputs and manifest; ``cache`` is the
    response cache (a path for SQLite, any mutable mapping, or None). ``prompts`` overrides
    prompt templates per stage. ``rpm``/``tpm`` cap the requests and tokens every model of the run
    spends per ``rate_window`` seconds (one shared budget; paced over a window
    :data:`RATE_MARGIN` longer, so a server limit of exactly ``rpm`` is not tripped).
    A golden's ``source_files`` open from the working folder (relative to it), or are absolute
    with ``absolute_paths``. Nothing is checked or connected until a ``generate_*`` call.
    """

    def __init__(
        self,
        model: ModelArg = None,
        *,
        critic_model: ModelArg = None,
        embedder: Any = None,
        max_concurrent: int = 32,
        rpm: float | None = None,
        tpm: float | None = None,
        rate_window: float = 60.0,
        filtration_config: FiltrationConfig | None = None,
        evolution_config: EvolutionConfig | None = None,
        styling_config: StylingConfig | None = None,
        context_construction_config: ContextConstructionConfig | None = None,
        generation_config: GenerationConfig | None = None,
        use_context_critic: bool = True,
        use_filter: bool = True,
        seed: int = 0,
        run_dir: str | os.PathLike[str] | None = None,
        cache: str | os.PathLike[str] | MutableMapping[str, str] | None = DEFAULT_CACHE,
        prompts: Mapping[str, str] | PromptSet | None = None,
        base_url: str | None = None,
        store_path: str | os.PathLike[str] = Path(".synth") / "chroma",
        store_url: str | None = None,
        progress: Progress | None = None,
        absolute_paths: bool = False,
    ) -> None:
        self.model = model
        self.critic_model = critic_model
        self.embedder = embedder
        self.max_concurrent = max_concurrent
        self.rpm = rpm
        self.tpm = tpm
        self.rate_window = rate_window
        self.filtration_config = filtration_config or FiltrationConfig()
        self.evolution_config = evolution_config or EvolutionConfig()
        self.styling_config = styling_config or StylingConfig()
        self.context_construction_config = (
            context_construction_config or ContextConstructionConfig()
        )
        self.generation_config = generation_config or GenerationConfig()
        self.use_context_critic = use_context_critic
        self.use_filter = use_filter
        self.seed = seed
        self.run_dir = run_dir
        self.cache = cache
        self.prompts = prompts
        self.base_url = base_url
        self.store_path = store_path
        self.store_url = store_url
        self.progress = progress
        self.absolute_paths = absolute_paths
        self._session: RunSession | None = None
        self._owned: list[LLM] = []
        self._cache_obj: Any = None
        self._models: tuple[LLM, LLM, list[Usage], RateLimiter] | None = None
        self._embedder_obj: Any = None
        # models and embedders named by a stage config, made once: (what was named, made)
        self._stage_models: list[tuple[Any, LLM]] = []
        self._stage_embedders: list[tuple[Any, Any]] = []

    @property
    def manifest(self) -> dict[str, Any] | None:
        """The manifest of the last run (also in its run directory), as last written."""
        return self._session.manifest if self._session is not None else None

    @property
    def last_run_dir(self) -> Path | None:
        """The run directory of the last run."""
        return self._session.path if self._session is not None else None

    @classmethod
    def from_pipeline(
        cls, pipeline: PipelineConfig | str | os.PathLike[str], **overrides: Any
    ) -> Synthesizer:
        """A Synthesizer set up by a pipeline file (or PipelineConfig); keyword arguments win."""
        config = pipeline if isinstance(pipeline, PipelineConfig) else load_pipeline(pipeline)
        values: dict[str, Any] = {
            "model": config.model,
            "critic_model": config.critic_model,
            "embedder": config.embedder,
            "base_url": config.base_url,
            "seed": config.seed,
            "max_concurrent": config.max_concurrent,
            "rpm": config.rpm,
            "tpm": config.tpm,
            "filtration_config": config.filtration,
            "evolution_config": config.evolution,
            "styling_config": config.styling,
            "context_construction_config": config.contexts,
            "generation_config": config.generation,
            "use_context_critic": config.context_critic,
            "use_filter": config.filter,
            "prompts": config.prompts,
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    # ---- the four ways in (each with a sync twin, made by _sync_twin, after it) --------------------
    @_warns_if_short
    async def a_generate_goldens_from_docs(
        self,
        document_paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
        *,
        num_goldens: int | None = None,
        include_expected_output: bool | None = None,
        max_goldens_per_context: int | None = None,
        context_construction_config: ContextConstructionConfig | None = None,
    ) -> Dataset:
        """Goldens from documents: ingest, then every stage; exactly ``num_goldens`` when the
        corpus allows (else as many as it can, and the manifest says why), or, without
        ``num_goldens``, ``max_goldens_per_context`` from each of the contexts the
        ``context_construction_config`` asks for."""
        paths = as_paths(document_paths)
        contexts_config = context_construction_config or self.context_construction_config
        generation = self._generation(include_expected_output, max_goldens_per_context)
        key_inputs = {"paths": fingerprint_paths(paths)}
        locations = source_locations(paths, absolute=self.absolute_paths)
        async with self._run("docs", key_inputs, num_goldens, generation, contexts_config) as run:
            if run.finished:
                return locate_source_files(run.replay(), locations)
            embedder = self._get_embedder(contexts_config)
            sent_before = embedder.batches_embedded
            store, pending, chunks = self._ingest(paths, contexts_config)
            try:
                report = pending.report
                if report.notice:
                    run.note(report.notice)
                run.rows.append(ingest_row(report))
                run.info["inputs"] = {
                    "paths": paths,
                    "files": len(report.files),
                    "chunks": len(chunks),
                    "store": report.collection,
                }
                # the last chunks may still be being stored: the feed waits for them before it
                # reads the store, while the first critic requests are already out
                feed = self._docs_feed(
                    chunks, store, contexts_config, generation, num_goldens, run, pending.finish
                )
                target = _target(generation, num_goldens, feed.wanted)
                dataset = await run.execute(feed, target)
                report = pending.finish()
                run.count_embeddings("ingest", embedder, sent_before, pending.embedder_batches)
                run.note(
                    f"ingested {_files_read(report)} of {len(report.files)} files: "
                    f"{len(chunks)} chunks ({report.embedded} embedded now, "
                    f"{report.reused} already stored)"
                )
                return locate_source_files(dataset, locations)
            finally:
                pending.close()  # when the run failed first: the writes still waiting are dropped
                store.close()

    generate_goldens_from_docs = _sync_twin(
        a_generate_goldens_from_docs,
        """Goldens from documents (see :meth:`a_generate_goldens_from_docs`).""",
    )

    @_warns_if_short
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
        generation = self._generation(include_expected_output, max_goldens_per_context)
        key_inputs = {"contexts": [c.model_dump(mode="json") for c in given]}
        async with self._run("contexts", key_inputs, num_goldens, generation, None) as run:
            if run.finished:
                return run.replay()
            feed = ListFeed([Candidate(i, f"{c.id}#{i}", c) for i, c in enumerate(given)])
            return await run.execute(feed, _target(generation, num_goldens, len(given)))

    generate_goldens_from_contexts = _sync_twin(
        a_generate_goldens_from_contexts,
        """Goldens from given contexts (see :meth:`a_generate_goldens_from_contexts`).""",
    )

    @_warns_if_short
    async def a_generate_goldens_from_scratch(
        self, num_goldens: int, *, include_expected_output: bool | None = None
    ) -> Dataset:
        """``num_goldens`` goldens with no documents: the styling config's ``scenario``, ``task``
        and ``input_format`` describe what to write (all three are required)."""
        self.styling_config.require_scratch()
        _check_num_goldens(num_goldens)
        generation = self._generation(include_expected_output, SCRATCH_BATCH)
        async with self._run("scratch", {}, num_goldens, generation, None) as run:
            if run.finished:
                return run.replay()
            retries = self.context_construction_config.max_retries
            limit = _ceil_div(num_goldens, SCRATCH_BATCH) * (1 + retries)
            feed = ScratchFeed(SCRATCH_BATCH, limit)
            return await run.execute(feed, _target(generation, num_goldens, None))

    generate_goldens_from_scratch = _sync_twin(
        a_generate_goldens_from_scratch,
        """Goldens from the styling alone (see :meth:`a_generate_goldens_from_scratch`).""",
    )

    @_warns_if_short
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
        generation = self._generation(include_expected_output, max_goldens_per_golden)
        candidates = []
        for i, golden in enumerate(given):
            context = None
            if golden.context:
                context = context_from_texts(golden.context, golden.source_files)
            others = [given[(i + j) % len(given)].input for j in range(1, min(len(given), 5))]
            key = f"golden{i}:{short_hash(golden.input)}"
            candidates.append(Candidate(i, key, context, examples=[golden.input, *others]))
        key_inputs = {"goldens": [g.model_dump(mode="json") for g in given]}
        async with self._run("goldens", key_inputs, num_goldens, generation, None) as run:
            if run.finished:
                return run.replay()
            feed = ListFeed(candidates)
            return await run.execute(feed, _target(generation, num_goldens, len(candidates)))

    generate_goldens_from_goldens = _sync_twin(
        a_generate_goldens_from_goldens,
        """New goldens written like given ones (see :meth:`a_generate_goldens_from_goldens`).""",
    )

    # ---- --plan --------------------------------------------------------------------------------
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
        contexts_config = self.context_construction_config
        generation = self._generation(include_expected_output, max_goldens_per_context)
        store, pending, chunks = self._ingest(paths, contexts_config)
        try:
            pending.finish()
            feed = self._docs_feed(chunks, store, contexts_config, generation, num_goldens, None)
            count = feed.wanted
            while len(feed.candidates) < count and not feed.exhausted:
                feed.request(count - len(feed.candidates))
                feed.advance()
            chosen = feed.candidates[:count]
        finally:
            pending.close()
            store.close()
        seeds = [_seed_of(c, chunks) for c in chosen]
        return make_plan(
            [c.context for c in chosen if c.context is not None],
            [s for s in seeds if s is not None],
            generation=generation,
            evolution=self.evolution_config,
            styling=self.styling_config,
            prompts=self._prompt_set(),
            contexts_config=contexts_config,
            use_critic=self.use_context_critic,
            use_filter=self.use_filter,
            generator=_spec_name(self.model or default_model_spec(self.base_url)),
            critic=_spec_name(self.critic_model or self.model or default_model_spec(self.base_url)),
            num_goldens=num_goldens,
            files=_files_read(pending.report),
            chunks=len(chunks),
        )

    # ---- the parts ---------------------------------------------------------------------------------
    def _generation(
        self, include_expected: bool | None, per_context: int | None
    ) -> GenerationConfig:
        changes: dict[str, Any] = {}
        if include_expected is not None:
            changes["include_expected_output"] = include_expected
        if per_context is not None:
            changes["max_goldens_per_context"] = per_context
        return self.generation_config.replace(**changes) if changes else self.generation_config

    def _prompt_set(self) -> PromptSet:
        if isinstance(self.prompts, PromptSet):
            return self.prompts
        return PromptSet(self.prompts)

    def _get_embedder(self, contexts: ContextConstructionConfig | None = None) -> Any:
        """The Synthesizer's embedder (it deduplicates inputs); with ``contexts``, the one that
        embeds the chunks: the config's own when it names one. Without an embedder of its own,
        the Synthesizer uses the config's for everything (DeepEval users set it there)."""
        from synth.store import make_embedder

        named = contexts.embedder if contexts is not None else None
        shares = self._embedding_shares()
        if named is not None:
            found = _made_for(self._stage_embedders, named)
            if found is None:
                found = make_embedder(named, base_url=self.base_url, **shares)
                self._stage_embedders.append((named, found))
            if found is not named:  # made here: it follows this run, not the one it was made in
                found.share(**shares)
            return found
        if self._embedder_obj is None:
            self._embedder_obj = make_embedder(self.embedder, base_url=self.base_url, **shares)
        if self._embedder_obj is not self.embedder:
            self._embedder_obj.share(**shares)
        return self._embedder_obj

    def _embedding_shares(self) -> dict[str, Any]:
        """What a remote embedder made here shares with the models: the run's limiter (its
        ``max_concurrent``) and usage (its retries, by stage, in the manifest)."""
        if self._models is None:
            return {}
        _, _, usages, limiter = self._models
        return {"limiter": limiter, "usage": usages[0]}

    def _get_models(self) -> tuple[LLM, LLM, list[Usage], RateLimiter]:
        """The generator and critic models, sharing one cache, one limiter and one usage."""
        if self._models is not None:
            return self._models
        spec = self.model if self.model is not None else default_model_spec(self.base_url)
        if spec is None:
            raise ConfigError(NO_MODEL)
        limiter = make_limiter(self.max_concurrent, self.rpm, self.tpm, self.rate_window)
        usage = Usage()
        cache: Any = self.cache
        if isinstance(cache, str | os.PathLike):
            cache = SQLiteCache(cache)
        self._cache_obj = cache
        generator = self._make(spec, cache, limiter, usage)
        critic = generator
        if self.critic_model is not None:
            critic = self._make(self.critic_model, cache, limiter, usage)
        usages = [usage]
        for model in (generator, critic):
            _add_usage(usages, model)
        self._models = (generator, critic, usages, limiter)
        return self._models

    def _stage_critic(self, named: Any, default: LLM) -> LLM:
        """The critic a stage config names (made once, sharing the run's cache, limiter and
        usage), or ``default`` when it names none."""
        if named is None:
            return default
        found: LLM | None = _made_for(self._stage_models, named)
        if found is not None:
            return found
        _, _, usages, limiter = self._get_models()
        model = self._make(named, self._cache_obj, limiter, usages[0])
        _add_usage(usages, model)
        self._stage_models.append((named, model))
        return model

    def _make(self, spec: Any, cache: Any, limiter: RateLimiter, usage: Usage) -> LLM:
        if isinstance(spec, UsageModel):
            return spec  # already made: it keeps its own cache, limits and usage
        kwargs: dict[str, Any] = {"cache": cache, "limiter": limiter, "usage": usage}
        if isinstance(spec, str):
            kwargs["base_url"] = self.base_url
        model = make_llm(spec, **kwargs)
        if isinstance(spec, str):
            self._owned.append(model)  # made here from a spec: closed by close()
        return model

    def close(self) -> None:
        """Release the clients and threads of the models and embedders made from specs, and the
        cache file.

        After Ctrl-C this also ends requests still waiting on a server, so the process can exit.
        """
        for model in self._owned:
            model.close()
        self._owned.clear()
        made = [] if self._embedder_obj is self.embedder else [self._embedder_obj]
        made += [embedder for named, embedder in self._stage_embedders if embedder is not named]
        for embedder in made:
            if embedder is not None:
                embedder.close()  # it reopens its client if used again
        if isinstance(self._cache_obj, SQLiteCache):
            self._cache_obj.close()
        self._models = None
        self._stage_models.clear()

    def __enter__(self) -> Synthesizer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _ingest(
        self, paths: list[str], config: ContextConstructionConfig
    ) -> tuple[Any, Any, list[Chunk]]:
        """Stage 1: load, chunk, embed and store; the store, the ingest under way (its last writes
        may still run: ``finish()`` waits for them) and this run's chunks."""
        return ingest_for_run(
            paths,
            config,
            self._get_embedder(config),
            store_path=self.store_path,
            store_url=self.store_url,
        )

    def _docs_feed(
        self,
        chunks: list[Chunk],
        store: Any,
        config: ContextConstructionConfig,
        generation: GenerationConfig,
        num_goldens: int | None,
        run: RunSession | None,
        store_ready: Callable[[], object] | None = None,
    ) -> DocsFeed:
        """The feed of contexts from ``chunks``; without a ``run`` (a plan), no critic, no
        prompts and no journals. ``store_ready`` waits until every chunk is stored."""
        wanted = None
        if num_goldens is not None:
            wanted = _ceil_div(num_goldens, generation.max_goldens_per_context)
        rng = random.Random(f"{self.seed}:select")
        if run is None:
            return DocsFeed(chunks, store, config, rng, critic=None, prompts=None, wanted=wanted)
        return DocsFeed(
            chunks,
            store,
            config,
            rng,
            critic=run.context_critic if self.use_context_critic else None,
            prompts=run.prompts,
            wanted=wanted,
            journal=run.journal("critic"),
            rejects=run.journal("rejects"),
            bad_replies=run.journal("bad_replies"),
            store_ready=store_ready,
        )

    def _run(
        self,
        mode: str,
        key_inputs: dict[str, Any],
        num_goldens: int | None,
        generation: GenerationConfig,
        contexts_config: ContextConstructionConfig | None,
    ) -> RunSession:
        if num_goldens is not None:
            _check_num_goldens(num_goldens)
        generator, critic, usages, limiter = self._get_models()
        context_critic = critic
        if contexts_config is not None and self.use_context_critic:
            context_critic = self._stage_critic(contexts_config.critic_model, critic)
        filter_critic = critic
        if self.use_filter:
            filter_critic = self._stage_critic(self.filtration_config.critic_model, critic)
        embedder = self._get_embedder(contexts_config if self.embedder is None else None)
        prompts = self._prompt_set()
        config = {
            "contexts": contexts_config.model_dump(mode="json") if contexts_config else None,
            "context_critic": self.use_context_critic,
            "generation": generation.model_dump(mode="json"),
            "filtration": self.filtration_config.model_dump(mode="json")
            if self.use_filter
            else None,
            "evolution": self.evolution_config.model_dump(mode="json"),
            "styling": self.styling_config.model_dump(mode="json"),
        }
        models = {
            "generator": generator.identity(),
            "critic": critic.identity(),
            "embedder": embedder.identity(),
        }
        # what a stage config named instead of the Synthesizer's (absent when nothing was)
        if context_critic is not critic:
            models["context_critic"] = context_critic.identity()
        if filter_critic is not critic:
            models["filter_critic"] = filter_critic.identity()
        if contexts_config is not None and contexts_config.embedder is not None:
            models["context_embedder"] = self._get_embedder(contexts_config).identity()
        key = {
            "mode": mode,
            "inputs": key_inputs,
            "num_goldens": num_goldens,
            "seed": self.seed,
            "config": config,
            "models": models,
            "prompt_version": prompts.version,
        }
        settings = StageSettings(
            generator=generator,
            critic=filter_critic,  # the generation stages' only critic is the input filter
            generation=generation,
            filtration=self.filtration_config if self.use_filter else None,
            evolution=self.evolution_config,
            styling=self.styling_config,
            prompts=prompts,
            seed=self.seed,
            embedder=embedder if generation.dedup_threshold is not None else None,
            limiter=limiter,
        )
        self._session = RunSession(
            mode,
            key,
            settings,
            usages,
            limiter,
            num_goldens,
            run_dir=self.run_dir,
            progress=self.progress,
            context_critic=context_critic,
        )
        self._session.info["limits"] = {
            "max_concurrent": limiter.max_concurrent,
            "rpm": self.rpm,
            "tpm": self.tpm,
            "rate_window": self.rate_window,
            "paced_window": limiter.window,
        }
        return self._session


# ---- helpers ---------------------------------------------------------------------------------------


def make_limiter(
    max_concurrent: int, rpm: float | None, tpm: float | None, window: float = 60.0
) -> RateLimiter:
    """The run's shared limiter: ``rpm`` requests and ``tpm`` tokens per ``window`` seconds,
    paced over a window :data:`RATE_MARGIN` longer, so a server allowing exactly ``rpm`` per
    window is not tripped by the gap between when synth starts a request and when the server
    counts it."""
    return RateLimiter(max_concurrent, rpm=rpm, tpm=tpm, window=window * (1 + RATE_MARGIN))


def _check_num_goldens(num_goldens: object) -> None:
    if not isinstance(num_goldens, int) or num_goldens < 1:
        raise ConfigError(f"num_goldens must be a positive integer, got {num_goldens!r}")


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _files_read(report: Any) -> int:
    return sum(1 for f in report.files if f.status == "ok")


def _made_for(made: list[tuple[Any, Any]], named: Any) -> Any:
    """What was made (once) for what ``named`` names, or None."""
    for spec, obj in made:
        if spec is named or (isinstance(spec, str) and spec == named):
            return obj
    return None


def _add_usage(usages: list[Usage], model: LLM) -> None:
    """Add a model's own usage (a model made elsewhere keeps one) unless already counted."""
    if isinstance(model, UsageModel) and all(model.usage is not u for u in usages):
        usages.append(model.usage)


def _target(generation: GenerationConfig, num_goldens: int | None, contexts: int | None) -> Target:
    per_context = generation.max_goldens_per_context
    if num_goldens is not None:
        return Target(per_context=per_context, num_goldens=num_goldens)
    return Target(per_context=per_context, contexts=contexts or 0)


def _seed_of(candidate: Candidate, chunks: list[Chunk]) -> Chunk | None:
    if candidate.context is None:
        return None
    seed_id = candidate.context.chunk_ids[0]
    return next((c for c in chunks if c.id == seed_id), None)


def _spec_name(model: Any) -> str:
    if model is None:
        return DEFAULT_MODEL
    if isinstance(model, str):
        provider, name = parse_model_spec(model)
        return f"{provider}:{name}" if name else provider
    if isinstance(model, LLM):
        return f"{model.provider}:{model.model}"
    return getattr(model, "__qualname__", type(model).__name__)


__all__ = [
    "DEFAULT_CACHE",
    "DEFAULT_MODEL",
    "NO_MODEL",
    "RATE_MARGIN",
    "PipelineConfig",
    "Synthesizer",
    "default_model_spec",
    "load_pipeline",
]
