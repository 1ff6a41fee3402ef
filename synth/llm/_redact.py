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


#: shorter values are not treated as secrets (redacting "eu" would garble every message)
_MIN_SECRET = 8


def secret_values(
    client: Any, options: Mapping[str, Any] | None, api_key: str | None = None
) -> tuple[str, ...]:
    """The strings a model must never show: its API key and its ``extra_headers``/``extra_query`` values."""
    found = [api_key]
    for holder in (client, getattr(client, "_api_client", None)):  # google-genai keeps it inside
        for name in ("api_key", "auth_token"):
            found.append(getattr(holder, name, None))
    for key in SECRET_OPTIONS:
        value = (options or {}).get(key)
        found.extend(value.values() if isinstance(value, Mapping) else [value])
    return tuple(sorted({v for v in found if isinstance(v, str) and len(v) >= _MIN_SECRET}))


def scrub(text: str, secrets: tuple[str, ...]) -> str:
    """``text`` with every secret replaced by ``<redacted>`` (longest first)."""
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text
