"""A context made from its chunks: its id, its seed, similarities, pages and language, each
checked exactly."""

from __future__ import annotations

from typing import Any

from synth.contexts.context import chunk_language, context_id, make_context
from synth.data import Chunk

ENGLISH = (
    "The committee will meet on Tuesday to discuss the budget for the next year, and all of the "
    "members are asked to bring their notes with them."
)


def chunk(n: int, text: str = "ok", **fields: Any) -> Chunk:
    return Chunk(
        id=f"a#{n}",
        document_id="a",
        source=f"file{n}.txt",
        index=n,
        text=text,
        token_count=3,
        **fields,
    )


def test_the_id_is_a_short_hash_of_the_chunk_ids_in_order() -> None:
    assert context_id(["a#0", "a#1"]) == "ctx_71b7f4d925721698"
    assert context_id(["a#1", "a#0"]) != context_id(["a#0", "a#1"])


def test_a_context_holds_its_chunks_the_seed_first() -> None:
    context = make_context([chunk(0, "first"), chunk(1, "second")], quality=0.75)
    assert context.id == "ctx_71b7f4d925721698"
    assert context.chunk_ids == ["a#0", "a#1"]
    assert context.texts == ["first", "second"]
    assert context.source_files == ["file0.txt", "file1.txt"]
    assert context.quality == 0.75
    assert context.metadata == {"seed_chunk_id": "a#0"}


def test_no_chunks_make_an_empty_context_without_a_seed() -> None:
    context = make_context([])
    assert context.metadata == {"seed_chunk_id": None}
    assert context.chunk_ids == [] and context.quality is None


def test_similarities_recorded_as_floats_rounded_to_six_places() -> None:
    context = make_context([chunk(0), chunk(1)], similarities=[1, 0.12345678])
    assert context.metadata["similarities"] == [1.0, 0.123457]
    assert type(context.metadata["similarities"][0]) is float
    assert make_context([chunk(0)], similarities=[]).metadata["similarities"] == []


def test_pages_recorded_per_chunk_from_breaks_or_a_single_page() -> None:
    broken = chunk(0, metadata={"pages": [("3", "0"), (4, 120)]})
    single = chunk(1, page_start=7, page_end=7)
    spanning = chunk(2, page_start=7, page_end=8)
    plain = chunk(3)
    context = make_context([broken, single, spanning, plain])
    assert context.metadata["pages"] == [[[3, 0], [4, 120]], [[7, 0]], None, None]
    assert "pages" not in make_context([spanning, plain]).metadata


def test_a_chunk_on_page_zero_still_has_its_page() -> None:
    assert make_context([chunk(0, page_start=0, page_end=0)]).metadata["pages"] == [[[0, 0]]]


def test_the_seeds_recorded_language_is_the_contexts() -> None:
    seed = chunk(0, metadata={"language": "de"})
    other = chunk(1, metadata={"language": "fr"})
    assert make_context([seed, other]).metadata["language"] == "de"
    assert "language" not in make_context([chunk(0, "ok"), other]).metadata


def test_a_chunk_without_a_recorded_language_is_detected() -> None:
    assert chunk_language(chunk(0, ENGLISH)) == "en"
    assert chunk_language(chunk(0, ENGLISH, metadata={"language": ""})) == "en"
    assert chunk_language(chunk(0, ENGLISH, metadata={"language": "de"})) == "de"
    assert chunk_language(chunk(0, "ok")) is None


def test_given_metadata_goes_last_and_wins() -> None:
    context = make_context(
        [chunk(0, metadata={"language": "de"})],
        similarities=[1.0],
        metadata={"language": "fr", "kind": "claims"},
    )
    assert context.metadata == {
        "seed_chunk_id": "a#0",
        "similarities": [1.0],
        "language": "fr",
        "kind": "claims",
    }
