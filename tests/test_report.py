"""The dataset report's data, without a browser: script-safe JSON, cited spans, the manifest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import report_data

from synth.cli import main
from synth.errors import ConfigError
from synth.report import find_manifest, load_manifest
from synth.report._html import script_json
from synth.report._rows import table


def test_script_json_keeps_markup_out_and_reads_back_the_same() -> None:
    value = {"text": "</script><!-- & <img onerror=x> \u2028"}
    encoded = str(script_json(value))
    assert not {"<", ">", "&"} & set(encoded)
    assert json.loads(encoded) == value


def test_cited_spans_are_utf16_offsets_merged_and_checked() -> None:
    data = table([report_data.emoji()])
    keys, marks = data["contexts"][0]
    assert keys == ["plain", "emoji"]
    text = report_data.EMOJI_CHUNK
    utf16 = text.encode("utf-16-le")
    spans = [utf16[2 * s : 2 * e].decode("utf-16-le") for _, s, e in marks]
    assert spans == [report_data.EMOJI_QUOTE, "Keep it shaded"]
    golden = report_data.golden(0)
    golden.metadata["citations"].append({"chunk_id": "c0000", "start": 5, "end": 10_000})
    golden.metadata["citations"].append({"chunk_id": "elsewhere", "start": 0, "end": 3})
    assert len(table([golden])["contexts"][0][1]) == 1


def test_manifest_is_found_from_the_run_id_and_never_another_runs(tmp_path: Path) -> None:
    run = tmp_path / ".synth" / "runs" / "feedc0ffee000001"
    run.mkdir(parents=True)
    (run / "manifest.json").write_text(json.dumps(report_data.manifest()), encoding="utf-8")
    dataset = tmp_path / "goldens.jsonl"
    assert find_manifest({"run_id": "feedc0ffee000001"}, dataset)["seed"] == 7
    assert find_manifest({"run_id": "another"}, dataset) is None
    assert load_manifest(run)["run_id"] == "feedc0ffee000001"
    (run / "manifest.json").write_text("[1]", encoding="utf-8")
    with pytest.raises(ConfigError, match="not a run manifest"):
        load_manifest(run)


def test_cli_writes_the_report_and_refuses_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = report_data.dataset(3).save(tmp_path / "goldens.jsonl")
    assert main(["report", str(dataset), "-o", str(tmp_path / "r.html")]) == 0
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert html.startswith("<!doctype html>") and "<script>alert(1)</script>" not in html
    assert main(["report", str(tmp_path / "missing.jsonl")]) == 2
    assert main(["report", str(dataset), "--manifest", str(tmp_path / "none.json")]) == 2
    errors = capsys.readouterr().err.splitlines()
    assert len(errors) == 2 and all(line.startswith("synth: error: ") for line in errors)


def test_a_typed_dataset_plots_its_types_and_shows_each_golden_s_type() -> None:
    from synth.dataset.inspect import inspect_dataset
    from synth.report.dataset import _plots

    data = report_data.dataset(6)
    for golden in data.goldens[:3]:
        golden.metadata.update(question_type="simple", tests="generator")
    for golden in data.goldens[3:5]:
        golden.metadata.update(question_type="out_of_scope", tests="refusal")
    plots = _plots(data, inspect_dataset(data), None)
    assert "question types (component tested)" in json.dumps(plots["types"])
    assert "out_of_scope (refusal)" in json.dumps(plots["types"])
    assert "(untyped)" in json.dumps(plots["types"])  # the sixth golden has no type
    shown = table(data.goldens)
    at = [c["key"] for c in shown["columns"]].index("type")
    assert [row[at] for row in shown["rows"]] == data_types(data)
    plain = report_data.dataset(3)
    assert "types" not in _plots(plain, inspect_dataset(plain), None)


def data_types(data) -> list:
    return [g.metadata.get("question_type") for g in data.goldens]


def test_the_coverage_plot_names_files_as_the_goldens_do() -> None:
    """A run from an imported store names its files by the paths the store held (LlamaIndex's
    ``file_path``, often absolute): the shared page names each by its file name, counts summed."""
    from synth.report import dataset_report

    data = report_data.dataset(2)
    for golden in data.goldens:
        golden.source_files = ["/home/alice-7f3/private/guide.pdf"]
    files = [
        {"source": "/home/alice-7f3/private/guide.pdf", "target": 2, "delivered": 1},
        {"source": "/home/alice-7f3/old/guide.pdf", "target": 1, "delivered": 1},
        {"source": "docs/faq.md", "target": 1, "delivered": 0},
    ]
    run = {"run_id": "r", "coverage": {"files": files, "files_covered": 2, "files_ingested": 3}}
    html = dataset_report(data, manifest=run)
    assert "alice-7f3" not in html
    bars = json.loads(html.split('id="report-data">', 1)[1].split("</script>", 1)[0])
    target, delivered = bars["figures"]["files"]["data"]
    assert (target["y"], target["x"]) == (["guide.pdf", "docs/faq.md"], [3, 1])
    assert (delivered["y"], delivered["x"]) == (["guide.pdf", "docs/faq.md"], [2, 0])
