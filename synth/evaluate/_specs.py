"""Command-line specs: ``module:function`` systems and ``[name=]provider:model`` judges.

A system (or retriever, or Python judge) is ``package.module:function`` (the current folder is
importable, as with ``python -m``) or ``path/to/file.py:function``. A judge is a model spec
``provider:model`` for a known provider, else a ``module:function`` callable
``fn(prompt, system) -> str``. Either may be named: ``name=spec``.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import os
import re
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from synth._ids import text_hash
from synth.errors import ConfigError

_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


def split_name(spec: str) -> tuple[str | None, str]:
    """Return ``(name, spec)`` from ``name=spec``, or ``(None, spec)`` when unnamed."""
    name, sep, rest = spec.partition("=")
    if sep and _NAME.match(name) and rest:
        return name, rest
    return None, spec


def load_callable(spec: str) -> Callable[..., Any]:
    """Return the function named by ``module:function`` or ``file.py:function``."""
    target, sep, attr = spec.rpartition(":")
    if not sep or not target or not attr:
        raise ConfigError(f"expected module:function or path/to/file.py:function, got {spec!r}")
    if _is_path(target):
        module = _load_file(Path(target), spec)
    else:
        _cwd_on_path()
        try:
            module = importlib.import_module(target)
        except ImportError as exc:
            raise ConfigError(f"cannot import {target!r} for {spec!r}: {exc}") from exc
        except Exception as exc:  # the user's module may raise anything as it is imported
            raise ConfigError(_import_failure(target, spec, exc)) from exc
    obj: Any = module
    for part in attr.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise ConfigError(f"{target!r} has no attribute {attr!r}")
    if not callable(obj):
        raise ConfigError(f"{spec!r} is not callable")
    found: Callable[..., Any] = obj
    return found


def _is_path(target: str) -> bool:
    return target.endswith(".py") or os.sep in target or "/" in target


def _cwd_on_path() -> None:
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)  # as `python -m` does, so a local module is found


def _import_failure(target: str, spec: str, exc: BaseException) -> str:
    """One line: the module, what its import raised, and where (the user's line, not ours)."""
    if isinstance(exc, SyntaxError):
        where = f" ({exc.filename}, line {exc.lineno})" if exc.lineno else ""
        return f"cannot import {target!r} for {spec!r}: {type(exc).__name__}: {exc.msg}{where}"
    # the first frame past this module and importlib's machinery is the user's module
    machinery = os.path.dirname(importlib.__file__)
    frames = [
        frame
        for frame in traceback.extract_tb(exc.__traceback__)
        if frame.filename != __file__ and not frame.filename.startswith(("<frozen ", machinery))
    ]
    where = f" ({frames[0].filename}, line {frames[0].lineno})" if frames else ""
    message = " ".join(str(exc).split())  # one line, whatever the message holds
    raised = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return f"importing {target!r} for {spec!r} raised {raised}{where}"


def _load_file(path: Path, spec_text: str) -> Any:
    if not path.is_file():
        raise ConfigError(f"{path}: no such Python file")
    digest = text_hash(str(path.resolve()), 12)
    name = f"_synth_user_{path.stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"{path}: cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except ImportError as exc:
        del sys.modules[name]  # a fixed file is imported afresh
        raise ConfigError(f"cannot import {str(path)!r} for {spec_text!r}: {exc}") from exc
    except Exception as exc:  # the user's module may raise anything as it is imported
        del sys.modules[name]
        raise ConfigError(_import_failure(str(path), spec_text, exc)) from exc
    return module


def _provider_typo(spec: str) -> bool:
    """Whether ``spec``'s part before ':' looks like a misspelt provider, not a module."""
    from synth.llm.spec import PROVIDERS

    target = spec.partition(":")[0].strip()  # a module name, as the user spelt it
    close = difflib.get_close_matches(target.lower(), list(PROVIDERS), n=1, cutoff=0.75)
    if not close or _is_path(target) or not target.isidentifier():
        return False
    _cwd_on_path()
    return importlib.util.find_spec(target) is None  # a top-level name: finding runs no code


def judge_models(
    specs: Sequence[str], *, base_url: str | None = None, limiter: Any = None
) -> dict[str, Any]:
    """Return ``{name: model}`` for judge specs; a name defaults to the spec itself. The models
    made from provider specs share ``limiter`` (a :class:`~synth.llm.limiter.RateLimiter`) when
    one is given."""
    from synth.llm.factory import make_llm
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
            model: Any = make_llm(spec, base_url=base_url, limiter=limiter)
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


__all__ = ["judge_models", "load_callable", "split_name", "systems"]
