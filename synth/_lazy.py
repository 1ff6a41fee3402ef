"""A package's public names imported from their modules the first time each is read (PEP 562).

:mod:`synth`, :mod:`synth.store` and :mod:`synth.report` keep their public names this way, so
importing the package imports none of its heavy modules (``synth --help``, a run reading
manifests through :mod:`synth.report`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(
    namespace: dict[str, Any], home: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of the package whose ``globals()`` are
    ``namespace``: a name of ``home`` is imported from its module (``home[name]``) when first
    read and kept in ``namespace`` (the next read does not come here)."""
    package = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        module = home.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *namespace.get("__all__", ())})

    return __getattr__, __dir__


__all__ = ["lazy_names"]
