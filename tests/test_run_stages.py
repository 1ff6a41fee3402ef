"""The step runner (synth/run/stages.py) on its own: a run directory in tmp_path, scripted replies
from a FunctionModel, no server. Each step's output journaled and resumed from, what a failed
request leaves unjournaled, the rejects of each step written once, where a candidate's inputs come
from, and the vectors for deduplication."""

from __future__ import annotations

import asyncio
import json
import re
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
from synth_replies import Replies

from synth.contexts.feed import Candidate
from synth.data import Context
from synth.errors import AuthenticationError, ModelError
from synth.generate.config import (
    EvolutionConfig,
    FiltrationConfig,
    GenerationConfig,
    StylingConfig,
)
from synth.generate.draft import Draft, draft_id
from synth.llm.base import FunctionModel
from synth.run.dir import RunDir
from synth.run.stages import MAX_EXAMPLES, CandidateRunner, StageSettings, dump_drafts, load_drafts
from synth.stage.templates import default_prompts
from synth.store import HashEmbedder

CONTEXT = Context(
    id="ctx1",
    chunk_ids=["c1"],
    texts=[
        "Solar panels turn sunlight into electricity. An inverter changes direct current into "
        "alternating current for the house."
    ],
    source_files=["solar.txt"],
)
SCRATCH = StylingConfig(
    scenario="customers asking a bakery", task="answer questions", input_format="a question"
)
PERSONAS = StylingConfig(personas=["a retired engineer"])
EXAMPLE = re.compile(r'<example index="\d+">\n(.*?)\n</example>', re.DOTALL)
#: the bound on a wait for work that must finish (a failure bound, not a measure of speed)
PATIENCE = 60.0


class CountingEmbedder(HashEmbedder):
    """The hash embedder, counting the texts it is asked for and failing when told to."""

    def __init__(self, error: Exception | None = None) -> None:
        super().__init__(16)
        self.asked: list[list[str]] = []
        self.labels: list[str | None] = []
        self.error = error

    def _embed_labelled(self, texts: list[str], label: str | None) -> np.ndarray:
        self.asked.append(list(texts))
        self.labels.append(label)
        if self.error is not None:
            raise self.error
        return self._embed_batch(texts)


def settings(
    replies: Replies,
    *,
    filtration: FiltrationConfig | None = None,
    styling: StylingConfig | None = None,
    embedder: HashEmbedder | None = None,
    per_context: int = 2,
) -> StageSettings:
    model = FunctionModel(replies, name="scripted")
    return StageSettings(
        generator=model,
        critic=model,
        generation=GenerationConfig(
            max_goldens_per_context=per_context, include_expected_output=False
        ),
        filtration=filtration,
        evolution=EvolutionConfig(num_evolutions=0),
        styling=styling or StylingConfig(),
        prompts=default_prompts(),
        seed=7,
        embedder=embedder,
    )


def process(runner: CandidateRunner, *candidates: Candidate) -> list:
    async def go() -> list:
        work = asyncio.gather(*(runner.process(c) for c in candidates))
        return await asyncio.wait_for(work, PATIENCE)

    return asyncio.run(go())


def lines(run: RunDir, name: str) -> list[dict]:
    path = run.path / f"{name}.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def open_run(tmp_path: Path) -> RunDir:
    return RunDir.open(tmp_path / "run", {"test": "stages"})


def test_each_step_is_journaled_and_a_resumed_candidate_asks_nothing_again(tmp_path) -> None:
    replies = Replies()
    seen: list[tuple[str, str, int]] = []
    embedder = CountingEmbedder()

    def on_stage(candidate: Candidate, stage: str, drafts: list[Draft]) -> None:
        seen.append((candidate.key, stage, sum(d.kept for d in drafts)))

    candidate = Candidate(0, "k0", CONTEXT)
    config = settings(replies, filtration=FiltrationConfig(), styling=PERSONAS, embedder=embedder)
    with open_run(tmp_path) as run:
        runner = CandidateRunner(config, run, on_stage)
        assert runner.stages == ["inputs", "filter", "style", "check"]
        [(drafts, vectors)] = process(runner, candidate)
        assert [d.kept for d in drafts] == [True, True]
        assert [d.id for d in drafts] == [draft_id("k0", 0), draft_id("k0", 1)]  # from the key
        assert all(d.context == CONTEXT for d in drafts)
        assert seen == [
            ("k0", "inputs", 2),
            ("k0", "filter", 2),
            ("k0", "style", 2),
            ("k0", "check", 2),
        ]
        for stage in runner.stages:
            [row] = lines(run, stage)
            assert row["key"] == "k0" and len(row["drafts"]) == 2
        assert lines(run, "check")[0]["drafts"] == dump_drafts(drafts)
        # the vectors of the kept drafts, journaled with their ids
        assert embedder.asked == [[d.input for d in drafts]] and embedder.labels == ["dedup"]
        expected = [
            [float(x) for x in row] for row in HashEmbedder(16).embed_array(embedder.asked[0])
        ]
        assert vectors == expected
        assert lines(run, "vectors") == [
            {"key": "k0", "ids": [d.id for d in drafts], "vectors": vectors}
        ]
        assert lines(run, "rejects") == []
    asked = len(replies.prompts)
    assert replies.counts() == {
        "inputs": 1,
        "filter": 1,
        "style": 2,
        "check_alone": 1,
        "check_context": 1,
    }
    seen.clear()
    with open_run(tmp_path) as run:
        again = CountingEmbedder()
        config = settings(replies, filtration=FiltrationConfig(), styling=PERSONAS, embedder=again)
        runner = CandidateRunner(config, run, on_stage)
        [(resumed, vectors_again)] = process(runner, candidate)
    assert len(replies.prompts) == asked and again.asked == []
    assert [d.model_dump() for d in resumed] == [d.model_dump() for d in drafts]
    assert vectors_again == vectors
    # the controller still hears of every step, from the journal
    assert seen == [
        ("k0", "inputs", 2),
        ("k0", "filter", 2),
        ("k0", "style", 2),
        ("k0", "check", 2),
    ]


