"""The dataset card's parts (synth/dataset/_card.py and _card_body.py), fast: each function called
with goldens and manifest-like dicts built here, and what the card says checked line by line. The
card of a real run is tests/test_dataset_card.py's (slow: a whole ``synth generate``)."""

from __future__ import annotations

import re
from html import escape
from typing import Any

import pytest
import yaml

from synth import ConversationalGolden, Dataset, Golden, Turn
from synth.dataset import _card_body as body
from synth.dataset._card import (
    card_languages,
    dataset_card,
    feature_list,
    front_matter,
    size_category,
)
from synth.dataset.inspect import DatasetInspection, inspect_dataset

PLAIN_FIELDS = [
    ("input", "dtype"),
    ("actual_output", "dtype"),
    ("expected_output", "dtype"),
    ("context", "list"),
    ("retrieval_context", "list"),
    ("context_ids", "list"),
    ("source_files", "list"),
    ("metadata", "dtype"),
]
FEATURES = [{"name": name, key: "string"} for name, key in PLAIN_FIELDS]
CONVERSATION_FEATURES = [
    *FEATURES,
    *({"name": name, "dtype": "string"} for name in ("scenario", "expected_outcome")),
    *({"name": name, "dtype": "string"} for name in ("user_description", "turns")),
]


def _inspection(dataset: Dataset, threshold: float = 0.5) -> DatasetInspection:
    return inspect_dataset(dataset, grounding_threshold=threshold)


def _parts(text: str) -> tuple[dict[str, Any], str]:
    """The card's front matter (parsed) and its body."""
    assert text.startswith("---\n")
    yaml_text, markdown = text[4:].split("\n---\n\n", 1)
    return yaml.safe_load(yaml_text), markdown


def _threshold_line(text: str) -> str:
    (line,) = [line for line in text.splitlines() if line.startswith("- Grounding")]
    return line


def _section(text: str, heading: str) -> list[str]:
    """The lines of one ``## heading`` section, up to the next one."""
    lines = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return lines.splitlines()


def _rich_run() -> dict[str, Any]:
    return {
        "run_id": "run-7",
        "mode": "generic",
        "status": "completed",
        "created_at": "2026-01-01T00:00:00Z",
        "inputs": {"files": 5, "chunks": 12, "languages": {"en": 2, "de": 1}},
        "coverage": {
            "files": [{"source": "docs/a.md"}, {"source": "b.PDF"}, {"source": "c"}, "x.txt"],
            "files_covered": 2,
            "files_ingested": 3,
            "rule": "each file",
        },
        "models": {
            "generator": {"provider": "openai", "model": "gpt-x", "base_url": "http://gw"},
            "critic": {"model": "m-only"},
            "embedder": {"embedder": "hash"},
        },
        "versions": {"synth": "0.1", "python": "3.11"},
        "seed": 42,
        "num_goldens": 4,
        "delivered": 2,
        "prompt_version": "p3",
        "config": {"generation": {"grounding_threshold": 0.3}, "note": "é"},
        "stages": [
            {"stage": "inputs", "items_in": 4, "items_out": 3, "dropped": {"dup": 1}},
            {"stage": "filter", "items_in": 3, "items_out": 2, "dropped": {"bad": 2, "dup": 2}},
            "not a stage",
        ],
        "totals": {
            "requests": 10,
            "embedding_requests": 2,
            "cached": 1,
            "input_tokens": 100,
            "output_tokens": 50,
            "cost_usd": 0.123456,
        },
        "requests_per_golden": 5.0,
    }


def _goldens() -> Dataset:
    first = Golden(
        input="What is A?",
        expected_output="A is B.",
        context=["A is B."],
        source_files=["docs/a.md"],
        metadata={
            "evolutions": ["reasoning"],
            "difficulty": {"label": "hard"},
            "grounding": {"score": 0.9},
            "citations": ["A is B"],
            "question_type": "factual",
            "language": "en",
        },
    )
    second = Golden(
        input="Why so?",
        expected_output="Because.",
        context=["x"],
        source_files=["b.PDF"],
        metadata={"grounding": {"score": 0.2}, "citations": []},
    )
    return Dataset([first, second], {"run_id": "from-metadata"})


