"""Pushing an ``hf`` folder to the Hugging Face Hub (needs ``pip install 'synth[hf]'``).

The folder's card and parquet shards go up in one commit (``HfApi.upload_folder``), so the
repository holds the same bytes as the folder: synth's metadata in the shards, the card's
``configs`` naming them. ``datasets.Dataset.push_to_hub`` is not used: it writes shards of its own
without synth's header, and a card of its own, so the card would need a second commit that could
fail after the first had landed. The only SDK calls are here, and every failure they raise
becomes one :class:`~synth.errors.HubError` line; a token is never part of a message.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from synth.dataset._hf import require
from synth.dataset._hf_folder import CARD, SHARD_PATTERN
from synth.errors import ConfigError, HubError

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
    """Create the dataset repository ``repo`` if needed and upload the folder's card and shards
    in one commit; return the repository's URL. HubError in one line when anything fails."""
    hf = _hub()
    api = hf.HfApi(token=token)
    failures = (hf.errors.HfHubHTTPError, hf.errors.HTTPError, OSError, ValueError)
    try:
        url = api.create_repo(repo, repo_type="dataset", exist_ok=True, private=private)
        api.upload_folder(
            repo_id=repo,
            repo_type="dataset",
            folder_path=str(folder),
            allow_patterns=[CARD, SHARD_PATTERN],
            delete_patterns=[SHARD_PATTERN],  # shards of an earlier, longer push
            commit_message="synth: upload the test set and its card",
        )
    except failures as exc:
        raise HubError(f"could not push to the Hub dataset {repo}: {_reason(exc)}") from None
    return str(url)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else type(exc).__name__
    return f"{first} ({type(exc).__name__}); nothing was written"


__all__ = ["TOKEN_HINT", "check_repo_id", "hub_token", "push_folder"]
