"""The one module of ids and content hashes: the values ids already stored on disk depend on."""

from __future__ import annotations

from pathlib import Path

from synth._ids import canonical_json, chunk_id, document_id, file_hash, joined_hash, text_hash
from synth.evaluate import _prompts
from synth.evaluate._prompts import prompt_hash
from synth.llm.cache import cache_key
from synth.run.dir import run_id


def test_hashes_are_pinned() -> None:
    # values computed before the hashing moved here: a change would orphan every run folder,
    # response cache and vector store made before it
    assert text_hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert text_hash("abc", 10) == "ba7816bf8f"
    assert joined_hash(["a", "b"], 16) == text_hash("a\x1fb", 16)
    assert joined_hash(["a", "b"], 16, sep="\x1e") == text_hash("a\x1eb", 16)
    document = document_id("a.txt", "hello")
    assert document == "af9a86416bf23234cd26789ccc437f81"
    assert chunk_id(document, "p", 0) == "da351b1ad78d14d21559d6670f566cd7"
    assert run_id({"seed": 1}) == "e82f7f4aeb2cebee"
    key = cache_key({"provider": "p"}, "q", None, None)
    assert key == "a12dad17753d3204059013a1505ea33c33a90662824156ce1739f3d29faf8aef"
    assert prompt_hash() == text_hash("\x1e".join(_prompts._TEMPLATES), 16)


def test_document_and_chunk_ids_keep_their_length_prefixed_parts_apart() -> None:
    assert document_id("ab", "c") != document_id("a", "bc")
    assert chunk_id("d", "p", 1) != chunk_id("d", "p", 2)


def test_canonical_json_sorts_keys_and_drops_whitespace() -> None:
    assert canonical_json({"b": 1, "a": "é"}) == '{"a":"é","b":1}'


def test_file_hash_is_the_hash_of_the_bytes(tmp_path: Path) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(b"abc")
    assert file_hash(path) == text_hash("abc")
