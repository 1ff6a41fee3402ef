"""The models, embedders and response cache a Synthesizer's runs use: made once, closed by it.

A model named by a spec (``"openai:gpt-4.1-mini"``) is made here and owned: :meth:`RunModels.close`
releases its client. A model or embedder passed in already made is used as given and left open.
Every model of a run shares one response cache, one :class:`~synth.llm.limiter.RateLimiter` (the
run's ``max_concurrent``, ``rpm`` and ``tpm``), one :class:`~synth.llm.usage.Usage` and one
:class:`~synth.llm.timeout.SilenceBreaker` (a silent server stops the run); a remote
embedder made here shares the limiter and the usage too. Without a ``max_concurrent`` the limiter
is adaptive: it finds the level itself, up to :data:`ADAPTIVE_CEILING`; a number pins it. With
``batch``, every model made here sends its requests through its provider's Batch API
(:mod:`synth.llm.batch`), priced at the batch rate.
"""

from __future__ import annotations

import os
from collections.abc import Callable, MutableMapping
from dataclasses import KW_ONLY, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from synth.errors import ConfigError
from synth.llm.base import LLM
from synth.llm.batch import BatchConfig, BatchModel, batch_models
from synth.llm.factory import DEFAULT_TIMEOUT, make_llm
from synth.llm.limiter import RateLimiter
from synth.llm.offline import is_offline
from synth.llm.pricing import BATCH_SUFFIX
from synth.llm.spec import DEFAULT_MODELS, full_model_spec, parse_model_spec
from synth.llm.sqlite_cache import SQLiteCache
from synth.llm.timeout import SilenceBreaker
from synth.llm.usage import Usage, UsageModel

if TYPE_CHECKING:
    from synth.store.embedder import Embedder

#: the model used when none is named and an OpenAI key (or server) is available
DEFAULT_MODEL = "openai:gpt-4.1-mini"
#: the response cache every run shares, relative to the working folder
DEFAULT_CACHE = Path(".synth") / "cache.sqlite"
#: rpm/tpm budgets are paced over a window this much longer than the one given (60 s -> 63 s)
RATE_MARGIN = 0.05
#: the most requests in flight a run's adaptive limiter goes up to (no max_concurrent given)
ADAPTIVE_CEILING = 256
#: where a run's adaptive level starts: its first wave is the critic's batches and the inputs
#: asked beside them for the contexts they are likely to make (45 requests for 60 goldens in
#: bench/cli.py: 10 critic batches, 34 inputs and an embedding), which the judges' start (8,
#: synth.llm._aimd.START) would send over two round trips instead of one (and 32 left 12 of its
#: inputs a round trip behind); a server that refuses that many at once cuts the level at its
#: first replies
RUN_START = 64

NO_MODEL = (
    "no model named and no API key found: pass model= (a 'provider:model' spec, an LLM or a "
    "callable), or set OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY; model='offline' "
    "runs the built-in extractive model, with no key and no network"
)
#: the embedder of a run whose model is the offline one, when none is named: no key, no download
OFFLINE_EMBEDDER = "hash"

#: what a Synthesizer accepts as a model: a spec, a model, a callable ``fn(prompt, system)``
ModelArg = str | LLM | Callable[..., Any] | None
#: what a Synthesizer accepts as a response cache: a SQLite file, any mapping, or None
CacheArg = str | os.PathLike[str] | MutableMapping[str, str] | None
#: what a Synthesizer accepts as ``batch``: True (the default BatchConfig), a BatchConfig, or off
BatchArg = BatchConfig | bool | None
T = TypeVar("T")


def default_model_spec(base_url: str | None = None) -> str | None:
    """The model a run uses when none is named, from the API keys set (None when no key is)."""
    if os.environ.get("OPENAI_API_KEY") or base_url or os.environ.get("OPENAI_BASE_URL"):
        return DEFAULT_MODEL
    if os.environ.get("ANTHROPIC_API_KEY"):
        return "anthropic:claude-haiku-4-5"
    if os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY"):
        return "gemini:gemini-2.5-flash"
    return None


def checked_model(model: ModelArg, what: str = "model") -> ModelArg:
    """``model`` as a Synthesizer keeps it: a spec in full (``"gpt-4.1-mini"`` becomes
    ``"openai:gpt-4.1-mini"``), a model or callable as given; anything unusable raises
    ConfigError at once, not at the first call."""
    if model is None or isinstance(model, LLM):
        return model
    if isinstance(model, str):
        return full_model_spec(model)
    if not callable(model):
        raise ConfigError(
            f"{what} is a 'provider:model' spec, an LLM or a callable fn(prompt, system) -> str; "
            f"got {type(model).__name__}"
        )
    return model


def model_names(options: ModelSettings) -> tuple[str, str]:
    """``provider:model`` of the generator and of the critic ``options`` name (for prices; with
    ``@batch`` at the end when the requests go through a Batch API)."""
    default = default_model_spec(options.base_url)
    generator = options.model or default
    suffix = BATCH_SUFFIX if batch_config(options.batch) is not None else ""
    names = model_name(generator), model_name(options.critic_model or generator)
    return names[0] + suffix, names[1] + suffix


