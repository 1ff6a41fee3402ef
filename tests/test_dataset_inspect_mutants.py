"""What tests/test_dataset_inspect.py left loose in synth/dataset/inspect.py: the summary a run's
manifest records (every key, the citation rate), the counts per question type, component and
language, the order of counts and labels, what counts as a number, and the word lengths."""

from __future__ import annotations

import math
from typing import Any

import pytest

from synth import ConfigError, Golden, HashEmbedder, inspect_dataset


def golden(question: str = "Why?", **fields: Any) -> Golden:
    return Golden(input=question, **fields)


def test_the_summary_holds_every_aggregate_and_the_citation_rate() -> None:
    cited = {"citations": [{"quote": "q"}], "grounding": {"score": 0.25}}
    goldens = [
        golden(expected_output="One two.", metadata=cited, source_files=["a.md"]),
        golden(expected_output="Three.", metadata={"citations": []}),
        golden(expected_output="Four.", metadata={"citations": [], "language": "de"}),
        golden(metadata={"difficulty": {"unanswerable": True, "overlap": 0.9}}),
    ]
    found = inspect_dataset(goldens, grounding_threshold=0.2, leak_threshold=0.85)
    assert found.summary() == {
        "goldens": 4,
        "per_file": {"(none)": 3, "a.md": 1},
        "per_evolution": {"(none)": 4},
        "per_difficulty": {"(unmeasured)": 4},
        "per_question_type": {"(none)": 4},
        "per_component": {"(none)": 4},
        "per_language": {"(none)": 3, "de": 1},
        "grounding_measured": 1,
        "grounded": 1,
        "grounding_rate": 1.0,
        "mean_grounding": 0.25,
        "cited": 1,
        "citation_rate": 0.3333,
        "unanswerable": 1,
        "leaks": 1,
        "input_words": {"count": 4, "mean": 1.0, "median": 1.0, "max": 1},
        "expected_words": {"count": 3, "mean": 4 / 3, "median": 1.0, "max": 2},
        "grounding_threshold": 0.2,
        "leak_threshold": 0.85,
    }


def test_a_summary_without_citations_checked_has_no_rate_nor_lengths() -> None:
    summary = inspect_dataset([]).summary()
    assert (summary["cited"], summary["citation_rate"]) == (None, None)
    assert (summary["input_words"], summary["expected_words"]) == (None, None)
    assert (summary["grounded"], summary["grounding_rate"]) == (None, None)
    # every answer checked lacks a citation: none cited, rate 0 (not None)
    lacking = [golden(expected_output="A.", metadata={"citations": []})]
    assert inspect_dataset(lacking).summary()["cited"] == 0
    assert inspect_dataset(lacking).summary()["citation_rate"] == 0.0


def test_types_components_and_languages_are_counted_most_first_then_by_name() -> None:
    goldens = [
        golden(metadata={"question_type": "multi_hop", "tests": "retrieval", "language": "fr"}),
        golden(metadata={"question_type": "comparison", "tests": "generation", "language": "de"}),
        golden(metadata={"question_type": "multi_hop", "tests": " ", "language": 3}),
        golden(metadata={"question_type": "", "tests": "retrieval", "language": "de"}),
    ]
    found = inspect_dataset(goldens)
    assert list(found.per_question_type.items()) == [
        ("multi_hop", 2),
        ("(none)", 1),
        ("comparison", 1),
    ]
    assert list(found.per_component.items()) == [
        ("retrieval", 2),
        ("(none)", 1),
        ("generation", 1),
    ]
    assert list(found.per_language.items()) == [("de", 2), ("(none)", 1), ("fr", 1)]


def test_labels_come_easy_medium_hard_then_others_sorted_then_unmeasured() -> None:
    labels = ["zeta", "hard", "", "alpha", "easy", "zeta", None, "medium"]
    goldens = [golden(metadata={"difficulty": {"label": label}}) for label in labels]
    assert list(inspect_dataset(goldens).per_difficulty.items()) == [
        ("easy", 1),
        ("medium", 1),
        ("hard", 1),
        ("alpha", 1),
        ("zeta", 2),
        ("(unmeasured)", 2),
    ]
    only_hard = [golden(metadata={"difficulty": {"label": "hard"}})]
    assert inspect_dataset(only_hard).per_difficulty == {"hard": 1}


