"""Kept only until ``ingest/chunking.py`` and ``ingest/load.py`` import from :mod:`synth._ids`.

Document and chunk ids moved to synth's one module of ids and content hashes. Delete this file once
nothing imports it.
"""

from synth._ids import ID_LENGTH, chunk_id, document_id

__all__ = ["ID_LENGTH", "chunk_id", "document_id"]
