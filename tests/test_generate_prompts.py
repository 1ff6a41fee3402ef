"""Prompt templates: packaged, versioned by hash, overridable per stage with checked variables."""

from __future__ import annotations

import pytest

from synth.errors import ConfigError
from synth.generate.config import Evolution
from synth.generate.templates import SLOTS, PromptSet, default_prompts


def test_every_template_is_packaged_and_valid() -> None:
    prompts = default_prompts()
    for name in SLOTS:
        assert prompts.text(name).strip(), name
    for evolution in Evolution:
        assert prompts.instruction(evolution)


def test_version_is_stable_and_changes_with_any_text() -> None:
    assert PromptSet().version == default_prompts().version
    assert len(default_prompts().version) == 12
    changed = PromptSet({"evolution.reasoning": "make it need two steps of reasoning."})
    assert changed.version != default_prompts().version
    assert changed.instruction(Evolution.REASONING) == "make it need two steps of reasoning."


def test_override_renders() -> None:
    prompts = PromptSet({"filter": "Rate these: $inputs (context: $context)"})
    assert (
        prompts.render("filter", inputs="[1] q", context="c", count=1)
        == "Rate these: [1] q (context: c)"
    )
    assert prompts.overridden == {"filter"}


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("filter", "Rate: $inputs and $nonsense", "unknown variable"),
        ("filter", "Rate these please", r"must use \$inputs"),
        ("evolve", "Evolve $input", r"must use \$instruction"),
        ("expected", "Costs $5 for $inputs", "invalid placeholder"),
        ("nosuchstage", "x", "unknown prompt"),
        ("inputs", "   ", "non-empty"),
        ("evolution.reasoning", "use $context", "unknown variable"),
    ],
)
def test_bad_override_is_refused_at_once(name: str, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        PromptSet({name: text})


def test_dollar_can_be_escaped() -> None:
    prompts = PromptSet({"expected": "Prices in $$: $inputs"})
    assert (
        prompts.render("expected", inputs="q", context="", count=1, output_format="")
        == "Prices in $: q"
    )
