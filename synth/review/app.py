"""The review server's ASGI app (starlette): the page, and one request per decision.

Routes: ``GET /`` the page; ``GET /api/goldens`` the page's data (a second tab catching up);
``POST /api/decide`` ``{"key", "status", "reason"}``; ``POST /api/edit`` ``{"key", "input",
"expected_output"}``. A decision is answered with the golden as saved and the new counts, once it
is in the dataset file.

Who may ask: the dataset is private, so every request, reads included, must carry the session
token (``X-Synth-Token`` header, or ``?token=`` as in the printed URL), compared in constant time;
its ``Host`` must be this server (a DNS-rebinding page names another host) and its ``Origin``, when
the browser sends one, this server's. Every answer carries a strict Content-Security-Policy: the
page's one script and one style sheet run by a per-response nonce, nothing is loaded from anywhere,
and the only connection allowed is back to this server.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from synth.data import Golden
from synth.dataset.review import REJECT_REASONS
from synth.errors import ConfigError, DatasetError
from synth.report._html import render_page
from synth.review._store import DatasetChangedError, ReviewStore, UnknownGoldenError
from synth.review._view import PageData, golden_view

TOKEN_HEADER = "x-synth-token"
#: the largest request body read (an edited answer of a few hundred kilobytes fits)
MAX_BODY = 2_000_000
#: the keyboard shortcuts, as the page lists them (the script binds the same keys)
SHORTCUTS = (
    ("a", "accept"),
    ("r", "reject: pick a reason (1-6) or type one, Enter to save"),
    ("e", "edit the expected output (Ctrl+Enter saves, Esc cancels)"),
    ("i", "edit the input"),
    ("u", "undo: back to pending"),
    ("j / \u2192", "next golden"),
    ("k / \u2190", "previous golden"),
    ("n", "next pending golden"),
    ("?", "show or hide these shortcuts"),
)


@dataclass(frozen=True)
class Session:
    """What the server checks each request against: its token and where it listens."""

    token: str
    port: int

    @property
    def hosts(self) -> frozenset[str]:
        return frozenset({f"127.0.0.1:{self.port}", f"localhost:{self.port}"})

    @property
    def origins(self) -> frozenset[str]:
        return frozenset(f"http://{host}" for host in self.hosts)

    @property
    def url(self) -> str:
        """The page's address, token included: what ``synth review`` prints and opens."""
        return f"http://127.0.0.1:{self.port}/?token={self.token}"


def new_session(port: int) -> Session:
    """A session on ``port`` with a fresh random token."""
    return Session(token=secrets.token_urlsafe(24), port=port)


def make_app(store: ReviewStore, session: Session) -> Starlette:
    """The review app of ``store``, answering only requests that ``session`` allows."""
    data = PageData(store.path.name, store.goldens)

    def guarded(
        endpoint: Callable[[Request], Awaitable[Response]],
    ) -> Callable[[Request], Awaitable[Response]]:
        async def checked(request: Request) -> Response:
            refusal = _refusal(request, session)
            response = _error(request, 403, refusal) if refusal else await endpoint(request)
            return _secured(response)

        return checked

    async def page(request: Request) -> Response:
        nonce = secrets.token_urlsafe(16)
        html = render_page(
            "review.html.j2",
            title=f"synth review: {store.path.name}",
            nonce=nonce,
            shortcuts=SHORTCUTS,
            reasons=REJECT_REASONS,
            data=data.json(store.keys, store.goldens, store.counts),
        )
        return _secured(HTMLResponse(html), nonce)

    async def goldens(request: Request) -> Response:
        return Response(
            data.json(store.keys, store.goldens, store.counts), media_type="application/json"
        )

    async def decide(request: Request) -> Response:
        body = await _body(request, {"key": str, "status": str, "reason": str | None})
        if isinstance(body, Response):
            return body
        key = body["key"]
        return await _apply(
            request, store, key, lambda: store.decide(key, body["status"], body.get("reason"))
        )

    async def edit(request: Request) -> Response:
        fields = {"key": str, "input": str | None, "expected_output": str | None}
        body = await _body(request, fields)
        if isinstance(body, Response):
            return body
        key, new_input, new_output = body["key"], body.get("input"), body.get("expected_output")
        return await _apply(
            request,
            store,
            key,
            lambda: store.edit(key, input=new_input, expected_output=new_output),
        )

    routes = [
        Route("/", guarded(page), methods=["GET"]),
        Route("/api/goldens", guarded(goldens), methods=["GET"]),
        Route("/api/decide", guarded(decide), methods=["POST"]),
        Route("/api/edit", guarded(edit), methods=["POST"]),
    ]
    return Starlette(routes=routes, max_body_size=MAX_BODY)


