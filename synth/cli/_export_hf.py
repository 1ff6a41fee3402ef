"""``synth export --format hf``: a Hugging Face folder with a dataset card, optionally pushed.

Everything is checked before anything is written: the repository id and the token when pushing,
the target folder. The folder is built beside ``-o``, pushed from there when asked, and only then
renamed into place, so a failed push leaves no folder and no half-written repository.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synth.cli._exits import EXIT_OK

if TYPE_CHECKING:
    from synth.dataset import Dataset


def add_hf_arguments(p: argparse.ArgumentParser) -> None:
    """The options that only ``--format hf`` takes."""
    hf = p.add_argument_group("Hugging Face (--format hf)")
    hf.add_argument(
        "--push-to-hub",
        metavar="REPO",
        help="also push the card and parquet shards to the Hub dataset REPO (user/name) in one "
        "commit; needs a token (HF_TOKEN or `hf auth login`)",
    )
    hf.add_argument(
        "--private", action="store_true", help="create REPO as a private dataset when it is new"
    )
    hf.add_argument(
        "--manifest",
        metavar="FILE",
        help="the run's manifest.json or run directory, for the card (default: found from the "
        "dataset's run id in .synth/runs/)",
    )
    hf.add_argument("--title", help="the card's title (default: names the run)")


def shareable(dataset: Dataset) -> Dataset:
    """The dataset as it may leave the machine: no model's base URL, no path from the local disk
    (see ``synth/dataset/_public.py``); the files ``synth generate`` wrote keep both."""
    from synth.dataset import Dataset
    from synth.dataset._public import public_goldens, public_metadata

    return Dataset(public_goldens(dataset.goldens), public_metadata(dataset.metadata))


def export_hf(args: argparse.Namespace, source: Path, output: Path) -> int:
    """Write ``source`` as an hf folder at ``output`` (and push it); say what was written."""
    from synth._manifest import find_manifest, load_manifest
    from synth.dataset import Dataset
    from synth.dataset._card import dataset_card
    from synth.dataset._hf import require
    from synth.dataset._hf_folder import write_hf_folder
    from synth.dataset._hub import check_repo_id, hub_token, push_folder
    from synth.dataset._public import public_metadata
    from synth.dataset.review import select

    require("datasets")
    repo: str | None = args.push_to_hub
    token = None
    if repo is not None:
        check_repo_id(repo)
        token = hub_token()
    dataset = select(Dataset.load(source), args.status)  # --status: which review states go out
    manifest: dict[str, Any] | None
    if args.manifest:
        manifest = load_manifest(args.manifest)
    else:
        manifest = find_manifest(dataset.metadata, source)
    # what is published names no model server and no local path (synth/dataset/_public.py)
    dataset = shareable(dataset)
    manifest = public_metadata(manifest) if manifest is not None else None
    card = dataset_card(dataset, manifest, repo=repo, title=args.title)
    pushed: list[str] = []

    def publish(folder: Path) -> None:
        if repo is not None and token is not None:
            pushed.append(push_folder(folder, repo, token, private=args.private or None))

    write_hf_folder(output, dataset.goldens, dataset.metadata, card, publish)
    run_note = "card from the run's manifest" if manifest else "card without a run manifest"
    print(f"wrote {len(dataset)} goldens to {output}/ (Hugging Face dataset folder, {run_note})")
    if pushed:
        print(f"pushed the card and parquet shards to {pushed[0]}")
    return EXIT_OK


__all__ = ["add_hf_arguments", "export_hf", "shareable"]
