"""Command-line specs: ``module:function`` systems and ``[name=]provider:model`` judges.

A system (or retriever, or Python judge) is ``package.module:function`` (the current folder is
importable, as with ``python -m``) or ``path/to/file.py:function``. A judge is a model spec
``provider:model`` for a known provider, else a ``module:function`` callable
``fn(prompt, system) -> str``. Either may be named: ``name=spec``.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

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
    if target.endswith(".py") or os.sep in target or "/" in target:
        module = _load_file(Path(target))
    else:
        cwd = os.getcwd()
        if cwd not in sys.path:
            sys.path.insert(0, cwd)  # as `python -m` does, so a local module is found
        try:
            module = importlib.import_module(target)
        except ImportError as exc:
            raise ConfigError(f"cannot import {target!r} for {spec!r}: {exc}") from None
    obj: Any = module
    for part in attr.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise ConfigError(f"{target!r} has no attribute {attr!r}")
    if not callable(obj):
        raise ConfigError(f"{spec!r} is not callable")
    return obj


def _load_file(path: Path) -> Any:
    if not path.is_file():
        raise ConfigError(f"{path}: no such Python file")
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]
    name = f"_synth_user_{path.stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"{path}: cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def judge_models(specs: Sequence[str], *, base_url: str | None = None) -> dict[str, Any]:
    """Return ``{name: model}`` for judge specs; a name defaults to the spec itself."""
    from synth.llm import PROVIDERS, make_llm

    judges: dict[str, Any] = {}
    for raw in specs:
        name, spec = split_name(raw)
        provider = spec.partition(":")[0].strip().lower()
        if provider in PROVIDERS:
            model: Any = make_llm(spec, base_url=base_url)
            default = spec
        else:
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
