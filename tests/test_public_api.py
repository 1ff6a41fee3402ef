"""The public surface: everything in ``synth.__all__`` is importable, and nothing heavy is imported early."""

from __future__ import annotations

import subprocess
import sys

import synth


def test_all_names_exist_and_are_unique() -> None:
    assert len(synth.__all__) == len(set(synth.__all__))
    missing = [name for name in synth.__all__ if not hasattr(synth, name)]
    assert missing == []


def test_public_names_are_exported() -> None:
    """Every public attribute that is a class or function defined in synth is in ``__all__``."""
    undeclared = [
        name
        for name, value in vars(synth).items()
        if not name.startswith("_")
        and getattr(value, "__module__", "").startswith("synth")
        and (isinstance(value, type) or callable(value))
        and name not in synth.__all__
    ]
    assert undeclared == []


def test_import_does_not_load_optional_sdks() -> None:
    code = (
        "import sys, synth; "
        "heavy = [m for m in ('anthropic', 'google.genai', 'sentence_transformers', 'torch') "
        "if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_errors_share_one_root() -> None:
    errors = [getattr(synth, n) for n in synth.__all__ if n.endswith("Error")]
    assert errors and all(issubclass(e, synth.SynthError) for e in errors)
    assert issubclass(synth.ConfigError, ValueError)
    assert issubclass(synth.RateLimitError, synth.ModelError)


def test_warnings_share_one_root() -> None:
    found = [getattr(synth, n) for n in synth.__all__ if n.endswith("Warning")]
    assert {w.__name__ for w in found} == {"SynthWarning", "ShortfallWarning", "FailedItemsWarning"}
    assert all(issubclass(w, synth.SynthWarning) for w in found)
    assert issubclass(synth.SynthWarning, UserWarning)  # shown by Python's default filters
    assert not issubclass(synth.SynthWarning, synth.SynthError)
