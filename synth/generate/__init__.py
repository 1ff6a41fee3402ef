"""Generation stages, one module each, in pipeline order.

``inputs`` (questions from a context, from scratch, or from example goldens), ``filter`` (critic
score, rewrite, keep or drop), ``evolve``, ``style``, ``expected`` (grounded answers), ``dedup``;
for conversations, ``conversation`` (written and checked) and ``follow_ups`` (each depends on the
turns before it).
Each LLM stage has pure ``build_prompt``/``parse`` functions (production reads the model's own
reply text with them) and an async ``run`` over :class:`Draft` records; prompts are versioned
templates in ``prompts/`` (see :class:`PromptSet`). Each stage is also a step (``base.Step``: one
``run(drafts, source)``); ``steps.STEPS`` is their ordered list, which the run walks.
"""

from synth.generate.config import (
    Evolution,
    EvolutionConfig,
    FiltrationConfig,
    GenerationConfig,
    StylingConfig,
)
from synth.generate.conversation import ConversationConfig
from synth.generate.dedup import DedupDecision, Deduplicator
from synth.generate.draft import Draft
from synth.stage.stats import StageStats
from synth.stage.templates import PromptSet, default_prompts

__all__ = [
    "ConversationConfig",
    "DedupDecision",
    "Deduplicator",
    "Draft",
    "Evolution",
    "EvolutionConfig",
    "FiltrationConfig",
    "GenerationConfig",
    "PromptSet",
    "StageStats",
    "StylingConfig",
    "default_prompts",
]
