"""``synth export --format hf --push-to-hub REPO``: the right Hub calls with the token, one clear line
when there is no token or no network, and nothing written half-way. No test reaches the internet:
the SDK's calls are replaced, or pointed at a closed port on 127.0.0.1."""

from __future__ import annotations

import importlib
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import huggingface_hub
import pytest

from synth import Dataset, Golden, HubError
from synth.cli import main
from synth.dataset._hub import push_folder

REPO = Path(__file__).resolve().parent.parent
TOKEN = "hf_test_not_a_real_token"
EXPORT = ["export", "goldens.jsonl", "--format", "hf", "-o", "out"]


@pytest.fixture
def goldens() -> Dataset:
    dataset = Dataset([Golden(input="q", expected_output="a", context=["c"])], {"seed": 1})
    dataset.save("goldens.jsonl")
    return dataset


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """HfApi's create_repo and upload_folder, recorded instead of sent (with what the folder held)."""
    calls: list[dict[str, Any]] = []

    def create_repo(self, repo_id: str, **kwargs: Any) -> str:
        calls.append({"call": "create_repo", "token": self.token, "repo_id": repo_id, **kwargs})
        return f"https://hub.test/datasets/{repo_id}"

    def upload_folder(self, **kwargs: Any) -> str:
        folder = Path(kwargs["folder_path"])
        files = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
        calls.append({"call": "upload_folder", "token": self.token, "files": files, **kwargs})
        return "commit"

    monkeypatch.setattr(huggingface_hub.HfApi, "create_repo", create_repo)
    monkeypatch.setattr(huggingface_hub.HfApi, "upload_folder", upload_folder)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    return calls


def test_push_creates_the_repo_and_uploads_card_and_shards_in_one_commit(
    goldens, hub, capsys
) -> None:
    assert main([*EXPORT, "--push-to-hub", "me/set", "--private"]) == 0
    create, upload = hub
    assert create == {
        "call": "create_repo",
        "token": TOKEN,
        "repo_id": "me/set",
        "repo_type": "dataset",
        "exist_ok": True,
        "private": True,
    }
    assert upload["token"] == TOKEN and upload["repo_id"] == "me/set"
    assert upload["repo_type"] == "dataset"
    assert upload["allow_patterns"] == ["README.md", "data/train-*.parquet"]
    assert upload["delete_patterns"] == ["data/train-*.parquet"]
    # pushed from the finished folder, before it took the place of out/
    assert {"README.md", "data/train-00000-of-00001.parquet", "state.json"} <= set(upload["files"])
    assert Path(upload["folder_path"]).name != "out"
    out = capsys.readouterr().out
    assert (
        out.splitlines()[-1]
        == "pushed the card and parquet shards to https://hub.test/datasets/me/set"
    )
    assert TOKEN not in out
    assert Dataset.load("out") == goldens
    card = (Path("out") / "README.md").read_text(encoding="utf-8")
    assert "load_dataset('me/set', split=\"train\")" in card


def test_without_a_token_nothing_is_called_or_written(goldens, hub, monkeypatch, capsys) -> None:
    monkeypatch.delenv("HF_TOKEN")
    monkeypatch.setattr(huggingface_hub, "get_token", lambda: None)
    assert main([*EXPORT, "--push-to-hub", "me/set"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "synth: error: --push-to-hub needs a Hugging Face token: set HF_TOKEN or run `hf auth login`\n"
    )
    assert hub == [] and not Path("out").exists()


@pytest.mark.parametrize("repo", ["set", "me/bad name", "me/-x"])
def test_a_bad_repo_id_is_refused_first(goldens, hub, capsys, repo: str) -> None:
    assert main([*EXPORT, "--push-to-hub", repo]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"synth: error: --push-to-hub {repo!r}: ") and err.count("\n") == 1
    assert hub == [] and not Path("out").exists()


def test_a_refused_upload_writes_no_folder(goldens, hub, monkeypatch, capsys) -> None:
    response_type = huggingface_hub.errors.Response  # the SDK's HTTP library's, whichever it is
    http = importlib.import_module(response_type.__module__.split(".")[0])
    response = response_type(403, request=http.Request("POST", "https://hub.test/api/x"))

    def refuse(self, **kwargs: Any) -> None:
        raise huggingface_hub.errors.HfHubHTTPError(
            "403 Forbidden: you cannot write to me/set.\nRequest id: x", response=response
        )

    monkeypatch.setattr(huggingface_hub.HfApi, "upload_folder", refuse)
    assert main([*EXPORT, "--push-to-hub", "me/set"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "synth: error: could not push to the Hub dataset me/set: 403 Forbidden: you cannot write "
        "to me/set. (HfHubHTTPError); nothing was written\n"
    )
    assert sorted(os.listdir(".")) == ["goldens.jsonl", "goldens.jsonl.meta.json"]


def test_offline_the_push_fails_in_one_line(tmp_path: Path) -> None:
    """The tests run with HF_HUB_OFFLINE=1 (conftest): the SDK's own refusal, as a HubError."""
    Path("f").mkdir()
    with pytest.raises(HubError, match=r"^could not push to the Hub dataset me/set: .*offline"):
        push_folder(Path("f"), "me/set", TOKEN)


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_with_no_network_the_command_fails_in_one_line_and_writes_nothing(goldens) -> None:
    env = {
        **os.environ,
        "HF_ENDPOINT": f"http://127.0.0.1:{_closed_port()}",  # nothing listens: refused at once
        "HF_HUB_OFFLINE": "0",
        "HF_TOKEN": TOKEN,
        "PYTHONPATH": str(REPO),
    }
    proc = subprocess.run(
        [sys.executable, "-m", "synth", *EXPORT, "--push-to-hub", "me/set"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("synth: error: could not push to the Hub dataset me/set: ")
    assert proc.stderr.endswith("; nothing was written\n") and proc.stderr.count("\n") == 1
    assert "Traceback" not in proc.stderr and TOKEN not in proc.stderr
    assert sorted(os.listdir(".")) == ["goldens.jsonl", "goldens.jsonl.meta.json"]
