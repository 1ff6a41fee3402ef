"""What a candidate is expected to give: the run's own drop rates, stage by stage, as they come in.

A run asks for N goldens. Each context it starts gives ``max_goldens_per_context`` drafts, some of
which the stages drop (an input the filter refuses, a failed request, a near-duplicate at commit).
Starting exactly N / per_context contexts and replacing each drop as it is seen costs the run a
second chain of requests for the usual drops; :class:`Yields` lets the stream start enough in the
first wave instead:

- each stage's keep rate is its observed one (drafts kept of those it judged, from every
  candidate that passed it so far), pulled towards a prior by ``PRIOR_WEIGHT`` drafts' worth:
  before any observation, the stages together keep :data:`PRIOR_KEEP` of the drafts;
- a new context is expected to give ``per_context`` times the product of every stage's rate, a
  running one its live drafts times the rates of the stages still ahead of it.

The rates only decide how many candidates are started and when: the goldens are still the first N
kept in candidate order, so the same seed and inputs give the same goldens however the rates moved.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

#: the share of drafts a run expects to keep before it has seen any drop (10% dropped)
PRIOR_KEEP = 0.9
#: how many drafts' worth of evidence the prior counts for, at each stage
PRIOR_WEIGHT = 4.0
#: the pseudo-stage of a candidate's drafts being committed (deduplication, the easy cap)
COMMIT = "commit"


class Yields:
    """Keep rates by stage (``stages`` in order, then :data:`COMMIT`); see the module."""

    def __init__(
        self,
        stages: Sequence[str],
        per_context: int,
        prior_keep: float = PRIOR_KEEP,
        *,
        learn: bool = True,
    ) -> None:
        self.stages = [*stages, COMMIT]
        self.per_context = per_context
        #: False: the prior throughout (``prior_keep=1.0, learn=False``: replace each drop once seen)
        self.learn = learn
        #: the prior of each stage, so that all of them together keep ``prior_keep``
        self.prior = float(prior_keep ** (1 / len(self.stages)))
        self.judged: Counter[str] = Counter()
        self.kept: Counter[str] = Counter()

    def observe(self, stage: str, judged: int, kept: int) -> None:
        """``stage`` kept ``kept`` of the ``judged`` drafts it was given."""
        if judged > 0 and self.learn:
            self.judged[stage] += judged
            self.kept[stage] += min(kept, judged)

    def rate(self, stage: str) -> float:
        """The share of drafts ``stage`` is expected to keep."""
        return (self.kept[stage] + PRIOR_WEIGHT * self.prior) / (self.judged[stage] + PRIOR_WEIGHT)

    def ahead(self, done: int) -> float:
        """The share of a candidate's live drafts expected to survive once ``done`` stages are
        behind it (``len(stages)``: only the commit is left)."""
        return float(math.prod(self.rate(stage) for stage in self.stages[done:]))

    def per_new_context(self) -> float:
        """Goldens a context not started yet is expected to give."""
        return self.per_context * self.ahead(0)

    def report(self) -> dict[str, float]:
        """Each stage's expected keep rate now, rounded (for the manifest)."""
        return {stage: round(self.rate(stage), 3) for stage in self.stages}


def contexts_for(missing: float, per_context: float) -> int:
    """Contexts of ``per_context`` expected goldens each that cover ``missing`` goldens."""
    if missing <= 0:
        return 0
    return math.ceil(round(missing / per_context, 6))


__all__ = ["COMMIT", "PRIOR_KEEP", "PRIOR_WEIGHT", "Yields", "contexts_for"]
