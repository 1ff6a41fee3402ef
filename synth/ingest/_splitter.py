"""langchain's recursive splitter as chunking uses it, in a module of its own: importing
langchain-text-splitters (and langchain-core under it) takes a few tenths of a second, paid by a
process when it first chunks a document, not by every process that imports ``synth.ingest``."""

from __future__ import annotations

from langchain_text_splitters import RecursiveCharacterTextSplitter


class Splitter(RecursiveCharacterTextSplitter):
    """langchain's recursive splitter, remembering the splits it joined last (see
    :func:`synth.ingest.chunking._split`)."""

    last_joined: list[str]
    last_kept: bool

    def _join_docs(self, docs: list[str], separator: str) -> str | None:
        joined = super()._join_docs(docs, separator)
        self.last_joined, self.last_kept = list(docs), joined is not None
        return joined


__all__ = ["Splitter"]
