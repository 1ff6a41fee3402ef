"""The plain-code checks of a finished input and its answer (synth/generate/input_checks.py)."""

from __future__ import annotations

import pytest

from synth._language import COMMON
from synth.generate import input_checks as checks

CONTEXT = [
    "The X200 battery has a warranty of ten years from the date of purchase, covering "
    "manufacturing defects and capacity loss below seventy percent."
]


#: a reference to the passage in each language synth writes most (``synth._language.COMMON``)
POINTERS = {
    "en": "What does the passage say about the X200 warranty?",
    "de": "Wie lange gilt die Garantie laut dem Text?",
    "fr": "Que dit le passage sur la batterie ?",
    "es": "¿Qué dice el texto sobre la garantía?",
    "it": "Cosa dice il testo sulla garanzia?",
    "pt": "O que diz o trecho sobre a garantia?",
    "nl": "Wat zegt de tekst over de garantie?",
    "pl": "Co mówi ten fragment o gwarancji? W tym tekście",
    "sv": "Vad säger texten om garantin? Enligt texten",
    "ru": "Что сказано в тексте о гарантии?",
    "ja": "本文によると保証期間は何年ですか？",
    "zh": "根据上文，保修期是多久？",
    "ko": "이 글에 따르면 보증 기간은 얼마입니까?",
}
#: a hedging answer in each of those languages
HEDGES = {
    "en": "The context does not say exactly; it only mentions that the warranty is long.",
    "de": "Die Dauer ist nicht angegeben.",
    "fr": "Le texte n'indique pas la durée de la garantie.",
    "es": "No se especifica la duración de la garantía.",
    "it": "La durata della garanzia non è specificata.",
    "pt": "O texto não especifica a duração da garantia.",
    "nl": "De duur van de garantie wordt niet vermeld.",
    "pl": "Okres gwarancji nie jest podany.",
    "sv": "Garantins längd anges inte.",
    "ru": "Срок гарантии не указан.",
    "ja": "保証期間は記載されていません。",
    "zh": "文中没有提到保修期。",
    "ko": "보증 기간은 언급되지 않았습니다.",
}


def test_every_common_language_has_its_reference_and_its_hedge_checked() -> None:
    # a language added to the ones synth writes most must come with its phrases here
    assert set(POINTERS) == set(HEDGES) == set(COMMON)


@pytest.mark.parametrize("code", sorted(HEDGES))
def test_a_hedge_is_found_in_every_common_language(code: str) -> None:
    assert checks.hedged(HEDGES[code]), code


@pytest.mark.parametrize(
    "text",
    [
        *POINTERS.values(),
        "According to the document, how long is the warranty?",
        "What is mentioned above about capacity loss?",
        "In this section, which defects are covered?",
        "Based on the provided text, when does the warranty start?",
        "What does this say about capacity loss?",
        "How long a warranty does this state for the battery?",
    ],
)
def test_a_reference_to_the_passage_is_found_in_every_common_language(text: str) -> None:
    found = checks.meta_reference(text)
    assert found is not None and found.reason == checks.META_REFERENCE
    assert "never sees" in found.detail


@pytest.mark.parametrize(
    "text",
    [
        "What is the context window of the X200 assistant?",
        "How do I sign the document the installer leaves?",
        "What does the section 'Battery care' say about winter storage?",
        "How long is the X200 battery warranty?",
        "What does the X200 manual say about capacity loss?",
        "What does it cost to replace the X200 battery?",
    ],
)
def test_a_question_that_names_its_subject_is_no_reference(text: str) -> None:
    assert checks.meta_reference(text) is None


def test_eight_words_in_a_row_from_the_context_are_a_copied_span_and_seven_are_not() -> None:
    copied = "Is it true that the X200 battery has a warranty of ten years?"
    found = checks.copied_span(copied, CONTEXT)
    assert found is not None and found.reason == checks.COPIED_SPAN
    assert "the x200 battery has a warranty of ten" in found.detail
    own = "Does the X200 battery have a warranty of ten years?"  # "have" breaks the run
    assert checks.copied_span(own, CONTEXT) is None
    assert checks.copied_span("the X200 battery has a warranty of", CONTEXT) is None  # 7 words


def test_a_cjk_span_counts_in_character_pairs() -> None:
    source = ["電池の保証期間は購入日から十年間で、製造上の欠陥と容量の低下を対象とします。"]
    assert checks.copied_span("電池の保証期間は購入日から十年間ですか？", source) is not None
    assert checks.copied_span("保証は何年ですか？", source) is None


def test_two_question_marks_after_clauses_of_their_own_are_a_double_question() -> None:
    found = checks.double_question("How long is the warranty? And who pays for shipping?")
    assert found is not None and found.reason == checks.DOUBLE_QUESTION
    assert checks.double_question("How long is the X200 warranty?") is None
    assert checks.double_question("Is it ten years? Or?") is None  # one word is no question
    assert checks.input_problems("How long? Why?", []) == []  # a one-word clause asks nothing
    double = "How long is the warranty? Who pays for shipping?"
    assert checks.input_problems(double, [], allow_double=True) == []


def test_an_input_over_the_budget_is_too_long() -> None:
    at = " ".join(["word"] * checks.MAX_INPUT_WORDS) + "?"
    assert checks.too_long(at) is None
    over = checks.too_long(at + " more")
    assert over is not None and over.reason == checks.TOO_LONG and "81 words" in over.detail


def test_a_question_that_gained_the_answers_facts_leaks_it_and_one_that_named_its_subject_not() -> (
    None
):
    first = "How long is the battery warranty?"
    answer = "The X200 battery has a warranty of ten years from the date of purchase."
    leaked = checks.answer_leak(
        "Is the X200 battery warranty ten years from purchase?", answer, first, CONTEXT
    )
    assert leaked is not None and leaked.reason == checks.ANSWER_LEAKED
    assert "ten" in leaked.detail and "year" in leaked.detail
    # gained in an evolution: three of the five words the first version lacked
    gained = "Is the X200 battery warranty ten years?"
    assert checks.answer_leak(gained, answer, first, CONTEXT) is not None
    assert checks.answer_leak(gained, answer, None, CONTEXT) is None  # it states 5 of 7 only
    # concretizing names the product: one word of the answer gained is no leak
    assert (
        checks.answer_leak("How long is the X200 battery warranty?", answer, first, CONTEXT) is None
    )
    # words the question had from the start are its subject, not a leak
    assert checks.answer_leak(first, "The battery warranty is long.", first, CONTEXT) is None


@pytest.mark.parametrize(
    "answer",
    [
        "The context does not say exactly; it only mentions that the warranty is long.",
        "The warranty length is not specified.",
        "It is unclear how long the warranty lasts.",
        "Die Dauer ist nicht angegeben.",
        "保証期間は記載されていません。",
    ],
)
def test_a_hedge_is_found(answer: str) -> None:
    assert checks.hedged(answer)


def test_a_plain_answer_is_no_hedge() -> None:
    assert checks.hedged("The X200 battery has a warranty of ten years.") is None
