"""Conversational goldens: what the Synthesizer's ``generate_conversational_goldens_from_*`` run.

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

from synth.generate.conversation import ConversationConfig
from synth.generate.question_types import SIMPLE
from synth.run.setup import RunConfigs

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


__all__ = ["CONTEXTS_MODE", "DOCS_MODE", "conversational"]
