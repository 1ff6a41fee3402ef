"""The setup of one run (synth/run/setup.py): the configs a run goes by and what a call
overrides, its key, its session's settings and limits, and the feed of contexts."""

from __future__ import annotations

import random
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from synth.contexts.config import ContextConstructionConfig
from synth.data import Chunk
from synth.errors import ConfigError
from synth.generate.config import (
    EvolutionConfig,
    FiltrationConfig,
    GenerationConfig,
    StylingConfig,
)
from synth.llm.base import FunctionModel
from synth.llm.usage import UsageModel
from synth.run.models import ModelSettings, RunModels
from synth.run.setup import (
    RunConfigs,
    RunPlace,
    check_num_goldens,
    docs_feed,
    open_session,
)
from synth.run.stream import Target
from synth.stage.templates import PromptSet


def options(**kw: Any) -> SimpleNamespace:
    values: dict[str, Any] = dict(
        generation_config=GenerationConfig(max_goldens_per_context=3),
        filtration_config=FiltrationConfig(synthetic_input_quality_threshold=0.7),
        evolution_config=EvolutionConfig(num_evolutions=2),
        styling_config=StylingConfig(scenario="a help desk"),
        use_context_critic=True,
        use_filter=True,
        seed=11,
        prompts=None,
    )
    values.update(kw)
    return SimpleNamespace(**values)


def test_a_runs_configs_are_the_synthesizers_with_the_calls_overrides() -> None:
    given = options()
    configs = RunConfigs.of(given, None, None)  # type: ignore[arg-type]
    assert configs.generation is given.generation_config  # nothing overridden: not copied
    assert configs.filtration is given.filtration_config
    assert configs.evolution is given.evolution_config
    assert configs.styling is given.styling_config
    assert (configs.seed, configs.context_critic, configs.contexts) == (11, True, None)
    assert configs.prompt_overrides is None
    contexts = ContextConstructionConfig(chunk_size=64)
    changed = RunConfigs.of(given, False, 5, contexts)  # type: ignore[arg-type]
    assert changed.generation.max_goldens_per_context == 5
    assert changed.generation.include_expected_output is False
    assert changed.contexts is contexts
    assert given.generation_config.max_goldens_per_context == 3  # the Synthesizer's unchanged
    only_expected = RunConfigs.of(given, True, None)  # type: ignore[arg-type]
    assert only_expected.generation.include_expected_output is True
    assert only_expected.generation.max_goldens_per_context == 3
    off = RunConfigs.of(options(use_filter=False, use_context_critic=False), None, None)  # type: ignore[arg-type]
    assert off.filtration is None and off.context_critic is False


def test_prompts_are_the_packaged_ones_with_the_overrides() -> None:
    plain = RunConfigs.of(options(), None, None)  # type: ignore[arg-type]
    assert plain.prompts.version == PromptSet().version
    assert plain.prompts is plain.prompts  # made once
    given = PromptSet()
    assert RunConfigs.of(options(prompts=given), None, None).prompts is given  # type: ignore[arg-type]
    text = PromptSet().text("filter") + "\nBe strict."
    overridden = RunConfigs.of(options(prompts={"filter": text}), None, None)  # type: ignore[arg-type]
    assert overridden.prompts.text("filter") == text
    assert overridden.prompts.version != PromptSet().version


def test_the_key_holds_every_config_as_json() -> None:
    contexts = ContextConstructionConfig(chunk_size=64)
    configs = RunConfigs.of(options(), None, None, contexts)  # type: ignore[arg-type]
    assert configs.as_key() == {
        "contexts": contexts.model_dump(mode="json"),
        "context_critic": True,
        "generation": configs.generation.model_dump(mode="json"),
        "filtration": configs.filtration.model_dump(mode="json"),  # type: ignore[union-attr]
        "evolution": configs.evolution.model_dump(mode="json"),
        "styling": configs.styling.model_dump(mode="json"),
    }
    off = RunConfigs.of(options(use_filter=False), None, None)  # type: ignore[arg-type]
    key = off.as_key()
    assert key["contexts"] is None and key["filtration"] is None


def test_wanted_contexts_and_the_target() -> None:
    configs = RunConfigs.of(options(), None, None)  # type: ignore[arg-type]
    assert [configs.wanted_contexts(n) for n in (None, 1, 3, 4, 6, 7)] == [None, 1, 1, 2, 2, 3]
    assert configs.target(7, 9) == Target(per_context=3, num_goldens=7)
    assert configs.target(None, 9) == Target(per_context=3, contexts=9)
    assert configs.target(None, None) == Target(per_context=3, contexts=0)


