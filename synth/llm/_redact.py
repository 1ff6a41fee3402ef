"""Hide secrets before a model's settings or an error message are shown, hashed or written anywhere.

:func:`redact_text` is the one redaction every provider and store error message passes through: it
hides the values a model knows to be secret (its key, its secret options) and anything that looks
like a credential whoever sent it (``sk-...`` keys, bearer tokens, ``api-key``/``x-api-key``
headers, a URL's user and password, and token-like query values).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
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
    if "://" not in str(url):  # host:port, or user:password@host:port, as a store URL may be given
        bare = redact_url(f"http://{url}") or ""
        return bare.removeprefix("http://")
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


#: what looks like a credential in free text, whoever wrote it (a server may echo a header)
_PATTERNS = (
    # OpenAI-style keys (sk-..., sk-proj-...) and other vendors' prefixed keys
    re.compile(r"\b(?:sk|rk|pk)-[A-Za-z0-9_\-]{6,}"),
    # Authorization: Bearer <token> / Basic <token>
    re.compile(r"(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=\-]{6,}"),
    # api-key: X, x-api-key=X, "api_key": "X", x-goog-api-key: X
    re.compile(
        r"(?i)((?:x-goog-|x-)?api[-_]?key[\"']?\s*[:=]\s*[\"']?)[^\s\"',;&}]{4,}",
    ),
    # a URL's user:password@
    re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^\s/@:]*:[^\s/@]*@"),
    # token-like values in a query string or a form, the name alone or at the end of a prefixed
    # one (a signed URL's X-Amz-Signature, X-Amz-Credential, X-Amz-Security-Token, X-Goog-...)
    re.compile(
        r"(?i)([?&;](?:[a-z0-9]+[-_.])*(?:access_token|token|key|api_key|apikey|secret|password|"
        r"passwd|sig|signature|credential|auth|code)=)[^\s&#\"']+"
    ),
)


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every known secret and every credential-looking value replaced by
    ``<redacted>``."""
    text = scrub(str(text), tuple(secrets))
    key, bearer, header, userinfo, query = _PATTERNS
    text = key.sub(REDACTED, text)
    text = bearer.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    text = header.sub(lambda m: f"{m.group(1)}{REDACTED}", text)
    text = userinfo.sub(lambda m: f"{m.group(1)}{REDACTED}@", text)
    return query.sub(lambda m: f"{m.group(1)}{REDACTED}", text)


def scrub(text: str, secrets: tuple[str, ...]) -> str:
    """``text`` with every one of ``secrets`` replaced by ``<redacted>`` (longest first)."""
    for secret in sorted(secrets, key=len, reverse=True):
        if secret:
            text = text.replace(secret, REDACTED)
    return text
