"""Prompt templates: each refusal word for word, the per-language sets, and the version hash (what
mutation testing found unchecked)."""

from __future__ import annotations

from importlib import resources

import pytest

from synth._ids import joined_hash
from synth.errors import ConfigError
from synth.generate.config import Evolution
from synth.stage.templates import (
    SLOTS,
    SYSTEM,
    PromptSet,
    check_template,
    default_prompts,
    prompts_for,
)


def refusal(overrides: dict) -> str:
    with pytest.raises(ConfigError) as info:
        PromptSet(overrides)
    return str(info.value)


def test_an_unknown_prompt_refused_naming_the_known_ones_sorted() -> None:
    message = refusal({"nosuch": "x"})
    assert message.startswith(
        "unknown prompt 'nosuch'; known: check_alone, check_context, context_critic, conversation, "
        "evolution.comparative, "
        "evolution.concretizing, evolution.constrained, "
    )
    assert message.endswith(", rewrite, scope, style, tool_answer, tool_check, tool_requests")


@pytest.mark.parametrize("text", ["", "  \n", None, 3])
def test_an_empty_or_non_text_prompt_refused(text: object) -> None:
    assert refusal({"filter": text}) == "prompt 'filter' must be a non-empty string"


def test_a_lone_dollar_refused_word_for_word() -> None:
    assert refusal({"expected": "Costs $5 for $inputs"}) == (
        "prompt 'expected' has an invalid placeholder (write a literal $ as $$)"
    )


def test_unknown_variables_named_sorted_with_the_allowed_ones() -> None:
    assert refusal({"scope": "$items $zeta $alpha"}) == (
        "prompt 'scope' uses unknown variable(s) alpha, zeta; allowed: count, items"
    )
    assert refusal({"evolution.reasoning": "use $context"}) == (
        "prompt 'evolution.reasoning' uses unknown variable(s) context; allowed: none"
    )


def test_missing_required_variables_named_sorted() -> None:
    assert refusal({"evolve": "Evolve it"}) == "prompt 'evolve' must use $instructions, $items"
    assert refusal({"evolve": "Evolve $items"}) == "prompt 'evolve' must use $instructions"


def test_check_template_returns_the_text_as_a_template() -> None:
    template = check_template("scope", "Judge $items ($count)")
    assert template.template == "Judge $items ($count)"
    assert template.substitute(items="a", count=1) == "Judge a (1)"
    assert check_template("evolution.reasoning", "plain words").template == "plain words"


def test_a_language_set_is_filed_under_its_normalized_code() -> None:
    prompts = PromptSet({" DE ": {"scope": "Beurteile $items"}, "scope": "Judge $items"})
    assert prompts.languages == frozenset({"de"})
    assert prompts.overridden == frozenset({"scope"})
    assert prompts.text("scope") == "Judge $items"
    german = prompts.for_language("de")
    assert german.text("scope") == "Beurteile $items"
    assert german.render("scope", items="x", count=1) == "Beurteile x"


def test_a_bad_language_set_refused_naming_it() -> None:
    assert refusal({"xx": {"scope": "$items"}}) == (
        "prompt set 'xx': unknown language 'xx': use 'auto' or an ISO 639-1 code such as 'en', "
        "'de', 'ja'"
    )
    assert refusal({"de": {"scope": "$items", "filter": "no inputs"}}) == (
        "prompt set 'de': prompt 'filter' must use $inputs"
    )


def test_a_language_set_keeps_the_shared_overrides_and_the_runs_version() -> None:
    prompts = PromptSet({"filter": "Rate $inputs", "de": {"scope": "Beurteile $items"}})
    german = prompts.for_language("de")
    assert german.text("filter") == "Rate $inputs"
    assert german.text("style") == default_prompts().text("style")
    assert german.version == prompts.version
    assert german.overridden == frozenset({"filter", "scope"})
    assert prompts.for_language("de") is german
    assert prompts.text("scope") == default_prompts().text("scope")


def test_no_language_or_one_without_a_set_gives_the_set_itself() -> None:
    prompts = PromptSet({"de": {"scope": "Beurteile $items"}})
    assert prompts.for_language(None) is prompts
    assert prompts.for_language("fr") is prompts
    assert prompts.for_language("") is prompts
    assert default_prompts().languages == frozenset()


def test_the_version_hashes_the_system_message_and_every_text_in_order() -> None:
    folder = resources.files("synth.stage") / "prompts"
    texts = default_prompts()._texts
    assert texts["filter"] == (folder / "filter.txt").read_text(encoding="utf-8")
    parts = [SYSTEM, *(x for name in sorted(texts) for x in (name, texts[name])), ""]
    assert default_prompts().version == joined_hash(parts, 12, sep="\0")
    prompts = PromptSet({"de": {"scope": "B $items", "filter": "R $inputs"}})
    extra = ["de.filter", "R $inputs", "de.scope", "B $items"]
    assert prompts.version == joined_hash([*parts[:-1], *extra, ""], 12, sep="\0")


def test_language_sets_change_the_version_by_code_and_text() -> None:
    german = PromptSet({"de": {"scope": "B $items"}}).version
    assert german != default_prompts().version
    assert german != PromptSet({"fr": {"scope": "B $items"}}).version
    assert german != PromptSet({"de": {"scope": "C $items"}}).version
    assert german == PromptSet({"de": {"scope": "B $items"}}).version


def test_every_prompt_has_its_packaged_text() -> None:
    texts = default_prompts()._texts
    assert set(texts) == set(SLOTS)
    instruction = texts["evolution.reasoning"]
    assert instruction.startswith("require multi-step reasoning: the answer should follow")


def test_an_unknown_prompt_name_refused_by_text_and_render() -> None:
    prompts = default_prompts()
    with pytest.raises(ConfigError) as info:
        prompts.text("nosuch")
    assert str(info.value) == "unknown prompt 'nosuch'"
    with pytest.raises(ConfigError) as info:
        prompts.render("nosuch", items="x")
    assert str(info.value) == "unknown prompt 'nosuch'"


def test_render_fills_in_every_value_as_text() -> None:
    prompts = PromptSet({"scope": "$count: $items"})
    assert prompts.render("scope", items=["a"], count=2) == "2: ['a']"


def test_an_instruction_is_stripped_and_found_by_name() -> None:
    prompts = PromptSet({"evolution.reasoning": "  think twice.\n"})
    assert prompts.instruction(Evolution.REASONING) == "think twice."
    assert prompts.instruction("reasoning") == "think twice."


def test_repr_names_the_version_and_the_sorted_overrides() -> None:
    prompts = PromptSet({"scope": "$items", "filter": "$inputs"})
    assert repr(prompts) == (
        f"PromptSet(version={prompts.version!r}, overridden=['filter', 'scope'])"
    )


def test_the_packaged_set_is_made_once_and_used_when_none_is_given() -> None:
    assert default_prompts() is default_prompts()
    assert default_prompts().overridden == frozenset()
    assert prompts_for(None, None) is default_prompts()
    assert prompts_for(None, "de") is default_prompts()
    prompts = PromptSet({"de": {"scope": "B $items"}})
    assert prompts_for(prompts, "de") is prompts.for_language("de")
    assert prompts_for(prompts, None) is prompts
