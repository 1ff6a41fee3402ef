"""What a Synthesizer owns for its runs: the models it made, the store it ingests into, the
session of its last run; and what it does with them (make them once, open a run, close them).

:class:`RunOwner` is the Synthesizer's base: the Synthesizer declares the fields (its
arguments), this class the machinery, so ``synth/pipeline.py`` keeps to the stages.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Self

from synth.contexts.config import ContextConstructionConfig
from synth.ingest.web import WebOptions
from synth.run.ingest import ingest_for_run
from synth.run.models import BatchArg, CacheArg, ModelArg, RunModels
from synth.run.progress import Progress, as_progress
from synth.run.session import RunSession
from synth.run.setup import RunConfigs, RunPlace, open_session


class RunOwner:
    """The models, store and last session of a Synthesizer (see the module docstring)."""

    model: ModelArg
    critic_model: ModelArg
    embedder: Any
    base_url: str | None
    cache: CacheArg
    max_concurrent: int | None
    rpm: float | None
    tpm: float | None
    rate_window: float
    batch: BatchArg
    timeout: float | None
    run_dir: str | os.PathLike[str] | None
    progress: Progress | bool | None
    store_path: str | os.PathLike[str]
    store_url: str | None
    ray: str | bool | None
    web: WebOptions | None
    _session: RunSession | None
    _made: RunModels | None

    @property
    def manifest(self) -> dict[str, Any] | None:
        """The manifest of the last run (also in its run directory), as last written."""
        return self._session.manifest if self._session is not None else None

    @property
    def last_run_dir(self) -> Path | None:
        """The run directory of the last run."""
        return self._session.path if self._session is not None else None

    def _models(self) -> RunModels:
        """What makes and owns the models: on first use, from this Synthesizer's arguments."""
        if self._made is None:
            self._made = RunModels.of(self)
        return self._made

    def _ingest(self, paths: list[str], config: ContextConstructionConfig) -> tuple[Any, Any, Any]:
        """Stage 1: the store, the ingest under way and this run's chunks (ingest_for_run)."""
        embedder = self._models().embedder(config.embedder)
        return ingest_for_run(
            paths,
            config,
            embedder,
            store_path=self.store_path,
            store_url=self.store_url,
            ray=self.ray,
            web=self.web,
        )

    def _run(
        self, mode: str, key_inputs: dict[str, Any], num_goldens: int | None, configs: RunConfigs
    ) -> RunSession:
        place = RunPlace(run_dir=self.run_dir, progress=as_progress(self.progress))
        place = place.of_part(configs.part)
        self._session = open_session(mode, key_inputs, num_goldens, configs, self._models(), place)
        return self._session

    def mark_interrupted(self) -> None:
        """Record at once, from any thread, that the last run was interrupted (its manifest says
        so): for a process about to be ended by force before the run could unwind."""
        if self._session is not None:
            self._session.mark_interrupted()

    def close(self) -> None:
        """Release the clients and threads of the models and embedders made from specs, and the
        cache file (after Ctrl-C: ends requests still waiting on a server, so the process exits)."""
        if self._made is not None:
            self._made.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["RunOwner"]
