"""A golden's identity for review (synth/dataset/_keys.py): its ``draft_id``, else its ``id``,
else a hash of its first input and its context, fixed here for good (a changed hash loses every
review decision made by key); and the keys of copies of one golden, numbered."""

from __future__ import annotations

import hashlib

from synth.data import Golden
from synth.dataset._keys import REVIEW_KEY, golden_key, review_keys

#: golden_key of Golden(input="Why?", context=["a", "b"]) and of Golden(input="Why?"), fixed
WHY_A_B = "00aea2e71341dfd204e5c97934fa9f30"
WHY = "9f4f72a02310a4c3896a32b543e82277"


def test_the_content_hash_is_of_golden_the_input_and_each_context_text_joined() -> None:
    assert golden_key(Golden(input="Why?", context=["a", "b"])) == WHY_A_B
    assert golden_key(Golden(input="Why?")) == WHY
    joined = "\x1f".join(["golden", "Why?", "a", "b"])
    assert WHY_A_B == hashlib.sha256(joined.encode()).hexdigest()[:32]


def test_a_draft_id_comes_before_an_id_and_an_id_before_the_hash() -> None:
    both = Golden(input="Why?", metadata={"draft_id": "d1", "id": "i1"})
    assert golden_key(both) == "d1"
    assert golden_key(Golden(input="Why?", metadata={"id": "i1"})) == "i1"
    assert golden_key(Golden(input="Why?", metadata={"draft_id": 7})) == "7"
    assert golden_key(Golden(input="Why?", metadata={"id": 0})) == "0"


def test_an_empty_a_boolean_or_another_kind_of_id_is_passed_over() -> None:
    for bad in ("", True, False, 1.5, None, ["d"]):
        golden = Golden(input="Why?", metadata={"draft_id": bad, "id": bad})
        assert golden_key(golden) == WHY, bad
    fallback = Golden(input="Why?", metadata={"draft_id": "", "id": "i9"})
    assert golden_key(fallback) == "i9"


def test_an_edited_golden_keeps_the_key_of_its_first_input() -> None:
    record = {"original": {"input": "Why?"}}
    edited = Golden(input="Why so?", context=["a", "b"], metadata={REVIEW_KEY: record})
    assert golden_key(edited) == WHY_A_B
    # an original without its input (only the expected output edited): the input as it is
    other = {"original": {"expected_output": "old"}}
    assert golden_key(Golden(input="Why?", metadata={REVIEW_KEY: other})) == WHY


def test_a_record_or_original_that_is_not_a_mapping_is_passed_over() -> None:
    for record in ("approved", ["x"], {"original": "Why so?"}, {"original": None}, {}):
        golden = Golden(input="Why?", metadata={REVIEW_KEY: record})
        assert golden_key(golden) == WHY, record
    assert REVIEW_KEY == "review"


def test_copies_of_one_golden_get_numbered_keys_in_order() -> None:
    same = Golden(input="Why?", metadata={"draft_id": "d"})
    other = Golden(input="Why?", metadata={"draft_id": "e"})
    keys = review_keys([same, other, same, same, other])
    assert keys == ["d", "e", "d~2", "d~3", "e~2"]
    assert review_keys([]) == []
    assert review_keys(iter([Golden(input="Why?")])) == [WHY]
