"""Smoke tests of bench/compare.py: its answer without deepeval, and synth's rows under faults."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "bench" / "compare.py"
#: three of the sample documents: enough for several files' rows, a third of the requests
FAULT_DOCS = ("quick_start.md", "safety_and_storage.txt", "sizing_guide.md")


def _run(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout
    )


@pytest.mark.skipif(
    importlib.util.find_spec("deepeval") is not None, reason="deepeval is installed here"
)
def test_without_deepeval_it_says_so_and_exits_0(tmp_path: Path) -> None:
    done = _run("--out", str(tmp_path / "compare.json"))
    assert done.returncode == 0, done.stderr
    assert "deepeval is not importable" in done.stdout
    assert "pip install deepeval" in done.stdout
    assert not (tmp_path / "compare.json").exists()


@pytest.mark.slow
def test_synth_rows_under_faults(tmp_path: Path) -> None:
    out = tmp_path / "compare.json"
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in FAULT_DOCS:
        shutil.copy(REPO / "sample_docs" / name, folder / name)
    done = _run(
        "--folder",
        str(folder),
        "--tools",
        "synth,synth-exact",
        "--scenario",
        "faults:server_error=0.25,invalid_json=0.25",
        "--latency",
        "0",
        "--contexts-per-document",
        "1",
        "--goldens-per-context",
        "1",
        "--out",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert result["deepeval_version"] is None
    assert result["settings"]["scenarios"] == {
        "faults": {"server_error": 0.25, "invalid_json": 0.25}
    }
    rows = {row["tool"]: row for row in result["rows"]}
    assert set(rows) == {"synth", "synth-exact"}
    for row in rows.values():
        counts = row["requests"]
        assert row["scenario"] == "faults" and row["error"] is None
        assert counts["requests"] == counts["chat"] + counts["embeddings"]
        assert sum(counts["outcomes"].values()) == counts["requests"]
        assert counts["requests"] - counts["ok"] == sum(
            n for outcome, n in counts["outcomes"].items() if outcome != "ok"
        )
        assert 1 <= counts["peak_in_flight"] <= counts["requests"]
        assert 0 < row["delivered"] <= row["asked"]
        assert row["requests_per_golden"] == pytest.approx(counts["requests"] / row["delivered"])
        assert row["chat_per_golden"] == pytest.approx(counts["chat"] / row["delivered"])
    files = rows["synth-exact"]["files"]
    assert files == rows["synth"]["files"] == len(FAULT_DOCS)
    assert rows["synth-exact"]["asked"] == files  # one context per file, one golden per context
    assert rows["synth-exact"]["delivered"] == files  # topped up despite the faults
    faulted = sum(row["requests"]["requests"] - row["requests"]["ok"] for row in rows.values())
    assert faulted > 0
    assert "| synth-exact | faults" in done.stdout
