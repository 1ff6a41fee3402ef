"""The models, embedders and cache a Synthesizer's runs use (synth/run/models.py): which model a
run defaults to, what each is made from and with, made once, shared, and closed only when made
here. ``make_llm`` and ``make_embedder`` are replaced by recorders, so every argument shows."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import pytest

from synth.errors import ConfigError
from synth.llm.base import FunctionModel
from synth.llm.batch import BatchConfig, BatchModel
from synth.llm.limiter import RateLimiter
from synth.llm.sqlite_cache import SQLiteCache
from synth.llm.usage import Usage, UsageModel
from synth.run import models as run_models
from synth.run.models import (
    ADAPTIVE_CEILING,
    DEFAULT_MODEL,
    NO_MODEL,
    RATE_MARGIN,
    Models,
    ModelSettings,
    RunModels,
    batch_config,
    default_model_spec,
    make_limiter,
    model_name,
    model_names,
)
from synth.store.embedder import Embedder

KEYS = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
)


def settings(**kw: Any) -> ModelSettings:
    values: dict[str, Any] = dict(
        model="openai:gen",
        critic_model=None,
        embedder=None,
        base_url="http://127.0.0.1:9/v1",
        cache=None,
        max_concurrent=3,
        rpm=60.0,
        tpm=1000.0,
        rate_window=10.0,
        batch=None,
    )
    values.update(kw)
    return ModelSettings(**values)


class Made(UsageModel):
    """What the recording make_llm returns: a model whose close is recorded."""

    def __init__(self, name: str, usage: Usage, closed: list[str]) -> None:
        super().__init__(FunctionModel(lambda p, s=None: "", name=name), usage)
        self.name, self.closed = name, closed

    def close(self) -> None:
        self.closed.append(self.name)


class Recorder:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.closed: list[str] = []

    def __call__(self, spec: Any, **kw: Any) -> Made:
        self.calls.append({"spec": spec, **kw})
        name = spec if isinstance(spec, str) else "given"
        return Made(name, kw["usage"], self.closed)


class FakeEmbedder(Embedder):
    def __init__(self, name: str, log: list[tuple[str, str]]) -> None:
        super().__init__()
        self.name, self.log = name, log
        self.shared: list[dict[str, Any]] = []

    @property
    def dimension(self) -> int:
        return 2

    def _embed_batch(self, texts: list[str]) -> Any:
        raise AssertionError("not used")

    def share(self, *, limiter: Any = None, usage: Any = None) -> None:
        self.shared.append({"limiter": limiter, "usage": usage})

    def close(self) -> None:
        self.log.append(("close", self.name))


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    recorder = Recorder()
    monkeypatch.setattr(run_models, "make_llm", recorder)
    return recorder


@pytest.fixture
def embedders(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    import synth.store

    log: list[tuple[str, Any]] = []

    def make_embedder(named: Any, *, base_url: Any = None, **shares: Any) -> FakeEmbedder:
        log.append(("make", (named, base_url, shares)))
        return FakeEmbedder(f"made:{named}", log)  # type: ignore[arg-type]

    monkeypatch.setattr(synth.store, "make_embedder", make_embedder)
    return log


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)
    return monkeypatch


def test_the_default_model_follows_the_keys_set(no_keys: pytest.MonkeyPatch) -> None:
    assert default_model_spec() is None
    assert default_model_spec("http://127.0.0.1:9/v1") == DEFAULT_MODEL == "openai:gpt-4.1-mini"
    no_keys.setenv("GOOGLE_API_KEY", "g")
    assert default_model_spec() == "gemini:gemini-2.5-flash"
    no_keys.delenv("GOOGLE_API_KEY")
    no_keys.setenv("GEMINI_API_KEY", "g")
    assert default_model_spec() == "gemini:gemini-2.5-flash"
    no_keys.setenv("ANTHROPIC_API_KEY", "a")
    assert default_model_spec() == "anthropic:claude-haiku-4-5"  # before gemini
    no_keys.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert default_model_spec() == DEFAULT_MODEL  # openai first
    no_keys.delenv("OPENAI_BASE_URL")
    no_keys.setenv("OPENAI_API_KEY", "o")
    assert default_model_spec() == DEFAULT_MODEL


def test_model_names_for_prices(no_keys: pytest.MonkeyPatch) -> None:
    def answer(prompt: str, system: str | None = None) -> str:
        return ""

    assert model_name(None) == DEFAULT_MODEL
    assert model_name(" OpenAI : gpt-x ") == "openai:gpt-x"
    assert model_name("ollama") == "ollama"
    assert model_name(FunctionModel(answer, name="replies")) == "function:replies"
    assert model_name(answer) == "test_model_names_for_prices.<locals>.answer"

    assert model_name(type("Callable", (), {})()) == "Callable"  # an instance: its type's name
    assert model_names(settings(model="openai:a", critic_model="anthropic:b")) == (
        "openai:a",
        "anthropic:b",
    )
    assert model_names(settings(model="openai:a")) == ("openai:a", "openai:a")
    assert model_names(settings(model=None, base_url=None)) == (DEFAULT_MODEL, DEFAULT_MODEL)
    no_keys.setenv("ANTHROPIC_API_KEY", "a")
    assert model_names(settings(model=None, base_url=None)) == (
        "anthropic:claude-haiku-4-5",
        "anthropic:claude-haiku-4-5",
    )
    assert RunModels(settings(model="openai:a", critic_model="openai:c")).names() == (
        "openai:a",
        "openai:c",
    )


def test_the_limiter_paces_over_a_longer_window() -> None:
    limiter = make_limiter(7, 30.0, 900.0, 10.0)
    assert isinstance(limiter, RateLimiter)
    assert (limiter.max_concurrent, limiter.rpm, limiter.tpm) == (7, 30.0, 900.0)
    assert limiter.window == pytest.approx(10.5) and RATE_MARGIN == 0.05
    assert make_limiter(2, None, None).window == pytest.approx(63.0)


def test_settings_copy_every_option() -> None:
    class Options:
        pass

    options = Options()
    for n, f in enumerate(fields(ModelSettings)):
        setattr(options, f.name, f"value {n}")
    values = [f"value {n}" for n in range(len(fields(ModelSettings)))]
    copied = ModelSettings.of(options)  # type: ignore[arg-type]
    assert [getattr(copied, f.name) for f in fields(ModelSettings)] == values
    made = RunModels.of(options).settings  # type: ignore[arg-type]
    assert [getattr(made, f.name) for f in fields(ModelSettings)] == values


def test_the_models_are_made_once_from_the_specs_sharing_cache_limiter_and_usage(
    made: Recorder,
) -> None:
    cache: dict[str, str] = {}
    owner = RunModels(settings(critic_model="openai:critic", cache=cache))
    models = owner.models()
    assert owner.models() is models and len(made.calls) == 2
    gen_call, critic_call = made.calls
    assert gen_call["spec"] == "openai:gen" and critic_call["spec"] == "openai:critic"
    for call in made.calls:
        assert call["cache"] is cache and call["base_url"] == "http://127.0.0.1:9/v1"
        assert call["limiter"] is models.limiter and call["usage"] is models.usage
    assert (models.generator.name, models.critic.name) == ("openai:gen", "openai:critic")
    assert models.usages == [models.usage] and models.usage is models.usages[0]
    limiter = models.limiter
    assert (limiter.max_concurrent, limiter.rpm, limiter.tpm) == (3, 60.0, 1000.0)
    assert limiter.window == pytest.approx(10.5)
    owner.close()
    assert made.closed == ["openai:gen", "openai:critic"]
    owner.close()
    assert made.closed == ["openai:gen", "openai:critic"]  # closed once
    again = owner.models()
    assert again is not models and len(made.calls) == 4  # made again by the next run


def test_without_a_critic_the_generator_is_the_critic(made: Recorder) -> None:
    models = RunModels(settings()).models()
    assert models.critic is models.generator and len(made.calls) == 1


def test_no_model_and_no_key_is_refused(made: Recorder, no_keys: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError) as caught:
        RunModels(settings(model=None, base_url=None)).models()
    assert str(caught.value) == NO_MODEL
    assert "OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY" in NO_MODEL
    models = RunModels(settings(model=None)).models()  # a server named: openai's default
    assert made.calls[-1]["spec"] == DEFAULT_MODEL and models.generator.name == DEFAULT_MODEL


def test_given_models_are_wrapped_without_a_base_url_and_not_closed(made: Recorder) -> None:
    given = FunctionModel(lambda p, s=None: "", name="mine")
    owner = RunModels(settings(model=given))
    owner.models()
    assert made.calls[0]["spec"] is given and made.calls[0]["base_url"] is None
    owner.close()
    assert made.closed == []


def test_a_model_made_elsewhere_keeps_its_usage_and_is_counted_once(made: Recorder) -> None:
    theirs = UsageModel(FunctionModel(lambda p, s=None: "", name="theirs"))
    owner = RunModels(settings(model=theirs, critic_model=theirs))
    models = owner.models()
    assert made.calls == [] and models.generator is theirs and models.critic is theirs
    assert len(models.usages) == 2 and models.usages[1] is theirs.usage
    assert models.usages[0] is not theirs.usage


def test_a_cache_path_is_a_sqlite_file_closed_with_the_models(
    made: Recorder, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed: list[str] = []
    monkeypatch.setattr(SQLiteCache, "close", lambda self: closed.append(str(self.path)))
    path = tmp_path / "cache.sqlite"
    owner = RunModels(settings(cache=path))
    owner.models()
    cache = made.calls[0]["cache"]
    assert isinstance(cache, SQLiteCache)
    owner.close()
    assert closed == [str(cache.path)]
    owner = RunModels(settings(cache=str(path)))
    owner.models()
    assert isinstance(made.calls[-1]["cache"], SQLiteCache)


def test_a_stage_critic_is_made_once_and_shares_the_run(made: Recorder) -> None:
    owner = RunModels(settings())
    default = FunctionModel(lambda p, s=None: "", name="default")
    assert owner.stage_critic(None, default) is default
    assert made.calls == []  # nothing named: nothing made, not even the models
    critic = owner.stage_critic("openai:stage", default)
    models = owner.models()
    assert owner.stage_critic("openai:stage", default) is critic
    assert owner.stage_critic("openai:" + "stage", default) is critic  # an equal spec
    assert [c["spec"] for c in made.calls] == ["openai:gen", "openai:stage"]
    assert made.calls[1]["limiter"] is models.limiter and made.calls[1]["usage"] is models.usage
    assert models.usages == [models.usage]
    theirs = UsageModel(FunctionModel(lambda p, s=None: "", name="theirs"))
    assert owner.stage_critic(theirs, default) is theirs
    assert models.usages == [models.usage, theirs.usage]
    assert owner.stage_critic(theirs, default) is theirs
    assert models.usages == [models.usage, theirs.usage]
    owner.close()
    assert made.closed == ["openai:gen", "openai:stage"]
    owner.models()
    owner.stage_critic("openai:stage", default)
    assert [c["spec"] for c in made.calls][-1] == "openai:stage"  # made again after close


def test_embedders_are_made_once_and_follow_the_current_run(
    made: Recorder, embedders: list[tuple[str, Any]]
) -> None:
    owner = RunModels(settings(embedder="hash:8"))
    first = owner.embedder()
    assert embedders == [("make", ("hash:8", "http://127.0.0.1:9/v1", {}))]
    assert first.shared == [{"limiter": None, "usage": None}]  # no run yet: nothing to share
    models = owner.models()
    assert owner.embedder() is first and len(embedders) == 1
    assert first.shared[-1] == {"limiter": models.limiter, "usage": models.usage}
    stage = owner.embedder("local:mini")
    assert embedders[-1] == (
        "make",
        ("local:mini", "http://127.0.0.1:9/v1", {"limiter": models.limiter, "usage": models.usage}),
    )
    assert owner.embedder("local:mini") is stage and len(embedders) == 2
    assert stage.shared == [{"limiter": models.limiter, "usage": models.usage}] * 2
    owner.close()
    assert [e for e in embedders if e[0] == "close"] == [
        ("close", "made:hash:8"),
        ("close", "made:local:mini"),
    ]


def test_given_embedders_are_used_as_they_are_and_left_open(
    made: Recorder, embedders: list[tuple[str, Any]]
) -> None:
    log: list[tuple[str, str]] = []
    mine, staged = FakeEmbedder("mine", log), FakeEmbedder("staged", log)
    owner = RunModels(settings(embedder=mine))
    owner.models()
    # make_embedder hands a made embedder back as it is (the recorder makes a new one)
    import synth.store

    synth.store.make_embedder = lambda named, **kw: named  # type: ignore[assignment]
    assert owner.embedder() is mine and owner.embedder(staged) is staged
    assert mine.shared == [] and staged.shared == []  # not made here: not told to share
    owner.close()
    assert log == []


def test_models_is_a_named_tuple_of_the_run() -> None:
    usage, other = Usage(), Usage()
    gen = FunctionModel(lambda p, s=None: "", name="g")
    models = Models(gen, gen, [usage, other], make_limiter(1, None, None))
    assert models.usage is usage


def test_a_base_url_means_the_openai_default_whatever_other_key_is_set(
    no_keys: pytest.MonkeyPatch,
) -> None:
    no_keys.setenv("ANTHROPIC_API_KEY", "a")
    served = settings(model=None, base_url="http://127.0.0.1:9/v1")
    assert model_names(served) == (DEFAULT_MODEL, DEFAULT_MODEL)


def test_batch_stands_for_a_batch_config_and_names_the_batch_prices() -> None:
    assert batch_config(None) is None and batch_config(False) is None
    assert batch_config(True) == BatchConfig()
    given = BatchConfig(poll_interval=2.0)
    assert batch_config(given) is given
    assert model_names(settings(model="openai:a", batch=True)) == ("openai:a@batch",) * 2
    assert model_names(settings(model="openai:a", batch=given)) == ("openai:a@batch",) * 2
    assert model_names(settings(model="openai:a", batch=False)) == ("openai:a",) * 2


def test_without_max_concurrent_the_limiter_is_adaptive_up_to_its_ceiling() -> None:
    adaptive = make_limiter(None, None, None)
    assert adaptive.adaptive and adaptive.max_concurrent == ADAPTIVE_CEILING
    assert not make_limiter(4, None, None).adaptive


def test_the_models_are_made_for_the_batch_api_when_asked(made: Recorder) -> None:
    RunModels(settings(batch=True, critic_model="openai:c")).models()
    assert [call["batch"] for call in made.calls] == [BatchConfig(), BatchConfig()]
    RunModels(settings(batch=None)).models()
    assert made.calls[-1]["batch"] is None


def test_the_batch_layers_are_those_of_the_models_made_so_far(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-models-not-a-real-key")
    owner = RunModels(settings(batch=True))
    assert owner.batch_models() == []  # nothing made yet
    models = owner.models()
    try:
        layers = owner.batch_models()
        assert len(layers) == 1 and isinstance(layers[0], BatchModel)  # the critic is the generator
        assert models.generator.layer(BatchModel) is layers[0]
    finally:
        owner.close()
