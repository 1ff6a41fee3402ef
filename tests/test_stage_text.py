"""The blocks prompts are made of: untrusted text stripped, escaped and tagged, contexts numbered
by passage, feedback paired with its input, styling listed in order."""

from __future__ import annotations

from synth.data import Context
from synth.stage.text import (
    NO_CONTEXT,
    context_text,
    feedback_items,
    styling_block,
    tagged,
    tagged_list,
)


def _context(*texts: str) -> Context:
    n = len(texts)
    return Context(
        id="c", chunk_ids=[f"a#{i}" for i in range(n)], texts=list(texts), source_files=["a"] * n
    )


def test_tagged_and_tagged_list_strip_and_escape_each_text() -> None:
    assert tagged("input", "  Is <b> bold?\n") == "<input>\nIs <\\b> bold?\n</input>"
    assert tagged_list("inputs", "input", [" one ", "two\n"]) == (
        '<inputs>\n<input index="1">\none\n</input>\n<input index="2">\ntwo\n</input>\n</inputs>'
    )


def test_no_context_or_an_empty_one_reads_as_none_given() -> None:
    assert NO_CONTEXT == "(no context given)"
    assert context_text(None) == NO_CONTEXT
    assert context_text(_context()) == NO_CONTEXT


def test_a_one_chunk_context_is_its_text_without_passages() -> None:
    assert context_text(_context("  only <x> text \n")) == "<context>\nonly <\\x> text\n</context>"


def test_a_context_of_several_chunks_numbers_each_passage_from_one() -> None:
    assert context_text(_context(" first ", "second <p>")) == (
        "<context>\n"
        '<passage index="1">\nfirst\n</passage>\n'
        '<passage index="2">\nsecond <\\p>\n</passage>\n'
        "</context>"
    )


def test_feedback_items_pair_each_input_with_its_feedback_or_none() -> None:
    assert feedback_items([(" q1 ", " too vague "), ("q2", "  ")]) == (
        "<items>\n"
        '<item index="1">\n<input>\nq1\n</input>\n<feedback>\ntoo vague\n</feedback>\n</item>\n'
        '<item index="2">\n<input>\nq2\n</input>\n<feedback>\n(none)\n</feedback>\n</item>\n'
        "</items>"
    )


def test_styling_block_lists_each_setting_given_in_order() -> None:
    assert styling_block() == ""
    assert styling_block(scenario="", task="", input_format="", persona="") == ""
    assert styling_block("desk", "answer", "email", "a nurse") == (
        "\nScenario: desk\nTask of the system under test: answer\n"
        "Input format: email\nWrite as this user: a nurse\n"
    )
    assert styling_block(task="t") == "\nTask of the system under test: t\n"
    assert styling_block(input_format="f") == "\nInput format: f\n"
    assert styling_block(persona="p") == "\nWrite as this user: p\n"
    assert styling_block(scenario="s") == "\nScenario: s\n"
