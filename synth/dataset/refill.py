"""Refill: a reviewed dataset back to exactly N goldens, each rejected golden replaced.

A review (``synth review``, :mod:`synth.dataset.review`) marks goldens accepted or rejected, or
leaves them pending. A refill keeps every accepted and pending golden where it is, unchanged, and
asks the pipeline for one new golden per rejected one:

- from the documents of the run that made the dataset (its manifest's ``inputs.paths``), or the
  ones given;
- with that run's settings (:func:`run_options`, for ``Synthesizer.from_run``);
- from chunks that no golden of the dataset used, while the corpus has others (``avoid``);
- with a seed of the run's lineage: refill round ``k`` of a run of seed ``s`` draws with
  :func:`refill_seed` ``(s, k)``, so a refill is as reproducible as the run.

The new goldens take the rejected ones' places, marked pending (a person has not read them yet);
the rejected goldens are appended to ``DATASET.rejected.jsonl`` with their review, never deleted.
A refill that delivers fewer than asked leaves the dataset short and says so (``shortfall``).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from synth._ids import text_hash
from synth._manifest import find_manifest, load_manifest
from synth.data import Golden
from synth.dataset import Dataset
from synth.dataset.review import decide, golden_key, status_of
from synth.errors import ConfigError

#: what is appended to a dataset's file name for the file of its rejected goldens
REJECTED_SUFFIX = ".rejected.jsonl"
#: the reviewer named on the goldens a refill adds
REFILL_REVIEWER = "synth refill"
#: the dataset-level metadata key listing the refills a dataset went through
REFILLS = "refills"


@dataclass(frozen=True)
class RefillJob:
    """What a refill of one dataset does: the positions it replaces, from what and how.

    ``round`` counts the dataset's refills (1 for the first); ``seed`` is the round's seed;
    ``avoid`` the chunk ids every golden of the dataset was made from; ``docs`` the documents.
    """

    dataset: Dataset
    rejected: list[int]
    docs: list[str]
    avoid: frozenset[str]
    round: int
    seed: int
    run_id: str | None

    @property
    def wanted(self) -> int:
        """How many new goldens the refill asks for: one per rejected golden."""
        return len(self.rejected)


@dataclass
class Refilled:
    """A refill's outcome: the dataset as written back, the goldens it rejected, and where."""

    dataset: Dataset
    rejected: list[Golden]
    added: int
    asked: int
    path: Path | None = None
    rejected_path: Path | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def shortfall(self) -> int:
        """Rejected goldens the refill could not replace."""
        return self.asked - self.added


def refill_seed(seed: int, round: int) -> int:
    """The seed of refill ``round`` of a run of ``seed``: fixed by both, unlike either's."""
    return int(text_hash(f"{seed}:refill:{round}", 15), 16)


def run_manifest(dataset: Dataset, source: str | os.PathLike[str] | None) -> dict[str, Any] | None:
    """The manifest of the run that made ``dataset`` (found from its ``run_id``), or None."""
    return find_manifest(dataset.metadata, source)


def run_options(run: Mapping[str, Any] | str | os.PathLike[str]) -> dict[str, Any]:
    """The Synthesizer arguments of the run a manifest describes (a manifest, its path, its run
    directory, or a dataset file whose run is found): models by ``provider:model``, the embedder,
    every stage config, the critic and filter switches and the seed. Base URLs and keys are not
    taken (the manifest keeps neither key nor a URL worth trusting): they come from the
    environment, as for ``synth generate``. Prompts overridden by a pipeline file are not in a
    manifest either: pass ``prompts`` (or ``--pipeline``) again."""
    manifest = _manifest_of(run)
    config = manifest.get("config") or {}
    models = manifest.get("models") or {}
    options: dict[str, Any] = {"seed": int(manifest.get("seed") or 0)}
    for role, name in (("generator", "model"), ("critic", "critic_model")):
        spec = _model_spec(models.get(role))
        if spec is not None:
            options[name] = spec
    embedder = (models.get("embedder") or {}).get("embedder")
    if isinstance(embedder, str):
        options["embedder"] = embedder
    from synth.contexts.config import ContextConstructionConfig
    from synth.generate.config import (
        EvolutionConfig,
        FiltrationConfig,
        GenerationConfig,
        StylingConfig,
    )

    stage_configs = (
        ("contexts", "context_construction_config", ContextConstructionConfig),
        ("generation", "generation_config", GenerationConfig),
        ("filtration", "filtration_config", FiltrationConfig),
        ("evolution", "evolution_config", EvolutionConfig),
        ("styling", "styling_config", StylingConfig),
    )
    for key, name, kind in stage_configs:
        if isinstance(config.get(key), Mapping):
            options[name] = kind.model_validate(config[key])
    options["use_filter"] = config.get("filtration", {}) is not None
    options["use_context_critic"] = bool(config.get("context_critic", True))
    return options


