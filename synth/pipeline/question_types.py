"""A run that asks for question types: one run per type, each exact in count, one dataset.

Each type's share of N (:func:`synth.generate.question_types.type_counts`) is made by a run of
its own, with the generation config asking for that type alone, so the top-up of every run keeps
each type exact. The runs go one after the other in the order of ``QUESTION_TYPES``; each avoids
the chunks the earlier ones used (while the corpus has others), so the types do not share
contexts. A multi-hop run groups at least two chunks per context; a type other than ``simple`` is
not evolved. An out-of-scope golden's context is emptied here, once its run is done (its chunks
are still the ones later types avoid). Each run has its own run directory and manifest (its key names the type), so each
resumes on its own; the dataset's metadata says per type what was asked and delivered.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable

from synth.data import Golden
from synth.dataset import Dataset
from synth.errors import ConfigError
from synth.generate.out_of_scope import unscoped
from synth.generate.question_types import (
    OUT_OF_SCOPE,
    SIMPLE,
    tag_type,
    type_counts,
)
from synth.run.setup import RunConfigs

#: makes ``n`` goldens with the given configs (the Synthesizer's docs run)
RunOne = Callable[[RunConfigs, int], Awaitable[Dataset]]
#: the dataset-level metadata key of what each type's run asked for and delivered
QUESTION_TYPES_KEY = "question_types"


def type_configs(configs: RunConfigs, kind: str, avoid: frozenset[str]) -> RunConfigs:
    """The configs of the run that makes the ``kind`` goldens."""
    # the mix's other types stay named, at 0, so the run's goldens record their type
    mix = {**configs.generation.question_types, kind: 1.0}
    generation = configs.generation.replace(question_types={t: float(t == kind) for t in mix})
    evolution = configs.evolution
    if kind != SIMPLE and evolution.num_evolutions > 0:
        evolution = evolution.replace(num_evolutions=0)
    contexts = configs.contexts
    if kind == "multi_hop" and contexts is not None and contexts.min_context_length < 2:
        longest = max(2, contexts.max_context_length)
        contexts = contexts.replace(min_context_length=2, max_context_length=longest)
    return dataclasses.replace(
        configs, generation=generation, evolution=evolution, contexts=contexts, avoid_chunks=avoid
    )


async def typed_runs(configs: RunConfigs, num_goldens: int | None, run_one: RunOne) -> Dataset:
    """The goldens of every type ``configs`` asks for, each type's run after the other's."""
    if num_goldens is None:
        raise ConfigError("question_types need a number of goldens (num_goldens / --goldens)")
    counts = type_counts(configs.generation.question_types, num_goldens)
    used = set(configs.avoid_chunks)
    parts: list[tuple[str, int, Dataset]] = []
    for kind, n in counts.items():
        if n == 0:
            continue
        part = kind if len(counts) > 1 else None  # a run directory of its own in a named one
        typed = dataclasses.replace(type_configs(configs, kind, frozenset(used)), part=part)
        made = await run_one(typed, n)
        used.update(chunk for golden in made for chunk in golden.context_ids)
        tag_type(
            made.goldens, kind
        )  # a run of this type tags its goldens; a replay of an older one too
        if kind == OUT_OF_SCOPE:
            for golden in made:
                unscoped(golden)
        parts.append((kind, n, made))
    return combine(parts, num_goldens)


def combine(parts: list[tuple[str, int, Dataset]], num_goldens: int) -> Dataset:
    """One dataset of every type's goldens, in type order; its metadata the first run's, with
    per type what was asked and delivered, and a shortfall line per type that fell short."""
    goldens: list[Golden] = [g for _, _, made in parts for g in made]
    metadata = dict(parts[0][2].metadata) if parts else {}
    per_type = {}
    short: list[str] = []
    for kind, n, made in parts:
        per_type[kind] = {"asked": n, "delivered": len(made), "run_id": made.metadata.get("run_id")}
        if made.shortfall is not None:
            short.append(f"{kind}: {made.shortfall}")
    metadata[QUESTION_TYPES_KEY] = per_type
    metadata.update(num_goldens=num_goldens, delivered=len(goldens), shortfall=short)
    return Dataset(goldens, metadata)


__all__ = ["QUESTION_TYPES_KEY", "combine", "type_configs", "typed_runs"]
