"""What leaves the machine names no model server and no local path: a real ``synth generate``
against the fake OpenAI-compatible server on an internal-looking address (``--base-url
http://127.0.0.1:PORT/v1``), run from a folder beside the corpus's (so its goldens name
``../../<layout>/corpus/...``), then every format ``synth export`` writes, the ``hf`` folder with
its card, what ``--push-to-hub`` uploads (the Hub's calls recorded, nothing sent) and the
dataset's HTML report, each
searched for the host, the port, the temporary folder, the layout's folder and ``../``."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fake_openai
import huggingface_hub
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from synth import Dataset, Golden
from synth.cli import main
from synth.cli.export import HF_FORMAT, OWN_FORMATS
from synth.dataset._export import EXPORT_FORMATS, default_export_path
from synth.dataset._public import public_golden, public_metadata, public_source

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
#: the folder above the corpus: how the owner's disk is laid out, never to be published
LAYOUT = "private-layout-4f2c"
HUB_REPO = "me/shared-set"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A generated dataset, exported in every format and pushed; what each export wrote."""
    root = tmp_path_factory.mktemp("shared")
    shutil.copytree(REPO / "sample_docs", root / LAYOUT / "corpus")
    work = root / "work" / "here"
    work.mkdir(parents=True)
    pushed = root / "pushed"
    with fake_openai.FakeOpenAI(mode="generic") as server, pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPENAI_API_KEY", "sk-test-shared-not-a-real-key")
        mp.delenv("OPENAI_BASE_URL", raising=False)
        mp.chdir(work)
        argv = ["generate", f"../../{LAYOUT}/corpus", "--goldens", "4", "--base-url", server.url]
        assert main([*argv, "--grounding-threshold", "0", "-o", "goldens.jsonl"]) == 0
        outputs: dict[str, Path] = {}
        for name in (*OWN_FORMATS, *EXPORT_FORMATS):
            outputs[name] = target = work / "out" / name
            target.mkdir(parents=True)
            output = target / _file_name(name)
            assert main(["export", "goldens.jsonl", "--format", name, "-o", str(output)]) == 0
        _record_pushes(mp, pushed)
        mp.setenv("HF_TOKEN", "hf_test_not_a_real_token")
        hf = ["export", "goldens.jsonl", "--format", HF_FORMAT, "-o", "out/hf"]
        assert main([*hf, "--push-to-hub", HUB_REPO]) == 0
        outputs[HF_FORMAT] = work / "out" / "hf"
        # the dataset's report (with its run's manifest, found from the run id) is shared too
        outputs["report"] = work / "out" / "report"
        report = ["report", "goldens.jsonl", "-o", str(work / "out" / "report" / "goldens.html")]
        assert main(report) == 0
        outputs["pushed"] = pushed
        yield {
            "root": root,
            "work": work,
            "port": server.port,
            "outputs": outputs,
            "local": Dataset.load(work / "goldens.jsonl"),
        }


def _file_name(format: str) -> str:
    """The file ``synth export --format FORMAT`` writes for goldens.jsonl by default."""
    if format in OWN_FORMATS:
        return f"goldens.{format}"
    return default_export_path(Path("goldens.jsonl"), format).name


def _record_pushes(mp: pytest.MonkeyPatch, pushed: Path) -> None:
    """HfApi's calls recorded instead of sent: the files an upload would send land in ``pushed``."""

    def create_repo(self: Any, repo_id: str, **kwargs: Any) -> str:
        return f"https://hub.test/datasets/{repo_id}"

    def upload_folder(self: Any, *, folder_path: str, allow_patterns: list[str], **kw: Any) -> str:
        folder = Path(folder_path)
        for pattern in allow_patterns:
            for file in folder.glob(pattern):
                (pushed / file.relative_to(folder)).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(file, pushed / file.relative_to(folder))
        return "commit"

    mp.setattr(huggingface_hub.HfApi, "create_repo", create_repo)
    mp.setattr(huggingface_hub.HfApi, "upload_folder", upload_folder)


def _text(file: Path) -> str:
    """A written file as text: parquet and arrow decoded (their pages may be compressed), with
    their schema metadata; anything else as its bytes."""
    if file.suffix == ".parquet":
        table = pq.read_table(file)
    elif file.suffix == ".arrow":
        with pa.memory_map(str(file)) as source:
            table = pa.ipc.open_stream(source).read_all()
    else:
        return file.read_bytes().decode("utf-8", "replace")
    metadata = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}
    return json.dumps([table.to_pylist(), metadata], ensure_ascii=False)


