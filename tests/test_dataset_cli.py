"""`synth export` through synth.cli.main."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synth import Dataset, Golden
from synth.cli import main


def _save(name: str = "goldens.json") -> Dataset:
    dataset = Dataset(
        [
            Golden(
                input="What is P-4?",
                expected_output="A pump.",
                context=["P-4 is a pump."],
                context_ids=["c1"],
            ),
            Golden(input="When?", source_files=["a.md"], metadata={"k": [1, 2]}),
        ],
        {"seed": 3},
    )
    dataset.save(name)
    return dataset


@pytest.mark.parametrize(
    ("tool", "output", "description"),
    [
        ("deepeval", "out/deepeval.json", "deepeval goldens"),
        ("ragas", "out/ragas.jsonl", "ragas single-turn samples"),
        ("judgeval", "out/judgeval.json", "judgeval examples"),
    ],
)
def test_export_writes_the_file_and_says_so(
    tool: str, output: str, description: str, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = _save()
    assert main(["export", "goldens.json", "--format", tool, "-o", output]) == 0
    out = capsys.readouterr().out
    assert out == f"wrote 2 goldens to {output} ({description})\n"
    assert Dataset.load(output).goldens == dataset.goldens


def test_export_default_output_is_next_to_the_dataset(capsys: pytest.CaptureFixture[str]) -> None:
    Path("data").mkdir()
    _save("data/goldens.csv")
    assert main(["export", "data/goldens.csv", "-f", "ragas"]) == 0
    assert (
        capsys.readouterr().out
        == "wrote 2 goldens to data/goldens.ragas.jsonl (ragas single-turn samples)\n"
    )
    rows = [json.loads(line) for line in Path("data/goldens.ragas.jsonl").read_text().splitlines()]
    assert rows[0]["user_input"] == "What is P-4?"


def test_export_refuses_to_overwrite_its_input(capsys: pytest.CaptureFixture[str]) -> None:
    _save()
    before = Path("goldens.json").read_bytes()
    assert main(["export", "goldens.json", "-f", "deepeval", "-o", "./goldens.json"]) == 2
    assert "is the dataset being exported" in capsys.readouterr().err
    assert Path("goldens.json").read_bytes() == before


def test_export_of_a_malformed_dataset_is_one_error_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    Path("bad.jsonl").write_text('{"input": "q"}\n{"input": "q", "context": 5}\n')
    assert main(["export", "bad.jsonl", "-f", "judgeval", "-o", "out.json"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "synth: error: bad.jsonl: line 2: field 'context': expected a list of strings or null, got an integer\n"
    )
    assert not Path("out.json").exists()


def test_export_wrong_suffix_and_unknown_format(capsys: pytest.CaptureFixture[str]) -> None:
    _save()
    assert main(["export", "goldens.json", "-f", "judgeval", "-o", "out.csv"]) == 2
    assert "a judgeval export is written as .json" in capsys.readouterr().err
    assert main(["export", "goldens.json", "-f", "braintrust"]) == 2
    assert "unknown format 'braintrust'" in capsys.readouterr().err


def test_export_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["export", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "--format" in out and "deepeval" in out and "-o OUTPUT" in out


# ---- converting between synth's own formats -----------------------------------------------------
@pytest.mark.parametrize("source", ["goldens.jsonl", "goldens.json", "goldens.csv", "g.parquet"])
@pytest.mark.parametrize("target", ["out.jsonl", "out.json", "out.csv", "out.parquet"])
def test_export_converts_between_synths_formats_by_the_output_suffix(
    source: str, target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = _save(source)
    assert main(["export", source, "-o", target]) == 0
    kind = target.rsplit(".", 1)[1]
    assert capsys.readouterr().out == f"wrote 2 goldens to {target} (synth dataset, {kind})\n"
    assert Dataset.load(target) == dataset  # goldens and the dataset's metadata


def test_export_own_format_by_name_goes_next_to_the_dataset(
    capsys: pytest.CaptureFixture[str],
) -> None:
    Path("data").mkdir()
    dataset = _save("data/goldens.jsonl")
    assert main(["export", "data/goldens.jsonl", "--format", "parquet"]) == 0
    assert capsys.readouterr().out == (
        "wrote 2 goldens to data/goldens.parquet (synth dataset, parquet)\n"
    )
    assert Dataset.load("data/goldens.parquet") == dataset


def test_export_own_format_refusals(capsys: pytest.CaptureFixture[str]) -> None:
    _save("goldens.jsonl")
    assert main(["export", "goldens.jsonl"]) == 2
    assert "name the file to write with -o" in capsys.readouterr().err
    assert main(["export", "goldens.jsonl", "-o", "out.txt"]) == 2
    err = capsys.readouterr().err
    assert "unsupported dataset suffix '.txt'" in err and "--format" in err
    assert main(["export", "goldens.jsonl", "-f", "csv", "-o", "out.json"]) == 2
    assert "a csv dataset is written as .csv" in capsys.readouterr().err
    assert main(["export", "goldens.jsonl", "-o", "./goldens.jsonl"]) == 2
    assert "is the dataset being exported" in capsys.readouterr().err
    assert not Path("out.json").exists() and not Path("out.txt").exists()


@pytest.mark.parametrize(
    ("tool", "default", "description"),
    [
        ("deepeval", "goldens.deepeval.json", "deepeval goldens"),
        ("deepeval-csv", "goldens.deepeval.csv", "deepeval goldens CSV"),
        ("judgeval", "goldens.judgeval.json", "judgeval examples"),
        ("judgeval-legacy", "goldens.judgeval-legacy.json", "judgeval 0.0.x examples"),
        ("ragas", "goldens.ragas.jsonl", "ragas single-turn samples"),
    ],
)
def test_every_export_has_its_default_file_and_says_what_it_wrote(
    tool: str, default: str, description: str, capsys: pytest.CaptureFixture[str]
) -> None:
    Path("data").mkdir()
    dataset = Dataset([Golden(input="What is P-4?", context=["P-4 is a pump."])])
    dataset.save("data/goldens.jsonl")
    assert main(["export", "data/goldens.jsonl", "-f", tool]) == 0
    assert capsys.readouterr().out == f"wrote 1 goldens to data/{default} ({description})\n"
    assert Dataset.load(f"data/{default}").goldens == dataset.goldens


def test_export_to_deepeval_csv_of_a_value_json_cannot_write_is_one_error_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Python's json reads NaN, so a dataset file may hold one; deepeval-csv used to crash on it
    Path("n.jsonl").write_text('{"input": "q", "metadata": {"x": NaN}}\n', encoding="utf-8")
    assert main(["export", "n.jsonl", "-f", "deepeval-csv", "-o", "out.csv"]) == 2
    assert capsys.readouterr().err == (
        "synth: error: cannot save out.csv: index 0: field 'additional_metadata' cannot be "
        "written as JSON (Out of range float values are not JSON compliant); it may hold only "
        "strings, numbers (not NaN or infinity), booleans, null, lists and objects\n"
    )
    assert not Path("out.csv").exists()
