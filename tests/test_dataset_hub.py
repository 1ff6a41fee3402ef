"""``synth export --format hf --push-to-hub REPO``: the right Hub calls with the token, one clear line
when there is no token or no network, and nothing written half-way. No test reaches the internet:
the SDK's calls are replaced, or pointed at a closed port on 127.0.0.1."""

from __future__ import annotations

import importlib
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import datasets
import huggingface_hub
import pyarrow.parquet as pq
import pytest

from synth import Dataset, DatasetError, Golden, HubError
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
    assert upload["allow_patterns"] == ["README.md", "synth_run.json", "data/train-*.parquet"]
    assert upload["delete_patterns"] == ["data/train-*.parquet"]
    # pushed from the finished folder, before it took the place of out/
    files = set(upload["files"])
    assert {"README.md", "synth_run.json", "data/train-00000-of-00001.parquet"} <= files
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


# ---- reading a pushed dataset back ---------------------------------------------------------------
@pytest.fixture
def pushed(goldens, hub, monkeypatch, tmp_path: Path) -> Path:
    """What ``--push-to-hub me/set`` put in the repository (the files an upload sends), which
    ``snapshot_download("me/set")`` gives back."""
    repo = tmp_path / "repo"

    def upload_folder(self, *, folder_path: str, allow_patterns: list[str], **kwargs: Any) -> str:
        for pattern in allow_patterns:
            for file in Path(folder_path).glob(pattern):
                target = repo / file.relative_to(folder_path)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(file.read_bytes())
        return "commit"

    def snapshot_download(*, repo_id: str, repo_type: str, allow_patterns: list[str]) -> str:
        assert (repo_id, repo_type) == ("me/set", "dataset")
        assert allow_patterns == ["README.md", "synth_run.json", "data/train-*.parquet"]
        return str(repo)

    monkeypatch.setattr(huggingface_hub.HfApi, "upload_folder", upload_folder)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", snapshot_download)
    assert main([*EXPORT, "--push-to-hub", "me/set"]) == 0
    return repo


def test_a_pushed_dataset_reads_back_with_the_runs_metadata(goldens, pushed, tmp_path) -> None:
    """load_dataset keeps only the rows; the run's metadata is in synth_run.json beside the card,
    which Dataset.from_hf reads from the repository or the folder."""
    table = datasets.load_dataset(
        "parquet",
        data_files=str(pushed / "data" / "*.parquet"),
        split="train",
        cache_dir=str(tmp_path / "cache"),
    )
    assert Dataset.from_hf(table) == Dataset(goldens.goldens)  # the rows, no metadata
    assert json.loads((pushed / "synth_run.json").read_text(encoding="utf-8")) == {
        "format": "synth-dataset",
        "version": 1,
        "metadata": {"seed": 1},
    }
    assert Dataset.from_hf("me/set") == goldens
    assert Dataset.from_hf(pushed) == goldens == Dataset.from_hf("out")
    assert Dataset.from_hf("me/set", metadata={"x": 1}).metadata == {"x": 1}


def test_the_run_file_holds_the_metadata_when_the_shards_lost_theirs(goldens, pushed) -> None:
    """Shards rewritten by another tool (as datasets' own push_to_hub writes them) carry no
    synth header: the metadata still comes back, from synth_run.json."""
    (shard,) = (pushed / "data").glob("*.parquet")
    table = pq.read_table(shard)
    pq.write_table(table.replace_schema_metadata({}), shard)
    assert Dataset.load(pushed) == goldens
    (pushed / "synth_run.json").write_text('{"seed": 1}', encoding="utf-8")
    with pytest.raises(DatasetError, match=r'synth_run.json: not synth\'s run file \(no "format"'):
        Dataset.load(pushed)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("goldens.jsonl", "goldens.jsonl: is a file, not an hf folder; read it with Dataset.load"),
        ("no/such/folder", "no/such/folder: no such folder, nor a Hub repository id (user/name)"),
        ("./me/set", "./me/set: no such folder, nor a Hub repository id (user/name)"),
    ],
)
def test_from_hf_names_what_is_neither_a_folder_nor_a_repo(goldens, source, message) -> None:
    with pytest.raises(DatasetError) as caught:
        Dataset.from_hf(source)
    assert str(caught.value) == message


def test_offline_reading_a_repo_fails_in_one_line() -> None:
    """The tests run with HF_HUB_OFFLINE=1 (conftest): the SDK's refusal, as one HubError line."""
    with pytest.raises(HubError) as caught:
        Dataset.from_hf("me/set")
    message = str(caught.value)
    assert message.startswith("could not download the Hub dataset me/set: ")
    assert message.endswith(" (LocalEntryNotFoundError)") and "\n" not in message
