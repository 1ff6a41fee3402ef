"""Cut documents into token-bounded chunks with stable ids.

Splitting is langchain-text-splitters' recursive splitter (paragraphs, then lines, then words, then
characters) measuring length in tokens of our tiktoken encoding, so chunks end at natural breaks.
No chunk is longer than ``chunk_size`` tokens. Each chunk knows its character span in the document
(``metadata["start"]``/``["end"]``) and, for PDFs, the pages it covers (``page_start``/``page_end``,
and ``metadata["pages"]``: each page's number and the offset in the chunk where it starts, so a
citation's span can name its page). A document with sections (headings, slides, sheets, chapters:
``Document.sections``) gives each chunk the heading path of the section it starts in
(``metadata["heading_path"]``, e.g. ``["Installation", "Linux"]``, left out before the first
heading), and no chunk crosses into a section marked ``split`` (a slide, a sheet, a chapter): each
such unit is split on its own. Each chunk records the language it is written in
(``metadata["language"]``, an ISO 639-1 code, left out when too short to tell): its document's
when the document was read in one language throughout, else its own, so a document that mixes
languages gives each context its own.
"""

from __future__ import annotations

import bisect
import logging
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import tiktoken
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from synth._ids import chunk_id
from synth._language import LANGUAGE_KEY, detect_language
from synth._tokens import DEFAULT_ENCODING, encode, get_encoding
from synth.data import Chunk, Document, Section
from synth.errors import ConfigError

if TYPE_CHECKING:
    from synth.ingest._splitter import Splitter

logger = logging.getLogger("synth.ingest")

# Bump when the splitting algorithm changes, so chunk ids made by the old one are not reused.
# 2: CJK sentence ends are a separator (between lines and spaces).
SPLITTER_VERSION = 2

#: where the splitter cuts, first choice first (regular expressions): paragraphs, lines, after
#: the end of a Chinese or Japanese sentence, then of a clause (these languages put no space
#: between words, so without them a long paragraph would be cut between any two characters),
#: spaces, then anywhere
SEPARATORS = ["\n\n", "\n", "(?<=[。！？；])", "(?<=[、，])", " ", ""]


class ChunkingConfig(BaseModel):
    """How documents are cut: sizes in tokens of ``encoding``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    chunk_size: int = Field(default=1024, ge=1, description="most tokens in one chunk")
    chunk_overlap: int = Field(default=0, ge=0, description="tokens shared by consecutive chunks")
    encoding: str = Field(default=DEFAULT_ENCODING, description="tiktoken encoding name")

    @field_validator("encoding")
    @classmethod
    def _known_encoding(cls, value: str) -> str:
        if value not in tiktoken.list_encoding_names():
            known = ", ".join(sorted(tiktoken.list_encoding_names()))
            raise ValueError(f"unknown tiktoken encoding {value!r}; known: {known}")
        return value

    @model_validator(mode="after")
    def _overlap_below_size(self) -> ChunkingConfig:
        if self.chunk_overlap >= self.chunk_size:
            raise ValueError(
                f"chunk_overlap ({self.chunk_overlap}) must be smaller than chunk_size "
                f"({self.chunk_size})"
            )
        return self

    def key(self) -> str:
        """A short name for these parameters, usable in file and collection names."""
        return f"{self.encoding}-s{self.chunk_size}-o{self.chunk_overlap}-v{SPLITTER_VERSION}"


def make_chunking_config(config: ChunkingConfig | None = None, **overrides: Any) -> ChunkingConfig:
    """``config`` (or the defaults) with ``overrides`` applied; ConfigError when invalid."""
    base = config.model_dump() if config is not None else {}
    try:
        return ChunkingConfig.model_validate({**base, **overrides})
    except ValidationError as exc:
        problems = "; ".join(
            ": ".join(
                part
                for part in (
                    ".".join(str(p) for p in err["loc"]),
                    err["msg"].removeprefix("Value error, "),
                )
                if part
            )
            for err in exc.errors()
        )
        raise ConfigError(f"invalid chunking config: {problems}") from exc


def as_chunking_config(chunking: ChunkingConfig | Mapping[str, Any] | None) -> ChunkingConfig:
    """``chunking`` as a ChunkingConfig: as is, the defaults for None, or made from a dict of its
    parameters; ConfigError for anything else or an invalid parameter."""
    if chunking is None:
        return ChunkingConfig()
    if isinstance(chunking, ChunkingConfig):
        return chunking
    if isinstance(chunking, Mapping):
        return make_chunking_config(**chunking)
    raise ConfigError(f"chunking must be a ChunkingConfig or a dict, got {type(chunking).__name__}")


def chunk_documents(
    documents: Iterable[Document], config: ChunkingConfig | None = None, **overrides: Any
) -> list[Chunk]:
    """All chunks of ``documents``, in order; ``overrides`` (e.g. ``chunk_size=512``) beat ``config``."""
    return list(iter_chunks(documents, config, **overrides))


def iter_chunks(
    documents: Iterable[Document], config: ChunkingConfig | None = None, **overrides: Any
) -> Iterator[Chunk]:
    """The streaming form of ``chunk_documents``: one document is split at a time."""
    cfg = make_chunking_config(config, **overrides)
    get_encoding(cfg.encoding)  # fail (or notice the offline fallback) before the first document
    lengths = _TokenLengths(cfg.encoding)
    from synth.ingest._splitter import Splitter  # langchain, imported by the first chunking

    splitter = Splitter(
        chunk_size=cfg.chunk_size,
        chunk_overlap=cfg.chunk_overlap,
        length_function=lengths,
        separators=SEPARATORS,
        is_separator_regex=True,
        keep_separator="start",
        strip_whitespace=True,
    )
    documents_in = chunks_out = 0
    empty = 0
    for document in documents:
        documents_in += 1
        produced = 0
        try:
            for chunk in _chunk_document(document, cfg, splitter, lengths):
                produced += 1
                yield chunk
        finally:
            lengths.clear()  # counts are only reused within one document: memory stays flat
        chunks_out += produced
        empty += produced == 0
    logger.debug(
        "chunked %d documents into %d chunks (%d documents had no text)",
        documents_in,
        chunks_out,
        empty,
    )


class _TokenLengths:
    """The splitter's length function, remembering counts: it measures each split more than once."""

    def __init__(self, encoding: str) -> None:
        self._encoding = encoding
        self._counts: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        count = self._counts.get(text)
        if count is None:
            count = self._counts[text] = len(encode(text, self._encoding))
        return count

    def clear(self) -> None:
        self._counts.clear()


