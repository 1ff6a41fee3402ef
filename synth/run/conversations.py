"""Conversational goldens: the Synthesizer's ``generate_conversational_goldens_from_*`` methods.

A conversational run is a run like any other (:mod:`synth.run.session`: the same feed of
contexts, stream, top-up to exactly N, journal and resume, deduplication, manifest and cost
accounting), whose steps are the conversation steps (:func:`synth.generate.steps.conversation_steps`:
write and check conversations, then check that each follow-up depends on the turns before it)
instead of the single-turn ones. Its run key holds the conversation config, so it never resumes
a single-turn run's directory (nor one with other ``max_turns``). Conversations are written from
a context, so the modes are documents and given contexts; from scratch or from example goldens
there is nothing to ground the assistant's turns in.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Awaitable, Callable, Sequence

from synth.contexts.config import ContextConstructionConfig
from synth.data import Context
from synth.dataset import Dataset
from synth.generate.conversation import ConversationConfig
from synth.generate.question_types import SIMPLE
from synth.run.inputs import as_contexts, as_paths
from synth.run.setup import RunConfigs
from synth.run.sync import sync_twin, warns_if_short

#: the run mode a conversational run records, by what it is made from
DOCS_MODE = "conversations_docs"
CONTEXTS_MODE = "conversations_contexts"


def conversational(configs: RunConfigs, conversation: ConversationConfig) -> RunConfigs:
    """``configs`` for a conversational run: its conversation config, one question type, no input
    filter (the follow-up check judges the user turns), expected outputs (the assistant turns)."""
    generation = configs.generation.replace(
        question_types={SIMPLE: 1.0}, include_expected_output=True
    )
    return dataclasses.replace(
        configs, generation=generation, filtration=None, conversation=conversation
    )


class ConversationalModes:
    """The conversational ways in, on the Synthesizer (which declares these attributes)."""

    context_construction_config: ContextConstructionConfig
    conversation_config: ConversationConfig
    #: the Synthesizer's runs from documents and from contexts, each recording ``mode``
    _docs_run: Callable[..., Awaitable[Dataset]]
    _contexts_run: Callable[..., Awaitable[Dataset]]

    def _conversation_configs(
        self,
        per_context: int | None,
        contexts: ContextConstructionConfig | None,
        conversation: ConversationConfig | None,
    ) -> RunConfigs:
        configs = RunConfigs.of(self, None, per_context, contexts)  # type: ignore[arg-type]
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


__all__ = ["CONTEXTS_MODE", "DOCS_MODE", "ConversationalModes", "conversational"]
