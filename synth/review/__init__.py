"""``synth review``: a local page in the browser to accept, reject and edit a dataset's goldens.

- :mod:`synth.dataset.review`: the review record each decision writes (pure functions)
- :mod:`synth.review._store`: the server's one state, every change written to the dataset at once
- :mod:`synth.review._files`: writing the dataset from cached per-golden text, atomically
- :mod:`synth.review._view`: what the page is given of each golden
- :mod:`synth.review.app`: the starlette app: the page, the decisions, the token and the CSP
- :mod:`synth.review.server`: uvicorn on 127.0.0.1, the URL printed once it answers

The page itself is ``synth/report/templates/review.html.j2`` with its ``review.js`` and
``review.css``, rendered by the reports' template machinery (escaping, script-safe JSON).
"""

from __future__ import annotations

from synth.review._store import DatasetChangedError, ReviewStore, UnknownGoldenError
from synth.review.app import Session, make_app, new_session
from synth.review.server import serve

__all__ = [
    "DatasetChangedError",
    "ReviewStore",
    "Session",
    "UnknownGoldenError",
    "make_app",
    "new_session",
    "serve",
]