def _refusal(request: Request, session: Session) -> str | None:
    """Why ``request`` is refused, or None when it may be answered."""
    host = request.headers.get("host", "")
    if host not in session.hosts:
        return f"refused: Host {host!r} is not this review server (127.0.0.1:{session.port})"
    origin = request.headers.get("origin")
    if origin is not None and origin not in session.origins:
        return f"refused: a page from {origin!r} may not use this review server"
    if request.headers.get("sec-fetch-site") == "cross-site":
        return "refused: a request from another site may not use this review server"
    given = request.headers.get(TOKEN_HEADER) or request.query_params.get("token") or ""
    if not hmac.compare_digest(given.encode("utf-8"), session.token.encode("utf-8")):
        return "refused: missing or wrong session token; open the URL synth review printed"
    return None


async def _body(request: Request, fields: Mapping[str, Any]) -> dict[str, Any] | Response:
    """The request's JSON object, checked against ``fields`` (name -> type), or a 4xx answer."""
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        return _error(request, 415, "send the decision as JSON (Content-Type: application/json)")
    try:
        body = await request.json()
    except ValueError:
        return _error(request, 400, "the request body is not valid JSON")
    if not isinstance(body, dict):
        return _error(request, 400, "the request body must be a JSON object")
    unknown = sorted(set(body) - set(fields))
    if unknown:
        return _error(request, 400, f"unknown field(s) {', '.join(unknown)}; send {list(fields)}")
    for name, kind in fields.items():
        value = body.get(name)
        if not isinstance(value, kind):
            return _error(request, 400, f"field {name!r} must be {_kind_name(kind)}")
    return body


async def _apply(
    request: Request, store: ReviewStore, key: str, change: Callable[[], Golden]
) -> Response:
    """Run one change to the store (in a thread: it writes the file), answered as JSON."""
    try:
        golden = await run_in_threadpool(change)
    except UnknownGoldenError as exc:
        return _error(request, 404, str(exc))
    except DatasetChangedError as exc:
        return _error(request, 409, str(exc))
    except ConfigError as exc:
        return _error(request, 400, str(exc))
    except (DatasetError, OSError) as exc:
        return _error(request, 500, f"the decision could not be saved: {exc}")
    return JSONResponse({"golden": golden_view(key, golden), "counts": store.counts})


def _kind_name(kind: Any) -> str:
    return "a string" if kind is str else "a string or null"


def _error(request: Request, status: int, message: str) -> Response:
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": message}, status_code=status)
    return PlainTextResponse(f"synth review: {message}\n", status_code=status)


def _secured(response: Response, nonce: str | None = None) -> Response:
    """``response`` with the headers every answer carries; the page's CSP allows its nonce (set
    first, it is kept when the guard secures the response again)."""
    own = f"'nonce-{nonce}'" if nonce else "'none'"
    response.headers.setdefault(
        "Content-Security-Policy",
        f"default-src 'none'; script-src {own}; style-src {own}; connect-src 'self'; "
        "img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    )
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["Cache-Control"] = "no-store"
    response.headers["Cross-Origin-Opener-Policy"] = "same-origin"
    response.headers["Cross-Origin-Resource-Policy"] = "same-origin"
    response.headers["X-Frame-Options"] = "DENY"
    return response


__all__ = ["SHORTCUTS", "Session", "TOKEN_HEADER", "make_app", "new_session"]
