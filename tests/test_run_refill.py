"""The refill's plan and merge (synth/dataset/refill.py) with a scripted generate, beyond those of
tests/test_refill.py: the documents and run found from the manifest beside a dataset file, the
lineage's seed, the refill's record on the dataset and on each new golden, and the refusals' exact
words. tests/test_refill.py also runs ``synth refill`` through whole runs over the fake server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from test_refill import Scripted, reviewed

from synth.data import Golden
from synth.dataset import Dataset
from synth.dataset.refill import (
    REFILL_REVIEWER,
    lineage_seed,
    plan_refill,
    refill,
    refill_seed,
    run_options,
)
from synth.dataset.review import golden_key, status_of
from synth.errors import ConfigError
from synth.generate.config import FiltrationConfig


def test_a_refills_seed_is_the_same_in_every_version_and_fits_in_60_bits() -> None:
    # a refill is as reproducible as its run: the seed of round 1 of seed 7 never changes
    assert refill_seed(7, 1) == 326012579541768814
    assert refill_seed(0, 3) == 610379836537680613
    assert all(refill_seed(s, r) < 2**60 for s in range(20) for r in range(1, 4))


def beside_its_run(tmp_path: Path, dataset: Dataset, docs: list[str]) -> Path:
    """``dataset`` saved as a file with its run's manifest beside it (a run directory)."""
    (tmp_path / "manifest.json").write_text(
        json.dumps({"run_id": "r1", "inputs": {"paths": docs}}), encoding="utf-8"
    )
    path = tmp_path / "goldens.jsonl"
    dataset.save(path)
    return path


def test_a_dataset_file_is_refilled_from_the_documents_of_the_run_beside_it(
    tmp_path: Path,
) -> None:
    doc = tmp_path / "a.md"
    doc.write_text("Flour is milled.", encoding="utf-8")
    dataset = reviewed(3, rejected=(1,))
    dataset.metadata["run_id"] = "r1"
    path = beside_its_run(tmp_path, dataset, [str(doc)])
    job = plan_refill(Dataset.load(path), source=path, docs=None, seed=0)
    assert (job.docs, job.run_id, job.rejected) == ([str(doc)], "r1", [1])
    generate = Scripted(1)
    result = asyncio.run(refill(path, None, seed=0, generate=generate))
    assert generate.calls[0]["paths"] == [str(doc)]
    assert result.path == path and result.rejected_path == tmp_path / "goldens.jsonl.rejected.jsonl"
    assert result.dataset.goldens[1].metadata["refill"]["of_run"] == "r1"
    # given documents take the place of the run's
    assert plan_refill(dataset, source=path, docs=[tmp_path], seed=0).docs == [str(tmp_path)]


def test_a_run_id_that_is_not_text_names_no_run(tmp_path: Path) -> None:
    dataset = reviewed(2, rejected=())
    dataset.metadata["run_id"] = 5
    assert plan_refill(dataset, source=None, docs=None, seed=0).run_id is None


def test_the_refusals_say_what_to_do_in_full(tmp_path: Path) -> None:
    said = (
        r"^this dataset was not made by a synth run found here: say which documents to refill "
        r"from \(--docs, or docs=\) and which model writes the goldens \(--model, or model=\)$"
    )
    with pytest.raises(ConfigError, match=said):
        plan_refill(reviewed(2, rejected=(0,)), source=None, docs=None, seed=0)
    dataset = reviewed(2, rejected=(0,))
    dataset.metadata["run_id"] = "r1"
    path = beside_its_run(tmp_path, dataset, [str(tmp_path / "moved.md")])
    gone = rf"^the documents of run r1 are gone \({tmp_path / 'moved.md'}\): say where they are "
    with pytest.raises(ConfigError, match=gone + r"now with --docs \(docs=\)$"):
        plan_refill(dataset, source=path, docs=None, seed=0)


def test_the_lineage_seed_is_the_first_seed_of_a_golden_the_run_made() -> None:
    goldens = [
        Golden(input="a", metadata={"seed": 99, "refill": {"round": 1}}),  # a refill's
        Golden(input="b", metadata={"seed": "3"}),  # not a seed
        Golden(input="c", metadata={"seed": 4}),
        Golden(input="d", metadata={"seed": 5}),
    ]
    assert lineage_seed(Dataset(goldens), 1) == 4
    assert lineage_seed(Dataset(goldens[:2]), 1) == 1
    assert lineage_seed(Dataset([Golden(input="e", metadata={"seed": 0})]), 1) == 0
    job = plan_refill(Dataset([*goldens, *reviewed(1, (0,))]), source=None, docs=["d"], seed=1)
    assert job.seed == refill_seed(4, 1)