# ---- _card.py: the front matter, the title, the threshold ---------------------------------------
@pytest.mark.parametrize(
    ("count", "label"),
    [
        (999, "n<1K"),
        (1_000, "1K<n<10K"),
        (9_999, "1K<n<10K"),
        (10_000, "10K<n<100K"),
        (99_999, "10K<n<100K"),
        (100_000, "100K<n<1M"),
        (999_999, "100K<n<1M"),
        (1_000_000, "1M<n<10M"),
        (9_999_999, "1M<n<10M"),
        (10_000_000, "n>10M"),
    ],
)
def test_each_size_category_starts_at_its_bound(count: int, label: str) -> None:
    assert size_category(count) == label


def test_the_front_matter_holds_the_hubs_fields_in_order() -> None:
    front, _ = _parts(dataset_card(_goldens(), _rich_run()))
    assert list(front) == [
        "license",
        "pretty_name",
        "task_categories",
        "language",
        "size_categories",
        "tags",
        "configs",
        "dataset_info",
    ]
    assert front == {
        "license": "unknown",
        "pretty_name": "synth test set (run run-7)",
        "task_categories": ["question-answering", "text-generation"],
        "language": ["de", "en"],
        "size_categories": ["n<1K"],
        "tags": ["synthetic", "evaluation", "rag", "synth"],
        "configs": [
            {
                "config_name": "default",
                "data_files": [{"split": "train", "path": "data/train-*.parquet"}],
            }
        ],
        "dataset_info": {
            "features": FEATURES,
            "splits": [{"name": "train", "num_examples": 2}],
        },
    }


def test_the_front_matter_function_gives_the_same_dict() -> None:
    dataset = Dataset([Golden(input="q")])
    front = front_matter(dataset, {}, _inspection(dataset), "T")
    assert "language" not in front
    assert front["pretty_name"] == "T"
    assert front["dataset_info"]["splits"] == [{"name": "train", "num_examples": 1}]


def test_a_long_unicode_title_is_written_whole_on_one_line() -> None:
    title = "Jeu de test : « é » " + "mot " * 60
    text = dataset_card(Dataset([Golden(input="q")]), title=title)
    assert f"\npretty_name: '{title}'\ntask_categories:\n" in text
    front, markdown = _parts(text)
    assert front["pretty_name"] == title
    assert markdown.startswith(f"# {title}\n\n1 evaluation goldens ")
    assert text.startswith("---\nlicense: unknown\npretty_name: ")
    assert text.endswith("to the corpus's license before publishing.\n")


def test_the_title_names_the_runs_id_then_the_datasets_then_none() -> None:
    dataset = Dataset([Golden(input="q")], {"run_id": "meta-run"})
    assert _parts(dataset_card(dataset, {"run_id": "man-run"}))[0]["pretty_name"] == (
        "synth test set (run man-run)"
    )
    assert _parts(dataset_card(dataset))[0]["pretty_name"] == "synth test set (run meta-run)"
    plain = Dataset([Golden(input="q")])
    assert _parts(dataset_card(plain))[0]["pretty_name"] == "synth test set"
    assert _parts(dataset_card(plain, {"run_id": ""}))[0]["pretty_name"] == "synth test set"
    assert _parts(dataset_card(dataset, title="Mine"))[0]["pretty_name"] == "Mine"


def _graded(metadata: dict[str, Any] | None = None) -> Dataset:
    goldens = [
        Golden(input="q1", metadata={"grounding": {"score": score}}) for score in (0.0, 0.3, 1.0)
    ]
    return Dataset(goldens, metadata)


def _config(threshold: object) -> dict[str, Any]:
    return {"config": {"generation": {"grounding_threshold": threshold}}}