def test_a_run_resumes_after_the_last_journaled_step(tmp_path) -> None:
    candidate = Candidate(0, "k0", CONTEXT)
    with open_run(tmp_path) as run:
        runner = CandidateRunner(settings(Replies(), styling=PERSONAS), run, lambda *a: None)
        process(runner, candidate)
        inputs = lines(run, "inputs")
    # the style step's output is lost: only that step is asked again, from the journaled inputs
    (tmp_path / "run" / "style.jsonl").unlink()
    replies = Replies()
    with open_run(tmp_path) as run:
        stages: list[str] = []
        runner = CandidateRunner(
            settings(replies, styling=PERSONAS), run, lambda c, s, d: stages.append(s)
        )
        [(drafts, _)] = process(runner, candidate)
    assert replies.counts() == {"style": 2}
    assert stages == ["inputs", "style"]
    assert [d.history[0]["input"] for d in drafts] == [row["input"] for row in inputs[0]["drafts"]]


def test_after_a_failed_request_nothing_more_is_journaled_and_each_drop_is_recorded_once(
    tmp_path,
) -> None:
    # the filter's reply is not JSON: both drafts dropped there, with the raw reply kept
    replies = Replies(fail=lambda prompt: "no JSON here" if "<input index=" in prompt else None)
    candidate = Candidate(0, "k0", CONTEXT)
    embedder = CountingEmbedder()
    with open_run(tmp_path) as run:
        config = settings(replies, filtration=FiltrationConfig(), embedder=embedder)
        runner = CandidateRunner(config, run, lambda *a: None)
        [(drafts, vectors)] = process(runner, candidate)
        assert [d.drop_reason for d in drafts] == ["model_error:invalid_output"] * 2
        assert [d.dropped_at for d in drafts] == ["filter", "filter"]
        assert vectors == [] and embedder.asked == []
        assert len(lines(run, "inputs")) == 1
        assert lines(run, "filter") == [] and lines(run, "style") == []
        rejects = lines(run, "rejects")
        [bad] = lines(run, "bad_replies")
    # one row per dropped draft, though two steps ran after the drop was made
    assert [row["key"] for row in rejects] == [d.id for d in drafts]
    assert rejects[0] == {
        "key": drafts[0].id,
        "candidate": "k0",
        "stage": "filter",
        "reason": "model_error:invalid_output",
        "input": drafts[0].input,
        "detail": drafts[0].drop_detail,
        "raw_reply": {"file": "bad_replies.jsonl", "key": bad["key"]},
    }
    assert drafts[0].drop_detail and bad["reply"] == "no JSON here"


def test_a_step_that_drops_without_failing_is_journaled_and_its_drops_recorded(tmp_path) -> None:
    # the inputs request fails: one failed draft, nothing journaled, the rejects row written
    replies = Replies(fail=lambda prompt: "{}" if "You write questions" in prompt else None)
    with open_run(tmp_path) as run:
        runner = CandidateRunner(settings(replies), run, lambda *a: None)
        [(drafts, _)] = process(runner, Candidate(0, "k0", CONTEXT))
        assert [(d.dropped_at, d.kept) for d in drafts] == [("inputs", False)]
        assert lines(run, "inputs") == [] and lines(run, "style") == []
        [row] = lines(run, "rejects")
    assert row["stage"] == "inputs" and row["reason"] == drafts[0].drop_reason
    assert row["input"] == "" and row["candidate"] == "k0"


