"""The function a ``module:function`` or ``path/to/file.py:function`` spec names.

The current folder is importable, as with ``python -m``, so a user's local module is found. A spec
that names nothing callable, or a module whose import raises, is one :class:`ConfigError` line
naming the spec and, for an import that raised, the user's line that raised it.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from synth._ids import text_hash
from synth.errors import ConfigError


def load_callable(spec: str) -> Callable[..., Any]:
    """Return the function named by ``module:function`` or ``file.py:function``."""
    target, sep, attr = spec.rpartition(":")
    if not sep or not target or not attr:
        raise ConfigError(f"expected module:function or path/to/file.py:function, got {spec!r}")
    if is_path(target):
        module = _load_file(Path(target), spec)
    else:
        cwd_on_path()
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


def is_path(target: str) -> bool:
    return target.endswith(".py") or os.sep in target or "/" in target


def cwd_on_path() -> None:
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


__all__ = ["cwd_on_path", "is_path", "load_callable"]
