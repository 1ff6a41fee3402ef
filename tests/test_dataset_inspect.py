"""synth.inspect_dataset: counts, grounding, citations, leaks and near duplicates of a dataset."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from synth import ConfigError, Dataset, DatasetInspection, Golden, HashEmbedder, inspect_dataset
from synth.dataset import inspect as inspect_module
from synth.dataset.inspect import DuplicatePair, Leak


def _golden(question: str = "What is the refund window?", **fields: Any) -> Golden:
    return Golden(input=question, **fields)


def _measured(
    label: str = "easy",
    overlap: float = 0.1,
    score: float = 1.0,
    citations: list[dict[str, Any]] | None = None,
    unanswerable: bool = False,
) -> dict[str, Any]:
    """The metadata a synth golden carries once every trust measurement has run."""
    return {
        "evolutions": ["reasoning"],
        "difficulty": {
            "bm25_rank": 1,
            "dense_rank": 2,
            "overlap": overlap,
            "label": label,
            "chunks": 1,
            "unanswerable": unanswerable,
        },
        "grounding": {"score": score, "quotes": 1, "found": 1, "all_found": score == 1.0},
        "citations": citations if citations is not None else [_citation()],
    }


def _citation() -> dict[str, Any]:
    return {"quote": "30 days", "chunk_id": "c1", "start": 0, "end": 7, "page": None, "ratio": 1.0}


# ---- a dataset with none of the measurements ------------------------------------------------------
def test_a_dataset_without_measurements_is_counted_and_reported_unmeasured() -> None:
    goldens = [
        _golden(expected_output="30 days.", source_files=["a.md"]),
        _golden("Who signs it?", expected_output="", source_files=["a.md", "b.md"]),
        _golden("When?"),
    ]
    found = inspect_dataset(goldens)
    assert found.goldens == 3
    assert found.per_file == {"a.md": 2, "(none)": 1, "b.md": 1}
    assert found.per_evolution == {"(none)": 3}
    assert found.per_difficulty == {"(unmeasured)": 3}
    assert (found.grounding_measured, found.grounded, found.grounding_rate) == (0, None, None)
    assert found.mean_grounding is None
    # only the golden with a non-blank answer lacks a citation; nothing records citations at all
    assert (found.citations_checked, found.without_citation) == (0, [0])
    assert found.unanswerable == [] and found.leaks == []
    assert found.near_duplicates is None and found.settings.embedder is None


def test_an_empty_dataset_has_no_lengths() -> None:
    found = inspect_dataset([])
    assert found.goldens == 0 and found.per_file == {} and found.per_difficulty == {}
    assert found.input_words is None and found.expected_words is None


def test_another_tools_file_is_inspected(tmp_path: Path) -> None:
    """A deepeval goldens JSON (a plain list, source_file, no metadata) reads as unmeasured."""
    path = tmp_path / "deepeval.json"
    rows = [
        {"input": "How fast is P-4?", "expected_output": "Fast.", "context": ["P-4 is fast."]},
        {"input": "How loud is it?", "source_file": "pumps.md", "additional_metadata": None},
    ]
    path.write_text(json.dumps(rows), encoding="utf-8")
    found = inspect_dataset(path)
    assert found.per_file == {"(none)": 1, "pumps.md": 1}
    assert found.per_difficulty == {"(unmeasured)": 2}
    assert found.without_citation == [0]
    assert found.leaks == [Leak(index=0, overlap=1.0, measured="computed")]  # "fast"
    assert found == inspect_dataset(str(path)) == inspect_dataset(Dataset.load(path))


# ---- the measurements synth records ---------------------------------------------------------------
def test_measured_goldens_are_counted_by_label_grounding_and_citation() -> None:
    goldens = [
        _golden(expected_output="30 days.", metadata=_measured("hard", score=0.5)),
        _golden(expected_output="Yes.", metadata=_measured("easy", score=0.49, citations=[])),
        _golden(expected_output="No.", metadata=_measured("medium", score=1.0)),
        _golden(
            expected_output="Not said.", metadata=_measured("odd", citations=[], unanswerable=True)
        ),
        _golden(expected_output="Maybe."),  # measured nothing
    ]
    found = inspect_dataset(goldens)
    assert found.per_difficulty == {"easy": 1, "medium": 1, "hard": 1, "odd": 1, "(unmeasured)": 1}
    assert found.per_evolution == {"reasoning": 4, "(none)": 1}
    # 0.5 is at the threshold, so grounded; 0.49 is not
    assert (found.grounding_measured, found.grounded) == (4, 3)
    assert found.grounding_rate == 0.75
    assert found.mean_grounding == pytest.approx((0.5 + 0.49 + 1.0 + 1.0) / 4)
    # [] = checked, none found; missing = listed too; the unanswerable one has nothing to cite
    assert found.citations_checked == 4
    assert found.without_citation == [1, 4]
    assert found.unanswerable == [3]


def test_the_grounding_threshold_moves_the_rate() -> None:
    goldens = [_golden(metadata=_measured(score=s)) for s in (0.2, 0.6, 0.9)]
    assert inspect_dataset(goldens, grounding_threshold=0.6).grounded == 2
    assert inspect_dataset(goldens, grounding_threshold=0.61).grounded == 1
    assert inspect_dataset(goldens, grounding_threshold=0.0).grounding_rate == 1.0


def test_measurements_of_another_shape_count_as_unmeasured() -> None:
    odd = {
        "difficulty": ["hard"],
        "grounding": {"score": "high"},
        "citations": "none",
        "evolutions": "reasoning",
    }
    nan = {"grounding": {"score": math.nan}, "difficulty": {"label": 3, "overlap": True}}
    found = inspect_dataset([_golden(expected_output="x", metadata=odd), _golden(metadata=nan)])
    assert found.per_difficulty == {"(unmeasured)": 2}
    assert found.grounding_measured == 0 and found.grounding_rate is None
    assert found.per_evolution == {"(none)": 1, "reasoning": 1}  # one name, not a list
    assert found.citations_checked == 0 and found.without_citation == [0]
    assert json.loads(json.dumps(found.model_dump(mode="json")))["goldens"] == 2


def test_a_golden_naming_a_file_twice_counts_once() -> None:
    found = inspect_dataset([_golden(source_files=["a.md", "a.md"], metadata={"evolutions": []})])
    assert found.per_file == {"a.md": 1} and found.per_evolution == {"(none)": 1}


# ---- leaks ----------------------------------------------------------------------------------------
def test_a_leak_is_at_or_above_the_threshold() -> None:
    goldens = [_golden(metadata=_measured(overlap=v)) for v in (0.8, 0.79, 0.95)]
    found = inspect_dataset(goldens, leak_threshold=0.8)
    assert found.leaks == [
        Leak(index=2, overlap=0.95, measured="difficulty"),
        Leak(index=0, overlap=0.8, measured="difficulty"),
    ]


def test_a_leak_is_computed_from_the_context_when_difficulty_does_not_say() -> None:
    # content words: refund, window; the context has refund only
    half = _golden(context=["Refunds? The refund is paid back."])
    whole = _golden(context=["The refund window is 30 days."])
    none = _golden(context=None)
    found = inspect_dataset([half, whole, none], leak_threshold=0.5)
    assert found.leaks == [
        Leak(index=1, overlap=1.0, measured="computed"),
        Leak(index=0, overlap=0.5, measured="computed"),
    ]
    assert [leak.index for leak in inspect_dataset([half], leak_threshold=0.51).leaks] == []


def test_the_recorded_overlap_wins_over_the_text() -> None:
    golden = _golden(context=["The refund window is 30 days."], metadata=_measured(overlap=0.2))
    assert inspect_dataset([golden]).leaks == []


# ---- near duplicates ------------------------------------------------------------------------------
def test_identical_inputs_are_a_pair_at_one_and_different_ones_are_not() -> None:
    goldens = [
        _golden("What is the refund window?"),
        _golden("How loud is the P-4 pump at full speed?"),
        _golden("What is the refund window?"),
    ]
    found = inspect_dataset(goldens, embedder="hash")
    assert found.near_duplicates == [DuplicatePair(i=0, j=2, similarity=1.0)]
    assert found.settings.embedder == "hash:384"
    assert inspect_dataset(goldens, embedder="hash", duplicate_threshold=1.0).near_duplicates == [
        DuplicatePair(i=0, j=2, similarity=1.0)
    ]


def test_pairs_come_most_similar_first_and_the_threshold_cuts_them() -> None:
    goldens = [
        _golden("What is the refund window for the Hearth battery?"),
        _golden("What is the refund window for the Hearth battery module?"),
        _golden("What is the refund window for the Hearth battery?"),
    ]
    pairs = inspect_dataset(goldens, embedder="hash", duplicate_threshold=0.0).near_duplicates
    assert pairs is not None
    assert [(p.i, p.j) for p in pairs] == [(0, 2), (0, 1), (1, 2)]
    assert pairs[0].similarity == 1.0 and 0.5 < pairs[1].similarity == pairs[2].similarity < 1.0
    cut = (pairs[1].similarity + 1.0) / 2
    found = inspect_dataset(goldens, embedder="hash", duplicate_threshold=cut)
    assert [(p.i, p.j) for p in found.near_duplicates or []] == [(0, 2)]


def test_pairs_across_blocks_of_the_similarity_matrix_are_found_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    questions = ["refund window", "pump noise", "battery size", "refund window", "pump noise"]
    goldens = [_golden(q) for q in questions]
    whole = inspect_dataset(goldens, embedder="hash")
    monkeypatch.setattr(inspect_module, "_BLOCK", 2)
    assert inspect_dataset(goldens, embedder="hash") == whole
    assert [(p.i, p.j) for p in whole.near_duplicates or []] == [(0, 3), (1, 4)]


class _Counting(HashEmbedder):
    closed = 0

    def close(self) -> None:
        type(self).closed += 1


@pytest.fixture(autouse=True)
def _no_closes_yet() -> None:
    _Counting.closed = 0


def test_an_embedder_passed_in_is_used_and_left_open() -> None:
    embedder = _Counting()
    found = inspect_dataset([_golden(), _golden()], embedder=embedder)
    assert found.near_duplicates == [DuplicatePair(i=0, j=1, similarity=1.0)]
    assert embedder.texts_embedded == 2 and _Counting.closed == 0


def test_an_embedder_made_from_a_spec_is_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    made = _Counting()
    monkeypatch.setattr("synth.store.embedders.make_embedder", lambda spec: made)
    assert inspect_dataset([_golden()], embedder="hash").settings.embedder == "hash:384"
    assert _Counting.closed == 1


def test_a_blank_embedder_spec_is_refused() -> None:
    with pytest.raises(ConfigError, match="embedder"):
        inspect_dataset([_golden()], embedder=" ")


# ---- arguments and the record ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("duplicate_threshold", 1.5),
        ("leak_threshold", -0.1),
        ("grounding_threshold", math.nan),
        ("leak_threshold", True),
        ("duplicate_threshold", "0.9"),
    ],
)
def test_a_threshold_outside_zero_to_one_is_refused(name: str, value: object) -> None:
    with pytest.raises(ConfigError, match=f"{name} must be a number between 0 and 1"):
        inspect_dataset([_golden()], **{name: value})  # type: ignore[arg-type]


def test_word_lengths_are_summarised() -> None:
    goldens = [
        _golden("one two three", expected_output="a b"),
        _golden("one two three four five"),
        _golden("one", expected_output="a b c d"),
    ]
    found = inspect_dataset(goldens)
    assert found.input_words is not None and found.expected_words is not None
    assert found.input_words.model_dump() == {"count": 3, "mean": 3.0, "median": 3.0, "max": 5}
    assert found.expected_words.model_dump() == {"count": 2, "mean": 3.0, "median": 3.0, "max": 4}


def test_the_inspection_round_trips_through_json() -> None:
    goldens = [_golden(expected_output="30 days.", metadata=_measured()), _golden()]
    found = inspect_dataset(goldens, embedder="hash", leak_threshold=0.0)
    text = json.dumps(found.model_dump(mode="json"))
    assert DatasetInspection.model_validate(json.loads(text)) == found


# ---- The summary a run's manifest records (every key, the citation rate), the counts per question
# type, component and language, the order of counts and labels, what counts as a number, and the
# word lengths.


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