@pytest.mark.parametrize("bad", [0, -1, 1.5, "3", None, False])
def test_num_goldens_must_be_a_positive_integer(bad: object) -> None:
    with pytest.raises(ConfigError) as caught:
        check_num_goldens(bad)
    assert str(caught.value) == f"num_goldens must be a positive integer, got {bad!r}"


def test_a_positive_number_of_goldens_passes() -> None:
    check_num_goldens(1)
    check_num_goldens(40)


def answer(prompt: str, system: str | None = None) -> str:
    return ""


def owner(**kw: Any) -> RunModels:
    values: dict[str, Any] = dict(
        model=FunctionModel(answer, name="gen"),
        critic_model=None,
        embedder="hash",
        base_url=None,
        cache=None,
        max_concurrent=4,
        rpm=120.0,
        tpm=None,
        rate_window=30.0,
        batch=None,
    )
    values.update(kw)
    return RunModels(ModelSettings(**values))


def test_the_session_of_a_run_without_documents(tmp_path: Path) -> None:
    made = owner()
    configs = RunConfigs.of(options(), None, None)  # type: ignore[arg-type]
    place = RunPlace(tmp_path / "run", None)
    session = open_session("contexts", {"contexts": ["a"]}, 4, configs, made, place)
    models = made.models()
    embedder = made.embedder()
    assert session.key == {
        "mode": "contexts",
        "inputs": {"contexts": ["a"]},
        "num_goldens": 4,
        "seed": 11,
        "config": configs.as_key(),
        "models": {
            "generator": models.generator.identity(),
            "critic": models.critic.identity(),
            "embedder": embedder.identity(),
        },
        "prompt_version": configs.prompts.version,
    }
    assert session.mode == "contexts" and session.num_goldens == 4
    assert session.run_dir == tmp_path / "run" and session.usages == models.usages
    assert session.limiter is models.limiter and session.context_critic is models.critic
    settings = session.settings
    assert (settings.generator, settings.critic) == (models.generator, models.critic)
    assert settings.generation is configs.generation and settings.filtration is configs.filtration
    assert settings.evolution is configs.evolution and settings.styling is configs.styling
    assert settings.prompts is configs.prompts and settings.seed == 11
    assert settings.embedder is embedder and settings.limiter is models.limiter
    assert session.info["limits"] == {
        "max_concurrent": 4,
        "rpm": 120.0,
        "tpm": None,
        "rate_window": 30.0,
        "paced_window": models.limiter.window,
        "timeout": None,
    }
    assert models.limiter.window == pytest.approx(31.5)


def test_without_dedup_no_embedder_is_handed_to_the_stages(tmp_path: Path) -> None:
    generation = GenerationConfig(dedup_threshold=None)
    configs = RunConfigs.of(options(generation_config=generation), None, None)  # type: ignore[arg-type]
    session = open_session("scratch", {}, None, configs, owner(), RunPlace(tmp_path, None))
    assert session.settings.embedder is None and session.num_goldens is None


def test_a_bad_number_of_goldens_is_refused_before_any_model_is_made(tmp_path: Path) -> None:
    made = owner(model=None)  # making the models would fail: no model, no key
    configs = RunConfigs.of(options(), None, None)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="num_goldens must be a positive integer, got 0"):
        open_session("scratch", {}, 0, configs, made, RunPlace(tmp_path, None))


def test_stage_critics_and_the_context_embedder_join_the_key(tmp_path: Path) -> None:
    contexts_critic = UsageModel(FunctionModel(answer, name="ctx"))
    filter_critic = UsageModel(FunctionModel(answer, name="flt"))
    contexts = ContextConstructionConfig(critic_model=contexts_critic, embedder="hash:64")
    filtration = FiltrationConfig(critic_model=filter_critic)
    given = options(filtration_config=filtration)
    configs = RunConfigs.of(given, None, None, contexts)  # type: ignore[arg-type]
    made = owner(embedder=None)
    session = open_session("docs", {}, 2, configs, made, RunPlace(tmp_path, None))
    models = made.models()
    identities = session.key["models"]
    assert identities["context_critic"] == contexts_critic.identity()
    assert identities["filter_critic"] == filter_critic.identity()
    # no embedder of its own: the context config's deduplicates too
    assert identities["embedder"] == identities["context_embedder"]
    assert identities["embedder"] == made.embedder("hash:64").identity()
    assert session.context_critic is contexts_critic and session.critic is filter_critic
    assert (
        session.settings.critic is filter_critic and session.settings.generator is models.generator
    )
    # the context critic off: the Synthesizer's critic stays, and is not in the key twice
    quiet = RunConfigs.of(options(use_context_critic=False), None, None, contexts)  # type: ignore[arg-type]
    session = open_session("docs", {}, 2, quiet, owner(), RunPlace(tmp_path / "b", None))
    assert "context_critic" not in session.key["models"]
    assert "filter_critic" not in session.key["models"]
    assert session.context_critic is session.settings.critic


