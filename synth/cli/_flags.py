"""Flags more than one command takes: how a run's requests are sent, the gates a golden must
pass and the language it is written in (generate, refill, update); which reviewed goldens a
command takes (export, evaluate, gate), and that it has some to score."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from synth.errors import ConfigError


def check_gates(args: argparse.Namespace) -> None:
    """Raise ConfigError naming the gate flag whose value is outside 0..1."""
    gates = (
        ("--grounding-threshold", args.grounding_threshold),
        ("--max-easy-share", args.max_easy_share),
    )
    for flag, value in gates:
        if value is not None and not 0.0 <= value <= 1.0:
            raise ConfigError(f"{flag} must be between 0 and 1, got {value:g}")


def add_gates(p: argparse.ArgumentParser) -> None:
    """The gates on what a golden must show (grounding, difficulty), as flags."""
    p.add_argument(
        "--grounding-threshold",
        type=float,
        metavar="X",
        help="grounding score (0..1) an expected output must reach or be asked again, then "
        "replaced (0.5; 0 keeps every answer)",
    )
    p.add_argument(
        "--max-easy-share",
        type=float,
        metavar="X",
        help="at most this share (0..1) of the goldens may be easy for keyword search; the "
        "others are replaced (default: no limit)",
    )


def add_limits(p: argparse.ArgumentParser) -> None:
    """How the requests are sent: how many at once, how fast, or in provider batch jobs."""
    p.add_argument(
        "--max-concurrent",
        type=int,
        metavar="N",
        help="requests in flight, fixed (default: found by the run, up to 256: raised while "
        "replies come back fast, cut on 429s and timeouts)",
    )
    p.add_argument(
        "--rpm",
        type=float,
        metavar="N",
        help="requests per minute at most, all models together (default: no limit; "
        "paced 5%% below N so a server limit of exactly N is not tripped)",
    )
    p.add_argument("--tpm", type=float, metavar="N", help="tokens per minute at most, like --rpm")
    p.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help="seconds a request waits for its reply (default: 120); a server that sends no reply "
        "at all that long stops the run (exit 2)",
    )
    p.add_argument(
        "--batch", action="store_true", help="requests in provider batch jobs: half price, <= 24 h"
    )


def add_language_flag(p: argparse.ArgumentParser) -> None:
    """Declare ``--language CODE`` on ``p``."""
    p.add_argument(
        "--language",
        metavar="CODE",
        help="the language every golden is written in: auto (each in its context's language) "
        "or an ISO 639-1 code such as de (default: the pipeline's, else auto)",
    )


def language_from_args(value: str | None) -> str | None:
    """``--language`` as the generation config takes it (None: not given); ConfigError naming
    the flag when the code is unknown."""
    # here, not with the module: every command's parser declares the flag, few read it
    from synth._language import AUTO, normalize_code

    if value is None or value.strip().lower() == AUTO:
        return None if value is None else AUTO
    try:
        return normalize_code(value)
    except ValueError as exc:
        raise ConfigError(f"--language: {exc}") from None


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
    from synth.dataset.review import counts, select

    dataset = Dataset.load(path)
    chosen = select(dataset, status)
    if len(dataset) and not len(chosen):
        found = ", ".join(f"{n} {name}" for name, n in counts(dataset).items() if n)
        raise ConfigError(
            f"nothing to score: no golden of {path} is {status} ({found}); review them with "
            "synth review, or pass another --status"
        )
    return chosen


def refuse_no_goldens(count: int, path: str | Path) -> None:
    """Raise ConfigError when a command has no golden to score: its empty table with exit 0
    would read as a pass in CI."""
    if not count:
        raise ConfigError(f"nothing to score: {path} holds no goldens")


__all__ = [
    "STATUS_FILTERS",
    "add_gates",
    "add_language_flag",
    "add_limits",
    "add_status_argument",
    "check_gates",
    "dataset_with_status",
    "language_from_args",
    "refuse_no_goldens",
]
