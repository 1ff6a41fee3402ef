"""The context config's own checks, word for word and at their edges (mutmut makes no mutants of
decorated validators, so these were checked by planting their bugs by hand)."""

from __future__ import annotations

from typing import Any

import pytest

from synth import ContextConstructionConfig
from synth.errors import ConfigError


def refusal(**settings: Any) -> str:
    with pytest.raises(ConfigError) as info:
        ContextConstructionConfig(**settings)
    return str(info.value)


@pytest.mark.parametrize("name", ["target_files_per_context", "max_files_per_context"])
def test_deepeval_settings_we_cannot_honour_refused_with_the_alternative(name: str) -> None:
    assert refusal(**{name: 2}) == (
        f"invalid ContextConstructionConfig: {name} is not supported: a context is a seed chunk "
        "and its neighbours from the seed's own file; set allow_cross_file_contexts = true to let "
        "neighbours come from other files"
    )
    with pytest.raises(ConfigError, match=f"^invalid ContextConstructionConfig: {name} is not"):
        ContextConstructionConfig.model_validate({name: 2})


def test_an_unknown_encoding_refused_naming_the_known_ones_sorted() -> None:
    message = refusal(encoding="cl100k")
    head = (
        "invalid ContextConstructionConfig: encoding: unknown tiktoken encoding 'cl100k'; known: "
    )
    assert message.startswith(head)
    known = message.removeprefix(head).split(", ")
    assert known == sorted(known) and "cl100k_base" in known and "o200k_base" in known


def test_a_known_encoding_or_none_is_kept() -> None:
    assert ContextConstructionConfig(encoding="o200k_base").encoding == "o200k_base"
    assert ContextConstructionConfig().encoding is None
    assert ContextConstructionConfig(encoding=None).encoding is None


def test_ranges_refused_word_for_word() -> None:
    prefix = "invalid ContextConstructionConfig: "
    assert refusal(min_contexts_per_document=4) == (
        prefix + "min_contexts_per_document must not exceed max_contexts_per_document"
    )
    assert refusal(min_context_length=4) == (
        prefix + "min_context_length must not exceed max_context_length"
    )
    assert refusal(chunk_size=100, chunk_overlap=100) == (
        prefix + "chunk_overlap must be smaller than chunk_size"
    )


def test_ranges_at_their_edges_are_allowed() -> None:
    config = ContextConstructionConfig(
        min_contexts_per_document=3,
        max_contexts_per_document=3,
        min_context_length=2,
        max_context_length=2,
        chunk_size=100,
        chunk_overlap=99,
    )
    assert (config.min_contexts_per_document, config.min_context_length) == (3, 2)
    assert config.chunk_overlap == 99