def test_only_finite_numbers_that_are_not_booleans_count_as_scores() -> None:
    scores = [True, 1, 0.5, math.inf, -math.inf, "0.9", None, 0]
    goldens = [golden(metadata={"grounding": {"score": s}}) for s in scores]
    found = inspect_dataset(goldens)
    assert found.grounding_measured == 3
    assert found.grounded == 2
    assert found.mean_grounding == 0.5


@pytest.mark.parametrize("value", [True, -0.01, 1.01, math.nan, "0.5", None])
def test_a_threshold_that_is_not_a_number_from_zero_to_one_is_refused(value: object) -> None:
    with pytest.raises(ConfigError) as error:
        inspect_dataset([], leak_threshold=value)  # type: ignore[arg-type]
    assert str(error.value) == f"leak_threshold must be a number between 0 and 1, got {value!r}"


def test_thresholds_of_zero_and_one_are_taken_and_recorded() -> None:
    found = inspect_dataset([], duplicate_threshold=1, leak_threshold=0, grounding_threshold=1.0)
    assert found.settings.model_dump() == {
        "embedder": None,
        "duplicate_threshold": 1.0,
        "leak_threshold": 0.0,
        "grounding_threshold": 1.0,
    }
    default = inspect_dataset([]).settings
    assert (default.duplicate_threshold, default.leak_threshold) == (0.9, 0.8)
    assert default.grounding_threshold == 0.5


def test_evolutions_keep_only_their_names_and_a_golden_counts_once_per_name() -> None:
    goldens = [
        golden(metadata={"evolutions": ["reasoning", 3, "reasoning", "comparative"]}),
        golden(metadata={"evolutions": "comparative"}),
        golden(metadata={"evolutions": [7]}),
        golden(metadata={"evolutions": {"reasoning": 1}}),
    ]
    assert list(inspect_dataset(goldens).per_evolution.items()) == [
        ("(none)", 2),
        ("comparative", 2),
        ("reasoning", 1),
    ]


def test_a_blank_answer_lacks_no_citation_and_a_non_list_is_not_checked() -> None:
    goldens = [
        golden(expected_output="  ", metadata={"citations": []}),
        golden(expected_output="A.", metadata={"citations": {"quote": "q"}}),
        golden(expected_output="B.", metadata={"difficulty": {"unanswerable": 1}}),
    ]
    found = inspect_dataset(goldens)
    assert found.citations_checked == 1
    assert found.without_citation == [1, 2]
    assert found.unanswerable == []


def test_the_embedders_name_is_recorded_and_pairs_are_listed_once_each() -> None:
    goldens = [golden("Same question?"), golden("Same question?"), golden("Other thing")]
    found = inspect_dataset(goldens, embedder=HashEmbedder(), duplicate_threshold=1.0)
    assert found.settings.embedder == HashEmbedder().name
    assert [(p.i, p.j, p.similarity) for p in found.near_duplicates or []] == [(0, 1, 1.0)]


def test_word_lengths_take_the_median_of_an_even_count() -> None:
    goldens = [golden("one"), golden("one two"), golden("one two three four five six")]
    goldens.append(golden("a b c d"))
    lengths = inspect_dataset(goldens).input_words
    assert lengths is not None
    assert lengths.model_dump() == {"count": 4, "mean": 13 / 4, "median": 3.0, "max": 6}


class Labelled(HashEmbedder):
    """The hash embedder, recording the label each batch is embedded under."""

    def __init__(self) -> None:
        super().__init__()
        self.labels: list[str | None] = []

    def _embed_labelled(self, texts: Any, label: str | None) -> Any:
        self.labels.append(label)
        return super()._embed_labelled(texts, label)


def test_the_inputs_are_embedded_under_the_label_inspect() -> None:
    embedder = Labelled()
    inspect_dataset([golden("One?"), golden("Two?")], embedder=embedder)
    assert embedder.labels == ["inspect"]


def test_a_blank_embedder_spec_is_refused_naming_the_choices() -> None:
    with pytest.raises(ConfigError) as error:
        inspect_dataset([golden()], embedder="  ")
    assert str(error.value) == (
        "embedder: name one (hash, local:<model>, openai:<model>) or pass None"
    )
