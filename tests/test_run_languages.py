"""The language mix of a run's plan (synth/run/languages.py): the chunks' languages counted, the
goldens each language gets from the planned contexts, and the plan's one line about both.
tests/test_languages.py plans from a real corpus through a Synthesizer."""

from __future__ import annotations

from synth.data import Chunk, Context
from synth.run.languages import UNKNOWN, chunk_languages, language_notes, planned_languages
from synth.run.plan import PlanInputs


def chunk(i: int, language: str | None) -> Chunk:
    metadata = {"language": language} if language is not None else {}
    return Chunk(
        id=f"c{i}", document_id="d", source="a.md", index=i, text="t", token_count=1,
        metadata=metadata,
    )  # fmt: skip


def context(i: int, language: str | None) -> Context:
    metadata = {"language": language} if language is not None else {}
    return Context(
        id=f"x{i}", chunk_ids=[f"c{i}"], texts=["t"], source_files=["a.md"], metadata=metadata
    )


def test_chunks_are_counted_per_language_most_first_then_by_code() -> None:
    languages = ["fr", "de", None, "de", "en", "fr", "", "de"]
    counts = chunk_languages(chunk(i, code) for i, code in enumerate(languages))
    # ties by code; a chunk with no language, or an empty one, is unknown
    assert list(counts.items()) == [("de", 3), (UNKNOWN, 2), ("fr", 2), ("en", 1)]
    assert UNKNOWN == "(unknown)"
    assert chunk_languages([]) == {}


def test_in_auto_each_planned_golden_takes_its_contexts_language_in_order() -> None:
    contexts = [context(0, "de"), context(1, "en"), context(2, None), context(3, "en")]
    inputs = PlanInputs(contexts, [], chunk_languages={"de": 4, "en": 1})
    planned = planned_languages(inputs, "auto", per_context=2, goldens=5)
    # two goldens a context, the fifth from the third context: de 2, en 2, unknown 1
    assert planned == {"chunks": {"de": 4, "en": 1}, "goldens": {"de": 2, "en": 2, UNKNOWN: 1}}
    assert list(planned["goldens"]) == ["de", "en", UNKNOWN]
    fewer = planned_languages(inputs, "auto", per_context=1, goldens=3)
    assert fewer["goldens"] == {"de": 1, "en": 1, UNKNOWN: 1}
    assert planned_languages(inputs, "auto", per_context=3, goldens=0)["goldens"] == {}


def test_a_fixed_language_gets_every_golden_and_no_chunk_count_is_none_listed() -> None:
    inputs = PlanInputs([context(0, "de"), context(1, "de")], [])
    assert planned_languages(inputs, "ja", per_context=2, goldens=7) == {"goldens": {"ja": 7}}
    assert planned_languages(inputs, "ja", per_context=2, goldens=0) == {"goldens": {}}
    counted = PlanInputs([context(0, "de")], [], chunk_languages={})
    assert planned_languages(counted, "ja", per_context=1, goldens=1) == {
        "chunks": {},
        "goldens": {"ja": 1},
    }


def test_the_plans_line_names_the_languages_found_and_the_goldens_each_gets() -> None:
    languages = {"chunks": {"de": 3, "en": 1}, "goldens": {"de": 2, UNKNOWN: 1}}
    assert language_notes(languages) == [
        "languages found: de 3, en 1 chunks; goldens per language: de 2, (unknown) 1 goldens"
    ]
    assert language_notes({"chunks": {"fr": 2}, "goldens": {}}) == ["languages found: fr 2 chunks"]
    assert language_notes({"goldens": {"ja": 4}}) == ["goldens per language: ja 4 goldens"]


def test_no_line_when_no_language_is_known() -> None:
    assert language_notes({}) == []
    assert language_notes({"chunks": {UNKNOWN: 5}, "goldens": {UNKNOWN: 2}}) == []
    # one known code anywhere is enough for the line, which lists the unknown ones too
    assert language_notes({"chunks": {UNKNOWN: 5}, "goldens": {"en": 1}}) == [
        "languages found: (unknown) 5 chunks; goldens per language: en 1 goldens"
    ]
