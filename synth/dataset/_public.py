"""The shareable form of a dataset: no model server's address, no path from the local disk.

A golden as generated is for its owner: its ``metadata.models`` name each model's ``base_url``
(often a private gateway or a host on the owner's network), and its ``source_files`` are paths
that open from the folder the run was started in (``../../work/docs/guide.md``), which show how
the owner's disk is laid out. Both stay in the files ``synth generate`` writes, where ``synth
update`` and ``synth review`` use them. Everything that leaves the machine goes through
:func:`public_goldens` and :func:`public_metadata` first: every format ``synth export`` writes,
the ``hf`` folder, its card and the shards it pushes.

- Every ``base_url`` key is dropped, at any depth of a golden's or the dataset's metadata: a model
  is named by its provider and model, which stay.
- ``source_files`` become the names the corpus gives its files: the walked folder's own name and
  the path inside it (``docs/guide.md``), as the store and the run's manifest name them. A run
  records them in a golden's ``metadata["corpus_files"]`` when they differ from its
  ``source_files`` (a run started outside the corpus's parent folder, or ``--absolute``); that key
  is what the published golden's ``source_files`` are, and it is dropped. A golden without it
  (made before, or elsewhere) keeps each relative path that stays inside the working folder, and
  keeps only the file name of a path that is absolute or climbs out of it with ``..``.
- A web page's source is its public URL (what the user asked to read): kept as it is, without a
  user name or password should one be there, and with any credential its query carries (a
  ``token=``, ``key=``, ``sig=``...) redacted as an error message's is (``synth/llm/_redact.py``).
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Mapping, Sequence
from pathlib import PurePath
from typing import Any, TypeGuard

from synth.data import Golden
from synth.llm._redact import redact_text

#: the golden metadata key holding its source files as the corpus names them
CORPUS_FILES_KEY = "corpus_files"
#: metadata keys never published, at any depth
PRIVATE_KEYS = frozenset({"base_url"})

_DRIVE = re.compile(r"^[A-Za-z]:")


def public_metadata(value: Any) -> Any:
    """``value`` (metadata, or any JSON value) without a ``base_url`` key at any depth."""
    if isinstance(value, Mapping):
        return {k: public_metadata(v) for k, v in value.items() if k not in PRIVATE_KEYS}
    if isinstance(value, list | tuple):
        return [public_metadata(item) for item in value]
    return value


def public_source(path: str) -> str:
    """A source path as it may be published: a relative path inside the working folder as it is
    (``./`` dropped), the file name alone of one that is absolute or climbs out with ``..``."""
    if path.lower().startswith(("http://", "https://")):  # a web page: its public URL
        return redact_text(_without_userinfo(path))
    text = path.replace("\\", "/")
    if text.startswith("/") or _DRIVE.match(text) or ".." in text.split("/"):
        return posixpath.basename(text.rstrip("/")) or text
    return posixpath.normpath(text) if text else text


def public_text(text: str) -> str:
    """``text`` (an error message from the user's code) with the working folder written ``.``
    and the home folder ``~``: a path in it names neither the owner's account nor where the
    project sits on their disk."""
    for folder, shown in _local_folders():
        # the folder itself, not a longer name it begins (/home/al in /home/alice)
        text = re.sub(re.escape(folder) + r"(?![\w.-])", shown, text)
    return text


def _local_folders() -> list[tuple[str, str]]:
    """The working and the home folder with what stands for each, the longer first (the working
    folder is often inside the home one); the root, or an unknown home, stands for nothing."""
    found = [(os.getcwd(), "."), (os.path.expanduser("~"), "~")]
    kept = [(str(PurePath(f)), s) for f, s in found if f != "~" and len(PurePath(f).parts) > 1]
    return sorted(kept, key=lambda pair: -len(pair[0]))


def _without_userinfo(url: str) -> str:
    """``url`` without a user name or password (a page's source name never carries one)."""
    scheme, _, rest = url.partition("://")
    host, slash, tail = rest.partition("/")
    return f"{scheme}://{host.rpartition('@')[2]}{slash}{tail}"


def corpus_files(golden: Golden) -> list[str]:
    """The golden's source files as the corpus names them (see the module's docstring)."""
    recorded = golden.metadata.get(CORPUS_FILES_KEY)
    names = golden.source_files
    if _strings(recorded) and len(recorded) == len(golden.source_files):
        names = recorded
    return [public_source(name) for name in names]


def public_golden(golden: Golden) -> Golden:
    """The golden as it may be published: no ``base_url``, sources named as the corpus names
    them; the golden itself is left as it is."""
    metadata = public_metadata(golden.metadata)
    metadata.pop(CORPUS_FILES_KEY, None)
    return golden.model_copy(update={"source_files": corpus_files(golden), "metadata": metadata})


def public_goldens(goldens: Sequence[Golden]) -> list[Golden]:
    """:func:`public_golden` of each golden, in order."""
    return [public_golden(golden) for golden in goldens]


def _strings(value: object) -> TypeGuard[list[str]]:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


__all__ = [
    "CORPUS_FILES_KEY",
    "PRIVATE_KEYS",
    "corpus_files",
    "public_golden",
    "public_goldens",
    "public_metadata",
    "public_source",
    "public_text",
]
