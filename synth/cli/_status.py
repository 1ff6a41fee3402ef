"""``--status``: which goldens of a reviewed dataset ``synth export`` and ``synth evaluate`` take."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_status_argument(p: argparse.ArgumentParser) -> None:
    """Declare ``--status accepted|pending|rejected|all`` (default ``all``) on ``p``."""
    from synth.dataset.review import STATUS_FILTERS

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


__all__ = ["add_status_argument", "dataset_with_status"]
