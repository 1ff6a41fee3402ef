"""Where a run's candidates come from, in a fixed order: the :class:`Feed` the stream drives.

A *candidate* is one unit the generation stages work on: usually a context (a seed chunk and its
neighbours) that will give up to ``max_goldens_per_context`` goldens. A feed hands candidates out
in an order that never depends on how fast the model answers, so the same seed and inputs give the
same candidates in every run, however far ahead a run has asked.

Three feeds: :class:`~synth.contexts.seed_feed.DocsFeed` (stages 2 to 4 over a run's chunks),
:class:`ListFeed` (candidates known up front: given contexts, or goldens to learn from) and
:class:`ScratchFeed` (context-free batches, as many as asked for). A feed that works in the
background is given, when it is made, the ``notify`` to call when it has something new.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from synth.contexts.critic import is_critic_drop
from synth.data import Context
from synth.llm.base import LLM
from synth.stage.stats import StageStats

#: the drop reason of a request the provider refused for its key, and what the run says then
AUTH_FAILURE = "model_error:auth"


def refused_key(llm: LLM) -> str:
    """What the run says when the server of ``llm`` refused its key: the server and the fix."""
    server = llm.identity().get("base_url") or "the provider's default address"
    name = f"{llm.provider}:{llm.model}" if llm.provider else llm.model
    return (
        f"the model server at {server} refused the API key for {name} (HTTP 401/403); check the "
        "key (OPENAI_API_KEY, or the provider's key variable) and --base-url, or name another "
        "model with --model"
    )


def seed_drop_stage(reason: str) -> str:
    """The stage that dropped a seed for ``reason``: the critic (a disqualifier, a low score or a
    failed request) or grouping (too few similar chunks)."""
    if is_critic_drop(reason) or reason.startswith("model_error"):
        return "critic"
    return "group"


@dataclass
class Candidate:
    """One unit of generation work, in the run's order.

    ``key`` is unique in the run and stable across runs (draft ids and journal records derive from
    it). ``examples`` are style examples (generation from goldens); ``scratch`` marks a batch
    generated from the styling alone. ``position`` is where its seed sits in the draw order.
    """

    seq: int
    key: str
    context: Context | None
    examples: list[str] | None = None
    scratch: bool = False
    position: int = 0


@dataclass(frozen=True)
class Corpus:
    """The chunks a run's candidates come from, for measuring how findable each golden is.

    ``vectors()`` gives their vectors (one row per chunk, in order; it may wait for an ingest to
    finish embedding them, so call it off the event loop), or None when the chunks have none.
    """

    chunk_ids: list[str]
    texts: list[str]
    vectors: Callable[[], Any] = lambda: None


class Feed(Protocol):
    """What the stream asks of a feed, and nothing more."""

    @property
    def error(self) -> BaseException | None:
        """What went wrong in the feed's background work, to end the run with."""

    @property
    def pending(self) -> int:
        """Candidates that may still come from work already under way."""

    @property
    def exhausted(self) -> bool:
        """No further candidate can come."""

    @property
    def exhausted_reason(self) -> str:
        """Why no more candidates can come, once none can."""

    @property
    def budget_reached(self) -> bool:
        """The feed stopped because it was asked for as much as it may give, not for want of input."""

    def request(self, contexts: int) -> None:
        """Start the work for ``contexts`` more candidates."""

    def advance(self) -> list[Candidate]:
        """The candidates that are ready and next in order (each handed out once)."""

    def seed_outcomes(self, up_to: int | None) -> Counter[str]:
        """Outcome counts (``"ok"`` or a drop reason) of the seeds drawn at positions
        ``<= up_to`` (None: all); empty for a feed without seeds."""

    def stage_stats(self, up_to: int | None) -> list[StageStats]:
        """The feed's stages (critic, group) over the seeds drawn at positions ``<= up_to``
        (None: all): in, out and dropped by reason; none for a feed without seeds."""

    def progress(self) -> list[tuple[str, int, int]]:
        """The feed's own lines of the progress display: a stage name, done and total; none for
        a feed whose work is not worth a line."""

    def seed_counts(self) -> dict[str, int] | None:
        """Seeds drawn and sent to the critic, for the manifest; None for a feed without seeds."""

    def corpus(self) -> Corpus | None:
        """The chunks the candidates come from; None when they come from no chunks (scratch)."""

    def warm_with(self, warm: Callable[[Context], Awaitable[None]] | None) -> None:
        """Hand ``warm`` the contexts the feed expects to give before it gives them (a feed that
        knows its candidates at once has nothing to guess: it ignores it)."""

    async def aclose(self) -> None:
        """Stop the background work."""


class ListFeed:
    """Candidates known up front (given contexts, or goldens to learn from), in the given order."""

    exhausted_reason = "every given context was used"
    pending = 0
    error: BaseException | None = None

    def __init__(self, candidates: Sequence[Candidate]) -> None:
        self.candidates = list(candidates)
        self._handed = 0

    @property
    def budget_reached(self) -> bool:
        return False

    @property
    def exhausted(self) -> bool:
        return self._handed >= len(self.candidates)

    def request(self, contexts: int) -> None:
        return None

    def advance(self) -> list[Candidate]:
        new = self.candidates[self._handed :]
        self._handed = len(self.candidates)
        return new

    def seed_outcomes(self, up_to: int | None) -> Counter[str]:
        return Counter()

    def stage_stats(self, up_to: int | None) -> list[StageStats]:
        return []

    def progress(self) -> list[tuple[str, int, int]]:
        return []

    def seed_counts(self) -> dict[str, int] | None:
        return None

    def corpus(self) -> Corpus | None:
        """The distinct chunks of the given contexts (no vectors: they were never embedded)."""
        texts: dict[str, str] = {}
        for candidate in self.candidates:
            if candidate.context is not None:
                for cid, text in zip(
                    candidate.context.chunk_ids, candidate.context.texts, strict=False
                ):
                    texts.setdefault(cid, text)
        return Corpus(list(texts), list(texts.values())) if texts else None

    def warm_with(self, warm: Callable[[Context], Awaitable[None]] | None) -> None:
        return None  # every candidate is known at once: its requests leave as it starts

    async def aclose(self) -> None:
        return None


class ScratchFeed(ListFeed):
    """Context-free batches of inputs, as many as asked for (generation from scratch)."""

    def __init__(self, batch_size: int, limit: int) -> None:
        super().__init__([])
        self.batch_size = batch_size
        self.limit = limit
        self._wanted = 0

    @property
    def exhausted(self) -> bool:
        return len(self.candidates) >= self.limit and self._handed >= len(self.candidates)

    @property
    def budget_reached(self) -> bool:
        return len(self.candidates) >= self.limit

    def request(self, contexts: int) -> None:
        self._wanted += contexts

    def advance(self) -> list[Candidate]:
        while self._wanted > 0 and len(self.candidates) < self.limit:
            seq = len(self.candidates)
            self.candidates.append(Candidate(seq, f"scratch#{seq}", None, scratch=True))
            self._wanted -= 1
        return super().advance()


__all__ = [
    "AUTH_FAILURE",
    "Candidate",
    "Feed",
    "ListFeed",
    "ScratchFeed",
    "refused_key",
    "seed_drop_stage",
]