def _manifest_of(run: Mapping[str, Any] | str | os.PathLike[str]) -> dict[str, Any]:
    if isinstance(run, Mapping):
        return dict(run)
    path = Path(run)
    if path.is_dir() or path.name == "manifest.json":
        return load_manifest(path)
    found = run_manifest(Dataset.load(path), path)
    if found is None:
        raise ConfigError(f"{path}: no run manifest found for this dataset (was it made by synth?)")
    return found


def _model_spec(identity: object) -> str | None:
    """``provider:model`` from a model's identity in a manifest (None for a callable's)."""
    if not isinstance(identity, Mapping):
        return None
    provider, model = identity.get("provider"), identity.get("model")
    if not isinstance(provider, str) or not isinstance(model, str) or provider == "callable":
        return None
    return f"{provider}:{model}"


def plan_refill(
    dataset: Dataset,
    *,
    source: str | os.PathLike[str] | None,
    docs: Sequence[str | os.PathLike[str]] | None,
    seed: int,
) -> RefillJob:
    """The refill of ``dataset`` (read from ``source`` when it is a file): which goldens go,
    from which documents (``docs``, else the run's), with which seed and chunks to avoid."""
    rejected = [i for i, g in enumerate(dataset) if status_of(g) == "rejected"]
    manifest = run_manifest(dataset, source)
    paths = [os.fspath(p) for p in docs] if docs else _run_docs(manifest)
    if rejected and not paths:
        raise ConfigError(
            "this dataset was not made by a synth run found here: say which documents to refill "
            "from (--docs, or docs=) and which model writes the goldens (--model, or model=)"
        )
    lineage = lineage_seed(dataset, seed)
    round_ = len(dataset.metadata.get(REFILLS) or []) + 1
    earlier = _rejected_before(source)
    avoid = frozenset(chunk for golden in [*dataset, *earlier] for chunk in golden.context_ids)
    run_id = dataset.metadata.get("run_id")
    return RefillJob(
        dataset=dataset,
        rejected=rejected,
        docs=paths,
        avoid=avoid,
        round=round_,
        seed=refill_seed(lineage, round_),
        run_id=run_id if isinstance(run_id, str) else None,
    )


def _rejected_before(source: str | os.PathLike[str] | None) -> list[Golden]:
    """The goldens earlier refills of the dataset file ``source`` kept apart (their chunks are
    avoided too)."""
    if source is None or not rejected_path(source).exists():
        return []
    return list(Dataset.load(rejected_path(source)))


def _run_docs(manifest: Mapping[str, Any] | None) -> list[str]:
    if manifest is None:
        return []
    paths = (manifest.get("inputs") or {}).get("paths") or []
    missing = [p for p in paths if not Path(p).exists()]
    if missing:
        raise ConfigError(
            f"the documents of run {manifest.get('run_id')} are gone ({missing[0]}): "
            "say where they are now with --docs (docs=)"
        )
    return [str(p) for p in paths]


def lineage_seed(dataset: Dataset, default: int) -> int:
    """The seed of the run that made the dataset (its goldens say it), else ``default``."""
    for golden in dataset:
        seed = golden.metadata.get("seed")
        if isinstance(seed, int) and not golden.metadata.get("refill"):
            return seed
    return default


