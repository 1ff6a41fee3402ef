"""The manifest while a run goes (synth/run/session.py, synth/run/dir.py): each rewrite is on one
line (json's C encoder, a tenth of the indented encoder's time), the last one indented; both hold
the same record."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from test_run_session import _session

from synth.run import session as run_session
from synth.run.dir import RunDir
from synth.run.session import MANIFEST_EVERY


def test_a_rewrite_while_the_run_goes_is_one_line_and_the_last_is_indented(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = [1000.0]
    monkeypatch.setattr(run_session.time, "monotonic", lambda: clock[0])
    session = _session(tmp_path)
    seen: list[str] = []

    async def go() -> None:
        async with session:
            assert session.dir is not None
            clock[0] += MANIFEST_EVERY
            session._flush()  # a rewrite while the run goes
            seen.append(session.dir.manifest_path.read_text(encoding="utf-8"))

    asyncio.run(go())
    assert session.dir is not None
    last = session.dir.manifest_path.read_text(encoding="utf-8")
    assert seen[0].count("\n") == 1 and json.loads(seen[0])["status"] == "running"
    assert last.startswith('{\n  "run_id"') and json.loads(last)["status"] == "complete"


def test_a_compact_manifest_holds_what_the_indented_one_does(tmp_path: Path) -> None:
    record = {"run_id": "r", "stages": [{"stage": "critic", "dropped": {"é": 1}}], "x": None}
    with RunDir.open(tmp_path / "run", {"k": 1}) as run_dir:
        run_dir.write_manifest(record, compact=True)
        compact = run_dir.manifest_path.read_text(encoding="utf-8")
        assert run_dir.read_manifest() == record
        run_dir.write_manifest(record)
        assert run_dir.read_manifest() == record
    assert compact == '{"run_id":"r","stages":[{"stage":"critic","dropped":{"é":1}}],"x":null}\n'


def test_the_plans_file_rows_are_dumped_once_while_the_run_goes_and_the_last_rewrite_measures_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from synth.contexts.coverage import Coverage, FileCoverage

    clock = [1000.0]
    monkeypatch.setattr(run_session.time, "monotonic", lambda: clock[0])
    dumps = [0]
    dump = FileCoverage.model_dump

    def counted(self: FileCoverage, **kw: object) -> dict:
        dumps[0] += 1
        return dump(self, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(FileCoverage, "model_dump", counted)
    rows = [FileCoverage(source=f"f{i}.txt", chunks=3, share=1, target=1) for i in range(40)]
    planned = Coverage(
        rule="proportional",
        files_covered=0,
        files_ingested=40,
        seed_chunks=0,
        neighbour_chunks=0,
        chunks_stored=120,
        files=rows,
    )
    session = _session(tmp_path)
    seen: list[dict] = []

    async def go() -> None:
        async with session:
            assert session.dir is not None
            session.coverage = planned
            for _ in range(5):
                clock[0] += MANIFEST_EVERY
                session._flush()
                seen.append(json.loads(session.dir.manifest_path.read_text(encoding="utf-8")))

    asyncio.run(go())
    assert dumps[0] == 40  # once for the plan's 40 rows, not at each of the five rewrites
    # each rewrite holds what measuring the coverage from the start gives
    measured = session._coverage(planned).model_dump(mode="json")
    assert all(m["coverage"] == measured for m in seen)
    assert len(measured["files"]) == 40 and measured["files_ingested"] == 40
