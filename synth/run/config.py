"""Pipeline files: one TOML file sets every stage's config, the models and the output of a run.

::

    name = "default"
    description = "what this pipeline is for"

    [models]          model, critic_model, embedder, base_url
    [run]             goldens, seed, max_concurrent, rpm, tpm, timeout, output, ray
    [stages]          context_critic, filter (switch a stage off with false)
    [contexts]        ContextConstructionConfig
    [generation]      GenerationConfig (max_goldens_per_context, include_expected_output, ...)
    [filtration]      FiltrationConfig
    [evolution]       EvolutionConfig (and [evolution.evolutions] for the weights)
    [styling]         StylingConfig
    [prompts]         per-stage prompt overrides: name = "template text"
    [batch]           BatchConfig: send requests through the provider's Batch API (the table's
                      presence turns it on; poll_interval, settle, ...)

Every table and key is optional; a file may be empty. Command-line flags override the file.
Any mistake raises one :class:`~synth.errors.ConfigError` line naming the file.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from synth.contexts.config import ContextConstructionConfig
from synth.errors import ConfigError
from synth.generate.config import (
    EvolutionConfig,
    FiltrationConfig,
    GenerationConfig,
    StylingConfig,
)
from synth.llm.batch import BatchConfig
from synth.stage.templates import PromptSet

#: where a key of each table lands in PipelineConfig
_TABLES: dict[str, dict[str, str]] = {
    "models": {
        "model": "model",
        "critic_model": "critic_model",
        "embedder": "embedder",
        "base_url": "base_url",
    },
    "run": {
        "goldens": "num_goldens",
        "seed": "seed",
        "max_concurrent": "max_concurrent",
        "rpm": "rpm",
        "tpm": "tpm",
        "timeout": "timeout",
        "output": "output",
        "ray": "ray",
    },
    "stages": {"context_critic": "context_critic", "filter": "filter"},
}
_STAGE_TABLES = {
    "contexts": "contexts",
    "generation": "generation",
    "filtration": "filtration",
    "evolution": "evolution",
    "styling": "styling",
    "batch": "batch",
}
_TOP = {"name", "description"}


class PipelineConfig(BaseModel):
    """Everything a ``synth generate`` run is configured by, as one validated object."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = None
    description: str | None = None
    model: str | None = None
    critic_model: str | None = None
    embedder: str | None = None
    base_url: str | None = None
    num_goldens: int | None = Field(default=None, ge=1)
    seed: int = 0
    max_concurrent: int | None = Field(default=None, ge=1)
    rpm: float | None = Field(default=None, gt=0)
    tpm: float | None = Field(default=None, gt=0)
    timeout: float | None = Field(default=None, gt=0)
    output: str | None = None
    ray: str | bool | None = None
    context_critic: bool = True
    filter: bool = True
    contexts: ContextConstructionConfig = Field(default_factory=ContextConstructionConfig)
    generation: GenerationConfig = Field(default_factory=GenerationConfig)
    filtration: FiltrationConfig = Field(default_factory=FiltrationConfig)
    evolution: EvolutionConfig = Field(default_factory=EvolutionConfig)
    styling: StylingConfig = Field(default_factory=StylingConfig)
    prompts: dict[str, str | dict[str, str]] = Field(default_factory=dict)
    batch: BatchConfig | None = None

    def override(self, **values: Any) -> PipelineConfig:
        """A copy with every value that is not None replacing the file's."""
        changes = {k: v for k, v in values.items() if v is not None}
        unknown = sorted(set(changes) - set(type(self).model_fields))
        if unknown:
            raise ConfigError(f"unknown pipeline setting(s): {', '.join(unknown)}")
        return _build({**self.model_dump(exclude_defaults=False), **changes}, "pipeline")

    def prompt_set(self) -> PromptSet:
        """The prompts of this pipeline: the packaged ones with this file's overrides."""
        return PromptSet(self.prompts)

    def synthesizer_options(self) -> dict[str, Any]:
        """The keyword arguments of a :class:`~synth.Synthesizer` that this pipeline sets."""
        fields = (name for name in type(self).model_fields if name not in NOT_SYNTHESIZER)
        return {SYNTHESIZER_NAMES.get(name, name): getattr(self, name) for name in fields}