def test_the_synthesizers_own_embedder_deduplicates_beside_a_context_embedder(
    tmp_path: Path,
) -> None:
    contexts = ContextConstructionConfig(embedder="hash:64")
    configs = RunConfigs.of(options(), None, None, contexts)  # type: ignore[arg-type]
    made = owner(embedder="hash:32")
    session = open_session("docs", {}, 2, configs, made, RunPlace(tmp_path, None))
    identities = session.key["models"]
    assert identities["embedder"] == made.embedder().identity()
    assert identities["context_embedder"] == made.embedder("hash:64").identity()
    assert identities["embedder"] != identities["context_embedder"]
    assert session.settings.embedder is made.embedder()


def _chunks() -> list[Chunk]:
    return [
        Chunk(
            id=f"c{n}",
            document_id="d",
            source=f"f{n % 3}.md",
            index=n,
            text=f"text {n}",
            token_count=10,
        )
        for n in range(30)
    ]


def test_a_plans_feed_has_no_critic_prompts_or_journals() -> None:
    contexts = ContextConstructionConfig(contexts_per_critic_call=2)
    configs = RunConfigs.of(options(), None, None, contexts)  # type: ignore[arg-type]
    store = object()
    feed = docs_feed(_chunks(), store, configs, 7, None)
    assert feed.critic is None and feed.prompts is None and feed.journal is None
    assert feed.rejects is None and feed.bad_replies is None and feed.notify is None
    assert feed.store is store and feed.config is contexts
    assert feed.wanted == 3  # 7 goldens at 3 a context
    again = docs_feed(_chunks(), store, configs, 7, None)
    assert [[s.id for s in b.seeds] for b in again.batches] == [
        [s.id for s in b.seeds] for b in feed.batches
    ]
    from synth.contexts.seed_feed import DocsFeed

    same = DocsFeed(
        _chunks(), store, contexts, random.Random("11:select"), critic=None, prompts=None, wanted=3
    )
    assert [[s.id for s in b.seeds] for b in same.batches] == [
        [s.id for s in b.seeds] for b in feed.batches
    ]
    assert docs_feed(_chunks(), store, configs, None, None).wanted == feed.selector.default_count


def test_a_runs_feed_has_the_sessions_critic_prompts_and_journals(tmp_path: Path) -> None:
    import asyncio

    contexts = ContextConstructionConfig()
    configs = RunConfigs.of(options(), None, None, contexts)  # type: ignore[arg-type]
    session = open_session("docs", {}, 2, configs, owner(), RunPlace(tmp_path / "run", None))

    def check() -> None:
        return None

    async def go() -> None:
        async with session:
            feed = docs_feed(_chunks(), object(), configs, 2, session, store_check=check)
            assert feed.critic is session.context_critic and feed.prompts is session.prompts
            assert feed.journal.path.name == "critic.jsonl"  # type: ignore[union-attr]
            assert feed.rejects.path.name == "rejects.jsonl"  # type: ignore[union-attr]
            assert feed.bad_replies.path.name == "bad_replies.jsonl"  # type: ignore[union-attr]
            assert feed.store_check is check and feed.notify == session.notify
            assert feed.wanted == 1
            off = RunConfigs.of(options(use_context_critic=False), None, None, contexts)  # type: ignore[arg-type]
            assert docs_feed(_chunks(), object(), off, 2, session).critic is None

    asyncio.run(go())


def test_with_the_filter_off_the_synthesizers_critic_stays_and_no_filter_critic_is_named(
    tmp_path: Path,
) -> None:
    configs = RunConfigs.of(options(use_filter=False), None, None)  # type: ignore[arg-type]
    made = owner()
    session = open_session("scratch", {}, 1, configs, made, RunPlace(tmp_path, None))
    assert session.settings.filtration is None
    assert session.settings.critic is made.models().critic
    assert "filter_critic" not in session.key["models"]


def test_the_session_shows_its_progress_where_the_place_says(tmp_path: Path) -> None:
    from synth.run.progress import NullProgress

    display = NullProgress()
    configs = RunConfigs.of(options(), None, None)  # type: ignore[arg-type]
    session = open_session("scratch", {}, 1, configs, owner(), RunPlace(tmp_path, display))
    assert session.progress is display
