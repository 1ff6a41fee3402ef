"""What the generate_goldens_from_* methods accept (synth/run/inputs.py): paths that must exist,
contexts given as texts or Context objects, goldens turned into candidates with their examples."""

from __future__ import annotations

from pathlib import Path

import pytest

from synth._ids import text_hash
from synth.contexts.context import context_id
from synth.data import Context, Golden
from synth.errors import ConfigError
from synth.run.inputs import (
    SCRATCH_BATCH,
    as_contexts,
    as_paths,
    candidates_from_goldens,
    context_from_texts,
    short_hash,
    text_id,
)


def test_ids_are_hashes_of_the_text() -> None:
    assert text_id("alpha") == "txt_" + text_hash("alpha", 24)
    assert len(text_id("alpha")) == 4 + 24 and text_id("alpha") != text_id("beta")
    assert short_hash("alpha") == text_hash("alpha", 10) and len(short_hash("alpha")) == 10
    assert SCRATCH_BATCH == 5


def test_a_context_from_texts_is_named_by_its_texts_and_keeps_its_metadata() -> None:
    context = context_from_texts(["one", "two"], ("a.txt",), origin="given", rank=2)
    ids = [text_id("one"), text_id("two")]
    assert context == Context(
        id=context_id(ids),
        chunk_ids=ids,
        texts=["one", "two"],
        source_files=["a.txt"],
        metadata={"origin": "given", "rank": 2},
    )
    assert isinstance(context.source_files, list) and isinstance(context.texts, list)
    bare = context_from_texts(("one",))
    assert (bare.source_files, bare.metadata, bare.texts) == ([], {}, ["one"])
    assert bare.id == context_id([text_id("one")]) != context.id


def test_paths_are_one_or_several_and_must_exist(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    (tmp_path / "docs").mkdir()
    assert as_paths(str(tmp_path / "a.txt")) == [str(tmp_path / "a.txt")]
    assert as_paths(tmp_path / "docs") == [str(tmp_path / "docs")]
    both = as_paths([tmp_path / "a.txt", str(tmp_path / "docs")])
    assert both == [str(tmp_path / "a.txt"), str(tmp_path / "docs")]
    assert all(type(p) is str for p in both)
    with pytest.raises(ConfigError) as info:
        as_paths([])
    assert str(info.value) == "no documents given: name at least one file, folder or URL"
    with pytest.raises(ConfigError) as info:
        as_paths([tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "c"])
    assert str(info.value) == (
        f"no document could be read: no such file or folder: {tmp_path / 'b.txt'}, {tmp_path / 'c'}"
    )


def test_contexts_are_texts_or_context_objects_with_their_source_files() -> None:
    given = Context(id="ctx_given", chunk_ids=["c1"], texts=["kept as is"], source_files=[])
    contexts = as_contexts([["one", "two"], given, ("three",)], [["a.txt", "b.txt"], None, "c.txt"])
    assert contexts[0] == context_from_texts(["one", "two"], ["a.txt", "b.txt"])
    assert contexts[1] is given
    assert contexts[2] == context_from_texts(["three"], ["c.txt"])
    assert as_contexts([["one"]], None) == [context_from_texts(["one"])]
    assert as_contexts([["one"]], None)[0].source_files == []


@pytest.mark.parametrize(
    ("contexts", "message"),
    [
        ("one text", "contexts must be a non-empty list of contexts (each a list of texts)"),
        ([], "contexts must be a non-empty list of contexts (each a list of texts)"),
        ([["ok"], "flat"], "context 1 must be a Context or a list of strings"),
        ([["ok"], ["fine"], ["a", 3]], "context 2 must be a Context or a list of strings"),
    ],
    ids=["a-string", "empty", "a-string-item", "a-number-inside"],
)
def test_contexts_of_another_shape_are_refused_naming_the_item(
    contexts: object, message: str
) -> None:
    with pytest.raises(ConfigError) as info:
        as_contexts(contexts, None)  # type: ignore[arg-type]
    assert str(info.value) == message


def test_each_golden_is_a_candidate_with_four_others_as_style_examples() -> None:
    given = [Golden(input=f"question {i}?") for i in range(6)]
    given[2] = Golden(input="question 2?", context=["the passage"], source_files=["a.txt"])
    candidates = candidates_from_goldens(given)
    assert [c.seq for c in candidates] == list(range(6))
    assert [c.key for c in candidates] == [
        f"golden{i}:{short_hash(f'question {i}?')}" for i in range(6)
    ]
    # its own input first, then the next four, wrapping round
    assert candidates[0].examples == [f"question {i}?" for i in (0, 1, 2, 3, 4)]
    assert candidates[4].examples == [f"question {i}?" for i in (4, 5, 0, 1, 2)]
    assert candidates[2].context == context_from_texts(["the passage"], ["a.txt"])
    assert [c.context for i, c in enumerate(candidates) if i != 2] == [None] * 5
    assert not any(c.scratch for c in candidates)


def test_with_few_goldens_every_other_one_is_an_example_once() -> None:
    given = [Golden(input="first?"), Golden(input="second?")]
    candidates = candidates_from_goldens(given)
    assert [c.examples for c in candidates] == [["first?", "second?"], ["second?", "first?"]]
    (alone,) = candidates_from_goldens([Golden(input="only?", context=[])])
    assert alone.examples == ["only?"] and alone.context is None
