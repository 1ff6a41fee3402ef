"""Command-line specs: ``module:function`` systems and ``[name=]provider:model`` judges.

A system (or retriever, or Python judge) is ``package.module:function`` (the current folder is
importable, as with ``python -m``) or ``path/to/file.py:function``. A judge is a model spec
``provider:model`` for a known provider, else a ``module:function`` callable
``fn(prompt, system) -> str``. Either may be named: ``name=spec``.
"""

from __future__ import annotations

import difflib
import importlib.util
import re
from collections.abc import Callable, Sequence
from typing import Any

from synth._callables import cwd_on_path, is_path, load_callable
from synth.errors import ConfigError

_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


def split_name(spec: str) -> tuple[str | None, str]:
    """Return ``(name, spec)`` from ``name=spec``, or ``(None, spec)`` when unnamed."""
    name, sep, rest = spec.partition("=")
    if sep and _NAME.match(name) and rest:
        return name, rest
    return None, spec


def _provider_typo(spec: str) -> bool:
    """Whether ``spec``'s part before ':' looks like a misspelt provider, not a module."""
    from synth.llm.spec import PROVIDERS

    target = spec.partition(":")[0].strip()  # a module name, as the user spelt it
    close = difflib.get_close_matches(target.lower(), list(PROVIDERS), n=1, cutoff=0.75)
    if not close or is_path(target) or not target.isidentifier():
        return False
    cwd_on_path()
    return importlib.util.find_spec(target) is None  # a top-level name: finding runs no code


def judge_models(
    specs: Sequence[str],
    *,
    base_url: str | None = None,
    limiter: Any = None,
    breaker: Any = None,
    timeout: float | None = None,
) -> dict[str, Any]:
    """Return ``{name: model}`` for judge specs; a name defaults to the spec itself. The models
    made from provider specs share ``limiter`` (a :class:`~synth.llm.limiter.RateLimiter`) and
    ``breaker`` (a :class:`~synth.llm.timeout.SilenceBreaker`: a silent server stops the
    command) when they are given; ``timeout`` is a request's deadline (default make_llm's)."""
    from synth.llm.factory import DEFAULT_TIMEOUT, make_llm
    from synth.llm.offline import PROVIDER as OFFLINE
    from synth.llm.spec import known_provider, parse_model_spec, provider_class

    judges: dict[str, Any] = {}
    for raw in specs:
        name, spec = split_name(raw)
        if known_provider(spec) == OFFLINE:
            raise ConfigError(
                f"--judge {raw}: the offline model writes goldens by rule and cannot judge "
                "answers; name a language model (e.g. openai:gpt-4.1-mini)"
            )
        if known_provider(spec):
            model: Any = make_llm(
                spec,
                base_url=base_url,
                limiter=limiter,
                breaker=breaker,
                timeout=DEFAULT_TIMEOUT if timeout is None else timeout,
            )
            default = spec
        else:
            if _provider_typo(spec):
                # raises: unknown model provider ..., did you mean ...
                provider_class(parse_model_spec(spec)[0])
            model = load_callable(spec)
            default = spec.rpartition(":")[2]
        name = name or default.replace("/", "_")
        if name in judges:
            raise ConfigError(f"two judges are named {name!r}; name them: --judge NAME=SPEC")
        judges[name] = model
    return judges


def systems(specs: Sequence[str]) -> dict[str, Callable[..., Any]]:
    """Return ``{name: fn}`` for ``[name=]module:function`` specs; a name defaults to the function's."""
    found: dict[str, Callable[..., Any]] = {}
    for raw in specs:
        name, spec = split_name(raw)
        fn = load_callable(spec)
        name = name or spec.rpartition(":")[2]
        if name in found:
            raise ConfigError(
                f"two systems are named {name!r}; name them: --system NAME=module:function"
            )
        found[name] = fn
    return found


__all__ = ["judge_models", "split_name", "systems"]
