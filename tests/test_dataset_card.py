"""The dataset card (README.md of an hf folder) parses as Hub card YAML and holds the run's real
numbers: a real ``synth generate`` against the fake OpenAI-compatible server (generic mode, so
``--grounding-threshold 0``), then ``synth export --format hf``."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import datasets
import fake_openai
import pytest
from huggingface_hub import DatasetCard

from synth import Dataset, Golden, inspect_dataset
from synth.cli import main
from synth.cli.export import shareable
from synth.dataset._card import dataset_card, size_category
from synth.dataset._card_body import cell
from synth.dataset._hf import hf_features

REPO = Path(__file__).resolve().parent.parent
SAMPLE = str(REPO / "sample_docs")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One generated run, exported as an hf folder: its folder, manifest, dataset and card."""
    folder = tmp_path_factory.mktemp("run")
    with fake_openai.FakeOpenAI(mode="generic") as server, pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPENAI_API_KEY", "sk-test-card-not-a-real-key")
        mp.setenv("OPENAI_BASE_URL", server.url)
        mp.chdir(folder)
        argv = ["generate", SAMPLE, "--goldens", "6", "--grounding-threshold", "0"]
        assert main([*argv, "-o", "goldens.jsonl"]) == 0
        assert main(["export", "goldens.jsonl", "--format", "hf", "-o", "goldens_hf"]) == 0
    (manifest_path,) = (folder / ".synth" / "runs").glob("*/manifest.json")
    text = (folder / "goldens_hf" / "README.md").read_text(encoding="utf-8")
    yield {
        "folder": folder / "goldens_hf",
        "manifest": json.loads(manifest_path.read_text(encoding="utf-8")),
        "dataset": Dataset.load(folder / "goldens.jsonl"),
        "text": text,
        "card": DatasetCard(text),
    }


pytestmark = pytest.mark.slow


def test_the_card_parses_as_hub_card_yaml(run) -> None:
    data = run["card"].data
    assert data.license == "unknown"  # the placeholder the owner replaces
    assert data.task_categories == ["question-answering", "text-generation"]
    assert data.size_categories == ["n<1K"]
    assert data.configs == [
        {
            "config_name": "default",
            "data_files": [{"split": "train", "path": "data/train-*.parquet"}],
        }
    ]
    info = data.dataset_info
    assert datasets.Features._from_yaml_list(info["features"]) == hf_features()
    assert info["splits"] == [{"name": "train", "num_examples": run["manifest"]["delivered"]}]
    assert run["card"].text.startswith("\n# synth test set (run ")
    assert run["manifest"]["run_id"] in data.pretty_name


def test_the_card_holds_the_runs_numbers(run) -> None:
    manifest, text = run["manifest"], run["text"]
    assert f"- Files: {manifest['inputs']['files']}\n" in text
    assert f"- Chunks stored: {manifest['inputs']['chunks']}\n" in text
    assert f"- Seed: {manifest['seed']}\n" in text
    assert f"- Goldens asked: 6, delivered: {manifest['delivered']}\n" in text
    for stage in manifest["stages"]:
        dropped = ", ".join(f"{k}: {v}" for k, v in stage["dropped"].items()) or "-"
        row = f"| {stage['stage']} | {stage['items_in']} | {stage['items_out']} | {dropped} |"
        assert row in text
    totals = manifest["totals"]
    assert (
        f"| {totals['requests']} | {totals['embedding_requests']} | {totals['cached']} | "
        f"{totals['input_tokens']} | {totals['output_tokens']} | {totals['cost_usd']:.4g} |"
    ) in text
    for role in ("generator", "critic"):
        spec = manifest["models"][role]
        assert f"| {role} | {spec['provider']}:{spec['model']} |" in text
    assert json.dumps(manifest["config"], indent=2) in text  # the settings, whole