def test_a_step_that_drops_one_of_its_drafts_records_that_one(tmp_path) -> None:
    styled = []

    def fail(prompt: str) -> str | None:
        if "so that it reads as a real user" not in prompt:
            return None
        styled.append(prompt)
        return "no JSON" if len(styled) == 2 else None  # the second draft's restyling

    with open_run(tmp_path) as run:
        runner = CandidateRunner(settings(Replies(fail), styling=PERSONAS), run, lambda *a: None)
        [(drafts, _)] = process(runner, Candidate(0, "k0", CONTEXT))
        rejects = lines(run, "rejects")
    assert [d.kept for d in drafts] == [True, False]
    assert [(r["key"], r["stage"]) for r in rejects] == [(drafts[1].id, "style")]


def test_style_examples_are_capped_and_a_context_goes_with_them(tmp_path) -> None:
    replies = Replies()
    examples = [f"How does example number {i} work?" for i in range(MAX_EXAMPLES + 3)]
    with open_run(tmp_path) as run:
        runner = CandidateRunner(settings(replies), run, lambda *a: None)
        process(runner, Candidate(0, "g0", CONTEXT, examples=examples))
        process(runner, Candidate(1, "g1", None, examples=[]))
    first, second = replies.prompts
    assert MAX_EXAMPLES == 12
    assert EXAMPLE.findall(first) == examples[:MAX_EXAMPLES]
    assert CONTEXT.texts[0] in first
    assert replies.counts()["inputs"] == 2 and EXAMPLE.findall(second) == []


def test_scratch_batches_after_the_first_are_written_like_the_inputs_before_them(tmp_path) -> None:
    replies = Replies()
    batches = [Candidate(i, f"s{i}", None, scratch=True) for i in range(4)]
    with open_run(tmp_path) as run:
        runner = CandidateRunner(
            settings(replies, styling=SCRATCH, per_context=7), run, lambda *a: None
        )
        results = process(runner, *batches)
        # what the inputs step made (the examples are inputs before they are styled)
        made = [
            [d["input"] for d in run.journal("inputs").records[c.key]["drafts"]] for c in batches
        ]
    inputs_prompts = [p for p in replies.prompts if "You write inputs" in p]
    by_examples = {tuple(EXAMPLE.findall(p)) for p in inputs_prompts}
    assert len(inputs_prompts) == 4
    earlier = [*made[0], *made[1], *made[2]]
    # the second batch sees the first's inputs, the last the last 12 of all before it
    assert tuple(made[0]) in by_examples
    assert tuple([*made[0], *made[1]][-MAX_EXAMPLES:]) in by_examples
    assert tuple(earlier[-MAX_EXAMPLES:]) in by_examples
    assert () in by_examples  # the first batch has none
    assert len(earlier) > MAX_EXAMPLES
    # each batch's drafts have ids of their own (they derive from the batch's key)
    every = [d.id for drafts, _ in results for d in drafts]
    assert len(set(every)) == len(every) == sum(len(m) for m in made)
    assert [d.id for d in results[0][0]] == [draft_id("scratch:s0", i) for i in range(len(made[0]))]
    assert [d.id for d in results[1][0]] == [
        draft_id("examples:s1:none", i) for i in range(len(made[1]))
    ]


def test_a_scratch_batch_resumed_hands_its_journaled_inputs_to_the_next(tmp_path) -> None:
    first = Candidate(0, "s0", None, scratch=True)
    with open_run(tmp_path) as run:
        runner = CandidateRunner(settings(Replies(), styling=SCRATCH), run, lambda *a: None)
        process(runner, first)
        made = [d["input"] for d in run.journal("inputs").records["s0"]["drafts"]]
    replies = Replies()
    with open_run(tmp_path) as run:
        runner = CandidateRunner(settings(replies, styling=SCRATCH), run, lambda *a: None)
        process(runner, first, Candidate(1, "s1", None, scratch=True))
    [inputs_prompt] = [p for p in replies.prompts if EXAMPLE.search(p)]
    assert EXAMPLE.findall(inputs_prompt) == made and len(made) == 2


def test_a_scratch_batch_resumed_after_its_inputs_step_runs_only_the_rest(tmp_path) -> None:
    styling = StylingConfig(**SCRATCH.model_dump(exclude={"personas"}), personas=["a baker"])
    batch = Candidate(0, "s0", None, scratch=True)
    with open_run(tmp_path) as run:
        runner = CandidateRunner(settings(Replies(), styling=styling), run, lambda *a: None)
        process(runner, batch)
    (tmp_path / "run" / "style.jsonl").unlink()
    replies = Replies()
    with open_run(tmp_path) as run:
        stages: list[str] = []
        runner = CandidateRunner(
            settings(replies, styling=styling), run, lambda c, s, d: stages.append(s)
        )
        [(drafts, _)] = process(runner, batch)
    assert replies.counts() == {"style": 2} and stages == ["inputs", "style"]
    assert [d.kept for d in drafts] == [True, True]


