"""A run's goldens as a Dataset: saved in its run directory with their trust measured, or read back.

The run machinery (:class:`~synth.run.session.RunSession`) hands over goldens and metadata and
knows nothing of datasets; here they become the :class:`~synth.dataset.Dataset` a
``generate_goldens_*`` method returns, saved where the session replays a finished run from.
"""

from __future__ import annotations

from synth.contexts.coverage import Coverage
from synth.contexts.feed import Feed
from synth.dataset import Dataset
from synth.dataset.inspect import inspect_dataset
from synth.run.session import RunSession
from synth.run.stream import Target


async def deliver(
    run: RunSession, feed: Feed, target: Target, coverage: Coverage | None = None
) -> Dataset:
    """The goldens of ``run`` streamed from ``feed`` until ``target`` (see
    :meth:`RunSession.execute`), saved in the run directory, their trust in the manifest."""
    dataset = Dataset(*await run.execute(feed, target, coverage))
    dataset.save(run.saved)
    threshold = run.settings.generation.grounding_threshold
    run.info["trust"] = inspect_dataset(dataset, grounding_threshold=threshold).summary()
    return dataset


def replayed(run: RunSession) -> Dataset:
    """The goldens of a run that had already finished, as it saved them; no request is made."""
    return Dataset.load(run.replay())


__all__ = ["deliver", "replayed"]
