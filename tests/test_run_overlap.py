"""A run with a remote embedder starts on its chunks while the ingest's embeddings are still out
(issue 22): the critic's first requests leave before the ingest's embedding requests are answered,
both within the run's one limiter. A scripted model and a scripted remote embedder; order of
events only, no clock."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from synth_replies import Replies, stage_of

from synth import FunctionModel, Synthesizer
from synth.store import HashEmbedder

SAMPLE = Path(__file__).resolve().parents[1] / "sample_docs"
#: how long a held embedding waits before it gives up (a failure bound, never reached when it works)
PATIENCE = 30.0


class HeldRemote(HashEmbedder):
    """The hash embedder as if it asked a server: the ingest's batches wait until ``release``
    is set, and record the events around them in ``events``."""

    remote = True
    holds_gil = False

    def __init__(self, events: list[str]) -> None:
        super().__init__()
        self.release = threading.Event()
        self.sent = threading.Event()
        self.events = events

    def _embed_labelled(self, texts: list[str], label: str | None) -> Any:
        if label is None or label == "ingest":
            self.events.append("ingest embedding sent")
            self.sent.set()
            released = self.release.wait(PATIENCE)
            self.events.append("ingest embedding answered" if released else "gave up waiting")
        return super()._embed_labelled(texts, label)


def test_the_critic_asks_while_a_remote_embedders_ingest_is_still_out() -> None:
    events: list[str] = []
    embedder = HeldRemote(events)
    replies = Replies()

    async def model(prompt: str, system: str | None = None) -> str:
        if stage_of(prompt) == "critic" and not embedder.release.is_set():
            # the embedding's thread may start after the critic asks: the
            # critic's answer waits for the embedding to be out, never for its reply
            await asyncio.to_thread(embedder.sent.wait, PATIENCE)
            if not embedder.release.is_set():  # the first critic request only
                events.append("critic asked")
                embedder.release.set()  # the embedding is answered once the critic has asked
        return await replies(prompt, system)

    synth = Synthesizer(FunctionModel(model, name="replies"), embedder=embedder, cache=None)
    dataset = synth.generate_goldens_from_docs(SAMPLE, num_goldens=4)
    assert len(dataset) == 4
    first = events[:3]
    assert first == ["ingest embedding sent", "critic asked", "ingest embedding answered"]
    assert "gave up waiting" not in events
    ingest = next(r for r in synth.manifest["stages"] if r["stage"] == "ingest")
    assert ingest["items_out"] == ingest["items_in"] > 0