def test_a_scratch_batch_whose_predecessor_kept_nothing_says_none_yet(tmp_path) -> None:
    def fail(prompt: str) -> str | None:
        inputs = "You write inputs" in prompt
        return "{}" if inputs and "(none yet)" not in prompt else None

    replies = Replies(fail=fail)
    with open_run(tmp_path) as run:
        runner = CandidateRunner(settings(replies, styling=SCRATCH), run, lambda *a: None)
        first, second = process(
            runner, Candidate(0, "s0", None, scratch=True), Candidate(1, "s1", None, scratch=True)
        )
    assert [d.kept for d in first[0]] == [False]
    assert [d.kept for d in second[0]] == [True, True]
    [second_prompt] = [p for p in replies.prompts if "(none yet)" in p]
    assert EXAMPLE.findall(second_prompt) == ["(none yet)"]


def test_an_embedder_that_fails_drops_the_kept_drafts_at_dedup(tmp_path) -> None:
    embedder = CountingEmbedder(ModelError("the embedder is down"))
    with open_run(tmp_path) as run:
        runner = CandidateRunner(settings(Replies(), embedder=embedder), run, lambda *a: None)
        [(drafts, vectors)] = process(runner, Candidate(0, "k0", CONTEXT))
        assert vectors == [] and lines(run, "vectors") == []
        rejects = lines(run, "rejects")
        # the drafts are journaled as the style step left them: a rerun embeds them again
        assert all(row["drop_reason"] is None for row in lines(run, "style")[0]["drafts"])
    assert [(d.dropped_at, d.drop_reason) for d in drafts] == [("dedup", "model_error:model")] * 2
    assert [(r["stage"], r["reason"], r["detail"]) for r in rejects] == [
        ("dedup", "model_error:model", "the embedder is down")
    ] * 2


def test_a_refused_key_at_the_embedder_ends_the_run(tmp_path) -> None:
    embedder = CountingEmbedder(AuthenticationError("refused"))
    with open_run(tmp_path) as run:
        runner = CandidateRunner(settings(Replies(), embedder=embedder), run, lambda *a: None)
        with pytest.raises(AuthenticationError, match="refused"):
            process(runner, Candidate(0, "k0", CONTEXT))


def test_journaled_vectors_of_other_drafts_are_not_reused(tmp_path) -> None:
    embedder = CountingEmbedder()
    with open_run(tmp_path) as run:
        run.journal("vectors").append("k0", {"ids": ["someone else"], "vectors": [[1.0]]})
        runner = CandidateRunner(settings(Replies(), embedder=embedder), run, lambda *a: None)
        [(drafts, vectors)] = process(runner, Candidate(0, "k0", CONTEXT))
    assert embedder.asked == [[d.input for d in drafts]] and len(vectors) == 2


def test_drafts_are_journaled_without_their_context_and_read_back_with_it(tmp_path) -> None:
    draft = Draft(id="d1", input="What is an inverter?", context=CONTEXT, evolutions=["deepen"])
    draft.drop("filter", "low", "scored 0.2", raw="raw text")
    [row] = dump_drafts([draft])
    assert "context" not in row and "drop_raw" not in row
    assert row["drop_detail"] == "scored 0.2" and row["evolutions"] == ["deepen"]
    # rows are JSON: a value JSON has no type for is written as JSON text, not kept as it is
    when = datetime(2025, 1, 2, 3, 4, 5)
    [stamped] = dump_drafts([Draft(id="d2", input="q", metadata={"when": when})])
    assert stamped["metadata"] == {"when": "2025-01-02T03:04:05"}
    [back] = load_drafts([row], Candidate(0, "k", CONTEXT))
    assert back.context == CONTEXT and back.model_dump(exclude={"drop_raw"}) == draft.model_dump(
        exclude={"drop_raw"}
    )


def test_stage_stats_count_each_step_and_dedup(tmp_path) -> None:
    with open_run(tmp_path) as run:
        runner = CandidateRunner(settings(Replies()), run, lambda *a: None)
        drafts = [Draft(id=f"d{i}", input=f"q{i}") for i in range(4)]
        drafts[0].drop("inputs", "model_error:timeout")
        drafts[1].drop("style", "refused")
        drafts[2].drop("dedup", "duplicate")
        stats = runner.stage_stats(drafts, 3)
    assert [(s.stage, s.items_in, s.items_out, dict(s.dropped)) for s in stats] == [
        ("inputs", 3, 3, {"model_error:timeout": 1}),
        ("style", 3, 2, {"refused": 1}),
        ("dedup", 2, 1, {"duplicate": 1}),
    ]
