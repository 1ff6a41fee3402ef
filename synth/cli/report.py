"""``synth report``: a dataset as one self-contained HTML page (plots, stages, every golden)."""

from __future__ import annotations

import argparse
from pathlib import Path

from synth.cli._exits import EXIT_OK


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Declare ``synth report`` and its arguments on ``sub``."""
    p = sub.add_parser(
        "report",
        help="write a dataset's HTML report: plots, stage counts, every golden with its context",
        description="Write one self-contained HTML file about a dataset (it opens from disk, no "
        "network): the run's models, seed, cost and stage counts when the dataset came from a "
        "synth run; plots of goldens per file, evolutions, styles, difficulty, grounding, lengths "
        "and critic/filter scores; and every golden in a table that sorts, filters and opens each "
        "golden's context with the cited spans marked.",
    )
    p.add_argument("dataset", help="a saved dataset (.json, .jsonl, .csv, .parquet)")
    p.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="the HTML file to write (default: the dataset's name with .html)",
    )
    p.add_argument(
        "--manifest",
        metavar="FILE",
        help="the run's manifest.json, or its run directory (default: found from the dataset's "
        "run id in .synth/runs/)",
    )
    p.add_argument("--title", help="the page's title (default: names the dataset)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Write the report of ``args.dataset`` and say where; EXIT_OK when written."""
    from synth._files import write_atomic
    from synth.dataset import Dataset
    from synth.errors import ConfigError
    from synth.report import dataset_report

    output = Path(args.output) if args.output else Path(args.dataset).with_suffix(".html")
    if output.resolve() == Path(args.dataset).resolve():
        raise ConfigError(f"{output}: the report would overwrite the dataset; name another -o")
    dataset = Dataset.load(args.dataset)
    html = dataset_report(
        dataset,
        manifest=args.manifest,
        title=args.title,
        source=args.dataset,
    )
    write_atomic(output, html)
    print(f"wrote the report of {len(dataset)} goldens to {output}")
    return EXIT_OK


__all__ = ["add_parser", "run"]
