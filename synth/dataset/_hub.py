"""Pushing an ``hf`` folder to the Hugging Face Hub, and reading a pushed one back (needs
``pip install 'synth[hf]'``).

The folder's card, run file (``synth_run.json``) and parquet shards go up in one commit
(``HfApi.upload_folder``), so the repository holds the same bytes as the folder: synth's metadata
in the run file and the shards, the card's ``configs`` naming the shards.
``datasets.Dataset.push_to_hub`` is not used: it writes shards of its own without synth's header,
and a card of its own, so the card would need a second commit that could fail after the first had
landed. Reading a repository back downloads what a push put there (``snapshot_download``) and
reads it as the folder is read. The only SDK calls are here, and every failure they raise becomes
one :class:`~synth.errors.HubError` line; a token is never part of a message.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType
from typing import Any

from synth.data import Golden
from synth.dataset._hf import require
from synth.dataset._hf_folder import CARD, RUN_FILE, SHARD_PATTERN, read_hf_folder
from synth.errors import ConfigError, DatasetError, HubError

TOKEN_HINT = "set HF_TOKEN or run `hf auth login`"


def _hub() -> ModuleType:
    hub = require("huggingface_hub")
    # loaded lazily by huggingface_hub: `hub.utils` is not there until someone imports it
    import huggingface_hub.errors
    import huggingface_hub.utils  # noqa: F401

    return hub


def check_repo_id(repo: str) -> None:
    """ConfigError unless ``repo`` is a Hub repository id (``user/name``)."""
    hf = _hub()
    try:
        hf.utils.validate_repo_id(repo)
    except ValueError as exc:
        raise ConfigError(f"--push-to-hub {repo!r}: not a Hub repository id ({exc})") from None
    if "/" not in repo:
        raise ConfigError(f"--push-to-hub {repo!r}: name the owner too (user/name)")


def hub_token() -> str:
    """The Hugging Face token (``HF_TOKEN`` or the one ``hf auth login`` stored); ConfigError
    saying how to give one when there is none."""
    token: str | None = _hub().get_token()
    if not token:
        raise ConfigError(f"--push-to-hub needs a Hugging Face token: {TOKEN_HINT}")
    return token


def push_folder(folder: Path, repo: str, token: str, *, private: bool | None = None) -> str:
    """Create the dataset repository ``repo`` if needed and upload the folder's card, run file
    and shards in one commit; return the repository's URL. HubError in one line when anything
    fails."""
    hf = _hub()
    api = hf.HfApi(token=token)
    failures = (hf.errors.HfHubHTTPError, hf.errors.HTTPError, OSError, ValueError)
    try:
        url = api.create_repo(repo, repo_type="dataset", exist_ok=True, private=private)
        api.upload_folder(
            repo_id=repo,
            repo_type="dataset",
            folder_path=str(folder),
            allow_patterns=[CARD, RUN_FILE, SHARD_PATTERN],
            delete_patterns=[SHARD_PATTERN],  # shards of an earlier, longer push
            commit_message="synth: upload the test set and its card",
        )
    except failures as exc:
        raise HubError(f"could not push to the Hub dataset {repo}: {_reason(exc)}") from None
    return str(url)


def download_dataset(repo: str) -> Path:
    """A local copy of what a push put in the Hub dataset ``repo`` (its card, run file and
    shards, in the Hub's cache); HubError in one line when it cannot be had."""
    hf = _hub()
    failures = (hf.errors.HfHubHTTPError, hf.errors.HTTPError, OSError, ValueError)
    try:
        folder = hf.snapshot_download(
            repo_id=repo, repo_type="dataset", allow_patterns=[CARD, RUN_FILE, SHARD_PATTERN]
        )
    except failures as exc:
        raise HubError(f"could not download the Hub dataset {repo}: {_first_line(exc)}") from None
    return Path(folder)


def read_hf_source(source: str | os.PathLike[str]) -> tuple[list[Golden], dict[str, Any]]:
    """The goldens and metadata of an hf folder, or of the Hub dataset repository ``source``
    names (``user/name``: what a push put there, downloaded to the Hub's cache)."""
    path = Path(source)
    if path.exists():
        if not path.is_dir():
            raise DatasetError(f"{path}: is a file, not an hf folder; read it with Dataset.load")
        return read_hf_folder(path)
    repo = str(source)
    if repo.count("/") != 1 or repo.startswith((".", "/", "~")):
        raise DatasetError(f"{repo}: no such folder, nor a Hub repository id (user/name)")
    return read_hf_folder(download_dataset(repo))


def _reason(exc: BaseException) -> str:
    return f"{_first_line(exc)}; nothing was written"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else type(exc).__name__
    return f"{first} ({type(exc).__name__})"


__all__ = [
    "TOKEN_HINT",
    "check_repo_id",
    "download_dataset",
    "hub_token",
    "push_folder",
    "read_hf_source",
]
