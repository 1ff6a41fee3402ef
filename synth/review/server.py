"""Serving the review app on 127.0.0.1 with uvicorn, on a socket bound before the URL is printed.

The socket is bound and listening before :func:`serve` calls ``on_ready`` with the session, so the
printed URL answers at once (a browser or test that connects first waits in the socket's queue,
never finds a closed port). Port 0 asks the system for a free port. Only 127.0.0.1 is ever bound:
the review page is for the person at this machine.
"""

from __future__ import annotations

import socket
from collections.abc import Callable

from synth.errors import ConfigError
from synth.review._store import ReviewStore
from synth.review.app import Session, make_app, new_session

HOST = "127.0.0.1"


def listen(port: int = 0) -> socket.socket:
    """A TCP socket listening on 127.0.0.1:``port`` (0: a free port); ConfigError when taken."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # a restart right after a kill may find the port in TIME_WAIT: still ours to take
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise ConfigError(
            f"cannot listen on {HOST}:{port}: {exc.strerror or exc}; "
            "choose another --port, or leave it out for a free one"
        ) from None
    return sock


def serve(store: ReviewStore, *, port: int = 0, on_ready: Callable[[Session], None]) -> None:
    """Serve ``store``'s review page until the process is interrupted (Ctrl-C); then close the
    store (its last decisions folded into the dataset file)."""
    import uvicorn

    sock = listen(port)
    session = new_session(sock.getsockname()[1])
    config = uvicorn.Config(
        make_app(store, session),
        log_level="warning",
        access_log=False,
        lifespan="off",
        server_header=False,
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)
    on_ready(session)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        store.close()  # the journal's last decisions into the dataset file


__all__ = ["HOST", "listen", "serve"]
