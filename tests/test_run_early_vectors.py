"""The inputs' vectors for deduplication are asked once no step left rewrites an input (issue 22):
beside the expected outputs, not after them, and a run comes out exactly as embedding last did.

Order of events only, no clock: the expected step's replies are held until a dedup embedding has
been asked (a failure bound, never reached when it runs beside them)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from synth_replies import Replies, stage_of

from synth import FunctionModel, Synthesizer
from synth.generate.draft import Draft
from synth.run.stages import CandidateRunner, Early
from synth.store.hash_embedder import HashEmbedder

SAMPLE = Path(__file__).resolve().parents[1] / "sample_docs"
#: how long a held expected reply waits for a dedup embedding (never reached when it runs beside)
PATIENCE = 10.0


class Recording(HashEmbedder):
    """The hash embedder, noting every dedup request's texts (and setting ``asked`` at the first)."""

    def __init__(self) -> None:
        super().__init__()
        self.dedup: list[list[str]] = []
        self.asked: asyncio.Event | None = None

    async def aembed(self, texts: Sequence[str], *, label: str | None = None) -> list[list[float]]:
        if label == "dedup":
            self.dedup.append(list(texts))
            if self.asked is not None:
                self.asked.set()
        return await super().aembed(texts, label=label)


def run(tmp: Path, embedder: Recording, model: object, goldens: int = 8) -> tuple[list, dict]:
    synth = Synthesizer(
        FunctionModel(model, name="replies"),
        embedder=embedder,
        seed=3,
        cache=None,
        run_dir=tmp / "run",
        store_path=tmp / "store",
    )
    dataset = synth.generate_goldens_from_docs(SAMPLE, num_goldens=goldens)
    return [json.loads(g.model_dump_json()) for g in dataset], synth.manifest


def test_inputs_are_embedded_while_expected_outputs_are_still_out(tmp_path: Path) -> None:
    replies, embedder = Replies(), Recording()
    overlapped: list[bool] = []

    async def model(prompt: str, system: str | None = None) -> str:
        if embedder.asked is None:
            embedder.asked = asyncio.Event()
        if stage_of(prompt) == "expected":
            try:
                await asyncio.wait_for(embedder.asked.wait(), PATIENCE)
                overlapped.append(True)
            except TimeoutError:
                overlapped.append(False)
        return await replies(prompt, system)

    goldens, _ = run(tmp_path, embedder, model, goldens=4)
    assert len(goldens) == 4
    assert overlapped and all(overlapped), overlapped


def test_a_run_embedding_early_gives_the_goldens_of_one_embedding_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SYNTH_REPLIES_VAGUE", "0.3")  # drops and rewrites before the last step
    early = Recording()
    got, manifest = run(tmp_path / "a", early, Replies())
    monkeypatch.setattr(CandidateRunner, "_inputs_final", lambda self, index: False)
    late = Recording()
    expected, manifest_late = run(tmp_path / "b", late, Replies())
    assert len(got) == 8
    assert got == expected  # inputs, outputs, and the difficulty measured with the vectors
    assert [g["metadata"]["difficulty"] for g in got] == [
        g["metadata"]["difficulty"] for g in expected
    ]
    assert manifest["stages"] == manifest_late["stages"]
    # one dedup request per candidate either way, with the same texts
    assert sorted(map(tuple, early.dedup)) == sorted(map(tuple, late.dedup))


def test_a_draft_changed_after_the_early_embedding_is_embedded_again() -> None:
    async def main() -> None:
        rows = [[1.0, 0.0], [0.0, 1.0]]
        task: asyncio.Future[list[list[float]]] = asyncio.get_running_loop().create_future()
        task.set_result(rows)
        early = Early([("a", "first?"), ("b", "second?")], task)
        a, b = Draft(id="a", input="first?"), Draft(id="b", input="second?")
        assert await early.rows_for([b]) == [[0.0, 1.0]]  # a dropped at the last step
        assert await early.rows_for([a, b]) == rows
        b.input = "second, rewritten?"
        assert await early.rows_for([a, b]) is None
        assert await early.rows_for([a, Draft(id="c", input="new?")]) is None

    asyncio.run(main())


def test_an_early_embedding_not_needed_is_cancelled_and_its_failure_not_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def main() -> None:
        async def fails() -> list[list[float]]:
            raise RuntimeError("embedder down")

        async def slow() -> list[list[float]]:
            await asyncio.sleep(3600)
            return []

        failed = Early([("a", "q?")], asyncio.ensure_future(fails()))
        await asyncio.sleep(0)
        failed.discard()
        pending = Early([("a", "q?")], asyncio.ensure_future(slow()))
        pending.discard()
        await asyncio.sleep(0)
        assert pending.task.cancelled()

    asyncio.run(main())
    import gc

    gc.collect()
    assert "never retrieved" not in caplog.text
