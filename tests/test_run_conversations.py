"""The conversational ways in (synth/run/conversations.py), on a host with the Synthesizer's
settings whose runs are scripted: the configs each run gets (its conversation config, one question
type, no input filter, expected outputs, the call's seed), the run mode it records, and the
shortfall warning. tests/test_conversations.py makes whole conversational runs over the fake
server."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from synth.contexts.config import ContextConstructionConfig
from synth.data import Context
from synth.dataset import Dataset
from synth.errors import ConfigError, ShortfallWarning
from synth.generate.config import (
    EvolutionConfig,
    GenerationConfig,
    StylingConfig,
)
from synth.generate.conversation import ConversationConfig
from synth.pipeline import Synthesizer
from synth.run.conversations import (
    CONTEXTS_MODE,
    DOCS_MODE,
    conversational,
)
from synth.run.setup import RunConfigs

OWN_CONTEXTS = ContextConstructionConfig(chunk_size=77)
OWN_TURNS = ConversationConfig(max_turns=4)


class Host(Synthesizer):
    """A Synthesizer with its settings, and its two runs scripted: each records what it was given."""

    def __init__(self, *, delivered: int | None = None, use_filter: bool = True) -> None:
        super().__init__(
            generation_config=GenerationConfig(
                question_types={"double": 1.0},
                include_expected_output=False,
                language="de",
                max_goldens_per_context=3,
            ),
            evolution_config=EvolutionConfig(num_evolutions=2),
            styling_config=StylingConfig(personas=["a pilot"]),
            use_filter=use_filter,
            seed=11,
            context_construction_config=OWN_CONTEXTS,
            conversation_config=OWN_TURNS,
        )
        self.calls: list[tuple[str, Any, RunConfigs, int | None, str]] = []
        self.delivered = delivered

    def _delivered(self, n: int | None) -> Dataset:
        if self.delivered is None or n is None:
            return Dataset([], {})
        return Dataset([], {"num_goldens": n, "delivered": self.delivered, "shortfall": ["dry"]})

    async def _docs_run_of(
        self, paths: list[str], configs: RunConfigs, n: int | None, *, mode: str
    ) -> Dataset:
        self.calls.append(("docs", paths, configs, n, mode))
        return self._delivered(n)

    async def _contexts_run_of(
        self, given: list[Context], configs: RunConfigs, n: int | None, *, mode: str
    ) -> Dataset:
        self.calls.append(("contexts", given, configs, n, mode))
        return self._delivered(n)

    _docs_run = _docs_run_of
    _contexts_run = _contexts_run_of


def test_a_conversational_runs_configs_keep_the_rest_of_the_callers() -> None:
    host = Host()
    base = RunConfigs.of(host, None, 2, OWN_CONTEXTS)  # type: ignore[arg-type]
    turns = ConversationConfig(max_turns=5)
    run = conversational(base, turns)
    assert run.conversation == turns and run.filtration is None
    assert run.generation.question_types == {"simple": 1.0}
    assert run.generation.include_expected_output is True
    # the rest as given: language, per context, contexts, evolution, seed
    assert (run.generation.language, run.generation.max_goldens_per_context) == ("de", 2)
    assert (run.contexts, run.evolution, run.seed) == (OWN_CONTEXTS, base.evolution, 11)
    assert base.conversation is None and base.filtration is not None  # not changed in place


def test_from_docs_the_run_records_its_mode_and_takes_the_calls_settings(tmp_path: Path) -> None:
    doc = tmp_path / "a.md"
    doc.write_text("Flour is milled.", encoding="utf-8")
    host = Host()
    asyncio.run(host.a_generate_conversational_goldens_from_docs(doc, num_goldens=3))
    [(kind, paths, configs, n, mode)] = host.calls
    assert (kind, paths, n, mode) == ("docs", [str(doc)], 3, DOCS_MODE)
    assert DOCS_MODE == "conversations_docs"
    assert configs.conversation == OWN_TURNS and configs.contexts == OWN_CONTEXTS
    assert configs.filtration is None and configs.generation.question_types == {"simple": 1.0}
    assert configs.generation.include_expected_output is True
    assert (configs.seed, configs.avoid_chunks) == (11, frozenset())
    assert configs.generation.max_goldens_per_context == 3  # the Synthesizer's
    turns, contexts = ConversationConfig(max_turns=2), ContextConstructionConfig(chunk_size=50)
    asyncio.run(
        host.a_generate_conversational_goldens_from_docs(
            [doc, doc],
            max_goldens_per_context=1,
            context_construction_config=contexts,
            conversation_config=turns,
            seed=4,
        )
    )
    _, paths, configs, n, _ = host.calls[1]
    assert (paths, n, configs.seed) == ([str(doc), str(doc)], None, 4)
    assert (configs.conversation, configs.contexts) == (turns, contexts)
    assert configs.generation.max_goldens_per_context == 1


def test_from_docs_a_missing_file_is_refused_before_any_run(tmp_path: Path) -> None:
    host = Host()
    with pytest.raises(ConfigError, match="no such file or folder"):
        asyncio.run(host.a_generate_conversational_goldens_from_docs(tmp_path / "none.md"))
    assert host.calls == []


def test_from_contexts_the_run_records_its_mode_and_the_contexts_in_order() -> None:
    host = Host()
    given = Context(id="g", chunk_ids=["g#0"], texts=["Yeast rises."], source_files=["y.md"])
    asyncio.run(
        host.a_generate_conversational_goldens_from_contexts(
            [["Flour is milled.", "Salt."], given],
            num_goldens=2,
            max_goldens_per_context=1,
            source_files=["f.md", None],
        )
    )
    [(kind, contexts, configs, n, mode)] = host.calls
    assert (kind, n, mode) == ("contexts", 2, CONTEXTS_MODE)
    assert CONTEXTS_MODE == "conversations_contexts"
    assert [c.texts for c in contexts] == [["Flour is milled.", "Salt."], ["Yeast rises."]]
    assert contexts[0].source_files == ["f.md"] and contexts[1] is given
    assert configs.contexts is None  # given contexts: no construction config
    assert configs.conversation == OWN_TURNS and configs.filtration is None
    assert configs.generation.max_goldens_per_context == 1
    turns = ConversationConfig(max_turns=6)
    asyncio.run(
        host.a_generate_conversational_goldens_from_contexts([["A."]], conversation_config=turns)
    )
    assert host.calls[1][2].conversation == turns and host.calls[1][3] is None


def test_the_filter_is_off_even_when_the_synthesizer_has_it_off_already() -> None:
    host = Host(use_filter=False)
    asyncio.run(host.a_generate_conversational_goldens_from_contexts([["A."]]))
    assert host.calls[0][2].filtration is None


def test_a_short_conversational_run_warns_from_either_way_in(tmp_path: Path) -> None:
    doc = tmp_path / "a.md"
    doc.write_text("Flour is milled.", encoding="utf-8")
    host = Host(delivered=1)
    with pytest.warns(ShortfallWarning, match="delivered 1 of 3 goldens: dry"):
        asyncio.run(host.a_generate_conversational_goldens_from_docs(doc, num_goldens=3))
    with pytest.warns(ShortfallWarning, match="delivered 1 of 2 goldens: dry"):
        host.generate_conversational_goldens_from_contexts([["A."]], num_goldens=2)
    with pytest.warns(ShortfallWarning, match="delivered 1 of 2 goldens"):
        host.generate_conversational_goldens_from_docs(doc, num_goldens=2)
