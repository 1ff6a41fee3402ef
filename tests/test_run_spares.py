"""The contexts a run started and did not use (synth/run/slots.py ``spare_counts``): the manifest
says how many and where each stopped, so the stages' requests (spares included) and their items
(the used contexts only) add up."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

from synth_replies import Replies

from synth import FunctionModel, Synthesizer
from synth.contexts.config import ContextConstructionConfig
from synth.contexts.feed import Candidate
from synth.errors import ShortfallWarning
from synth.run.slots import Slot, spare_counts


def slot(seq: int, *stages: str, started: bool = True) -> Slot:
    made = Slot(Candidate(seq=seq, key=f"c{seq}", context=None, position=seq), expected=2)
    made.stages_done.extend(stages)
    if started:
        made.task = object()  # type: ignore[assignment]  # only whether it was started counts
    return made


def test_spares_are_the_started_slots_not_committed_by_the_step_they_stopped_after() -> None:
    used = [slot(0, "inputs", "filter", "evolve"), slot(1, "inputs", "filter")]
    spares = [slot(2, "inputs", "filter"), slot(3, "inputs"), slot(4), slot(5, "inputs", "filter")]
    parked = slot(6, started=False)  # held by the quotas, never started: not a spare
    counts = spare_counts([*used, *spares, parked], used)
    assert counts == {"started": 4, "stopped_after": {"filter": 2, "inputs": 1, "none": 1}}
    assert spare_counts(used, used) == {"started": 0, "stopped_after": {}}


def write_docs(folder: Path) -> Path:
    folder.mkdir()
    for name, topic in (("a.md", "solar panels"), ("b.md", "home batteries")):
        lines = [f"Paragraph {i} on {topic}: it explains part {i} of the guide." for i in range(12)]
        (folder / name).write_text("\n\n".join(lines), encoding="utf-8")
    return folder


def test_a_runs_manifest_counts_its_spares_so_the_inputs_it_asked_for_add_up(
    tmp_path: Path,
) -> None:
    run_dir = tmp_path / "run"
    contexts = ContextConstructionConfig(chunk_size=24, max_contexts_per_document=8)
    synth = Synthesizer(
        FunctionModel(Replies(), name="replies"),
        embedder="hash",
        cache=None,
        run_dir=run_dir,
        context_construction_config=contexts,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ShortfallWarning)
        synth.generate_goldens_from_docs(
            str(write_docs(tmp_path / "docs")), num_goldens=6, max_goldens_per_context=1
        )
    manifest = synth.manifest
    assert manifest is not None
    spares = manifest["contexts"]["spares"]
    inputs_row = next(row for row in manifest["stages"] if row["stage"] == "inputs")
    journaled = (run_dir / "inputs.jsonl").read_text(encoding="utf-8").splitlines()
    asked = {json.loads(line)["key"] for line in journaled}
    # every context whose inputs were written is used (the stage's items) or a spare
    assert len(asked) == inputs_row["items_in"] + spares["started"] - spares["stopped_after"].get(
        "none", 0
    )
    assert spares["started"] > 0  # the first wave starts spares (a tenth expected dropped)