def batch_config(batch: BatchArg) -> BatchConfig | None:
    """The BatchConfig ``batch`` stands for (None: no Batch API)."""
    if batch is None or batch is False:
        return None
    return BatchConfig() if batch is True else batch


def model_name(model: object) -> str:
    """``provider:model`` for what a Synthesizer was given as its model (the default when None)."""
    if model is None:
        return DEFAULT_MODEL
    if isinstance(model, str):
        provider, name = parse_model_spec(model)
        name = name or DEFAULT_MODELS.get(provider)
        return f"{provider}:{name}" if name else provider
    if isinstance(model, LLM):
        return f"{model.provider}:{model.model}"
    return str(getattr(model, "__qualname__", type(model).__name__))


def make_limiter(
    max_concurrent: int | None, rpm: float | None, tpm: float | None, window: float = 60.0
) -> RateLimiter:
    """The run's shared limiter: ``max_concurrent`` requests in flight (None: adaptive, from
    :data:`RUN_START` up to :data:`ADAPTIVE_CEILING`), ``rpm`` requests and ``tpm`` tokens per
    ``window`` seconds, paced over a window :data:`RATE_MARGIN` longer, so a server allowing
    exactly ``rpm`` per window is not tripped by the gap between when synth starts a request and
    when the server counts it."""
    return RateLimiter(
        max_concurrent or ADAPTIVE_CEILING,
        rpm=rpm,
        tpm=tpm,
        window=window * (1 + RATE_MARGIN),
        adaptive=max_concurrent is None,
        start=RUN_START,
    )


class Models(NamedTuple):
    """The generator and critic of a run, with the usages its manifest counts (the shared one
    first, then those of models made elsewhere) and the limiter they all wait on."""

    generator: LLM
    critic: LLM
    usages: list[Usage]
    limiter: RateLimiter
    #: what stops the run on a silent server, shared by every model made here
    breaker: SilenceBreaker | None = None

    @property
    def usage(self) -> Usage:
        """The usage every model and remote embedder made here counts into."""
        return self.usages[0]


@dataclass(eq=False, repr=False)  # a Synthesizer shows no model object, hence no key in one
class ModelSettings:
    """What a run's models are made from: the one declaration of the model arguments.

    :class:`~synth.Synthesizer` takes these as its own first arguments (it extends this class);
    :class:`RunModels` keeps a copy made when the first run began (:meth:`of`), so a later change
    of an argument does not reach models already made, and no reference keeps a Synthesizer alive.
    """

    model: ModelArg = None
    _: KW_ONLY
    critic_model: ModelArg = None
    embedder: Any = None
    max_concurrent: int | None = None
    rpm: float | None = None
    tpm: float | None = None
    rate_window: float = 60.0
    batch: BatchArg = None
    #: seconds a request may wait for its reply (None: DEFAULT_TIMEOUT)
    timeout: float | None = None
    cache: CacheArg = DEFAULT_CACHE
    base_url: str | None = None

    @classmethod
    def of(cls, options: ModelSettings) -> ModelSettings:
        """A copy of ``options``' model arguments (of a Synthesizer, this class's alone)."""
        return cls(**{f.name: getattr(options, f.name) for f in fields(cls)})


