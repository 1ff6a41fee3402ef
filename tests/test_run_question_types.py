"""A run that asks for question types (synth/pipeline/question_types.py), with a scripted run in place
of the Synthesizer's: the configs each type's run gets, the runs made one after the other (each
avoiding the chunks of those before), the goldens tagged and the out-of-scope ones emptied, and
the one dataset with per type what was asked and delivered. tests/test_question_types.py makes
the same through whole runs of a Synthesizer."""

from __future__ import annotations

import asyncio

import pytest

from synth.contexts.config import ContextConstructionConfig
from synth.data import Golden
from synth.dataset import Dataset
from synth.errors import ConfigError
from synth.generate.config import EvolutionConfig, FiltrationConfig, GenerationConfig
from synth.generate.out_of_scope import TOPIC_KEY
from synth.generate.style import StylingConfig
from synth.pipeline.question_types import QUESTION_TYPES_KEY, combine, type_configs, typed_runs
from synth.run.setup import RunConfigs


def configs(
    mix: dict[str, float],
    *,
    evolutions: int = 2,
    contexts: ContextConstructionConfig | None = None,
    avoid: frozenset[str] = frozenset(),
) -> RunConfigs:
    return RunConfigs(
        generation=GenerationConfig(question_types=mix, max_goldens_per_context=3),
        contexts=contexts,
        filtration=FiltrationConfig(),
        evolution=EvolutionConfig(num_evolutions=evolutions),
        styling=StylingConfig(personas=["a baker"]),
        seed=5,
        context_critic=False,
        avoid_chunks=avoid,
    )


def golden(name: str, chunks: list[str]) -> Golden:
    return Golden(input=f"q {name}?", context=[f"text {c}" for c in chunks], context_ids=chunks)


class Runs:
    """A scripted run_one: records what each run was given and returns ``n`` goldens of its type
    (or ``delivered[kind]``), the i-th from the chunk ``<kind>#<i>``."""

    def __init__(self, delivered: dict[str, int] | None = None) -> None:
        self.calls: list[tuple[RunConfigs, int]] = []
        self.delivered = delivered or {}

    async def __call__(self, run: RunConfigs, n: int) -> Dataset:
        self.calls.append((run, n))
        kind = next(t for t, w in run.generation.question_types.items() if w > 0)
        made = self.delivered.get(kind, n)
        goldens = [golden(f"{kind}{i}", [f"{kind}#{i}"]) for i in range(made)]
        metadata = {"run_id": f"run-{kind}", "num_goldens": n, "delivered": made, "seed": 5}
        if made < n:
            metadata["shortfall"] = [f"{kind} ran out"]
        return Dataset(goldens, metadata)


def test_a_types_run_asks_for_that_type_alone_and_names_the_others_at_zero() -> None:
    base = configs({"simple": 0.5, "double": 0.5}, avoid=frozenset({"x#0"}))
    run = type_configs(base, "situational", frozenset({"a#1"}))
    assert run.generation.question_types == {"simple": 0.0, "double": 0.0, "situational": 1.0}
    assert run.generation.max_goldens_per_context == 3  # the rest of the config kept
    assert run.avoid_chunks == frozenset({"a#1"})  # the chunks given, not the configs' own
    assert (run.seed, run.styling, run.filtration) == (5, base.styling, base.filtration)


def test_only_a_simple_run_is_evolved() -> None:
    base = configs({"simple": 0.5, "double": 0.5}, evolutions=2)
    assert type_configs(base, "simple", frozenset()).evolution.num_evolutions == 2
    double = type_configs(base, "double", frozenset()).evolution
    assert double.num_evolutions == 0
    assert double.evolutions == base.evolution.evolutions  # only the rounds switched off
    once = configs({"simple": 1.0}, evolutions=1)
    assert type_configs(once, "multi_hop", frozenset()).evolution.num_evolutions == 0
    unevolved = configs({"simple": 1.0}, evolutions=0)
    assert type_configs(unevolved, "double", frozenset()).evolution.num_evolutions == 0


def test_a_multi_hop_run_groups_at_least_two_chunks_a_context() -> None:
    def hop(contexts: ContextConstructionConfig | None) -> ContextConstructionConfig | None:
        base = configs({"simple": 1.0}, contexts=contexts)
        return type_configs(base, "multi_hop", frozenset()).contexts

    one = hop(ContextConstructionConfig(min_context_length=1, max_context_length=1, chunk_size=99))
    assert one is not None
    assert (one.min_context_length, one.max_context_length, one.chunk_size) == (2, 2, 99)
    wide = hop(ContextConstructionConfig(min_context_length=1, max_context_length=5))
    assert wide is not None and (wide.min_context_length, wide.max_context_length) == (2, 5)
    given = ContextConstructionConfig(min_context_length=3, max_context_length=4)
    assert hop(given) == given
    assert hop(None) is None  # a run without documents has no contexts config
    narrow = ContextConstructionConfig(min_context_length=1, max_context_length=1)
    other = type_configs(configs({"simple": 1.0}, contexts=narrow), "double", frozenset())
    assert other.contexts == narrow  # only multi-hop changes the grouping


