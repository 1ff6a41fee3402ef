"""The gates on what a golden must show (grounding, difficulty) as flags, for every command that
makes goldens (generate, refill, update)."""

from __future__ import annotations

import argparse

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


__all__ = ["add_gates", "check_gates"]