def test_the_dataset_records_each_refill_and_each_new_golden_its_round() -> None:
    dataset = reviewed(4, rejected=(0, 3))
    dataset.metadata["refills"] = [{"round": 1}]
    job = plan_refill(dataset, source=None, docs=["docs/"], seed=7)
    result = asyncio.run(refill(dataset, "docs/", seed=7, generate=Scripted(2)))
    assert result.dataset.metadata["refills"] == [
        {"round": 1},
        {"round": 2, "seed": job.seed, "asked": 2, "added": 2, "run_id": "r2"},
    ]
    assert result.dataset.metadata["shortfall"] == []  # every rejected golden replaced
    assert (result.dataset.metadata["num_goldens"], result.dataset.metadata["delivered"]) == (4, 4)
    assert result.added == 2 and result.shortfall == 0
    new = [result.dataset.goldens[0], result.dataset.goldens[3]]
    for golden in new:
        assert golden.metadata["refill"] == {"round": 2, "seed": job.seed, "of_run": None}
        assert status_of(golden) == "pending"
        assert golden.metadata["review"]["reviewer"] == REFILL_REVIEWER == "synth refill"
    assert [golden_key(g) for g in new] == ["new0", "new1"]  # their own ids, kept as they are


def test_new_goldens_sharing_a_draft_id_get_keys_of_their_own() -> None:
    result = asyncio.run(
        refill(reviewed(3, (0, 1)), "docs/", seed=7, generate=Scripted(2, draft_ids=["x", "x"]))
    )
    assert [golden_key(g) for g in result.dataset] == ["x", "x-r1", "d2"]


def test_nothing_rejected_asks_for_nothing_and_records_an_empty_round() -> None:
    generate = Scripted(1)
    dataset = reviewed(2, rejected=())
    result = asyncio.run(refill(dataset, None, seed=7, generate=generate))
    assert generate.calls == []
    assert list(result.dataset) == list(dataset) and result.rejected == []
    refills = result.dataset.metadata["refills"]
    assert refills == [
        {"round": 1, "seed": refill_seed(7, 1), "asked": 0, "added": 0, "run_id": None}
    ]
    assert "num_goldens" not in result.dataset.metadata and result.path is None


def test_run_options_take_the_critic_and_default_the_seed_filter_and_context_critic() -> None:
    manifest = {
        "run_id": "r1",
        "models": {
            "generator": {"provider": "openai"},  # no model named: not taken
            "critic": {"provider": "anthropic", "model": "claude-x"},
        },
        "config": {"filtration": {"synthetic_input_quality_threshold": 0.7}},
    }
    options = run_options(manifest)
    assert options["critic_model"] == "anthropic:claude-x" and "model" not in options
    assert options["seed"] == 0 and options["use_context_critic"] is True
    assert options["use_filter"] is True
    assert options["filtration_config"] == FiltrationConfig(synthetic_input_quality_threshold=0.7)
    bare = run_options({"run_id": "r2", "seed": 4})  # a manifest without config or models
    assert bare == {"seed": 4, "use_filter": True, "use_context_critic": True}


def test_run_options_read_a_manifest_its_run_directory_or_a_dataset_file_beside_it(
    tmp_path: Path,
) -> None:
    dataset = reviewed(1, rejected=())
    dataset.metadata["run_id"] = "r1"
    path = beside_its_run(tmp_path, dataset, [])
    manifest = tmp_path / "manifest.json"
    for run in (manifest, tmp_path, path, str(path)):
        assert run_options(run) == {"seed": 0, "use_filter": True, "use_context_critic": True}
    other = tmp_path / "other"
    other.mkdir()
    dataset.metadata["run_id"] = "r-unknown"
    dataset.save(other / "set.jsonl")
    said = rf"^{other / 'set.jsonl'}: no run manifest found for this dataset \(was it made by synth\?\)$"
    with pytest.raises(ConfigError, match=said):
        run_options(other / "set.jsonl")


@pytest.mark.parametrize(
    ("critic", "flags", "expected"),
    [
        ("openai:old", ["--model", "openai:new"], "openai:new"),  # the critic was the generator
        ("openai:judge", ["--model", "openai:new"], "openai:judge"),  # a critic chosen apart
        ("openai:old", ["--model", "openai:new", "--critic-model", "openai:c"], "openai:c"),
        ("openai:old", [], "openai:old"),
    ],
)
def test_refill_and_update_model_flag_moves_the_critic_that_was_the_generator(
    critic: str, flags: list[str], expected: str
) -> None:
    from synth.cli import build_parser
    from synth.cli._upkeep import synthesizer_options

    def model(spec: str) -> dict[str, str]:
        provider, name = spec.split(":")
        return {"provider": provider, "model": name}

    manifest = {
        "run_id": "r1",
        "models": {"generator": model("openai:old"), "critic": model(critic)},
    }
    for command in (["refill", "goldens.jsonl"], ["update", "goldens.jsonl", "docs"]):
        args = build_parser().parse_args([*command, *flags])
        options = synthesizer_options(args, manifest)
        assert options["critic_model"] == expected
        assert options["model"] == (flags[1] if flags else "openai:old")