class RunModels:
    """The models and embedders made for a Synthesizer's runs, each made once; see the module."""

    def __init__(self, settings: ModelSettings) -> None:
        self.settings = settings
        self._models: Models | None = None
        self._cache: MutableMapping[str, str] | None = None
        self._owned: list[LLM] = []
        self._embedder: Embedder | None = None
        # made for what a stage config named: (what was named, what was made)
        self._stage_models: list[tuple[object, LLM]] = []
        self._stage_embedders: list[tuple[object, Embedder]] = []
        self._breaker: SilenceBreaker | None = None

    @classmethod
    def of(cls, options: ModelSettings) -> RunModels:
        """Nothing made yet: the models will be made from ``options`` as they are now (a copy,
        so that no reference cycle keeps a Synthesizer alive)."""
        return cls(ModelSettings.of(options))

    def names(self) -> tuple[str, str]:
        """``provider:model`` of the generator and of the critic, made or not (for prices)."""
        return model_names(self.settings)

    def models(self) -> Models:
        """The generator and critic, sharing one cache, one limiter and one usage."""
        if self._models is not None:
            return self._models
        s = self.settings
        spec = s.model if s.model is not None else default_model_spec(s.base_url)
        if spec is None:
            raise ConfigError(NO_MODEL)
        limiter = make_limiter(s.max_concurrent, s.rpm, s.tpm, s.rate_window)
        usage = Usage()
        cache = s.cache
        self._cache = SQLiteCache(cache) if isinstance(cache, str | os.PathLike) else cache
        self._breaker = SilenceBreaker()
        generator = self._make(spec, limiter, usage)
        critic = generator
        if s.critic_model is not None:
            critic = self._make(s.critic_model, limiter, usage)
        usages = [usage]
        for model in (generator, critic):
            _add_usage(usages, model)
        self._models = Models(generator, critic, usages, limiter, self._breaker)
        return self._models

    def stage_critic(self, named: ModelArg, default: LLM) -> LLM:
        """The critic a stage config names (made once, sharing the run's cache, limiter and
        usage), or ``default`` when it names none."""
        if named is None:
            return default
        found = _made_for(self._stage_models, named)
        if found is not None:
            return found
        models = self.models()
        model = self._make(named, models.limiter, models.usage)
        _add_usage(models.usages, model)
        self._stage_models.append((named, model))
        return model

    def embedder(self, named: str | Embedder | None = None) -> Embedder:
        """The embedder a stage config ``named`` (made once), or without one the Synthesizer's;
        either way it follows the current run's limiter and usage when made here."""
        from synth.store import make_embedder

        shares = self._shares()
        base_url = self.settings.base_url
        if named is not None:
            found = _made_for(self._stage_embedders, named)
            if found is None:
                found = make_embedder(named, base_url=base_url, **shares)
                self._stage_embedders.append((named, found))
            if found is not named:  # made here: it follows this run, not the one it was made in
                found.share(**shares)
            return found
        given = self.settings.embedder
        if self._embedder is None:
            self._embedder = self._default_embedder(given, base_url, shares)
        if self._embedder is not given:
            self._embedder.share(**shares)
        return self._embedder

    def _default_embedder(
        self, given: str | Embedder | None, base_url: str | None, shares: dict[str, Any]
    ) -> Embedder:
        """The embedder ``given`` names; with none named, the hash embedder for a run of the
        offline model (which must need no key and no network), else make_embedder's choice."""
        from synth.store import make_embedder

        if given is not None or not is_offline(self.settings.model):
            return make_embedder(given, base_url=base_url, **shares)
        embedder = make_embedder(OFFLINE_EMBEDDER)
        embedder.notice = (
            f"no embedder named: using {embedder.name} (the offline model's runs need no key and "
            "no network; name another with --embedder)"
        )
        return embedder

    def _shares(self) -> dict[str, Any]:
        """What a remote embedder made here shares with the models: the run's limiter (its
        ``max_concurrent``) and usage (its retries, by stage, in the manifest)."""
        if self._models is None:
            return {}
        return {"limiter": self._models.limiter, "usage": self._models.usage}

    def _make(self, spec: ModelArg, limiter: RateLimiter, usage: Usage) -> LLM:
        if isinstance(spec, UsageModel):
            return spec  # already made: it keeps its own cache, limits and usage
        assert spec is not None
        base_url = self.settings.base_url if isinstance(spec, str) else None  # a spec's server
        batch = batch_config(self.settings.batch)
        timeout = self.settings.timeout or DEFAULT_TIMEOUT
        model = make_llm(
            spec,
            cache=self._cache,
            limiter=limiter,
            usage=usage,
            base_url=base_url,
            batch=batch,
            timeout=timeout,
            breaker=self._breaker,
        )
        if isinstance(spec, str):
            self._owned.append(model)  # made here from a spec: closed by close()
        return model

    def batch_models(self) -> list[BatchModel]:
        """The Batch API layers of the models made so far (none without ``batch``)."""
        made = [self._models.generator, self._models.critic] if self._models else []
        return batch_models([*made, *(model for _, model in self._stage_models)])

    def close(self) -> None:
        """Release the clients of what was made from specs, and the cache file; the models are
        made again by the next run, the embedders reopen their clients when used again."""
        for model in self._owned:
            model.close()
        self._owned.clear()
        given = self.settings.embedder
        made = [] if self._embedder is given else [self._embedder]
        made += [embedder for named, embedder in self._stage_embedders if embedder is not named]
        for embedder in made:
            if embedder is not None:
                embedder.close()
        if isinstance(self._cache, SQLiteCache):
            self._cache.close()
        self._models = None
        self._stage_models.clear()


def _made_for(made: list[tuple[object, T]], named: object) -> T | None:
    """What was made (once) for what ``named`` names, or None."""
    for spec, obj in made:
        if spec is named or (isinstance(spec, str) and spec == named):
            return obj
    return None


def _add_usage(usages: list[Usage], model: LLM) -> None:
    """Add a model's own usage (a model made elsewhere keeps one) unless already counted."""
    if isinstance(model, UsageModel) and all(model.usage is not u for u in usages):
        usages.append(model.usage)


__all__ = [
    "ADAPTIVE_CEILING",
    "BatchArg",
    "checked_model",
    "DEFAULT_CACHE",
    "DEFAULT_MODEL",
    "NO_MODEL",
    "OFFLINE_EMBEDDER",
    "RATE_MARGIN",
    "batch_config",
    "CacheArg",
    "ModelArg",
    "ModelSettings",
    "Models",
    "RunModels",
    "default_model_spec",
    "make_limiter",
    "RUN_START",
    "model_name",
    "model_names",
]