#: PipelineConfig fields that a Synthesizer's argument of another name takes
SYNTHESIZER_NAMES = {
    "contexts": "context_construction_config",
    "generation": "generation_config",
    "filtration": "filtration_config",
    "evolution": "evolution_config",
    "styling": "styling_config",
    "context_critic": "use_context_critic",
    "filter": "use_filter",
}
#: PipelineConfig fields that describe the file or one generate call, not the Synthesizer
NOT_SYNTHESIZER = frozenset({"name", "description", "num_goldens", "output"})


#: a PipelineConfig field set by a [models]/[run]/[stages] key -> how a file names it
_FILE_KEYS = {
    field: f"[{table}] {key}" for table, keys in _TABLES.items() for key, field in keys.items()
}


def _build(values: dict[str, Any], where: str, *, file_keys: bool = False) -> PipelineConfig:
    try:
        return PipelineConfig(**values)
    except ValidationError as exc:
        first = exc.errors()[0]
        # a [prompts] value may be text or a language's table: no union branch in the place
        loc = [str(p) for p in first["loc"] if p != "str" and not str(p).startswith("dict[")]
        message = first["msg"].removeprefix("Value error, ")
        head, sep, rest = message.partition(": ")
        if loc and loc[0] in _STAGE_TABLES and sep and head.startswith("invalid "):
            # a stage config's own message ("invalid XConfig: key: problem"): name its table
            raise ConfigError(f"{where}: [{loc[0]}] {rest}") from None
        if file_keys and len(loc) == 1 and loc[0] in _FILE_KEYS:
            loc = [_FILE_KEYS[loc[0]]]  # the key as the file spells it: [run] goldens
        place = f"{where}: {'.'.join(loc)}" if loc else where
        raise ConfigError(f"{place}: {message}") from None


def load_pipeline(path: str | os.PathLike[str]) -> PipelineConfig:
    """Read a pipeline file; any problem is one ConfigError line that names the file."""
    file = Path(path)
    try:
        raw = tomllib.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"pipeline file {file} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"pipeline file {file} cannot be read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"pipeline file {file} is not valid TOML: {exc}") from None
    return pipeline_from_dict(raw, where=str(file))


def pipeline_from_dict(raw: dict[str, Any], *, where: str = "pipeline") -> PipelineConfig:
    """Build a PipelineConfig from the tables of a pipeline file (see the module docstring)."""
    values: dict[str, Any] = {}
    known = sorted(_TOP | set(_TABLES) | set(_STAGE_TABLES) | {"prompts"})
    for name, content in raw.items():
        if name in _TOP:
            values[name] = content
            continue
        if name not in known:
            raise ConfigError(f"{where}: unknown table or key {name!r}; known: {', '.join(known)}")
        if not isinstance(content, dict):
            raise ConfigError(f"{where}: [{name}] must be a table")
        if name in _TABLES:
            for key, value in content.items():
                target = _TABLES[name].get(key)
                if target is None:
                    allowed = ", ".join(_TABLES[name])
                    raise ConfigError(f"{where}: unknown key {key!r} in [{name}]; known: {allowed}")
                values[target] = value
        elif name == "prompts":
            values["prompts"] = content
        else:
            values[_STAGE_TABLES[name]] = content
    try:
        config = _build(values, where, file_keys=True)
    except ConfigError as exc:
        message = str(exc)
        raise ConfigError(message if message.startswith(where) else f"{where}: {message}") from None
    try:
        config.prompt_set()
    except ConfigError as exc:
        raise ConfigError(f"{where}: [prompts]: {exc}") from None
    return config


__all__ = [
    "NOT_SYNTHESIZER",
    "SYNTHESIZER_NAMES",
    "PipelineConfig",
    "load_pipeline",
    "pipeline_from_dict",
]
