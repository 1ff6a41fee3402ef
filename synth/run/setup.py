"""The setup of one run: the stage configs it goes by, its key, its stages' settings, its session.

A run directory is found again by the run's key: what it generates from, how many goldens, the
seed, every stage config, the identity of every model and embedder, and the prompts' version. The
same key resumes the same run; any change starts a new one.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from synth._ids import joined_hash
from synth.contexts.config import ContextConstructionConfig
from synth.contexts.seed_feed import DocsFeed
from synth.data import Chunk
from synth.errors import ConfigError
from synth.generate.config import (
    EvolutionConfig,
    FiltrationConfig,
    GenerationConfig,
    StylingConfig,
)
from synth.generate.conversation import ConversationConfig
from synth.generate.question_types import DISTRACTING, OUT_OF_SCOPE
from synth.generate.steps import ToolSettings
from synth.llm.base import LLM
from synth.llm.batch import JOURNAL as BATCH_JOURNAL
from synth.run.models import Models, RunModels
from synth.run.progress import Progress
from synth.run.session import RunSession
from synth.run.stages import StageSettings
from synth.run.stream import Target
from synth.run.yields import PRIOR_KEEP
from synth.stage.templates import PromptOverrides, PromptSet

if TYPE_CHECKING:
    from synth.store.embedder import Embedder

#: the question types whose steps search the run's chunks
NEEDS_CORPUS = (DISTRACTING, OUT_OF_SCOPE)


class StageOptions(Protocol):
    """What a run's stage configs are taken from: a Synthesizer's arguments of these names."""

    generation_config: GenerationConfig
    filtration_config: FiltrationConfig
    evolution_config: EvolutionConfig
    styling_config: StylingConfig
    use_context_critic: bool
    use_filter: bool
    seed: int
    prompts: PromptOverrides | PromptSet | None


@dataclass(frozen=True)
class RunConfigs:
    """The stage configs one run goes by: the Synthesizer's, with what the call overrides.

    ``contexts`` is None for a run without documents, ``filtration`` None when the filter is off.
    """

    generation: GenerationConfig
    contexts: ContextConstructionConfig | None
    filtration: FiltrationConfig | None
    evolution: EvolutionConfig
    styling: StylingConfig
    seed: int
    context_critic: bool
    prompt_overrides: PromptOverrides | PromptSet | None = None
    #: chunk ids no seed or neighbour is taken from while the corpus has others (a refill's)
    avoid_chunks: frozenset[str] = frozenset()
    #: this run's name among the runs of one call (a mixed run's type): a run directory the
    #: caller named holds it in a folder of that name
    part: str | None = None
    #: a conversational run's config (None: single-turn goldens)
    conversation: ConversationConfig | None = None
    #: an agent run's tools and executor (None: goldens about documents)
    tools: ToolSettings | None = None

    @classmethod
    def of(
        cls,
        options: StageOptions,
        include_expected: bool | None,
        per_context: int | None,
        contexts: ContextConstructionConfig | None = None,
    ) -> RunConfigs:
        """The configs of one run: ``options``' own, with what the call overrides."""
        changes: dict[str, Any] = {}
        if include_expected is not None:
            changes["include_expected_output"] = include_expected
        if per_context is not None:
            changes["max_goldens_per_context"] = per_context
        generation = options.generation_config
        return cls(
            generation=generation.replace(**changes) if changes else generation,
            contexts=contexts,
            filtration=options.filtration_config if options.use_filter else None,
            evolution=options.evolution_config,
            styling=options.styling_config,
            seed=options.seed,
            context_critic=options.use_context_critic,
            prompt_overrides=options.prompts,
        )

    @functools.cached_property
    def prompts(self) -> PromptSet:
        """The packaged prompts with the overrides (checked when first asked for)."""
        if isinstance(self.prompt_overrides, PromptSet):
            return self.prompt_overrides
        return PromptSet(self.prompt_overrides)

    def as_key(self) -> dict[str, Any]:
        """The configs as the run's key holds them (JSON); a conversational run's has its
        config under ``conversation`` (a single-turn run's has no such key)."""
        key = {
            "contexts": self.contexts.model_dump(mode="json") if self.contexts else None,
            "context_critic": self.context_critic,
            "generation": self.generation.model_dump(mode="json"),
            "filtration": self.filtration.model_dump(mode="json") if self.filtration else None,
            "evolution": self.evolution.model_dump(mode="json"),
            "styling": self.styling.model_dump(mode="json"),
        }
        if self.conversation is not None:
            key["conversation"] = self.conversation.model_dump(mode="json")
        if self.tools is not None:
            key["tools"] = self.tools.as_key()
        return key

    def but(self, *, seed: int | None, avoid_chunks: frozenset[str]) -> RunConfigs:
        """These configs with a call's own seed (None: keep this one) and chunks to avoid."""
        seed = self.seed if seed is None else seed
        return dataclasses.replace(self, seed=seed, avoid_chunks=avoid_chunks)

    def avoid_key(self) -> dict[str, str]:
        """What the chunks to avoid add to the run's key inputs (nothing when there are none)."""
        return {"avoid": joined_hash(sorted(self.avoid_chunks))} if self.avoid_chunks else {}

    def wanted_contexts(self, num_goldens: int | None) -> int | None:
        """The contexts ``num_goldens`` take at this generation's goldens per context (None when
        the run asks for no number of goldens)."""
        if num_goldens is None:
            return None
        return -(-num_goldens // self.generation.max_goldens_per_context)

    def target(
        self,
        num_goldens: int | None,
        contexts: int | None,
        quotas: dict[str, int] | None = None,
    ) -> Target:
        """What the run aims for: ``num_goldens`` goldens, or else ``contexts`` contexts' worth;
        with ``quotas``, the goldens each file gives while it can."""
        per_context = self.generation.max_goldens_per_context
        if num_goldens is not None:
            return Target(per_context=per_context, num_goldens=num_goldens, quotas=quotas)
        return Target(per_context=per_context, contexts=contexts or 0, quotas=quotas)


@dataclass(frozen=True)
class RunPlace:
    """Where a run keeps its outputs (None: ``.synth/runs/<run id>``) and shows its progress."""

    run_dir: str | os.PathLike[str] | None
    progress: Progress | None

    def of_part(self, part: str | None) -> RunPlace:
        """Where the run named ``part`` of a call keeps its outputs: its own folder in a run
        directory the caller named (the default one is per run already)."""
        if part is None or self.run_dir is None:
            return self
        return dataclasses.replace(self, run_dir=Path(self.run_dir) / part)


def per_context_note(target: Target) -> str:
    """What a run from documents without ``num_goldens`` aims for, said when it starts."""
    contexts = target.contexts or 0
    return (
        f"no num_goldens: up to {target.per_context} goldens from each of the {contexts} "
        f"contexts the documents give (up to {target.per_context * contexts}); "
        "pass num_goldens=N for exactly N"
    )


def check_num_goldens(num_goldens: object) -> None:
    """Raise ConfigError unless ``num_goldens`` is a positive integer."""
    if not isinstance(num_goldens, int) or num_goldens < 1:
        raise ConfigError(f"num_goldens must be a positive integer, got {num_goldens!r}")


def open_session(
    mode: str,
    key_inputs: dict[str, Any],
    num_goldens: int | None,
    configs: RunConfigs,
    owner: RunModels,
    place: RunPlace,
) -> RunSession:
    """The session of a run (enter it with ``async with``), with its models made or reused."""
    if num_goldens is not None:
        check_num_goldens(num_goldens)
    _check_one_type(mode, configs)
    models = owner.models()
    context_critic = models.critic
    if configs.contexts is not None and configs.context_critic:
        context_critic = owner.stage_critic(configs.contexts.critic_model, models.critic)
    filter_critic = models.critic
    if configs.filtration is not None:
        filter_critic = owner.stage_critic(configs.filtration.critic_model, models.critic)
    # the Synthesizer's embedder deduplicates inputs; without one, the contexts config's does
    named = configs.contexts.embedder if configs.contexts is not None else None
    embedder = owner.embedder(named if owner.settings.embedder is None else None)
    identities = _identities(models, context_critic, filter_critic, embedder)
    if named is not None:
        identities["context_embedder"] = owner.embedder(named).identity()
    key = {
        "mode": mode,
        "inputs": key_inputs,
        "num_goldens": num_goldens,
        "seed": configs.seed,
        "config": configs.as_key(),
        "models": identities,
        "prompt_version": configs.prompts.version,
    }
    dedup = configs.generation.dedup_threshold is not None
    settings = _stage_settings(configs, models, filter_critic, embedder if dedup else None)
    # an input's vector ranks the chunks only when one embedder embedded both
    settings.embeds_chunks = (
        identities.get("context_embedder", embedder.identity()) == embedder.identity()
    )
    session = RunSession(
        mode,
        key,
        settings,
        models.usages,
        models.limiter,
        num_goldens,
        run_dir=place.run_dir,
        progress=place.progress,
        context_critic=context_critic,
    )
    s = owner.settings
    session.info["limits"] = {
        "max_concurrent": models.limiter.max_concurrent,
        "rpm": s.rpm,
        "tpm": s.tpm,
        "rate_window": s.rate_window,
        "paced_window": models.limiter.window,
        "timeout": s.timeout,
    }
    if models.breaker is not None:  # "waiting on the server" is said on the run's display
        models.breaker.notify = session.note
    return _bind_batches(owner, session)


def _bind_batches(owner: RunModels, session: RunSession) -> RunSession:
    """``session``, whose batch jobs (if any) are journaled in its directory (``batches.jsonl``),
    shown on its progress and counted in its manifest (``batches``: by model, jobs and stages)."""
    layers = owner.batch_models()
    if not layers:
        return session
    report: dict[str, Any] = {}
    for layer in layers:
        layer.bind(lambda: session.journal(BATCH_JOURNAL), session.note, report)
    session.info["batches"] = report
    return session


def _check_one_type(mode: str, configs: RunConfigs) -> None:
    """One run makes one question type: a mix is split into runs from documents, never here."""
    kind = configs.generation.question_type
    if kind is None:
        raise ConfigError(
            f"mixed question_types are made from documents (one run per type); a {mode} run "
            "takes one type"
        )
    if kind in NEEDS_CORPUS and mode not in ("docs", "contexts"):
        raise ConfigError(
            f"{kind} questions are made from documents or contexts (they search a corpus); "
            f"a {mode} run has none"
        )


def _identities(
    models: Models, context_critic: LLM, filter_critic: LLM, embedder: Embedder
) -> dict[str, Any]:
    """Every model's identity, for the run's key."""
    identities = {
        "generator": models.generator.identity(),
        "critic": models.critic.identity(),
        "embedder": embedder.identity(),
    }
    # what a stage config named instead of the Synthesizer's (absent when nothing was)
    if context_critic is not models.critic:
        identities["context_critic"] = context_critic.identity()
    if filter_critic is not models.critic:
        identities["filter_critic"] = filter_critic.identity()
    return identities


def _stage_settings(
    configs: RunConfigs, models: Models, filter_critic: LLM, dedup_embedder: Embedder | None
) -> StageSettings:
    return StageSettings(
        generator=models.generator,
        critic=filter_critic,  # the generation stages' only critic is the input filter
        generation=configs.generation,
        filtration=configs.filtration,
        evolution=configs.evolution,
        styling=configs.styling,
        prompts=configs.prompts,
        seed=configs.seed,
        embedder=dedup_embedder,
        limiter=models.limiter,
        conversation=configs.conversation,
        tools=configs.tools,
    )


def docs_feed(
    chunks: list[Chunk],
    store: Any,
    configs: RunConfigs,
    num_goldens: int | None,
    run: RunSession | None,
    store_check: Callable[[], object] | None = None,
) -> DocsFeed:
    """The feed of contexts from ``chunks``, their vectors read from ``store`` (a store, or the
    ingest still storing them); without a ``run`` (a plan), no critic, no prompts and no journals.
    ``store_check`` raises once a store write has failed."""
    assert configs.contexts is not None
    wanted = configs.wanted_contexts(num_goldens)
    rng = random.Random(f"{configs.seed}:select")
    if run is None:
        return DocsFeed(
            chunks,
            store,
            configs.contexts,
            rng,
            critic=None,
            prompts=None,
            wanted=wanted,
            avoid=configs.avoid_chunks,
            expected_keep=PRIOR_KEEP,
        )
    return DocsFeed(
        chunks,
        store,
        configs.contexts,
        rng,
        critic=run.context_critic if configs.context_critic else None,
        prompts=run.prompts,
        wanted=wanted,
        avoid=configs.avoid_chunks,
        expected_keep=PRIOR_KEEP,
        journal=run.journal("critic"),
        rejects=run.journal("rejects"),
        bad_replies=run.journal("bad_replies"),
        store_check=store_check,
        notify=run.notify,
    )


__all__ = [
    "RunConfigs",
    "RunPlace",
    "StageOptions",
    "check_num_goldens",
    "docs_feed",
    "open_session",
    "per_context_note",
]