#: characters of top-level splits merged at a time by :func:`_split`
WINDOW_CHARS = 256 * 1024


def _split(splitter: Splitter, text: str, lengths: _TokenLengths) -> Iterator[str]:
    """The chunks ``splitter.split_text(text)`` returns, in order, made a window at a time.

    The whole-text splitter holds every split of the text, the same splits joined to their
    separators, and every chunk, at once: several copies of a large document. This walks the
    top-level splits lazily and merges them a window at a time. The merge is greedy from left to
    right and its state at any point is the list of splits it is holding (their total never
    exceeds ``chunk_size``), so each window's chunks but the last are final, and merging the last
    one's splits again with the next window's continues exactly where the whole-text merge would.
    A split too long for a chunk ends a merge there as in the whole-text splitter, and is split
    on its own with the next separators.
    """
    separators = splitter._separators
    found = next((i for i, sep in enumerate(separators) if sep and re.search(sep, text)), None)
    if found is None:  # no separator but characters: nothing to stream
        yield from splitter.split_text(text)
        return
    rest = separators[found + 1 :]
    window: list[str] = []
    size = carried_size = 0

    def merge(final: bool) -> Iterator[str]:
        nonlocal window, size, carried_size
        docs = splitter._merge_splits(window, "")
        carried = [] if final else splitter.last_joined
        if carried and splitter.last_kept:
            docs = docs[:-1]
        window, size = list(carried), sum(map(len, carried))
        carried_size = size
        lengths.clear()  # bounded: counts are kept for one window (and its carried splits) only
        return iter(docs)

    for piece in _top_splits(text, separators[found]):
        if lengths(piece) < splitter._chunk_size:
            window.append(piece)
            size += len(piece)
            if size - carried_size >= WINDOW_CHARS:
                yield from merge(final=False)
            continue
        if window:
            yield from merge(final=True)
        if rest:
            yield from splitter._split_text(piece, rest)
            lengths.clear()
        else:
            yield piece
    if window:
        yield from merge(final=True)


def _top_splits(text: str, separator: str) -> Iterator[str]:
    """``text`` cut before every match of the regular expression ``separator`` (kept at the start
    of the next split), lazily."""
    start = 0
    for match in re.finditer(separator, text):
        if match.start() > start:
            yield text[start : match.start()]
        start = match.start()
    if start < len(text):
        yield text[start:]


def _chunk_document(
    document: Document, cfg: ChunkingConfig, splitter: Splitter, lengths: _TokenLengths
) -> Iterator[Chunk]:
    params = cfg.key()
    page_starts = [page.start for page in document.pages]
    sections = sorted(document.sections, key=lambda section: section.start)
    section_starts = [section.start for section in sections]
    index = 0
    # a document read in one language throughout gives its chunks that language; one that mixes
    # languages (or was not read by load_documents) has each chunk detected; one in which no
    # sample had a language (made-up words, tables of numbers) has none looked for in its chunks
    known = document.metadata.get("languages")
    found: list[str] = known if isinstance(known, list) else []
    uniform = found[0] if len(found) == 1 else None
    per_chunk = not isinstance(known, list) or len(found) > 1
    for start, text, token_count in _located_pieces(document, sections, cfg, splitter, lengths):
        end = start + len(text) if start >= 0 else -1
        page_start = page_end = None
        metadata: dict[str, Any] = {"start": start, "end": end}
        language = uniform or (detect_language(text) if per_chunk else None)
        if language is not None:
            metadata[LANGUAGE_KEY] = language
        at = bisect.bisect_right(section_starts, start) - 1 if start >= 0 else -1
        if at >= 0 and sections[at].path:
            metadata["heading_path"] = list(sections[at].path)
        if page_starts and start >= 0:
            first = bisect.bisect_right(page_starts, start) - 1
            last = bisect.bisect_right(page_starts, end - 1) - 1
            page_start, page_end = document.pages[first].number, document.pages[last].number
            metadata["pages"] = _page_breaks(document, first, last, start)
        yield Chunk(
            id=chunk_id(document.id, params, index),
            document_id=document.id,
            source=document.path,
            index=index,
            text=text,
            token_count=token_count,
            page_start=page_start,
            page_end=page_end,
            metadata=metadata,
        )
        index += 1


