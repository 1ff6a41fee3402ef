"""What a ChunkStore's calls take and return besides chunks: metadata values, what an add did,
chunks embedded and waiting to be stored, and how much of a source file is stored."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from pydantic import BaseModel

from synth.data import Chunk

#: what Chroma stores as a metadata value
MetadataValue = str | int | float | bool


class AddResult(BaseModel):
    """What one :meth:`ChunkStore.add` did."""

    embedded: int = 0  # chunks embedded and stored now
    reused: int = 0  # chunks already stored (or repeated in the same call): not embedded again


class PreparedChunks(NamedTuple):
    """Chunks ready to store: the new ones with their vectors, and what was already stored."""

    new: list[Chunk]
    vectors: np.ndarray  # one row per new chunk
    stored: set[str]  # ids already in the collection
    repeated: int  # chunks given more than once


class SourceStats(BaseModel):
    """How much of one source file is stored."""

    chunks: int = 0
    tokens: int = 0


__all__ = ["AddResult", "MetadataValue", "PreparedChunks", "SourceStats"]