def test_the_card_counts_as_inspect_does(run) -> None:
    text = run["text"]
    inspection = inspect_dataset(run["dataset"], grounding_threshold=0.0)  # the run's threshold
    assert inspection.goldens == run["manifest"]["delivered"]
    for evolution, count in inspection.per_evolution.items():
        assert f"| {cell(evolution)} | {count} |" in text  # in_breadth as in\_breadth
    for label, count in inspection.per_difficulty.items():
        assert f"| {cell(label)} | {count} |" in text
    trust = run["manifest"]["trust"]
    assert (
        f"- Grounding measured on {trust['grounding_measured']} goldens: {trust['grounded']} at or "
        "above the threshold 0.0"
    ) in text
    types = {Path(f["source"]).suffix for f in run["manifest"]["coverage"]["files"]}
    assert {".pdf", ".md", ".txt", ".docx"} <= types
    for suffix in types:
        assert f"{suffix} " in text.split("- File types: ")[1].split("\n")[0]


def test_the_card_names_no_server_and_no_key(run) -> None:
    assert "127.0.0.1" not in run["text"] and "sk-test" not in run["text"]


def test_the_card_says_how_to_load_and_that_works(run, tmp_path: Path) -> None:
    assert (
        'load_dataset("parquet", data_files="data/train-*.parquet", split="train")' in run["text"]
    )
    # what a push uploads (the card, the run file and the shards) loads by the card's configs,
    # as from the Hub; the folder holds the set as shared (no model server's address)
    repo = tmp_path / "repo"
    shutil.copytree(run["folder"] / "data", repo / "data")
    for name in ("README.md", "synth_run.json"):
        shutil.copy(run["folder"] / name, repo / name)
    loaded = datasets.load_dataset(str(repo), split="train", cache_dir=str(tmp_path / "cache"))
    shared = shareable(run["dataset"])
    assert Dataset.from_hf(loaded, shared.metadata) == shared
    assert Dataset.from_hf(repo) == shared == Dataset.load(run["folder"])


# ---- the card of any dataset: escaping, no manifest, short runs --------------------------------
def test_values_from_the_corpus_are_text_not_markup(tmp_path: Path) -> None:
    evil = "a|b\n<script>alert(1)</script>.md"
    persona = "speaks in ``` fences"
    dataset = Dataset(
        [Golden(input="q", source_files=[evil], metadata={"language": "de"})],
        {"run_id": "r"},
    )
    manifest = {"run_id": "r", "config": {"styling": {"personas": [persona]}}, "stages": []}
    text = dataset_card(dataset, manifest, title='x: "y"\n---\nlicense: mit')
    card = DatasetCard(text)
    assert card.data.pretty_name == 'x: "y"\n---\nlicense: mit'
    assert card.data.license == "unknown" and card.data.language == ["de"]
    assert "<script>" not in text and "&lt;script&gt;" in text and "a\\|b" in text
    assert "````json" in text  # a fence longer than the persona's backticks


def test_a_dataset_from_no_run_gets_a_card_without_the_run() -> None:
    text = dataset_card(Dataset([Golden(input="q", source_files=["f.txt"])]))
    card = DatasetCard(text)
    assert card.data.dataset_info["splits"][0]["num_examples"] == 1
    assert "No run manifest was found" in text
    assert "## Cost" not in text and "## Pipeline stages" not in text
    assert "- File types: .txt 1" in text


def test_a_short_run_says_why() -> None:
    metadata = {"num_goldens": 5, "delivered": 1, "shortfall": ["dropped at expected: ungrounded"]}
    text = dataset_card(Dataset([Golden(input="q")], metadata))
    assert "Asked for 5, delivered 1: dropped at expected: ungrounded." in text


@pytest.mark.parametrize(
    ("count", "label"), [(0, "n<1K"), (999, "n<1K"), (1000, "1K<n<10K"), (10**7, "n>10M")]
)
def test_size_categories_are_the_hubs(count: int, label: str) -> None:
    assert size_category(count) == label


def test_no_test_here_reaches_the_hub() -> None:
    assert os.environ.get("HF_HUB_OFFLINE") == "1"
