"""``--language``: the language goldens are written in, as a flag (the pipeline file's
``[generation] language`` and ``GenerationConfig.language``)."""

from __future__ import annotations

import argparse

from synth.errors import ConfigError


def add_language_flag(p: argparse.ArgumentParser) -> None:
    """Declare ``--language CODE`` on ``p``."""
    p.add_argument(
        "--language",
        metavar="CODE",
        help="the language every golden is written in: auto (each in its context's language) "
        "or an ISO 639-1 code such as de (default: the pipeline's, else auto)",
    )


def language_from_args(value: str | None) -> str | None:
    """``--language`` as the generation config takes it (None: not given); ConfigError naming
    the flag when the code is unknown."""
    # here, not with the module: every command's parser declares the flag, few read it
    from synth._language import AUTO, normalize_code

    if value is None or value.strip().lower() == AUTO:
        return None if value is None else AUTO
    try:
        return normalize_code(value)
    except ValueError as exc:
        raise ConfigError(f"--language: {exc}") from None


__all__ = ["add_language_flag", "language_from_args"]
