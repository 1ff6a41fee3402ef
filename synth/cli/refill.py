"""``synth refill``: a reviewed dataset back to exactly N, its rejected goldens replaced."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from synth.cli._exits import EXIT_OK, EXIT_PARTIAL
from synth.cli._upkeep import add_run_flags, check_run_flags, synthesizer_options


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Declare ``synth refill`` and its arguments on ``sub``."""
    p = sub.add_parser(
        "refill",
        help="replace a reviewed dataset's rejected goldens with new ones (back to exactly N)",
        description="Generate one new golden for each golden a review rejected (synth review), "
        "with the settings of the run that made the dataset and from chunks no golden of it used "
        "while the corpus has others. The new goldens take the rejected ones' places, marked "
        "pending; the rejected are appended to DATASET.rejected.jsonl with their reasons. The "
        "dataset is written back. Exit 3 when fewer could be made than were rejected.",
    )
    p.add_argument("dataset", help="the reviewed dataset (.jsonl, .json, .csv, .parquet)")
    p.add_argument(
        "--docs",
        nargs="+",
        metavar="PATH",
        help="the documents to refill from (default: the run's, from its manifest)",
    )
    add_run_flags(p)
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a line")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Refill ``args.dataset`` and say what changed; EXIT_PARTIAL when it is still short."""
    import json

    from synth.dataset import Dataset
    from synth.dataset.refill import REFILLS, rejected_path, run_manifest
    from synth.dataset.review import counts
    from synth.pipeline import Synthesizer

    check_run_flags(args)
    path = Path(args.dataset)
    before = Dataset.load(path)
    rejected = counts(before)["rejected"]
    if not rejected:
        print(f"nothing to refill: no golden of {path} is rejected ({len(before)} goldens)")
        return EXIT_OK
    options = synthesizer_options(args, run_manifest(before, path))
    with Synthesizer(**options) as synthesizer:
        after = synthesizer.refill(path, docs=args.docs)
    last = (after.metadata.get(REFILLS) or [{}])[-1]
    added = int(last.get("added", 0))
    summary = {
        "dataset": str(path),
        "round": last.get("round"),
        "rejected": rejected,
        "added": added,
        "goldens": len(after),
        "asked": len(before),
        "rejected_file": str(rejected_path(path)),
        "statuses": counts(after),
    }
    if args.json:
        print(json.dumps(summary, ensure_ascii=False))
    else:
        print(
            f"refilled {path} (round {summary['round']}): {added} of {rejected} rejected goldens "
            f"replaced by new pending ones; {len(after)} of {len(before)} goldens; the rejected "
            f"kept in {summary['rejected_file']}"
        )
    if after.shortfall is None:
        return EXIT_OK
    sys.stdout.flush()
    print(f"synth: {after.shortfall} (exit code {EXIT_PARTIAL})", file=sys.stderr)
    return EXIT_PARTIAL


__all__ = ["add_parser", "run"]