def test_the_card_counts_grounding_at_the_runs_threshold() -> None:
    line = _threshold_line(dataset_card(_graded(), _config(0.3)))
    assert line == (
        "- Grounding measured on 3 goldens: 2 at or above the threshold 0.3 "
        "(rate 0.6667, mean score 0.4333)"
    )
    # the bounds are thresholds too, and an int is one
    assert "3 at or above the threshold 0.0 " in _threshold_line(
        dataset_card(_graded(), _config(0))
    )
    assert "1 at or above the threshold 1.0 " in _threshold_line(
        dataset_card(_graded(), _config(1))
    )


def test_the_manifests_threshold_comes_before_the_datasets() -> None:
    dataset = _graded(_config(1.0))
    assert "the threshold 0.3 " in _threshold_line(dataset_card(dataset, _config(0.3)))
    assert "the threshold 1.0 " in _threshold_line(dataset_card(dataset))
    # a manifest whose config names no threshold leaves the dataset's
    no_threshold = {"config": {"generation": {"seed": 1}}}
    assert "the threshold 1.0 " in _threshold_line(dataset_card(dataset, no_threshold))
    not_a_mapping = {"config": {"generation": [0.3]}}
    assert "the threshold 1.0 " in _threshold_line(dataset_card(dataset, not_a_mapping))
    assert "the threshold 1.0 " in _threshold_line(dataset_card(dataset, {"config": "x"}))


@pytest.mark.parametrize("threshold", [True, False, 1.5, -0.1, "0.3", None])
def test_a_threshold_that_is_no_share_falls_back_to_one_half(threshold: object) -> None:
    line = _threshold_line(dataset_card(_graded(_config(threshold)), _config(threshold)))
    assert line.startswith("- Grounding measured on 3 goldens: 1 at or above the threshold 0.5 ")


def test_the_features_are_the_columns_lists_as_lists() -> None:
    assert feature_list([Golden(input="q")]) == FEATURES
    assert feature_list() == FEATURES
    conversation = ConversationalGolden(turns=[Turn(role="user", content="hi")])
    assert feature_list([Golden(input="q"), conversation]) == CONVERSATION_FEATURES


def test_languages_come_from_the_run_and_the_goldens_sorted_once_each() -> None:
    goldens = [
        Golden(input="q", metadata={"language": "fr"}),
        Golden(input="q", metadata={"language": "de"}),
        Golden(input="q", metadata={"language": ""}),
        Golden(input="q", metadata={"language": " "}),
        Golden(input="q", metadata={"language": 7}),
        Golden(input="q"),
    ]
    dataset = Dataset(goldens)
    assert card_languages(dataset, {"inputs": {"languages": {"en": 3, "de": 1}}}) == [
        "de",
        "en",
        "fr",
    ]
    assert card_languages(dataset, {"inputs": {"languages": ["pt", 1, " "]}}) == [
        "1",
        "de",
        "fr",
        "pt",
    ]
    assert card_languages(dataset, {"inputs": {"languages": "en"}}) == ["de", "fr"]
    assert card_languages(dataset, {"inputs": ["en"]}) == ["de", "fr"]
    assert card_languages(Dataset([Golden(input="q")]), {}) == []


def test_the_card_names_the_repo_it_is_pushed_to() -> None:
    text = dataset_card(Dataset([Golden(input="q")]), repo="me/set")
    assert "\ngoldens = load_dataset('me/set', split=\"train\")\n" in text


# ---- _card_body.py: escaping -------------------------------------------------------------------
def test_a_cell_is_escaped_text_on_one_line() -> None:
    assert body.cell('<b>&"x"</b>') == '&lt;b&gt;&amp;"x"&lt;/b&gt;'
    assert body.cell("a | b") == "a \\| b"
    assert body.cell("one  \r\n\n  two\rthree\nfour") == "one two three four"
    assert body.cell("keep  inner   spaces") == "keep  inner   spaces"
    assert body.cell(None) == "None" and body.cell(3) == "3"