def _located_pieces(
    document: Document,
    sections: list[Section],
    cfg: ChunkingConfig,
    splitter: Splitter,
    lengths: _TokenLengths,
) -> Iterator[tuple[int, str, int]]:
    """Each chunk's text with its start in the document (-1 when not found) and its token count.

    The text is split as one piece unless sections marked ``split`` cut it into units; each unit is
    then split on its own, so no chunk (and no overlap) reaches across a unit's start.
    """
    cuts = sorted({0, *(s.start for s in sections if s.split and 0 < s.start < len(document.text))})
    bounds = [*cuts, len(document.text)]
    for begin, stop in zip(bounds, bounds[1:], strict=False):
        # the whole text when it is one unit (a slice of all of a str is the str itself)
        unit = document.text[begin:stop]
        previous: tuple[int, int] | None = None
        for text in _split(splitter, unit, lengths):
            for piece, token_count in _within_limit(text, cfg):
                start = _locate(unit, piece, previous, cfg.chunk_overlap)
                if start is None:
                    continue  # only repeats the end of the previous chunk: adds nothing
                if start < 0:  # not expected: the splitter returns substrings in order
                    start = unit.find(piece)
                if start >= 0:
                    previous = (start, start + len(piece))
                    start += begin
                yield start, piece, token_count


def _page_breaks(document: Document, first: int, last: int, start: int) -> list[list[int]]:
    """``[page number, offset in the chunk where it starts]`` for the pages a chunk starting at
    ``start`` covers (pages ``first..last`` of the document); the first page at offset 0."""
    pages = document.pages[first : last + 1]
    return [[page.number, max(page.start - start, 0)] for page in pages]


def _locate(text: str, piece: str, previous: tuple[int, int] | None, overlap: int) -> int | None:
    """Where ``piece`` starts in ``text``, given the previous chunk's span; None if it adds nothing.

    Chunks come in order. Without overlap the next one starts after the previous one ends. With
    overlap it starts inside the previous one and must reach past its end; langchain's splitter
    sometimes emits a piece made only of the overlap, which is dropped.
    """
    if previous is None:
        return text.find(piece)
    previous_start, previous_end = previous
    if overlap == 0:
        return text.find(piece, previous_end)
    position = text.find(piece, previous_start + 1)
    while position >= 0 and position + len(piece) <= previous_end:
        position = text.find(piece, position + 1)
    if position < 0 or text[previous_end:position].strip():
        return None  # no occurrence continues the previous chunk: this one lies inside it
    return position


def _within_limit(text: str, cfg: ChunkingConfig) -> list[tuple[str, int]]:
    """``text`` as is when it fits ``chunk_size`` tokens, else cut at token boundaries.

    Each piece comes with its token count, so no chunk is encoded again to fill ``token_count``.

    The splitter adds up the token counts of the pieces it joins, and a joined text can tokenize
    to a few more tokens than its pieces did; this keeps the limit exact. Cuts fall between
    characters, so every piece is still a substring of the document.
    """
    tokens = encode(text, cfg.encoding)
    if len(tokens) <= cfg.chunk_size:
        return [(text, len(tokens))]
    _, offsets = get_encoding(cfg.encoding).decode_with_offsets(tokens)
    offsets.append(len(text))
    pieces = []
    begin = 0
    while begin < len(tokens):
        stop = min(begin + cfg.chunk_size, len(tokens))
        piece = text[offsets[begin] : offsets[stop]]
        while stop > begin + 1 and len(encode(piece, cfg.encoding)) > cfg.chunk_size:
            stop -= 1
            piece = text[offsets[begin] : offsets[stop]]
        pieces.append(piece.strip())
        if stop == len(tokens):
            break
        begin = max(begin + 1, stop - cfg.chunk_overlap)
    return [(piece, len(encode(piece, cfg.encoding))) for piece in pieces if piece]


__all__ = [
    "SPLITTER_VERSION",
    "ChunkingConfig",
    "as_chunking_config",
    "chunk_documents",
    "iter_chunks",
    "make_chunking_config",
]
