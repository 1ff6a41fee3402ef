"""Smoke test of bench/generate.py: a small run against the fake server, a JSON with sane relations."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "bench" / "generate.py"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> dict:
    work = tmp_path_factory.mktemp("bench-generate")
    out = work / "generate.json"
    done = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--goldens",
            "6",
            "--copies",
            "2",
            "--latency",
            "0.01",
            "--rpm",
            "3000",
            "--max-concurrent",
            "4",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert "### summary" in done.stdout and "### stages" in done.stdout
    return json.loads(out.read_text())


def test_settings_and_header(result: dict) -> None:
    settings = result["settings"]
    assert settings["latency"] == 0.01 and settings["rpm"] == 3000
    assert settings["max_concurrent"] == 4 and settings["embedder"] == "hash"
    assert settings["difficulty"] == "measured"
    assert settings["corpus"].startswith("sample_docs x 2")
    assert result["versions"]["synth"] not in ("", "missing")
    assert result["aims"] == {"floor_ratio": 1.5, "requests_per_golden": 3.0}


def test_run_delivers_what_was_asked_and_counts_agree(result: dict) -> None:
    (run,) = result["runs"]
    assert run["goldens_asked"] == run["goldens_delivered"] == 6
    assert run["error"] is None and run["status"] == "complete"
    counts = run["requests"]
    assert counts["ok"] == counts["requests"] == counts["chat"]  # no faults, hash embedder
    # what the server saw is what the manifest counted, stage by stage
    assert run["manifest_requests"] == counts["chat"]
    assert sum(int(row["requests"]) for row in run["stages"]) == counts["chat"]
    assert run["requests_per_golden"] == pytest.approx(counts["requests"] / 6)
    assert run["tokens"] > 0 and run["tokens_per_golden"] == pytest.approx(run["tokens"] / 6)
    assert 1 <= counts["peak_in_flight"] <= counts["requests"]
    stages = [row["stage"] for row in run["stages"]]
    assert stages[:5] == ["ingest", "prose", "critic", "group", "inputs"] and "expected" in stages


def test_floor_follows_from_chain_and_rate(result: dict) -> None:
    (run,) = result["runs"]
    chain = run["chain"]
    assert {"inputs", "expected"} <= set(chain)
    # the one evolution was asked for beside the filter's round (run ahead of it): no link of its own
    assert chain.get("filter") == 1 and "evolve" not in chain
    # so were the expected outputs beside the final check
    assert "check" not in chain
    assert run["chain_length"] == sum(chain.values())
    assert run["chain_floor_seconds"] == pytest.approx(run["chain_length"] * 0.01)
    assert run["rate_floor_seconds"] == pytest.approx(run["requests"]["requests"] / 50)
    assert run["floor_seconds"] == pytest.approx(
        max(run["chain_floor_seconds"], run["rate_floor_seconds"])
    )
    assert run["floor_ratio"] == pytest.approx(run["seconds"] / run["floor_seconds"])
    assert run["concurrency_floor_seconds"] == pytest.approx(run["requests"]["requests"] * 0.01 / 4)
    assert run["bound_ratio"] <= run["floor_ratio"]


def test_the_control_run_measures_no_difficulty(tmp_path: Path) -> None:
    out = tmp_path / "control.json"
    args = ["--goldens", "4", "--copies", "1", "--latency", "0.01", "--no-difficulty"]
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *args, "--workdir", str(tmp_path), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["settings"]["difficulty"] == "not measured"
    (saved,) = tmp_path.rglob("goldens.jsonl")
    goldens = [json.loads(line) for line in saved.read_text().splitlines()]
    assert len(goldens) == 4 and all("difficulty" not in g["metadata"] for g in goldens)
