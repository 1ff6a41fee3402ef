"""``synth review``: serve a dataset's review page on 127.0.0.1 and open it in the browser.

The URL is always printed; a browser is opened only where one can show the page (a graphical
one, see :func:`graphical_browser`), and from a thread, so that the server answers whatever the
browser does: on a headless machine ``webbrowser`` would otherwise run a console browser (``w3m``
as ``www-browser``) and wait for it before the server started.
"""

from __future__ import annotations

import argparse
import getpass
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from synth.cli._exits import EXIT_OK

if TYPE_CHECKING:
    import webbrowser

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
    if args.reviewer is not None and not args.reviewer.strip():
        # else the page would serve, and refuse every decision it is sent
        raise ConfigError("--reviewer: the name must not be blank (leave it out for the OS user)")
    store = ReviewStore(path, reviewer=args.reviewer or default_reviewer())
    if not len(store):
        store.close()
        raise ConfigError(f"nothing to review: {path} holds no goldens")

    served: list[Session] = []

    def ready(session: Session) -> None:
        served.append(session)
        _announce(store, session)
        if not args.no_browser and not open_browser(session.url):
            print("no graphical browser here: open the URL above in one", flush=True)

    try:
        serve(store, port=args.port, on_ready=ready)  # closes the store, however it ends
    finally:
        if served:  # not after a server that never started (its port taken): no page, no decision
            print(f"synth review: stopped; every decision is saved in {path}", flush=True)
    return EXIT_OK


#: browsers that draw in the terminal: run from here they would take it over and, waited for,
#: hold the server back (webbrowser waits for them)
CONSOLE_BROWSERS = frozenset({"www-browser", "links", "links2", "elinks", "lynx", "w3m", "browsh"})


def graphical_browser() -> webbrowser.BaseBrowser | None:
    """The browser that can show the page, or None: on Linux and other Unixes only with a display
    (``DISPLAY`` or ``WAYLAND_DISPLAY``), and never one that draws in the terminal."""
    import webbrowser

    gui_os = sys.platform == "darwin" or sys.platform.startswith("win")
    if not gui_os and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return None
    try:
        browser = webbrowser.get()
    except webbrowser.Error:
        return None
    name = os.path.basename(getattr(browser, "name", "") or "")
    in_terminal = isinstance(browser, webbrowser.UnixBrowser) and not browser.background
    if name in CONSOLE_BROWSERS or in_terminal:
        return None
    return browser


def open_browser(url: str) -> bool:
    """Open ``url`` in a graphical browser, on a thread of its own (the server is never held back
    by a browser that is slow to return); False when there is none to open it in."""
    browser = graphical_browser()
    if browser is None:
        return False
    threading.Thread(target=browser.open, args=(url,), name="open-browser", daemon=True).start()
    return True


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


__all__ = ["add_parser", "default_reviewer", "graphical_browser", "open_browser", "run"]