def test_a_file_name_in_the_card_renders_as_the_text_it_is() -> None:
    """A name from the corpus makes no link, image (a tracking pixel), emphasis, code or tag on
    the Hub's page: rendered, the cell reads back as the name."""
    from markdown_it import MarkdownIt

    name = (
        "docs/see [the guide](https://phish.example) ![x](https://t.example/p.png) *now* `a`_b_ "
        "<i>~~c~~</i>.md"
    )
    text = dataset_card(Dataset([Golden(input="q", source_files=[name])]))
    (row,) = [line for line in text.splitlines() if "phish" in line]
    html = (
        MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(f"| f |\n| --- |\n{row}")
    )
    cells = re.findall(r"<td>(.*?)</td>", html)
    assert cells[0] == escape(name, quote=False)  # the name as text, nothing made of it


def test_a_fence_is_longer_than_any_backticks_inside() -> None:
    assert body.fenced("plain") == ["```", "plain", "```"]
    assert body.fenced("a `b` ``c``", "json") == ["```json", "a `b` ``c``", "```"]
    assert body.fenced("x ```` y `") == ["`````", "x ```` y `", "`````"]


def test_a_table_is_a_header_a_rule_and_escaped_rows_then_a_blank() -> None:
    assert body.table(["a", "b|c"], [[1, "<x>"], ["y", None]]) == [
        "| a | b\\|c |",
        "| --- | --- |",
        "| 1 | &lt;x&gt; |",
        "| y | None |",
        "",
    ]
    assert body.table(["only"], []) == ["| only |", "| --- |", ""]


# ---- _card_body.py: the sections ---------------------------------------------------------------
def test_the_summary_names_the_run_or_says_there_is_none() -> None:
    dataset = Dataset([Golden(input="q"), Golden(input="r")])
    run = {"run_id": "r|1", "status": "partial", "created_at": "2026-02-03"}
    first = (
        "2 evaluation goldens (question, reference answer, ground-truth context) generated by "
        "synth from a document corpus, for testing LLM and RAG systems."
    )
    assert body.summary(dataset, run) == [
        f"{first} Run `r\\|1` (docs mode, status partial, started 2026-02-03).",
        "",
    ]
    assert body.summary(dataset, {**run, "mode": "generic"})[0].endswith(
        "Run `r\\|1` (generic mode, status partial, started 2026-02-03)."
    )
    assert body.summary(dataset, {}) == [
        f"{first} No run manifest was found for it, so the run's settings are not listed.",
        "",
    ]


def test_a_short_set_says_what_was_asked_and_the_first_reason() -> None:
    def said(metadata: dict[str, Any]) -> str:
        line = body.summary(Dataset([Golden(input="q")], metadata), {})[0]
        return line.split("are not listed.", 1)[1]

    reasons = ["dropped <at> filter", "second reason"]
    assert said({"num_goldens": 5, "delivered": 1, "shortfall": reasons}) == (
        " Asked for 5, delivered 1: dropped &lt;at&gt; filter."
    )
    assert said({"num_goldens": 5, "delivered": 4}) == (
        " Asked for 5, delivered 4: no reason was recorded."
    )
    assert said({"num_goldens": 5, "delivered": 4, "shortfall": []}) == (
        " Asked for 5, delivered 4: no reason was recorded."
    )
    assert said({"num_goldens": 5, "delivered": 5, "shortfall": reasons}) == ""
    assert said({"num_goldens": "5", "delivered": 1, "shortfall": reasons}) == ""
    assert said({"num_goldens": 5, "delivered": 1.0, "shortfall": reasons}) == ""
    assert said({"delivered": 1}) == ""


def test_the_corpus_section_of_a_run_lists_its_facts_and_files() -> None:
    dataset = _goldens()
    assert body.corpus(dataset, _rich_run(), _inspection(dataset)) == [
        "## Source corpus",
        "",
        "- Files: 5",
        "- Chunks stored: 12",
        "- Files with goldens: 2 of 3 (coverage rule: each file)",
        "- File types: (none) 1, .md 1, .pdf 1",
        "- Languages: en 2, de 1",
        "",
        "Goldens per file:",
        "",
        "| file | goldens |",
        "| --- | --- |",
        "| b.PDF | 1 |",
        "| docs/a.md | 1 |",
        "",
    ]


