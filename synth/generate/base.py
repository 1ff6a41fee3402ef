"""The one interface of a generation step, and what every step is given.

A step (:class:`Step`) takes the drafts of one candidate and returns them, dropped ones marked; the
first step (inputs) makes the drafts from the candidate's :class:`Source`. Steps are made once per
run from the run's settings and hold no per-candidate state, so one step serves every candidate
at once. The ordered list of steps is :mod:`synth.generate.steps`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from synth.data import Context
from synth.generate.draft import Draft


@dataclass(frozen=True)
class Source:
    """Where one candidate's inputs come from: a context, style examples, or (neither) the styling.

    ``key`` is unique in the run and stable across runs (draft ids derive from it).
    """

    key: str
    context: Context | None = None
    examples: Sequence[str] | None = None


class Step(Protocol):
    """One generation stage: ``name`` labels its journal, its drops and its requests."""

    @property
    def name(self) -> str:
        """The stage's name (``inputs``, ``filter``, ...)."""
        ...

    async def run(self, drafts: list[Draft], source: Source) -> list[Draft]:
        """All of ``drafts`` (the first step: new ones from ``source``), dropped ones marked."""
        ...


class CorpusSearch(Protocol):
    """The run's chunks, searched: what the distracting and out-of-scope steps look things up in
    (``synth.run.difficulty.DifficultyMeter`` is one)."""

    async def nearest(
        self,
        queries: Sequence[str],
        k: int,
        exclude: Sequence[Sequence[str]] | None = None,
        vectors: Sequence[Sequence[float]] | None = None,
    ) -> list[list[tuple[str, str]]]:
        """Each query's best chunks as ``(chunk_id, text)``, without its ``exclude``d ids."""
        ...


@runtime_checkable
class ForeseesKept(Protocol):
    """A step that can tell, before it runs, which drafts it will most likely pass as they are."""

    def foreseen_kept(self, drafts: list[Draft]) -> list[Draft]:
        """The live ``drafts`` this step will most likely leave as they are: a step after it
        runs ahead (:mod:`synth.run.ahead`) only when these are all of them."""
        ...


__all__ = ["CorpusSearch", "ForeseesKept", "Source", "Step"]