def test_each_type_runs_in_turn_avoiding_the_chunks_of_the_runs_before() -> None:
    runs = Runs()
    mix = {"double": 0.25, "simple": 0.5, "situational": 0.25}
    base = configs(mix, avoid=frozenset({"old#0"}))
    dataset = asyncio.run(typed_runs(base, 4, runs))
    # the order of QUESTION_TYPES, not of the mix
    assert [(c.generation.question_types, n) for c, n in runs.calls] == [
        ({"double": 0.0, "simple": 1.0, "situational": 0.0}, 2),
        ({"double": 0.0, "simple": 0.0, "situational": 1.0}, 1),
        ({"double": 1.0, "simple": 0.0, "situational": 0.0}, 1),
    ]
    assert [c.part for c, _ in runs.calls] == ["simple", "situational", "double"]
    assert [c.avoid_chunks for c, _ in runs.calls] == [
        frozenset({"old#0"}),
        frozenset({"old#0", "simple#0", "simple#1"}),
        frozenset({"old#0", "simple#0", "simple#1", "situational#0"}),
    ]
    assert [g.input for g in dataset] == [
        "q simple0?",
        "q simple1?",
        "q situational0?",
        "q double0?",
    ]
    assert [(g.metadata["question_type"], g.metadata["tests"]) for g in dataset] == [
        ("simple", "generator"),
        ("simple", "generator"),
        ("situational", "generator"),
        ("double", "generator"),
    ]


def test_a_type_with_no_share_of_n_is_not_run_and_one_type_has_no_part() -> None:
    runs = Runs()
    dataset = asyncio.run(typed_runs(configs({"simple": 0.1, "double": 0.9}), 2, runs))
    assert [n for _, n in runs.calls] == [2]  # simple's share rounds to 0: no run, double's next
    assert runs.calls[0][0].part == "double"  # the mix names two types: a folder of its own
    assert list(dataset.metadata[QUESTION_TYPES_KEY]) == ["double"]
    alone = Runs()
    asyncio.run(typed_runs(configs({"multi_hop": 1.0}), 3, alone))
    assert [(c.part, n) for c, n in alone.calls] == [(None, 3)]


def test_out_of_scope_goldens_lose_their_context_but_later_types_still_avoid_it() -> None:
    runs = Runs()
    mix = {"out_of_scope": 0.5, "distracting": 0.5}
    dataset = asyncio.run(typed_runs(configs(mix), 2, runs))
    distracting, scope = list(dataset)
    assert (distracting.metadata["tests"], scope.metadata["tests"]) == ("retriever", "refusal")
    assert distracting.context_ids == ["distracting#0"] and distracting.context is not None
    assert (scope.context_ids, scope.context) == ([], [])
    assert scope.metadata[TOPIC_KEY] == ["out_of_scope#0"]
    assert TOPIC_KEY not in distracting.metadata
    assert [c.avoid_chunks for c, _ in runs.calls] == [frozenset(), frozenset({"distracting#0"})]


def test_without_a_number_of_goldens_types_are_refused() -> None:
    runs = Runs()
    with pytest.raises(
        ConfigError, match=r"^question_types need a number of goldens \(num_goldens / --goldens\)$"
    ):
        asyncio.run(typed_runs(configs({"simple": 0.5, "double": 0.5}), None, runs))
    assert runs.calls == []


def test_the_dataset_says_per_type_what_was_asked_and_delivered() -> None:
    runs = Runs(delivered={"double": 0})
    dataset = asyncio.run(typed_runs(configs({"simple": 0.5, "double": 0.5}), 4, runs))
    assert dataset.metadata == {
        "run_id": "run-simple",  # the first run's own metadata
        "seed": 5,
        "num_goldens": 4,
        "delivered": 2,
        "shortfall": ["double: delivered 0 of 2 goldens: double ran out"],
        QUESTION_TYPES_KEY: {
            "simple": {"asked": 2, "delivered": 2, "run_id": "run-simple"},
            "double": {"asked": 2, "delivered": 0, "run_id": "run-double"},
        },
    }
    assert dataset.shortfall is not None and dataset.shortfall.delivered == 2


def test_combining_no_runs_is_an_empty_dataset_that_says_so() -> None:
    dataset = combine([], 3)
    assert list(dataset) == []
    assert dataset.metadata == {
        QUESTION_TYPES_KEY: {},
        "num_goldens": 3,
        "delivered": 0,
        "shortfall": [],
    }
