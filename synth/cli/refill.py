"""``synth refill``: a reviewed dataset back to exactly N, its rejected goldens replaced."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from synth.cli._exits import EXIT_OK, EXIT_PARTIAL
from synth.cli.generate import add_gates, check_gates


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
    p.add_argument(
        "--pipeline",
        metavar="FILE",
        help="take the settings from this pipeline file instead of the run's manifest",
    )
    p.add_argument(
        "--model", metavar="SPEC", help="generator model as provider:model (default: the run's)"
    )
    p.add_argument(
        "--critic-model", metavar="SPEC", help="critic model as provider:model (default: the run's)"
    )
    p.add_argument("--embedder", metavar="SPEC", help="embedder spec (default: the run's)")
    p.add_argument("--base-url", metavar="URL", help="an OpenAI-compatible server's URL")
    p.add_argument("--max-concurrent", type=int, metavar="N", help="requests in flight at most")
    p.add_argument("--run-dir", metavar="DIR", help="where the refill's run keeps its outputs")
    add_gates(p)
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a line")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Refill ``args.dataset`` and say what changed; EXIT_PARTIAL when it is still short."""
    import json

    from synth.dataset import Dataset
    from synth.dataset.review import counts
    from synth.errors import ConfigError
    from synth.pipeline import Synthesizer
    from synth.run.refill import REFILLS, rejected_path, run_manifest

    if args.max_concurrent is not None and args.max_concurrent < 1:
        raise ConfigError(f"--max-concurrent must be at least 1, got {args.max_concurrent}")
    check_gates(args)
    path = Path(args.dataset)
    before = Dataset.load(path)
    rejected = counts(before)["rejected"]
    if not rejected:
        print(f"nothing to refill: no golden of {path} is rejected ({len(before)} goldens)")
        return EXIT_OK
    options = _options(args, run_manifest(before, path))
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


def _options(args: argparse.Namespace, manifest: dict[str, Any] | None) -> dict[str, Any]:
    """The Synthesizer's arguments: the pipeline file's, else the run's, with the flags over them;
    a dataset made elsewhere needs ``--docs`` and ``--model`` (said in one line)."""
    from synth.errors import ConfigError
    from synth.run.config import load_pipeline
    from synth.run.refill import run_options

    if args.pipeline:
        options = load_pipeline(args.pipeline).synthesizer_options()
    elif manifest is not None:
        options = run_options(manifest)
    else:
        missing = [
            flag for flag, value in (("--docs", args.docs), ("--model", args.model)) if not value
        ]
        if missing:
            raise ConfigError(
                f"{args.dataset} was not made by a synth run found here (no run manifest): "
                f"refilling it needs {' and '.join(missing)}"
            )
        options = {}
    flags = {
        "model": args.model,
        "critic_model": args.critic_model,
        "embedder": args.embedder,
        "base_url": args.base_url,
        "max_concurrent": args.max_concurrent,
        "run_dir": args.run_dir,
        "grounding_threshold": args.grounding_threshold,
        "max_easy_share": args.max_easy_share,
    }
    options.update({k: v for k, v in flags.items() if v is not None})
    return options


__all__ = ["add_parser", "run"]
