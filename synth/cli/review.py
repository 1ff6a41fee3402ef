"""``synth review``: serve a dataset's review page on 127.0.0.1 and open it in the browser."""

from __future__ import annotations

import argparse
import getpass
from pathlib import Path
from typing import TYPE_CHECKING

from synth.cli._exits import EXIT_OK

if TYPE_CHECKING:
    from synth.review import ReviewStore, Session


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Declare ``synth review`` and its arguments on ``sub``."""
    p = sub.add_parser(
        "review",
        help="accept, reject and edit a dataset's goldens in the browser",
        description="Serve a review page for DATASET on 127.0.0.1 and open it in the default "
        "browser: one golden at a time with its context and cited spans, accept / reject (with "
        "a reason) / edit, keyboard shortcuts, filters and progress. Every decision is saved into "
        "DATASET at once (each golden's metadata 'review'); stop with Ctrl-C, run again to go on.",
    )
    p.add_argument("dataset", help="the dataset to review (.json, .jsonl, .csv, .parquet)")
    p.add_argument("--port", type=int, default=0, metavar="N", help="port (default: a free one)")
    p.add_argument(
        "--reviewer", metavar="NAME", help="name recorded with each decision (default: OS user)"
    )
    p.add_argument(
        "--no-browser", action="store_true", help="print the URL only, do not open a browser"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Serve the review page of ``args.dataset`` until Ctrl-C."""
    from synth.errors import ConfigError
    from synth.review import ReviewStore, serve

    path = Path(args.dataset)
    if not path.is_file():
        raise ConfigError(f"{path}: no such dataset file")
    if not 0 <= args.port <= 65535:
        raise ConfigError(f"--port {args.port}: a port is 0 to 65535 (0 or none: a free one)")
    store = ReviewStore(path, reviewer=args.reviewer or default_reviewer())

    def ready(session: Session) -> None:
        _announce(store, session)
        if not args.no_browser:
            import webbrowser

            webbrowser.open(session.url)

    try:
        serve(store, port=args.port, on_ready=ready)  # closes the store, however it ends
    finally:
        print(f"synth review: stopped; every decision is saved in {path}", flush=True)
    return EXIT_OK


def default_reviewer() -> str:
    """The OS user's name, or ``"reviewer"`` when the system cannot say."""
    try:
        return getpass.getuser() or "reviewer"
    except (KeyError, OSError):  # no name for this uid (a container), no USER/LOGNAME
        return "reviewer"


def _announce(store: ReviewStore, session: Session) -> None:
    from synth.dataset.review import counts

    tally = counts(store.goldens)
    reviewed = tally["accepted"] + tally["rejected"]
    print(
        f"synth review: {len(store)} goldens in {store.path} ({reviewed} reviewed) at\n"
        f"  {session.url}\n"
        f"every decision is saved into {store.path.name} at once; Ctrl-C stops the server",
        flush=True,
    )


__all__ = ["add_parser", "default_reviewer", "run"]
