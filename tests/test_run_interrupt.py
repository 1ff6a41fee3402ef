"""Ctrl-C while a run's background work is under way (synth/run/session.py): the manifest says
``interrupted`` at once, without waiting for a thread that cannot be stopped.

The ``synth`` command gives an interrupted run a deadline (synth/_interrupt.py: GRACE) and then
ends the process; whatever the run waits for before its manifest is written is lost at that
deadline. The difficulty index is built in a thread on the first measured draft; a Ctrl-C that
lands in the run's own task while it builds must not wait for it."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from synth_replies import Replies

from synth import FunctionModel, Synthesizer
from synth.run import difficulty as run_difficulty
from synth.run.stream import Stream

#: how long the test lets the run take to write its manifest before it gives the build back
PATIENCE = 20.0


def write_docs(folder: Path) -> Path:
    folder.mkdir()
    text = (
        "Solar panels lose a tenth of their output in winter, the report says.\n\n"
        "An inverter changes direct current from the panels into alternating current."
    )
    (folder / "a.md").write_text(text, encoding="utf-8")
    return folder


def test_ctrl_c_in_the_run_writes_its_manifest_while_the_difficulty_index_is_still_building(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    building, released = threading.Event(), threading.Event()
    real_build = run_difficulty._build

    def slow_build(corpus: Any, *rest: Any) -> Any:
        building.set()
        released.wait(PATIENCE * 2)
        return real_build(corpus, *rest)

    async def interrupted_run(stream: Stream) -> Any:
        meter = stream.runner.meter
        assert meter is not None
        waiting = asyncio.ensure_future(meter.index())  # as the first measured draft does
        await asyncio.to_thread(building.wait, PATIENCE)
        assert building.is_set() and not waiting.done(), "the index build never started"
        raise KeyboardInterrupt  # as Ctrl-C raises it, in the run's own task

    monkeypatch.setattr(run_difficulty, "_build", slow_build)
    monkeypatch.setattr(Stream, "run", interrupted_run)
    run_dir = tmp_path / "run"
    seen: dict[str, Any] = {}

    def watch() -> None:
        """Give the build back once the manifest says interrupted, or after PATIENCE."""
        manifest = run_dir / "manifest.json"
        deadline = threading.Event()
        for _ in range(int(PATIENCE * 20)):
            if manifest.exists() and json.loads(manifest.read_text())["status"] != "running":
                seen["status"] = json.loads(manifest.read_text())["status"]
                seen["while_building"] = not released.is_set()
                break
            deadline.wait(0.05)
        released.set()

    watcher = threading.Thread(target=watch)
    watcher.start()
    synth = Synthesizer(
        FunctionModel(Replies(), name="replies"), embedder="hash", cache=None, run_dir=run_dir
    )
    try:
        with pytest.raises(KeyboardInterrupt):
            synth.generate_goldens_from_docs(str(write_docs(tmp_path / "docs")), num_goldens=2)
    finally:
        released.set()
        watcher.join()
    assert seen == {"status": "interrupted", "while_building": True}
