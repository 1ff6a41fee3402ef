"""Collection names: from the embedder and the chunking parameters, never from a file name.

A name reads like ``synth-hash-384-c1024o0-3f9c2a71d0``: a readable part (embedder spec, chunk
size and overlap) cut to fit, then a digest of the full embedder identity and chunking config, so
two setups that differ anywhere get different collections. Chroma's rules: 3-63 characters of
``[a-zA-Z0-9._-]``, starting and ending with an alphanumeric, no ``..``, not an IPv4 address.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel

from synth._ids import text_hash
from synth.errors import ConfigError
from synth.store.embedder import Embedder

_PREFIX = "synth-"
_MAX = 63
_DIGEST = 10
_VALID = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9._-]*[a-zA-Z0-9]$")
_IPV4 = re.compile(r"^[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$")


def collection_name(embedder: Embedder, chunking: BaseModel) -> str:
    """The collection that holds ``embedder``'s vectors of chunks cut with ``chunking``."""
    params: dict[str, Any] = chunking.model_dump(mode="json")
    key = getattr(chunking, "key", None)
    if callable(key):  # ChunkingConfig.key() also carries the splitter version
        params["key"] = key()
    readable = f"{embedder.name}-c{params.get('chunk_size')}o{params.get('chunk_overlap')}"
    slug = re.sub(r"[^a-zA-Z0-9_-]+", "-", readable).strip("-_")
    blob = json.dumps(
        {"embedder": embedder.identity(), "chunking": params},
        sort_keys=True,
        separators=(",", ":"),
    )
    digest = text_hash(blob, _DIGEST)
    room = _MAX - len(_PREFIX) - len(digest) - 1
    slug = slug[:room].rstrip("-_")
    return f"{_PREFIX}{slug}-{digest}" if slug else f"{_PREFIX}{digest}"


def check_collection_name(name: str) -> str:
    """Return ``name`` when Chroma accepts it as a collection name, else raise ConfigError."""
    if (
        not isinstance(name, str)
        or not 3 <= len(name) <= _MAX
        or not _VALID.match(name)
        or ".." in name
        or _IPV4.match(name)
    ):
        raise ConfigError(
            f"invalid collection name {name!r}: use 3-63 letters, digits, '.', '_' or '-', "
            "starting and ending with a letter or digit"
        )
    return name


__all__ = ["check_collection_name", "collection_name"]