def _leaks(folder: Path, run: dict[str, Any]) -> list[str]:
    forbidden = ["127.0.0.1", f":{run['port']}", str(run["root"]), LAYOUT, "../", "..\\\\"]
    found = []
    for file in sorted(p for p in folder.rglob("*") if p.is_file()):
        text = _text(file)
        found += [f"{file.relative_to(folder)}: {word}" for word in forbidden if word in text]
    return found


def test_the_local_goldens_keep_their_paths_and_models(run) -> None:
    """What synth generate wrote stays useful where it was made: paths that open from the working
    folder, the models' servers, and the corpus's own names beside the paths."""
    golden = run["local"][0]
    assert golden.source_files[0].startswith(f"../../{LAYOUT}/corpus/")
    assert (run["work"] / golden.source_files[0]).is_file()
    assert golden.metadata["corpus_files"][0].startswith("corpus/")
    assert golden.metadata["models"]["generator"]["base_url"].startswith("http://127.0.0.1:")


@pytest.mark.parametrize("name", [*OWN_FORMATS, *EXPORT_FORMATS, HF_FORMAT, "pushed", "report"])
def test_no_export_names_the_model_server_or_a_local_path(run, name: str) -> None:
    folder = run["outputs"][name]
    assert any(p.is_file() for p in folder.rglob("*")), f"{name} wrote nothing"
    assert _leaks(folder, run) == []


def test_the_card_names_files_by_the_corpus_and_models_by_provider(run) -> None:
    card = (run["outputs"][HF_FORMAT] / "README.md").read_text(encoding="utf-8")
    assert "| corpus/" in card  # goldens per file, named as the corpus names them
    assert "| generator | openai:gpt-4.1-mini |" in card
    assert (run["outputs"]["pushed"] / "README.md").read_bytes() == card.encode("utf-8")


def test_published_goldens_name_their_files_as_the_corpus_does(run) -> None:
    shared = Dataset.load(run["outputs"]["json"] / "goldens.json")
    local = run["local"]
    assert len(shared) == len(local) == 4
    for mine, theirs in zip(local, shared, strict=True):
        assert theirs.source_files == mine.metadata["corpus_files"]
        assert "corpus_files" not in theirs.metadata
        assert set(theirs.metadata["models"]["generator"]) == {
            "provider",
            "model",
            "options",
            "max_tokens",
            "structured",
        }
        assert theirs.input == mine.input and theirs.context_ids == mine.context_ids
    assert "base_url" not in json.dumps(shared.metadata)
    assert shared.metadata["run_id"] == local.metadata["run_id"]


# ---- the shareable form, field by field -----------------------------------------------------------
def test_a_base_url_is_dropped_at_any_depth_and_nothing_else() -> None:
    metadata = {
        "models": {"generator": {"provider": "openai", "base_url": "http://10.0.0.5/v1"}},
        "judges": [{"base_url": "http://gw.internal", "model": "m"}],
        "seed": 3,
    }
    assert public_metadata(metadata) == {
        "models": {"generator": {"provider": "openai"}},
        "judges": [{"model": "m"}],
        "seed": 3,
    }
    assert metadata["models"]["generator"]["base_url"] == "http://10.0.0.5/v1"  # a copy


@pytest.mark.parametrize(
    ("path", "shared"),
    [
        ("docs/guide.md", "docs/guide.md"),
        ("./docs/guide.md", "docs/guide.md"),
        ("../../work/docs/guide.md", "guide.md"),
        ("docs/../../secret/guide.md", "guide.md"),
        ("/home/alice/docs/guide.md", "guide.md"),
        ("C:\\Users\\alice\\docs\\guide.md", "guide.md"),
        ("https://docs.example.com/guide?page=2", "https://docs.example.com/guide?page=2"),
        ("https://bob:pw@wiki.example.com/a", "https://wiki.example.com/a"),
        (
            "https://wiki.example.com/a?access_token=abc123XYZ&page=2",
            "https://wiki.example.com/a?access_token=<redacted>&page=2",
        ),
    ],
)
def test_a_source_is_published_without_a_local_path_or_a_credential(path: str, shared: str) -> None:
    assert public_source(path) == shared


def test_a_golden_is_published_with_its_corpus_names_when_it_has_them() -> None:
    golden = Golden(
        input="q",
        source_files=["../../x/docs/a.md", "/abs/b.md"],
        metadata={"corpus_files": ["docs/a.md", "docs/b.md"], "seed": 1},
    )
    shared = public_golden(golden)
    assert shared.source_files == ["docs/a.md", "docs/b.md"]
    assert shared.metadata == {"seed": 1}
    assert golden.source_files == ["../../x/docs/a.md", "/abs/b.md"]  # left as it was
    # a record that does not match the paths (edited by hand) is not trusted
    odd = golden.model_copy(update={"metadata": {"corpus_files": ["docs/a.md"]}})
    assert public_golden(odd).source_files == ["a.md", "b.md"]
