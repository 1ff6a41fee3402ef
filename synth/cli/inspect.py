"""``synth inspect``: what a dataset holds, in numbers (tables, or ``--json``); it never judges."""

from __future__ import annotations

import argparse

from synth.cli._exits import EXIT_OK

#: leak and duplicate rows printed unless ``--show`` says otherwise
DEFAULT_SHOW = 10


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Declare ``synth inspect`` and its arguments on ``sub``."""
    p = sub.add_parser(
        "inspect",
        help="summarise a dataset: counts, grounding, citations, leaks, near duplicates",
        description="Summarise any dataset (synth's or another tool's): goldens per source file, "
        "evolution and difficulty label; the grounding rate; answers with no citation; "
        "unanswerable goldens; questions that leak their context (content-word overlap); and, "
        "with --embedder, near-duplicate questions. Measurements a dataset does not carry are "
        "reported as unmeasured. Exit code 0 whatever it finds.",
    )
    p.add_argument("dataset", help="a saved dataset (.json, .jsonl, .csv, .parquet)")
    p.add_argument(
        "--embedder",
        metavar="SPEC",
        help="embed the questions to find near duplicates: hash, local:<model>, openai:<model> "
        "(default: no near-duplicate search)",
    )
    for name, default, what in (
        ("duplicate", 0.9, "cosine similarity at which two questions are near duplicates"),
        ("leak", 0.8, "share of a question's content words in its context at which it leaks"),
        ("grounding", 0.5, "grounding score at which a golden counts as grounded"),
    ):
        p.add_argument(
            f"--{name}-threshold",
            type=_unit_interval,
            default=default,
            metavar="X",
            help=f"{what}, 0..1 ({default})",
        )
    p.add_argument(
        "--show",
        type=_count,
        default=DEFAULT_SHOW,
        metavar="N",
        help=f"rows of leaks and near duplicates (and indexes of other lists) to print "
        f"({DEFAULT_SHOW}); --json has them all",
    )
    p.add_argument("--json", action="store_true", help="print the inspection as JSON, not tables")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Inspect the dataset ``args.dataset`` and print the numbers; always EXIT_OK when it ran."""
    import json

    from synth.cli._inspect_view import inspection_view
    from synth.cli.console import CommandConsole, print_all_fitted
    from synth.dataset import Dataset
    from synth.dataset._diversity import corpus_totals
    from synth.dataset.inspect import inspect_dataset
    from synth.report import find_manifest

    dataset = Dataset.load(args.dataset)
    # the run's corpus, when its manifest is found, gives the shares of files and chunks covered
    files_total, chunks_total = corpus_totals(find_manifest(dataset.metadata, args.dataset))
    inspection = inspect_dataset(
        dataset,
        embedder=args.embedder,
        duplicate_threshold=args.duplicate_threshold,
        leak_threshold=args.leak_threshold,
        grounding_threshold=args.grounding_threshold,
        files_total=files_total,
        chunks_total=chunks_total,
    )
    if args.json:
        print(json.dumps(inspection.model_dump(mode="json"), indent=2, ensure_ascii=False))
    else:
        views = inspection_view(inspection, dataset, source=args.dataset, show=args.show)
        print_all_fitted(CommandConsole(), views)
    return EXIT_OK


def _unit_interval(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number between 0 and 1, got {text!r}"
        ) from None
    if not 0.0 <= value <= 1.0:  # NaN fails this too
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {text!r}")
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text!r}")
    return value


__all__ = ["DEFAULT_SHOW", "add_parser", "run"]
