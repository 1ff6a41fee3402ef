"""Results stored as one document (a comparison, a benchmark): written, read back, compared equal.

Reports are stored differently (JSON Lines holds one item a line, and a report's kind picks its
class on reading): see :mod:`synth.evaluate.report`.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Self

from pydantic import BaseModel, ConfigDict

from synth._files import write_atomic
from synth.errors import ConfigError
from synth.evaluate import _io
from synth.evaluate._scores import canonical


class OneDocument(BaseModel):
    """A result written as one JSON, YAML or TOML document; equal to itself read back (NaN too)."""

    model_config = ConfigDict(extra="forbid")

    #: what the result is called in the error that refuses JSON Lines for it
    noun: ClassVar[str] = "a result"

    def write(self, path: str | Path, *, format: str | None = None) -> Path:
        """Write the result as JSON, YAML or TOML (by suffix or ``format``), atomically."""
        fmt = self.format_for(path, format)
        return write_atomic(path, _io.dumps(self.model_dump(), fmt))

    @classmethod
    def format_for(cls, path: str | Path, format: str | None = None) -> str:
        """The format :meth:`write` writes ``path`` in; ConfigError when it cannot hold one
        document (a command checks its ``-o`` with it before the work it would write)."""
        suffix = Path(path).suffix.lower()
        if format is None and suffix not in _io.FORMATS:  # not told of .jsonl, which it refuses
            raise ConfigError(
                f"{path}: unknown suffix {suffix!r}; {cls.noun} is one document: write it as "
                ".json, .yaml or .toml"
            )
        fmt = _io.format_of(path, format)
        if fmt == "jsonl":
            raise ConfigError(f"{cls.noun} is one document: write it as .json, .yaml or .toml")
        return fmt

    @classmethod
    def read(cls, path: str | Path, *, format: str | None = None) -> Self:
        """Read a result written by :meth:`write`."""
        fmt = _io.format_of(path, format)
        return cls.model_validate(_io.loads(_io.read_text(path), fmt, source=str(path)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, type(self)):
            return NotImplemented
        same: bool = canonical(self.model_dump()) == canonical(other.model_dump())
        return same

    __hash__ = None  # type: ignore[assignment]


__all__ = ["OneDocument"]
