"""Smoke test of bench/formats.py: one file of each format, every reader measured and scored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def test_every_format_is_measured_and_every_check_passes(tmp_path: Path) -> None:
    out = tmp_path / "formats.json"
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "formats.py"), "--files", "1", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(out.read_text())["synth"]
    assert set(result) == {"html", "pptx", "xlsx", "csv", "epub", "ipynb", "xls"}
    assert result["html"]["boilerplate"] == 0.0 and result["html"]["headings"] == 1.0
    assert result["pptx"]["notes"] == 1.0 and result["epub"]["chapters"] == 1.0
    assert result["xlsx"]["cells_named"] == result["csv"]["cells_named"] == 1.0
    assert result["ipynb"]["headings"] == 1.0 and result["xls"]["rows"] == 1.0
    assert "xlrd" in result["xls"]["packages"] and "markitdown" in result["ipynb"]["packages"]
    assert "trafilatura" in result["html"]["packages"]
    assert result["csv"]["install_mb"] == 0.0 and result["xlsx"]["install_mb"] > 0
    assert all(m["ms_per_file"] > 0 and m["files"] == 1 for m in result.values())
    assert "| html " in done.stdout
