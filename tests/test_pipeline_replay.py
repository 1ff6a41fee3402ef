"""Rerunning a run that finished returns its saved goldens and asks nothing, even when some of its
requests had failed for good; an unfinished run still resumes, and a new run directory retries.

Most tests here script a provider that breaks chosen evolutions, which only the scripted model can
do; the one that does not also runs against the generic fake server (``model`` fixture)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fake_openai
import pytest
import synth_replies
from model_modes import MODES, ModelMode, open_mode
from synth_replies import Replies, stage_of

from synth import FunctionModel, ShortfallWarning, Synthesizer
from synth.cli import main
from synth.dataset import Dataset

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample_docs"


def evolved_text(prompt: str) -> str:
    return prompt.split("Inputs to rewrite", 1)[1].split("\n\nHow to rewrite", 1)[0]


@pytest.fixture(params=MODES)
def model(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModelMode]:
    yield from open_mode(request.param, monkeypatch)


def unlucky(prompt: str) -> bool:
    """About a third of the evolutions, fixed by their inputs' text."""
    return (
        stage_of(prompt) == "evolve"
        and hashlib.sha256(evolved_text(prompt).encode()).digest()[0] < 85
    )


class Provider:
    """Replies whose evolutions of unlucky inputs come back broken while ``broken`` is set."""

    def __init__(self) -> None:
        self.broken = True
        self.replies = Replies(fail=self.fail)

    def fail(self, prompt: str) -> str | None:
        return '{"input": ' if self.broken and unlucky(prompt) else None


def test_a_finished_run_with_failed_items_is_returned_as_saved_without_a_request() -> None:
    provider = Provider()
    first = Synthesizer(FunctionModel(provider.replies, name="m"), embedder="hash")
    dataset = first.generate_goldens_from_docs(SAMPLE, num_goldens=10)
    manifest = first.manifest
    assert len(dataset) == 10 and manifest["status"] == "complete"
    failed = {r["stage"]: r for r in manifest["stages"]}["evolve"]["dropped"]
    assert failed.get("model_error:invalid_output", 0) > 0  # failed after retries, topped up
    asked = len(provider.replies.prompts)

    provider.broken = False  # the provider would answer now: a retry could change the dataset
    again = Synthesizer(FunctionModel(provider.replies, name="m"), embedder="hash")
    replayed = again.generate_goldens_from_docs(SAMPLE, num_goldens=10)
    assert len(provider.replies.prompts) == asked  # nothing was asked, not even the failures
    assert replayed == dataset
    after = again.manifest
    assert after["status"] == "complete"
    assert after["stages"] == manifest["stages"] and after["totals"] == manifest["totals"]
    assert len(after["sessions"]) == 2 and after["sessions"][-1]["replayed"] is True
    on_disk = json.loads(Path(after["run_dir"], "manifest.json").read_text())
    assert on_disk["stages"] == manifest["stages"] and len(on_disk["sessions"]) == 2

    # a new run directory runs afresh: the failed evolutions are asked again (the rest is cached)
    fresh = Synthesizer(FunctionModel(provider.replies, name="m"), embedder="hash", run_dir="new")
    assert len(fresh.generate_goldens_from_docs(SAMPLE, num_goldens=10)) == 10
    retried = provider.replies.prompts[asked:]
    assert retried and any(unlucky(p) for p in retried)


def test_every_mode_replays_a_finished_run(model: ModelMode) -> None:
    contexts = [["The HB-10 battery stores 10 kWh and charges from solar panels during the day."]]
    first = model.synthesizer(cache=None)
    made = first.generate_goldens_from_contexts(contexts)
    asked = len(model.prompts())
    assert made and asked
    again = model.synthesizer(cache=None)
    assert again.generate_goldens_from_contexts(contexts) == made
    assert len(model.prompts()) == asked
    more = model.synthesizer(cache=None)
    from_goldens = more.generate_goldens_from_goldens(made, num_goldens=2)
    asked = len(model.prompts())
    once_more = model.synthesizer(cache=None)
    assert once_more.generate_goldens_from_goldens(made, num_goldens=2) == from_goldens
    assert len(model.prompts()) == asked


def test_an_unfinished_run_still_resumes() -> None:
    broken = True

    def fail(prompt: str) -> str | None:  # every evolution broken: nothing can be delivered
        return '{"input": ' if broken and stage_of(prompt) == "evolve" else None

    replies = Replies(fail=fail)
    first = Synthesizer(FunctionModel(replies, name="m"), embedder="hash")
    with pytest.warns(ShortfallWarning, match="delivered 0 of 4 goldens"):
        assert len(first.generate_goldens_from_docs(SAMPLE, num_goldens=4)) == 0
    assert first.manifest["status"] == "partial"  # not finished: a rerun goes on with it
    broken = False
    second = Synthesizer(FunctionModel(replies, name="m"), embedder="hash")
    assert len(second.generate_goldens_from_docs(SAMPLE, num_goldens=4)) == 4
    assert not second.manifest["sessions"][-1].get("replayed")


def test_the_command_says_the_run_had_finished_and_how_to_retry(
    monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    broken = True

    def reply(request: dict[str, Any]) -> str:
        messages = request.get("messages") or []
        prompt = "\n".join(m.get("content", "") for m in messages if m.get("role") != "system")
        if broken and unlucky(prompt):
            return '{"input": '
        return synth_replies.reply(request)

    with fake_openai.FakeOpenAI(reply=reply) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-replay-not-a-real-key")
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        argv = ["generate", str(SAMPLE), "--goldens", "8", "--embedder", "hash", "--quiet"]
        assert main([*argv, "-o", "first.jsonl"]) == 0
        capsys.readouterr()
        made = server.request_count()
        broken = False
        assert main([*argv, "-o", "again.jsonl"]) == 0
        out, err = capsys.readouterr()
        assert server.request_count() == made
    assert Dataset.load("again.jsonl") == Dataset.load("first.jsonl")
    assert len(out.strip().splitlines()) == 1 and "; 0 made by this resumed run" in out
    note = err.strip()
    assert "had already finished" in note and "no request was made" in note
    assert "failed after retries were not retried" in note and "new --run-dir" in note
