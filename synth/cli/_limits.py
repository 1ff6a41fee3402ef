"""The flags that say how a run sends its requests: how many at once, how fast, in batch jobs."""

from __future__ import annotations

import argparse


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


__all__ = ["add_limits"]