def merge(job: RefillJob, new: Dataset) -> Refilled:
    """The dataset with the rejected goldens' places taken by ``new``, in order (marked pending,
    with their refill round), and the rejected goldens; places left when ``new`` runs short are
    closed up, and the dataset's ``num_goldens``, ``delivered`` and ``shortfall`` say so."""
    taken = {golden_key(g) for g in job.dataset}
    fresh = iter(_distinct(new, taken, job.round))
    places = set(job.rejected)
    goldens: list[Golden] = []
    rejected: list[Golden] = []
    added = 0
    for index, golden in enumerate(job.dataset):
        if index not in places:
            goldens.append(golden)
            continue
        rejected.append(golden)
        replacement = next(fresh, None)
        if replacement is not None:
            goldens.append(_pending(replacement, job))
            added += 1
    metadata = dict(job.dataset.metadata)
    metadata[REFILLS] = [
        *(metadata.get(REFILLS) or []),
        {
            "round": job.round,
            "seed": job.seed,
            "asked": job.wanted,
            "added": added,
            "run_id": new.metadata.get("run_id"),
        },
    ]
    if job.wanted:
        metadata["num_goldens"] = len(job.dataset)
        metadata["delivered"] = len(goldens)
        why = new.shortfall.reasons if new.shortfall is not None else ()
        metadata["shortfall"] = (
            [f"refill round {job.round} replaced {added} of {job.wanted} rejected goldens", *why]
            if added < job.wanted
            else []
        )
    return Refilled(Dataset(goldens, metadata), rejected, added, job.wanted)


def _distinct(new: Dataset, taken: set[str], round_: int) -> list[Golden]:
    """``new`` with a draft id that an earlier golden has (a context made again in the reuse
    pass) marked with the round, so every golden keeps its own key for review."""
    out = []
    for golden in new:
        if golden_key(golden) in taken and "draft_id" in golden.metadata:
            metadata = {**golden.metadata, "draft_id": f"{golden.metadata['draft_id']}-r{round_}"}
            golden = golden.model_copy(update={"metadata": metadata})
        taken.add(golden_key(golden))
        out.append(golden)
    return out


def _pending(golden: Golden, job: RefillJob) -> Golden:
    metadata = dict(golden.metadata)
    metadata["refill"] = {"round": job.round, "seed": job.seed, "of_run": job.run_id}
    marked = golden.model_copy(update={"metadata": metadata})
    return decide(marked, "pending", reviewer=REFILL_REVIEWER)


class Generate(Protocol):
    """Makes goldens from documents with a seed and chunks to avoid (the Synthesizer's)."""

    def __call__(
        self, paths: list[str], /, *, num_goldens: int, seed: int, avoid_chunks: frozenset[str]
    ) -> Awaitable[Dataset]: ...


async def refill(
    dataset: Dataset | str | os.PathLike[str] | Sequence[Golden],
    docs: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None,
    *,
    seed: int,
    generate: Generate,
) -> Refilled:
    """Refill ``dataset`` with goldens from ``generate``; a dataset file is written back."""
    source = dataset if isinstance(dataset, str | os.PathLike) else None
    if isinstance(docs, str | os.PathLike):
        docs = [docs]
    given = Dataset.coerce(dataset)
    job = plan_refill(given, source=source, docs=docs, seed=seed)
    new = Dataset()
    if job.wanted:
        new = await generate(
            job.docs, num_goldens=job.wanted, seed=job.seed, avoid_chunks=job.avoid
        )
    result = merge(job, new)
    return write_back(result, source) if source is not None else result


def rejected_path(path: str | os.PathLike[str]) -> Path:
    """Where the rejected goldens of the dataset file ``path`` are kept."""
    target = Path(path)
    return target.with_name(target.name + REJECTED_SUFFIX)


def write_back(result: Refilled, path: str | os.PathLike[str]) -> Refilled:
    """Append the rejected goldens to the rejected file (once each), then write the dataset.

    In that order: a write that fails midway leaves a rejected golden in both files, never in
    neither, and a refill run again adds it to the rejected file only once."""
    kept_apart = rejected_path(path)
    before = Dataset.load(kept_apart) if kept_apart.exists() else Dataset()
    known = {golden_key(g) for g in before}
    before.extend(g for g in result.rejected if golden_key(g) not in known)
    before.save(kept_apart)
    result.path = result.dataset.save(path)
    result.rejected_path = kept_apart
    return result


__all__ = [
    "REJECTED_SUFFIX",
    "RefillJob",
    "Refilled",
    "merge",
    "plan_refill",
    "refill",
    "lineage_seed",
    "refill_seed",
    "rejected_path",
    "run_options",
    "write_back",
]
