"""``synth refill`` / ``Synthesizer.refill``: a reviewed dataset back to exactly N.

Against the fake OpenAI-compatible server (the real openai SDK over HTTP), in both of its modes:
answering synth's prompts, and answering from the JSON schema alone (a model that knows no
prompt). Unit tests of the refill's plan and merge use a scripted ``generate``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import fake_openai
import pytest
import synth_replies

from synth.cli import main
from synth.data import Golden
from synth.dataset import Dataset
from synth.dataset.refill import (
    plan_refill,
    refill,
    refill_seed,
    rejected_path,
    run_options,
)
from synth.dataset.review import decide, golden_key, status_of
from synth.errors import ConfigError

REPO = Path(__file__).resolve().parent.parent
SAMPLE = str(REPO / "sample_docs")


@pytest.fixture(params=["smart", "generic"])
def server(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest):
    """The fake server, the openai provider pointed at it, in each of its modes."""
    if request.param == "smart":
        fake = fake_openai.FakeOpenAI(reply=synth_replies.reply)
    else:
        fake = fake_openai.FakeOpenAI(mode="generic")
    with fake:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-refill-not-a-real-key")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        yield fake


def generate(n: int, *extra: str) -> Dataset:
    """``synth generate`` of ``n`` goldens into goldens.jsonl (ungrounded answers kept: a generic
    server cannot quote the context)."""
    args = ["generate", SAMPLE, "--goldens", str(n), "-o", "goldens.jsonl"]
    assert main([*args, "--grounding-threshold", "0", "--quiet", *extra]) == 0
    return Dataset.load("goldens.jsonl")


def review(dataset: Dataset, rejected: dict[int, str | None], accepted: tuple[int, ...]) -> None:
    """Record a reviewer's decisions in goldens.jsonl."""
    for index, reason in rejected.items():
        dataset.goldens[index] = decide(
            dataset.goldens[index], "rejected", reason=reason, reviewer="ann"
        )
    for index in accepted:
        dataset.goldens[index] = decide(dataset.goldens[index], "accepted", reviewer="ann")
    dataset.save("goldens.jsonl")


