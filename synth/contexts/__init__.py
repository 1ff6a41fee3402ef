"""Contexts: select seed chunks (``select``), critic-score them (``critic``), group neighbours (``group``)."""

from synth.contexts.config import ContextConstructionConfig
from synth.contexts.critic import ContextScore, ScoredSeed, SeedSearch, find_seeds, score_contexts
from synth.contexts.group import GroupResult, group_contexts, make_context
from synth.contexts.select import SeedSelector

__all__ = [
    "ContextConstructionConfig",
    "ContextScore",
    "GroupResult",
    "ScoredSeed",
    "SeedSearch",
    "SeedSelector",
    "find_seeds",
    "group_contexts",
    "make_context",
    "score_contexts",
]
