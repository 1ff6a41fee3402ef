"""``synth update``: a dataset kept current as its documents change, still exactly N goldens."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from synth.cli._exits import EXIT_OK, EXIT_PARTIAL, EXIT_STALE
from synth.cli._upkeep import add_run_flags, check_run_flags, synthesizer_options


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Declare ``synth update`` and its arguments on ``sub``."""
    p = sub.add_parser(
        "update",
        help="bring a dataset up to date with its documents: replace stale goldens, keep the rest",
        description="Sort every golden against the documents as they are now: kept (all its "
        "chunks are still there), stale (a chunk changed or vanished) or orphaned (its file is "
        "gone). The stale and orphaned are replaced by new pending goldens from the changed and "
        "new files, the others kept byte for byte; the replaced go to DATASET.retired.jsonl and "
        "a changelog to DATASET.changes.json. --check only reports (no model request, nothing "
        "written): exit 0 when the dataset is current, 4 when it is stale (a golden to retire, or "
        "a file neither the run nor an update saw); a file without a golden is reported, not "
        "stale.",
    )
    p.add_argument("dataset", help="the dataset to update (.jsonl, .json, .csv, .parquet)")
    p.add_argument("docs", nargs="+", metavar="DOCS", help="the documents as they are now")
    p.add_argument(
        "--check",
        action="store_true",
        help="say what an update would do and its cost; exit 4 when stale, 0 when current",
    )
    add_run_flags(p)
    p.add_argument("--json", action="store_true", help="print one JSON object instead of lines")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Check or update ``args.dataset``; EXIT_STALE for a stale --check, EXIT_PARTIAL when short."""
    from synth.dataset import Dataset
    from synth.dataset.refill import run_manifest
    from synth.dataset.update import UPDATES
    from synth.pipeline import Synthesizer

    check_run_flags(args)
    path = Path(args.dataset)
    before = Dataset.load(path)
    manifest = run_manifest(before, path)
    options = synthesizer_options(args, manifest, makes_goldens=not args.check)
    with Synthesizer(**options) as synthesizer:
        plan = synthesizer.plan_update(path, args.docs, embed=not args.check)
        if args.check:
            # "stale" is the count of stale goldens; whether the dataset is, is "current"
            summary = {**plan.summary(), **_cost(manifest, len(plan.retired))}
            summary["current"] = not plan.stale
            _show(summary, args, f"{path} is {'stale' if plan.stale else 'current'}")
            return EXIT_STALE if plan.stale else EXIT_OK
        after = synthesizer.update(path, args.docs, plan=plan) if plan.stale else before
    last = (after.metadata.get(UPDATES) or [{}])[-1] if plan.stale else plan.summary()
    summary = {**plan.summary(), **last, "goldens": len(after)}
    summary.pop("seen_files", None)
    _show(summary, args, f"updated {path}" if plan.stale else f"{path} is current")
    if after.shortfall is None:
        return EXIT_OK
    sys.stdout.flush()
    print(f"synth: {after.shortfall} (exit code {EXIT_PARTIAL})", file=sys.stderr)
    return EXIT_PARTIAL


def _cost(manifest: dict[str, Any] | None, goldens: int) -> dict[str, Any]:
    """The requests and cost ``goldens`` new goldens would take, at the run's own rates."""
    if not manifest or not goldens:
        return {"planned_requests": 0, "planned_cost_usd": 0.0}
    delivered = manifest.get("delivered") or 0
    totals = manifest.get("totals") or {}
    per = manifest.get("requests_per_golden") or 0
    cost = (totals.get("cost_usd", 0) / delivered) if delivered else 0.0
    return {"planned_requests": round(per * goldens), "planned_cost_usd": round(cost * goldens, 4)}


def _show(summary: dict[str, Any], args: argparse.Namespace, head: str) -> None:
    if args.json:
        print(json.dumps(summary, ensure_ascii=False))
        return
    bare = summary.get("files_without_golden", 0)
    print(
        f"{head}: {summary['kept']} kept, {summary['stale']} stale, {summary['orphaned']} "
        f"orphaned goldens; files: {summary['changed_files']} changed, "
        f"{summary['deleted_files']} deleted, {summary['new_files']} new"
        + (f", {bare} without a golden (not stale)" if bare else "")
    )
    if "planned_requests" in summary:
        print(
            f"an update would make {summary['retired']} new goldens: about "
            f"{summary['planned_requests']} requests, ${summary['planned_cost_usd']:.4f}"
        )
    elif summary.get("retired"):
        print(f"replaced {summary['added']} of {summary['retired']} retired goldens")
    for path, change in summary["files"].items():
        if change["status"] != "unchanged" or change["retired"] or change["added"]:
            print(
                f"  {change['status']:9} {path}: {change['kept']} kept, "
                f"{change['retired']} retired, {change['added']} added"
            )
    for note in summary.get("notes") or []:
        print(f"note: {note}")


__all__ = ["add_parser", "run"]