def test_without_a_run_the_corpus_is_the_goldens_files() -> None:
    goldens = [
        Golden(input="q", source_files=["a.TXT", "b.md"]),
        Golden(input="q", source_files=["a.TXT"]),
        Golden(input="q"),
    ]
    dataset = Dataset(goldens)
    assert body.corpus(dataset, {}, _inspection(dataset)) == [
        "## Source corpus",
        "",
        "- Files: 2",
        "- File types: .md 1, .txt 1",
        "",
        "Goldens per file:",
        "",
        "| file | goldens |",
        "| --- | --- |",
        "| a.TXT | 2 |",
        "| (none) | 1 |",
        "| b.md | 1 |",
        "",
    ]
    # a run's coverage that lists no file leaves the goldens' files
    coverage = {"files": [], "files_covered": 0, "files_ingested": 0, "rule": "any"}
    run = {"inputs": {"languages": ["en", "fr"]}, "coverage": coverage}
    assert body.corpus(dataset, run, _inspection(dataset))[2:7] == [
        "- Files: 2",
        "- Files with goldens: 0 of 0 (coverage rule: any)",
        "- File types: .md 1, .txt 1",
        "- Languages: en, fr",
        "",
    ]


def test_the_corpus_table_lists_twenty_files_and_counts_the_rest() -> None:
    def table_end(count: int) -> list[str]:
        goldens = [Golden(input="q", source_files=[f"f{i:02}.md"]) for i in range(count)]
        dataset = Dataset(goldens)
        return body.corpus(dataset, {}, _inspection(dataset))[-4:]

    assert table_end(21) == ["| f19.md | 1 |", "", "... and 1 more files.", ""]
    assert table_end(20) == ["| f17.md | 1 |", "| f18.md | 1 |", "| f19.md | 1 |", ""]


def test_the_corpus_shows_languages_of_any_shape_as_text() -> None:
    dataset = Dataset([Golden(input="q", source_files=["a.md"])])
    for languages, shown in [("en", "en"), (3, "3"), ({"en": 1}, "en 1"), (("a", 2), "a, 2")]:
        lines = body.corpus(dataset, {"inputs": {"languages": languages}}, _inspection(dataset))
        assert f"- Languages: {shown}" in lines
    assert not [line for line in body.corpus(dataset, {}, _inspection(dataset)) if "Lang" in line]


def test_the_generation_section_lists_models_seed_versions_and_settings() -> None:
    assert body.generation({}) == []
    assert body.generation(_rich_run()) == [
        "## Generation",
        "",
        "| role | model |",
        "| --- | --- |",
        "| generator | openai:gpt-x |",
        "| critic | m-only |",
        "| embedder | hash |",
        "",
        "- Seed: 42",
        "- Goldens asked: 4, delivered: 2",
        "- Prompt version: p3",
        "- synth 0.1, Python 3.11",
        "",
        "Pipeline settings:",
        "",
        "```json",
        '{\n  "generation": {\n    "grounding_threshold": 0.3\n  },\n  "note": "é"\n}',
        "```",
        "",
    ]


def test_a_run_that_records_little_shows_none_and_empty_settings() -> None:
    run = {"run_id": "r", "models": {"generator": "not a spec", "judge": {"provider": "p"}}}
    assert body.generation(run) == [
        "## Generation",
        "",
        "| role | model |",
        "| --- | --- |",
        "| generator |  |",
        "| judge | p |",
        "",
        "- Seed: None",
        "- Goldens asked: None, delivered: None",
        "- Prompt version: None",
        "- synth None, Python None",
        "",
        "Pipeline settings:",
        "",
        "```json",
        "{}",
        "```",
        "",
    ]


def test_the_stages_section_totals_the_drops_by_reason() -> None:
    assert body.stages({}) == [] and body.stages({"stages": ["x"]}) == []
    assert body.stages(_rich_run()) == [
        "## Pipeline stages",
        "",
        "| stage | in | out | dropped |",
        "| --- | --- | --- | --- |",
        "| inputs | 4 | 3 | dup: 1 |",
        "| filter | 3 | 2 | bad: 2, dup: 2 |",
        "",
        "Drops by reason, all stages:",
        "",
        "| reason | dropped |",
        "| --- | --- |",
        "| dup | 3 |",
        "| bad | 2 |",
        "",
    ]