def test_refill_replaces_each_rejected_golden_in_place_from_unused_chunks(server, capsys) -> None:
    made = generate(6)
    review(made, {1: "wrong answer", 4: None}, accepted=(0, 2))
    reviewed = Dataset.load("goldens.jsonl")
    capsys.readouterr()

    assert main(["refill", "goldens.jsonl", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    after = Dataset.load("goldens.jsonl")

    assert len(after) == 6 and summary["added"] == 2 and summary["goldens"] == 6
    # the goldens nobody rejected are where they were, unchanged
    for index in (0, 2, 3, 5):
        assert after.goldens[index] == reviewed.goldens[index]
    # the new ones take the rejected places, pending, made from chunks the dataset did not use
    used = {c for i, g in enumerate(reviewed) for c in g.context_ids}
    for index in (1, 4):
        new = after.goldens[index]
        assert status_of(new) == "pending"
        assert new.metadata["refill"]["round"] == 1
        assert new.metadata["refill"]["of_run"] == reviewed.metadata["run_id"]
        assert new.context_ids and not set(new.context_ids) & used
    assert [status_of(g) for g in after].count("rejected") == 0
    # the rejected are kept apart with their reasons, never deleted
    apart = Dataset.load(rejected_path("goldens.jsonl"))
    assert [g.input for g in apart] == [reviewed.goldens[1].input, reviewed.goldens[4].input]
    assert [g.metadata["review"]["reason"] for g in apart] == ["wrong answer", None]
    assert after.metadata["refills"][0]["asked"] == 2
    assert after.shortfall is None


def test_a_second_refill_is_a_new_round_with_its_own_seed_avoiding_every_earlier_chunk(
    server,
) -> None:
    made = generate(6)
    review(made, {0: "trivial"}, accepted=())
    assert main(["refill", "goldens.jsonl", "--json"]) == 0
    first = Dataset.load("goldens.jsonl")
    review(first, {0: "ambiguous"}, accepted=())
    assert main(["refill", "goldens.jsonl", "--json"]) == 0
    second = Dataset.load("goldens.jsonl")

    rounds = second.metadata["refills"]
    assert [r["round"] for r in rounds] == [1, 2]
    assert rounds[0]["seed"] != rounds[1]["seed"]
    assert second.goldens[0].metadata["refill"]["round"] == 2
    apart = Dataset.load(rejected_path("goldens.jsonl"))
    assert len(apart) == 2  # each rejected golden once, the first round's kept
    earlier = {c for g in [*made, *first] for c in g.context_ids if g is not second.goldens[0]}
    assert not set(second.goldens[0].context_ids) & (earlier - set(second.goldens[0].context_ids))
    assert not set(second.goldens[0].context_ids) & set(made.goldens[0].context_ids)
    assert not set(second.goldens[0].context_ids) & set(first.goldens[0].context_ids)


def test_nothing_rejected_writes_nothing(server, capsys) -> None:
    generate(4)
    before = Path("goldens.jsonl").read_bytes()
    capsys.readouterr()
    assert main(["refill", "goldens.jsonl"]) == 0
    assert "nothing to refill" in capsys.readouterr().out
    assert Path("goldens.jsonl").read_bytes() == before
    assert not rejected_path("goldens.jsonl").exists()


def foreign_dataset() -> Dataset:
    """A reviewed dataset made elsewhere: no run id, no manifest."""
    goldens = [Golden(input=f"question {i}?", expected_output="yes") for i in range(3)]
    dataset = Dataset(goldens)
    dataset.goldens[1] = decide(dataset.goldens[1], "rejected", reviewer="bo")
    return dataset


def test_a_dataset_made_elsewhere_says_it_needs_docs_and_a_model(capsys) -> None:
    foreign_dataset().save("theirs.jsonl")
    assert main(["refill", "theirs.jsonl"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "--docs" in err[0] and "--model" in err[0] and "no run manifest" in err[0]
    assert main(["refill", "theirs.jsonl", "--docs", SAMPLE]) == 2
    err = capsys.readouterr().err
    assert "--model" in err and "--docs and" not in err


def test_a_dataset_made_elsewhere_refills_with_docs_and_model(server) -> None:
    foreign_dataset().save("theirs.jsonl")
    code = main(
        ["refill", "theirs.jsonl", "--docs", SAMPLE, "--model", "openai:gpt-4.1-mini"]
        + ["--grounding-threshold", "0"]
    )
    assert code == 0
    after = Dataset.load("theirs.jsonl")
    assert len(after) == 3 and status_of(after.goldens[1]) == "pending"
    assert after.goldens[1].context_ids  # made from the documents given
    assert [g.input for g in Dataset.load("theirs.jsonl.rejected.jsonl")] == ["question 1?"]


# ---- the plan and the merge, with a scripted generate ---------------------------------------------


def reviewed(n: int, rejected: tuple[int, ...]) -> Dataset:
    goldens = []
    for i in range(n):
        golden = Golden(input=f"q{i}", context_ids=[f"c{i}"], metadata={"draft_id": f"d{i}"})
        if i in rejected:
            golden = decide(golden, "rejected", reason="wrong answer", reviewer="ann")
        goldens.append(golden)
    return Dataset(goldens, {"run_id": None})


class Scripted:
    """A ``generate`` that returns ``give`` goldens whatever is asked, and records the calls."""

    def __init__(self, give: int, *, draft_ids: list[str] | None = None) -> None:
        self.give = give
        self.draft_ids = draft_ids
        self.calls: list[dict[str, Any]] = []

    async def __call__(self, paths, /, *, num_goldens, seed, avoid_chunks) -> Dataset:  # type: ignore[no-untyped-def]
        self.calls.append({"paths": paths, "n": num_goldens, "seed": seed, "avoid": avoid_chunks})
        ids = self.draft_ids or [f"new{i}" for i in range(self.give)]
        made = [Golden(input=f"new {i}", metadata={"draft_id": ids[i]}) for i in range(self.give)]
        metadata: dict[str, Any] = {"run_id": "r2", "num_goldens": num_goldens}
        metadata.update(delivered=self.give, shortfall=["the corpus ran out"])
        return Dataset(made, metadata)


def run_refill(dataset: Any, generate: Scripted, docs: Any = "docs/") -> Any:
    return asyncio.run(refill(dataset, docs, seed=7, generate=generate))


def test_the_refill_asks_one_golden_per_rejected_one_avoiding_every_used_chunk() -> None:
    generate = Scripted(2)
    result = run_refill(reviewed(5, rejected=(1, 3)), generate)
    (call,) = generate.calls
    assert call["n"] == 2 and call["paths"] == ["docs/"]
    assert call["avoid"] == {"c0", "c1", "c2", "c3", "c4"}
    assert call["seed"] == refill_seed(7, 1)
    assert [g.input for g in result.dataset] == ["q0", "new 0", "q2", "new 1", "q4"]
    assert [g.input for g in result.rejected] == ["q1", "q3"]


def test_refill_seeds_follow_the_run_seed_and_the_round() -> None:
    assert refill_seed(7, 1) == refill_seed(7, 1)
    assert len({refill_seed(7, 1), refill_seed(7, 2), refill_seed(8, 1), 7, 8}) == 5


def test_a_refill_short_of_goldens_closes_the_gap_and_says_so() -> None:
    result = run_refill(reviewed(5, rejected=(0, 2, 4)), Scripted(1))
    after = result.dataset
    assert [g.input for g in after] == ["new 0", "q1", "q3"]
    assert result.shortfall == 2
    short = after.shortfall
    assert short is not None and (short.asked, short.delivered) == (5, 3)
    assert short.reason == "refill round 1 replaced 1 of 3 rejected goldens"
    assert "the corpus ran out" in short.reasons


def test_a_new_golden_with_an_earlier_draft_id_gets_its_own_key() -> None:
    result = run_refill(reviewed(3, rejected=(1,)), Scripted(1, draft_ids=["d0"]))
    keys = [golden_key(g) for g in result.dataset]
    assert len(set(keys)) == 3 and keys[1] == "d0-r1"


def test_a_refill_of_a_file_keeps_each_rejected_golden_apart_once(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    reviewed(4, rejected=(2,)).save(path)
    run_refill(path, Scripted(1))
    again = Dataset.load(path)
    again.goldens[0] = decide(again.goldens[0], "rejected", reviewer="ann")
    again.save(path)
    generate = Scripted(1, draft_ids=["other"])
    run_refill(path, generate)
    apart = Dataset.load(rejected_path(path))
    assert [g.input for g in apart] == ["q2", "q0"]
    # the second round avoids the chunks of the golden the first round kept apart, too
    assert "c2" in generate.calls[0]["avoid"]
    assert Dataset.load(path).metadata["refills"][1]["round"] == 2


def test_the_documents_come_from_the_run_or_are_asked_for() -> None:
    with pytest.raises(ConfigError, match="--docs"):
        plan_refill(reviewed(2, rejected=(0,)), source=None, docs=None, seed=0)
    job = plan_refill(reviewed(2, rejected=()), source=None, docs=None, seed=0)
    assert job.wanted == 0  # nothing rejected: no documents needed


def test_run_options_take_the_run_settings_but_no_url() -> None:
    manifest = {
        "run_id": "r1",
        "seed": 3,
        "models": {
            "generator": {"provider": "openai", "model": "gpt-x", "base_url": "http://a/"},
            "critic": {"provider": "callable", "model": "fn"},
            "embedder": {"embedder": "hash"},
        },
        "config": {
            "contexts": {"chunk_size": 256, "coverage": "uniform"},
            "context_critic": False,
            "generation": {"max_goldens_per_context": 1, "grounding_threshold": 0.0},
            "filtration": None,
            "evolution": {"num_evolutions": 2},
            "styling": {"scenario": "support"},
        },
    }
    options = run_options(manifest)
    assert options["model"] == "openai:gpt-x" and "critic_model" not in options
    assert "base_url" not in options and options["embedder"] == "hash"
    assert options["seed"] == 3
    assert options["use_filter"] is False and options["use_context_critic"] is False
    assert options["context_construction_config"].chunk_size == 256
    assert options["context_construction_config"].coverage == "uniform"
    assert options["generation_config"].max_goldens_per_context == 1
    assert options["evolution_config"].num_evolutions == 2
    assert options["styling_config"].scenario == "support"


def test_no_context_takes_a_chunk_to_avoid_while_others_are_left(server, tmp_path: Path) -> None:
    from synth import Synthesizer

    docs = tmp_path / "docs"
    docs.mkdir()
    topics = {"a": "solar panels", "b": "heat pumps", "c": "wind turbines"}
    for name, topic in topics.items():
        body = f"The {topic} guide. " + " ".join(f"{topic} fact {i} holds." for i in range(30))
        (docs / f"{name}.txt").write_text(body, encoding="utf-8")
    with Synthesizer(grounding_threshold=0.0, embedder="hash") as synthesizer:
        every = synthesizer.generate_goldens_from_docs(str(docs), num_goldens=6)
        by_file = {}
        for golden in every:
            by_file.setdefault(Path(golden.source_files[0]).stem, set()).update(golden.context_ids)
        assert sorted(by_file) == ["a", "b", "c"]  # one context per file: every chunk is known
        for left in by_file:
            avoid = {c for name, ids in by_file.items() if name != left for c in ids}
            made = synthesizer.generate_goldens_from_docs(
                str(docs), num_goldens=2, avoid_chunks=avoid
            )
            assert len(made) == 2
            for golden in made:
                assert set(golden.context_ids) <= by_file[left]


def test_a_refill_that_cannot_replace_is_written_short_and_exits_3(
    monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    with fake_openai.FakeOpenAI(reply=synth_replies.reply) as smart:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-refill-not-a-real-key")
        monkeypatch.setenv("OPENAI_BASE_URL", smart.url)
        made = generate(4)
    review(made, {2: "wrong answer"}, accepted=(0,))
    # a model that knows no prompt cannot quote the context: every new answer is ungrounded
    with fake_openai.FakeOpenAI(mode="generic") as generic:
        monkeypatch.setenv("OPENAI_BASE_URL", generic.url)
        capsys.readouterr()
        code = main(["refill", "goldens.jsonl", "--grounding-threshold", "0.9"])
    err = capsys.readouterr().err
    assert code == 3
    assert "delivered 3 of 4 goldens: refill round 1 replaced 0 of 1 rejected goldens" in err
    after = Dataset.load("goldens.jsonl")
    assert len(after) == 3 and after.shortfall is not None
    assert [g.input for g in Dataset.load(rejected_path("goldens.jsonl"))] == [
        made.goldens[2].input
    ]


def test_documents_that_moved_are_asked_for(tmp_path: Path) -> None:
    from synth.dataset.refill import _run_docs

    with pytest.raises(ConfigError, match=r"the documents of run r1 are gone .*--docs"):
        _run_docs({"run_id": "r1", "inputs": {"paths": [str(tmp_path / "moved")]}})
