"""Smoke test of bench/ingest.py: a tiny corpus, every measurement, a JSON with sane relations."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "bench" / "ingest.py"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> dict:
    work = tmp_path_factory.mktemp("bench-ingest")
    out = work / "ingest.json"
    done = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--sizes",
            "12",
            "--docx-ratio",
            "15",
            "--parts",
            "all",
            "--repeat",
            "1",
            "--workdir",
            str(work / "scratch"),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert "### throughput" in done.stdout and "### memory" in done.stdout
    assert not (work / "scratch").exists()  # the scratch folder is removed without --keep
    return json.loads(out.read_text())


def test_header_says_when_and_with_what(result: dict) -> None:
    assert result["date"] and result["command"].startswith("python bench/ingest.py --sizes 12")
    for package in ("synth", "chromadb", "pypdf", "python-docx", "fpdf2"):
        assert result["versions"][package] not in ("", "missing")
    assert "ru_maxrss" in result["memory_measure"] and "tracemalloc" in result["memory_measure"]


def test_corpus_has_the_asked_pages_and_paragraphs(result: dict) -> None:
    (size,) = result["sizes"]
    assert (size["pdf_pages"], size["docx_paragraphs"]) == (12, 180)
    assert (size["pdf_files"], size["docx_files"]) == (1, 2)
    bare = size["parts"]["all"]["bare"]
    assert (bare["pdf_pages"], bare["docx_paragraphs"]) == (12, 180)
    assert bare["chars"] > 12 * 1000


def test_synth_stores_what_chroma_stores_and_the_second_run_embeds_nothing(result: dict) -> None:
    row = result["sizes"][0]["parts"]["all"]
    synth, chroma = row["synth"], row["chroma"]
    assert synth["files"] == synth["files_ok"] == 3
    assert synth["chunks"] > 0 and synth["tokens"] > synth["chunks"]
    assert synth["embedded"] == synth["chunks"] and synth["reused"] == 0
    assert chroma["chunks"] == chroma["stored"] == synth["chunks"]
    second = synth["second_run"]
    assert second["embedded"] == 0 and second["reused"] == second["chunks"] == synth["chunks"]
    assert result["summary"]["second_run_embedded"] == 0


def test_ratios_follow_from_the_times(result: dict) -> None:
    row = result["sizes"][0]["parts"]["all"]
    bare, chroma, synth = row["bare"], row["chroma"], row["synth"]
    assert row["floor_seconds"] == pytest.approx(bare["seconds"] + chroma["seconds"])
    assert row["ratio"] == pytest.approx(synth["seconds"] / row["floor_seconds"])
    assert row["cpu_ratio"] == pytest.approx(
        synth["cpu_seconds"] / (bare["cpu_seconds"] + chroma["cpu_seconds"])
    )
    assert result["summary"]["worst_ratio"] == pytest.approx(row["ratio"])
    assert row["items"] == 12 + 180


def test_stages_and_memory_are_measured(result: dict) -> None:
    size = result["sizes"][0]
    stages = size["stages"]
    assert set(stages["seconds"]) == {"tokenizer", "load", "chunk", "embed", "open_store", "store"}
    assert all(seconds > 0 for seconds in stages["seconds"].values())
    assert stages["documents"] == 3
    assert stages["chunks"] == size["parts"]["all"]["synth"]["chunks"]
    synth = size["parts"]["all"]["synth"]
    assert synth["rss_peak_mib"] >= synth["rss_base_mib"] > 0
    assert size["trace"]["tracemalloc_peak_mib"] > 0
    traced = size["trace"]["tracemalloc"]
    assert 0 < traced["end_without_hash_cache_mib"] <= traced["end_mib"] <= traced["peak_mib"]
    assert 0 < traced["hash_cache_entries"] <= traced["hash_cache_max_entries"]
    assert result["summary"]["tracemalloc_peak_mib"] == [size["trace"]["tracemalloc_peak_mib"]]


@pytest.mark.server
def test_the_ray_bench_compares_workers_with_one_process_and_projects_a_cluster(
    tmp_path: Path,
) -> None:
    out = tmp_path / "ray.json"
    done = subprocess.run(
        [
            *(sys.executable, str(SCRIPT), "--ray", "--sizes", "4", "--tiny-files", "30"),
            *("--nodes", "4", "--out", str(out)),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "PYTHONPATH": str(REPO), "RAY_USAGE_STATS_ENABLED": "0"},
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())["ray"]
    single = result["single"]
    assert [run["workers"] for run in result["ray"]] == [1, 2]
    for run in result["ray"]:  # the bench itself refuses rows unlike the single process's
        assert (run["chunks"], run["embedded"], run["rerun_embedded"]) == (
            single["chunks"],
            single["embedded"],
            0,
        )
    assert result["tiny"][0]["files"] == result["tiny"][1]["files"] == 30
    projection = json.loads(out.read_text())["tables"]["Cluster projection"]
    assert "at 32 cores" in projection and "bound by" in projection
