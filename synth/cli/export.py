"""``synth export``: a saved dataset in another of synth's formats, or in another tool's."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synth.cli._exits import EXIT_OK
from synth.cli._flags import add_status_argument

if TYPE_CHECKING:
    from synth.dataset import Dataset

#: the formats synth reads back losslessly (the others are other tools')
OWN_FORMATS = ("jsonl", "json", "csv", "parquet")
#: a Hugging Face folder with a dataset card (export_hf, below)
HF_FORMAT = "hf"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Declare ``synth export`` and its arguments on ``sub``."""
    p = sub.add_parser(
        "export",
        help="convert a dataset to another of synth's formats or to another tool's",
        description="Write a saved dataset in another of synth's own formats (jsonl, json, csv, "
        "parquet: lossless, metadata included; picked by -o's suffix or --format), or for "
        "another tool: deepeval goldens (.json or .jsonl), deepeval CSV (.csv), ragas samples "
        "(.jsonl or .json), judgeval 1.x examples (.json) or judgeval 0.0.x examples "
        "(judgeval-legacy, .json), chat messages (messages, .jsonl), promptfoo test cases (.yaml or "
        ".json), LangSmith examples and Langfuse dataset items (.jsonl), a Phoenix dataset CSV "
        "(phoenix, .csv); or as a Hugging Face folder (hf: save_to_disk output, parquet "
        "shards under data/ and a dataset card README.md drawn from the run; needs synth[hf]), "
        "optionally pushed to the Hub. `synth` reads them all back.",
    )
    p.add_argument("dataset", help="a saved dataset (.json, .jsonl, .csv, .parquet, hf folder)")
    p.add_argument(
        "-f",
        "--format",
        metavar="FORMAT",
        help="synth's own format, another tool's or hf, as listed above (default: synth's "
        "format -o's suffix names)",
    )
    p.add_argument(
        "-o",
        "--output",
        help="file to write (default: next to DATASET, e.g. goldens.deepeval.json; for hf, the "
        "folder goldens_hf)",
    )
    add_hf_arguments(p)
    add_status_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Write the dataset ``args.dataset`` to the file and format the arguments name."""
    from synth.dataset import Dataset
    from synth.dataset._export import export_format
    from synth.dataset.review import select
    from synth.errors import ConfigError

    source = Path(args.dataset)
    output = output_path(source, args.format, args.output)
    if args.format == HF_FORMAT:
        return export_hf(args, source, output)
    given = [flag for flag, value in _hf_options(args).items() if value]
    if given:
        raise ConfigError(f"{', '.join(given)}: only with --format hf")
    dataset = shareable(select(Dataset.load(source), args.status))
    if args.format in OWN_FORMATS or args.format is None:
        dataset.save(output)
        what = f"synth dataset, {output.suffix.lower().lstrip('.')}"
    else:
        dataset.export(output, format=args.format)
        what = export_format(args.format).description
    chosen = "" if args.status == "all" else f" {args.status}"
    print(f"wrote {len(dataset)}{chosen} goldens to {output} ({what})")
    return EXIT_OK


def _hf_options(args: argparse.Namespace) -> dict[str, object]:
    return {
        "--push-to-hub": args.push_to_hub,
        "--private": args.private,
        "--manifest": args.manifest,
        "--title": args.title,
    }


def output_path(source: Path, format: str | None, output: str | None) -> Path:
    """The file to write ``source`` to, from ``--format`` and ``-o``; a ConfigError line saying
    what to change when they do not fit together (checked before the dataset is read)."""
    from synth.dataset import SUFFIXES
    from synth.dataset._export import default_export_path
    from synth.errors import ConfigError

    if format is None:
        if not output:
            raise ConfigError(
                "name the file to write with -o (its suffix picks the format) or --format"
            )
        path = Path(output)
        if path.suffix.lower() not in SUFFIXES:
            raise ConfigError(
                f"{path}: unsupported dataset suffix {path.suffix or '(none)'!r}; use one of "
                f"{', '.join(SUFFIXES)}, or name another tool's format with --format"
            )
    elif format == HF_FORMAT:
        path = Path(output) if output else source.with_name(f"{source.stem}_hf")
    elif format in OWN_FORMATS:
        suffix = f".{format}"
        path = Path(output) if output else source.with_suffix(suffix)
        if path.suffix.lower() != suffix:
            raise ConfigError(f"{path}: a {format} dataset is written as {suffix}")
    else:
        from synth.dataset._export import EXPORT_FORMATS

        if format not in EXPORT_FORMATS:
            known = ", ".join([*OWN_FORMATS, *EXPORT_FORMATS, HF_FORMAT])
            raise ConfigError(f"unknown format {format!r}; choose one of: {known}")
        path = Path(output) if output else default_export_path(source, format)
    if path.resolve() == source.resolve():
        raise ConfigError(f"{path}: is the dataset being exported; choose another -o")
    return path


# ---- ``synth export --format hf``: a Hugging Face folder with a dataset card, optionally
# pushed.
#
# Everything is checked before anything is written: the repository id and the token when pushing,
# the target folder. The folder is built beside ``-o``, pushed from there when asked, and only
# then renamed into place, so a failed push leaves no folder and no half-written repository.
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


__all__ = ["HF_FORMAT", "OWN_FORMATS", "add_parser", "output_path", "run"]
