"""The Hub push's parts (synth/dataset/_hub.py), fast and in-process: the repository id check,
the token, and push_folder against a recorded HfApi, with each failure's one line. No test here
reaches the Hub or starts a process (tests/test_dataset_hub.py runs the whole command)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import huggingface_hub
import huggingface_hub.errors
import huggingface_hub.utils
import pytest

from synth.dataset._hub import check_repo_id, hub_token, push_folder
from synth.errors import ConfigError, HubError


def test_a_repo_id_needs_a_valid_name_and_an_owner() -> None:
    check_repo_id("me/set")  # no error
    with pytest.raises(ConfigError) as caught:
        check_repo_id("me/bad name")
    assert str(caught.value) == (
        "--push-to-hub 'me/bad name': not a Hub repository id (Repo id must use alphanumeric "
        "chars, '-', '_' or '.'. The name cannot start or end with '-' or '.' and the maximum "
        "length is 96: 'me/bad name'.)"
    )
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    with pytest.raises(ConfigError) as caught:
        check_repo_id("set")
    assert str(caught.value) == "--push-to-hub 'set': name the owner too (user/name)"


def test_the_token_is_the_sdks_or_an_error_saying_how_to_give_one(monkeypatch) -> None:
    monkeypatch.setattr(huggingface_hub, "get_token", lambda: "hf_abc")
    assert hub_token() == "hf_abc"
    for missing in (None, ""):
        monkeypatch.setattr(huggingface_hub, "get_token", lambda missing=missing: missing)
        with pytest.raises(ConfigError) as caught:
            hub_token()
        assert str(caught.value) == (
            "--push-to-hub needs a Hugging Face token: set HF_TOKEN or run `hf auth login`"
        )


class _Url:
    def __str__(self) -> str:
        return "https://hub.test/datasets/me/set"


def _recorded_api(monkeypatch, failure: BaseException | None = None) -> list[Any]:
    calls: list[Any] = []

    class Api:
        def __init__(self, **kwargs: Any) -> None:
            calls.append(("HfApi", kwargs))

        def create_repo(self, *args: Any, **kwargs: Any) -> _Url:
            calls.append(("create_repo", args, kwargs))
            return _Url()

        def upload_folder(self, **kwargs: Any) -> None:
            calls.append(("upload_folder", kwargs))
            if failure is not None:
                raise failure

    monkeypatch.setattr(huggingface_hub, "HfApi", Api)
    return calls


def test_push_folder_creates_the_repo_then_uploads_in_one_commit(monkeypatch) -> None:
    calls = _recorded_api(monkeypatch)
    assert push_folder(Path("out"), "me/set", "hf_abc") == "https://hub.test/datasets/me/set"
    assert calls == [
        ("HfApi", {"token": "hf_abc"}),
        ("create_repo", ("me/set",), {"repo_type": "dataset", "exist_ok": True, "private": None}),
        (
            "upload_folder",
            {
                "repo_id": "me/set",
                "repo_type": "dataset",
                "folder_path": "out",
                "allow_patterns": ["README.md", "synth_run.json", "data/train-*.parquet"],
                "delete_patterns": ["data/train-*.parquet"],
                "commit_message": "synth: upload the test set and its card",
            },
        ),
    ]
    calls.clear()
    push_folder(Path("out"), "me/set", "hf_abc", private=True)
    assert calls[1][2]["private"] is True


def _push_error(monkeypatch, failure: BaseException) -> HubError:
    _recorded_api(monkeypatch, failure)
    with pytest.raises(HubError) as caught:
        push_folder(Path("out"), "me/set", "hf_abc")
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    return caught.value


def test_each_failure_the_sdk_raises_becomes_one_line(monkeypatch) -> None:
    start = "could not push to the Hub dataset me/set: "
    cases = [
        (ValueError("  bad value\nmore detail  "), "bad value (ValueError)"),
        (OSError(""), "OSError (OSError)"),
        (huggingface_hub.errors.HTTPError("refused"), "refused (HTTPError)"),
        (ConnectionError("offline\n"), "offline (ConnectionError)"),
    ]
    for failure, said in cases:
        error = _push_error(monkeypatch, failure)
        assert str(error) == f"{start}{said}; nothing was written"


def test_a_failure_that_is_not_the_hubs_is_not_hidden(monkeypatch) -> None:
    _recorded_api(monkeypatch, RuntimeError("a bug"))
    with pytest.raises(RuntimeError, match="^a bug$"):
        push_folder(Path("out"), "me/set", "hf_abc")


def test_the_hub_module_works_in_a_fresh_process_without_the_datasets_import() -> None:
    # huggingface_hub loads its submodules lazily: nothing else here has imported them
    import subprocess
    import sys

    code = "from synth.dataset._hub import check_repo_id; check_repo_id('me/set'); print('ok')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
