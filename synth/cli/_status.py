"""``--status``: which goldens of a reviewed dataset ``synth export`` and ``synth evaluate`` take."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

#: synth.dataset.review.STATUS_FILTERS, named here so that `synth --help` does not import the
#: dataset package (tests/test_startup.py checks they agree)
STATUS_FILTERS = ("accepted", "rejected", "pending", "all")


def add_status_argument(p: argparse.ArgumentParser) -> None:
    """Declare ``--status accepted|pending|rejected|all`` (default ``all``) on ``p``."""
    p.add_argument(
        "--status",
        choices=STATUS_FILTERS,
        default="all",
        help="take only the goldens a review (synth review) gave this status; a golden never "
        "reviewed is pending (default: all, reviewed or not)",
    )


def dataset_with_status(path: str | Path, status: str) -> Any:
    """``path`` itself when every golden is wanted (so readers keep their own handling of the
    file), else the Dataset of its goldens with ``status``."""
    if status == "all":
        return path
    from synth.dataset import Dataset
    from synth.dataset.review import select

    return select(Dataset.load(path), status)


__all__ = ["STATUS_FILTERS", "add_status_argument", "dataset_with_status"]