def test_stages_that_drop_nothing_say_so() -> None:
    run = {"stages": [{"stage": "a", "items_in": 1, "items_out": 1}, {"dropped": {"odd": "x"}}]}
    assert body.stages(run) == [
        "## Pipeline stages",
        "",
        "| stage | in | out | dropped |",
        "| --- | --- | --- | --- |",
        "| a | 1 | 1 | - |",
        "| None | None | None | odd: x |",
        "",
        "No stage dropped anything.",
        "",
    ]


def test_the_mix_lists_evolutions_and_question_types_most_first() -> None:
    goldens = [
        Golden(input="q", metadata={"evolutions": ["a"], "question_type": "why"}),
        Golden(input="q", metadata={"evolutions": ["b"], "question_type": "how"}),
        Golden(input="q", metadata={"evolutions": ["b"], "question_type": "how"}),
        Golden(input="q", metadata={"question_type": ""}),
    ]
    dataset = Dataset(goldens)
    assert body.mix(dataset, _inspection(dataset)) == [
        "## Evolutions and question types",
        "",
        "| evolution | goldens |",
        "| --- | --- |",
        "| b | 2 |",
        "| (none) | 1 |",
        "| a | 1 |",
        "",
        "| question type | goldens |",
        "| --- | --- |",
        "| how | 2 |",
        "| why | 1 |",
        "",
    ]
    plain = Dataset([Golden(input="q")])
    assert body.mix(plain, _inspection(plain))[4:] == ["| (none) | 1 |", ""]


def test_quality_lists_difficulty_grounding_citations_and_leaks() -> None:
    dataset = _goldens()
    dataset.append(
        Golden(
            input="alpha beta gamma",
            expected_output="none",
            context=["alpha beta gamma"],
            metadata={"difficulty": {"label": "odd", "unanswerable": True}},
        )
    )
    assert body.quality(_inspection(dataset, 0.3)) == [
        "## Difficulty and grounding",
        "",
        "| difficulty | goldens |",
        "| --- | --- |",
        "| hard | 1 |",
        "| odd | 1 |",
        "| (unmeasured) | 1 |",
        "",
        "- Grounding measured on 2 goldens: 1 at or above the threshold 0.3 (rate 0.5,"
        " mean score 0.55)",
        "- Answers with a citation: 1 of 2 (rate 0.5)",
        "- Unanswerable on purpose: 1",
        "- Questions that repeat their context's words (overlap >= 0.8): 1",
        "",
    ]


def test_quality_of_goldens_that_record_nothing() -> None:
    dataset = Dataset([Golden(input="what is it", context=["something else"])])
    assert body.quality(_inspection(dataset)) == [
        "## Difficulty and grounding",
        "",
        "| difficulty | goldens |",
        "| --- | --- |",
        "| (unmeasured) | 1 |",
        "",
        "- Grounding: not measured",
        "- Unanswerable on purpose: 0",
        "- Questions that repeat their context's words (overlap >= 0.8): 0",
        "",
    ]


def test_the_cost_section_shows_the_runs_totals() -> None:
    assert body.cost({}) == [] and body.cost({"totals": "x"}) == []
    assert body.cost(_rich_run()) == [
        "## Cost",
        "",
        "| requests | embedding requests | cached | input tokens | output tokens | USD |",
        "| --- | --- | --- | --- | --- | --- |",
        "| 10 | 2 | 1 | 100 | 50 | 0.1235 |",
        "",
        "Requests per golden: 5.0.",
        "",
    ]
    assert body.cost({"totals": {"cost_usd": None}})[4:] == [
        "| None | None | None | None | None | - |",
        "",
        "Requests per golden: None.",
        "",
    ]
    assert body.cost({"totals": {"cost_usd": 2}})[4] == "| None | None | None | None | None | 2 |"


