"""Update: a dataset kept current as its documents change, still exactly N goldens.

Every golden is sorted against the corpus as it is now (:func:`sort_goldens`):

- ``kept``: every chunk it was made from is still there (its chunk ids are content addressed:
  a chunk whose text changed has another id); it stays as it is, byte for byte, review included;
- ``stale``: a chunk it was made from changed or vanished, its file is still there;
- ``orphaned``: its file is gone.

Stale and orphaned goldens are *retired*: appended to ``DATASET.retired.jsonl`` with why, and
as many new goldens are made, from the changed and the new files (the chunks of unchanged files
are avoided while those have chunks left), spread over them by the dataset's coverage rule and
marked pending. ``DATASET.changes.json`` lists, per file, what was kept, retired and added. A
file that is new while nothing was retired gets no golden: N stays N (the summary says so).

A file is *new* when neither the run nor any update before saw it: every update records the files
it saw in its entry of the dataset's ``updates``, so a file that got no golden is new once, then
only counted among the files without a golden (a dataset of N goldens need not cover every file).
A file is *changed* when a golden's chunks of that very file are gone (its chunk ids hash its whole
text, so an edit changes every one of them); the other files of a stale golden are not.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from synth._files import write_atomic
from synth._ids import text_hash
from synth.data import Chunk, Golden
from synth.dataset import Dataset
from synth.dataset.refill import REFILL_REVIEWER, lineage_seed, run_manifest
from synth.dataset.review import decide, golden_key

State = Literal["kept", "stale", "orphaned"]
#: what is appended to a dataset's file name for its retired goldens, and for its changelog
RETIRED_SUFFIX = ".retired.jsonl"
CHANGES_SUFFIX = ".changes.json"
#: the dataset-level metadata key listing the updates a dataset went through
UPDATES = "updates"


@dataclass
class FileChange:
    """One file's part in an update: ``status`` unchanged, changed, new or deleted, and its
    goldens kept, retired and added."""

    status: Literal["unchanged", "changed", "new", "deleted"]
    kept: int = 0
    retired: int = 0
    added: int = 0


@dataclass
class UpdatePlan:
    """What an update does: each golden's state and why, every file's change, the chunks the
    new goldens must avoid, and the round and seed they are made with."""

    dataset: Dataset
    states: list[State]
    reasons: list[str | None]
    files: dict[str, FileChange]
    avoid: frozenset[str]
    round: int
    seed: int
    run_id: str | None = None
    added: int = 0
    notes: list[str] = field(default_factory=list)
    #: the display paths of the files the plan saw (recorded by the update, see module docstring)
    seen: list[str] = field(default_factory=list)
    #: the files there now, seen before, that no golden comes from
    without_golden: int = 0

    @property
    def retired(self) -> list[int]:
        """Positions of the goldens the update replaces."""
        return [i for i, state in enumerate(self.states) if state != "kept"]

    @property
    def stale(self) -> bool:
        """Whether the documents moved on: a golden to retire, or a file the dataset never saw."""
        return bool(self.retired) or any(f.status == "new" for f in self.files.values())

    def counts(self) -> dict[str, int]:
        """Goldens kept, stale and orphaned; files new, changed, deleted and without a golden."""
        states = Counter(self.states)
        files = Counter(f.status for f in self.files.values())
        return {
            "kept": states["kept"],
            "stale": states["stale"],
            "orphaned": states["orphaned"],
            "new_files": files["new"],
            "changed_files": files["changed"],
            "deleted_files": files["deleted"],
            "files_without_golden": self.without_golden,
        }

    def summary(self) -> dict[str, Any]:
        """The plan (or, after it ran, the update) as JSON: counts, files, notes."""
        return {
            "round": self.round,
            **self.counts(),
            "retired": len(self.retired),
            "added": self.added,
            "files": {path: vars(change) for path, change in sorted(self.files.items())},
            "notes": list(self.notes),
        }


def update_seed(seed: int, round: int) -> int:
    """The seed of update ``round`` of a run of ``seed`` (apart from every refill's)."""
    return int(text_hash(f"{seed}:update:{round}", 15), 16)


def sort_goldens(
    dataset: Dataset,
    chunks: Sequence[Chunk],
    locations: Mapping[str, str],
    *,
    known_files: set[str] | None = None,
    seed: int = 0,
) -> UpdatePlan:
    """Sort ``dataset``'s goldens against the current ``chunks`` (their files at ``locations``:
    display path -> path as a golden records it). ``known_files`` are the display paths the run
    that made the dataset ingested (None: not known); a current file that none of them, no earlier
    update and no golden names is new."""
    ids = {c.id for c in chunks}
    texts = {c.text for c in chunks}
    here = {_same(path): path for path in locations.values()}
    file_of = {c.id: _same(locations.get(c.source, c.source)) for c in chunks}
    states: list[State] = []
    reasons: list[str | None] = []
    files: dict[str, FileChange] = {}
    for golden in dataset:
        state, reason = _state(golden, ids, texts, here)
        states.append(state)
        reasons.append(reason)
        # an edit changes every chunk id of its file: a file with one of them left is untouched
        # (a golden matched by its texts cannot tell: each of its files counts as changed)
        still = {file_of[c] for c in golden.context_ids if c in file_of}
        for path in _files_of(golden, here):
            change = files.setdefault(path, FileChange("unchanged"))
            if state == "kept":
                change.kept += 1
                continue
            change.retired += 1
            if _same(path) not in here:
                change.status = "deleted"
            elif _same(path) not in still:
                change.status = "changed"
    with_goldens = {_same(path) for path in files}
    seen_before = (known_files or set()) | _seen_by_updates(dataset)
    without_golden = 0
    for display, path in locations.items():
        if _same(path) in with_goldens:
            continue
        if display in seen_before:
            without_golden += 1
        else:
            files[path] = FileChange("new")
    avoid = frozenset(
        c.id
        for c in chunks
        if files.get(locations.get(c.source, c.source), FileChange("unchanged")).status
        == "unchanged"
    )
    updates = dataset.metadata.get(UPDATES) or []
    round_ = len(updates) + 1
    run_id = dataset.metadata.get("run_id")
    return UpdatePlan(
        dataset=dataset,
        states=states,
        reasons=reasons,
        files=files,
        avoid=avoid,
        round=round_,
        seed=update_seed(lineage_seed(dataset, seed), round_),
        run_id=run_id if isinstance(run_id, str) else None,
        notes=_new_file_notes(files, states, len(dataset)),
        seen=sorted(locations),
        without_golden=without_golden,
    )


def _seen_by_updates(dataset: Dataset) -> set[str]:
    """The display paths of the files the dataset's earlier updates saw."""
    seen: set[str] = set()
    for entry in dataset.metadata.get(UPDATES) or []:
        if isinstance(entry, Mapping):
            seen.update(str(path) for path in entry.get("seen_files") or [])
    return seen


def _new_file_notes(files: Mapping[str, FileChange], states: list[State], size: int) -> list[str]:
    """Say so when new files get nothing because no golden is retired to make room for them."""
    new_files = sorted(p for p, f in files.items() if f.status == "new")
    if not new_files or any(s != "kept" for s in states):
        return []
    return [
        f"{len(new_files)} new file(s) get no golden: nothing was retired to make room, and "
        f"the dataset keeps its {size} goldens (first: {new_files[0]})"
    ]


def _same(path: str) -> str:
    """A path as one file's identity, however it was written (relative, absolute)."""
    return os.path.normcase(os.path.abspath(path))


def _files_of(golden: Golden, here: Mapping[str, str]) -> list[str]:
    """The golden's source files, as the current corpus names them when it has them."""
    return [here.get(_same(p), p) for p in dict.fromkeys(golden.source_files)]


def _state(
    golden: Golden, ids: set[str], texts: set[str], here: Mapping[str, str]
) -> tuple[State, str | None]:
    if golden.context_ids:
        missing = [c for c in golden.context_ids if c not in ids]
    else:  # a dataset made elsewhere: its contexts' texts stand for the chunks
        missing = [t[:40] for t in golden.context or [] if t not in texts]
    if not missing:
        return "kept", None
    sources = list(dict.fromkeys(golden.source_files))
    if sources and not any(_same(p) in here for p in sources):
        return "orphaned", f"{', '.join(sources)} is gone"
    return "stale", f"{len(missing)} of its chunks changed or vanished (first: {missing[0]})"


def known_files(dataset: Dataset, source: str | os.PathLike[str] | None) -> set[str] | None:
    """The display paths of every file the dataset's run ingested (its manifest's coverage
    rows), or None when no manifest says."""
    manifest = run_manifest(dataset, source)
    rows = ((manifest or {}).get("coverage") or {}).get("files")
    if not isinstance(rows, list):
        return None
    return {str(row["source"]) for row in rows if isinstance(row, Mapping) and "source" in row}


def plan_update(
    dataset: Any, chunks: list[Chunk], locations: Mapping[str, str], *, seed: int
) -> UpdatePlan:
    """What an update of ``dataset`` (a Dataset, goldens or a path) to the corpus whose chunks
    are now ``chunks`` would do: its goldens sorted, the files it knew read from a file's run."""
    source = dataset if isinstance(dataset, str | os.PathLike) else None
    given = Dataset.coerce(dataset)
    known = known_files(given, source)
    return sort_goldens(given, chunks, locations, known_files=known, seed=seed)


def merge_update(plan: UpdatePlan, new: Dataset) -> tuple[Dataset, list[Golden]]:
    """The dataset with the retired goldens' places taken by ``new`` (pending, with the round),
    and the retired goldens (each with why). Places ``new`` cannot fill are closed up."""
    taken = {golden_key(g) for g in plan.dataset}
    fresh = iter(new)
    goldens: list[Golden] = []
    retired: list[Golden] = []
    for golden, state, reason in zip(plan.dataset, plan.states, plan.reasons, strict=True):
        if state == "kept":
            goldens.append(golden)
            continue
        why = {"state": state, "reason": reason, "round": plan.round}
        retired.append(golden.model_copy(update={"metadata": {**golden.metadata, "retired": why}}))
        replacement = next(fresh, None)
        if replacement is not None:
            goldens.append(_added(replacement, plan, taken))
    metadata = dict(plan.dataset.metadata)
    entry = {"round": plan.round, "seed": plan.seed, **plan.counts(), "added": plan.added}
    metadata[UPDATES] = [
        *(metadata.get(UPDATES) or []),
        {**entry, "run_id": new.metadata.get("run_id"), "seen_files": plan.seen},
    ]
    if plan.retired:
        metadata["num_goldens"] = len(plan.dataset)
        metadata["delivered"] = len(goldens)
        short = len(goldens) < len(plan.dataset)
        why_short = list(new.shortfall.reasons) if new.shortfall is not None else []
        metadata["shortfall"] = (
            [
                f"update round {plan.round} replaced {plan.added} of {len(plan.retired)} goldens",
                *why_short,
            ]
            if short
            else []
        )
    return Dataset(goldens, metadata), retired


def _added(golden: Golden, plan: UpdatePlan, taken: set[str]) -> Golden:
    metadata = {**golden.metadata, "update": {"round": plan.round, "of_run": plan.run_id}}
    if golden_key(golden) in taken and "draft_id" in metadata:
        metadata["draft_id"] = f"{metadata['draft_id']}-u{plan.round}"
    marked = golden.model_copy(update={"metadata": metadata})
    taken.add(golden_key(marked))
    plan.added += 1
    for path in marked.source_files[:1]:
        # a file the plan did not list was there, seen before, with no golden: not touched (the
        # new goldens come from its chunks only once the changed and new files have none left)
        plan.files.setdefault(path, FileChange("unchanged")).added += 1
    return decide(marked, "pending", reviewer=REFILL_REVIEWER)


def side_path(path: str | os.PathLike[str], suffix: str) -> Path:
    """The file beside the dataset ``path`` with ``suffix`` after its name."""
    target = Path(path)
    return target.with_name(target.name + suffix)


def write_update(
    path: str | os.PathLike[str], dataset: Dataset, retired: list[Golden], plan: UpdatePlan
) -> None:
    """Append the retired goldens (once each), write the changelog, then the dataset: a write
    cut short leaves a retired golden in both files, never in neither."""
    import json

    apart = side_path(path, RETIRED_SUFFIX)
    before = Dataset.load(apart) if apart.exists() else Dataset()
    known = {golden_key(g) for g in before}
    before.extend(g for g in retired if golden_key(g) not in known)
    before.save(apart)
    changes = {
        **plan.summary(),
        "kept_goldens": [
            golden_key(g) for g, s in zip(plan.dataset, plan.states, strict=True) if s == "kept"
        ],
        "retired_goldens": [golden_key(g) for g in retired],
        "added_goldens": [
            golden_key(g)
            for g in dataset
            if (g.metadata.get("update") or {}).get("round") == plan.round
        ],
    }
    write_atomic(
        side_path(path, CHANGES_SUFFIX), json.dumps(changes, indent=2, ensure_ascii=False) + "\n"
    )
    dataset.save(path)


__all__ = [
    "plan_update",
    "CHANGES_SUFFIX",
    "RETIRED_SUFFIX",
    "FileChange",
    "UpdatePlan",
    "known_files",
    "merge_update",
    "side_path",
    "sort_goldens",
    "update_seed",
    "write_update",
]
