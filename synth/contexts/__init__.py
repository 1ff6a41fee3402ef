"""Contexts, stages 2 to 4: select seed chunks (``select``), critic-score them (``critic``), group
neighbours (``group``); ``seed_feed`` runs the three as the feed a run streams from (``feed``)."""

from synth.contexts.config import ContextConstructionConfig
from synth.contexts.context import make_context
from synth.contexts.critic import ContextScore, ScoredSeed, score_contexts
from synth.contexts.feed import Candidate, Feed, ListFeed, ScratchFeed
from synth.contexts.group import GroupResult, group_contexts
from synth.contexts.seed_feed import DocsFeed
from synth.contexts.select import SeedSelector

__all__ = [
    "Candidate",
    "ContextConstructionConfig",
    "ContextScore",
    "DocsFeed",
    "Feed",
    "GroupResult",
    "ListFeed",
    "ScoredSeed",
    "ScratchFeed",
    "SeedSelector",
    "group_contexts",
    "make_context",
    "score_contexts",
]