def test_the_fields_section_says_what_each_column_holds() -> None:
    rows = body.fields(Dataset([Golden(input="q")]))
    assert rows == [
        "## Fields",
        "",
        "| field | type | holds |",
        "| --- | --- | --- |",
        "| `input` | string | the question asked of the system under test |",
        "| `actual_output` | string | the system's answer (empty until one is recorded) |",
        "| `expected_output` | string | the reference answer, drawn from the context |",
        "| `context` | list of strings | the ground-truth chunks the golden was made from |",
        "| `retrieval_context` | list of strings | the chunks a retriever returned (empty until "
        "one is recorded) |",
        "| `context_ids` | list of strings | ids of the context's chunks |",
        "| `source_files` | list of strings | the corpus files the context came from |",
        "| `metadata` | string | JSON text: evolutions, difficulty, grounding, citations, models,"
        " seed |",
        "",
    ]
    conversation = ConversationalGolden(turns=[Turn(role="user", content="hi")])
    assert body.fields(Dataset([conversation]))[12:] == [
        "| `scenario` | string | what the conversation is about |",
        "| `expected_outcome` | string | what the user should come away with |",
        "| `user_description` | string | who the user is (the persona) |",
        "| `turns` | string | JSON text: the conversation's user and assistant turns, with "
        "citations |",
        "",
    ]


LOADING = [
    "## How to load",
    "",
    "```python",
    "import json\nfrom datasets import load_dataset\n\n"
    'goldens = load_dataset(WHERE, split="train")\n'
    'metadata = json.loads(goldens[0]["metadata"])  # each golden\'s metadata is JSON text\n\n'
    "# or, with synth (pip install 'synth[hf]'): the goldens and the run's metadata\n"
    "from synth import Dataset\n\n"
    "dataset = Dataset.from_hf(SOURCE)\n"
    'dataset.metadata["seed"]  # the run\'s settings, from synth_run.json',
    "```",
    "",
    "The run's metadata (seed, models, settings, counts) is in `synth_run.json`, beside this "
    "card: `load_dataset` keeps only the goldens.",
    "",
]


def _loading(where: str, source: str) -> list[str]:
    return [line.replace("WHERE", where).replace("SOURCE", source) for line in LOADING]


def test_the_loading_example_reads_the_folder_or_the_repo() -> None:
    folder = '"parquet", data_files="data/train-*.parquet"'
    assert body.loading(None) == _loading(folder, '"path/to/this/folder"')
    assert body.loading("") == _loading(folder, '"path/to/this/folder"')
    assert body.loading("me/set") == _loading("'me/set'", "'me/set'")


def test_the_body_has_every_section_in_reading_order() -> None:
    dataset = _goldens()
    dataset.metadata.update(num_goldens=4, delivered=2, shortfall=["dropped at filter: bad"])
    text = dataset_card(dataset, _rich_run(), title="A <b> title")
    _, markdown = _parts(text)
    lines = markdown.splitlines()
    assert lines[:2] == ["# A &lt;b&gt; title", ""]
    assert lines[2].endswith(
        " RAG systems. Run `run-7` (generic mode, status completed, started 2026-01-01T00:00:00Z)."
        " Asked for 4, delivered 2: dropped at filter: bad."
    )
    assert [line for line in lines if line.startswith("## ")] == [
        "## Source corpus",
        "## Generation",
        "## Pipeline stages",
        "## Evolutions and question types",
        "## Difficulty and grounding",
        "## Cost",
        "## Fields",
        "## How to load",
        "## License",
    ]
    assert _section(text, "License") == [
        "",
        "Not stated yet: the goldens quote the source corpus, so set `license` in the front matter "
        "to the corpus's license before publishing.",
    ]
    assert _section(text, "Cost") == body.cost(_rich_run())[1:-1]


def test_a_card_of_no_run_leaves_out_the_runs_sections() -> None:
    _, markdown = _parts(dataset_card(Dataset([Golden(input="q")])))
    lines = markdown.splitlines()
    assert lines[:2] == ["# synth test set", ""]
    assert [line for line in lines if line.startswith("## ")] == [
        "## Source corpus",
        "## Evolutions and question types",
        "## Difficulty and grounding",
        "## Fields",
        "## How to load",
        "## License",
    ]
