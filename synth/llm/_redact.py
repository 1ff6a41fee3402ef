"""Hide secrets before a model's settings are shown, hashed or written anywhere."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

REDACTED = "<redacted>"

#: options whose values may carry credentials (gateways and Azure put keys there)
SECRET_OPTIONS = ("extra_headers", "extra_query")


def redact_options(options: Mapping[str, Any] | None) -> dict[str, Any]:
    """A copy of ``options`` with every value inside ``extra_headers``/``extra_query`` redacted."""
    out: dict[str, Any] = {}
    for key, value in (options or {}).items():
        if key in SECRET_OPTIONS and isinstance(value, Mapping):
            out[key] = {name: REDACTED for name in value}
        elif key in SECRET_OPTIONS and value is not None:
            out[key] = REDACTED
        else:
            out[key] = value
    return out


def redact_url(url: str | None) -> str | None:
    """``url`` without a user/password part and with every query value redacted."""
    if not url:
        return url
    parts = urlsplit(str(url))
    netloc = parts.netloc.rsplit("@", 1)[-1]
    query = urlencode([(k, REDACTED) for k, _ in parse_qsl(parts.query, keep_blank_values=True)])
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
