"""The diversity numbers: distinct n-grams, self-repetition, embedding spread, files and sections
covered, in the library, in `synth inspect` and in the dataset report."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from synth import Dataset, Golden, inspect_dataset
from synth.cli import EXIT_OK, main
from synth.dataset._diversity import corpus_totals, measure_diversity
from synth.report import dataset_report


def golden(text: str, source: str = "a.md", chunk: str = "c0", **metadata) -> Golden:
    return Golden(input=text, source_files=[source], context_ids=[chunk], metadata=metadata)


TEMPLATED = [
    golden("What is the warranty period of the pump?", chunk="c0"),
    golden("What is the warranty period of the heater?", chunk="c1"),
    golden("What is the warranty period of the boiler?", "b.md", chunk="c2"),
]
VARIED = [
    golden("How long does the pump's warranty last?", chunk="c0"),
    golden("Which fuse protects the heater circuit?", chunk="c1"),
    golden("Why must the boiler be drained before winter?", "b.md", chunk="c2"),
]


def test_distinct_n_grams_count_each_word_and_pair_once() -> None:
    diversity = measure_diversity([golden("a b a b"), golden("a c")])
    # words a b a b a c: 3 distinct of 6; pairs ab ba ab ac: 3 distinct of 4
    assert diversity.distinct_1 == 0.5 and diversity.distinct_2 == 0.75


def test_templated_questions_repeat_themselves_and_varied_ones_do_not() -> None:
    templated, varied = measure_diversity(TEMPLATED), measure_diversity(VARIED)
    # 5 of 6 word triples of each templated question are in another one
    assert templated.self_repetition == pytest.approx(5 / 6, abs=1e-4)
    assert varied.self_repetition == 0.0
    assert templated.distinct_2 < varied.distinct_2


def test_the_spread_is_zero_for_identical_inputs_and_names_the_embedder_it_used() -> None:
    same = measure_diversity([golden("How long is the warranty?")] * 3)
    assert same.embedding_spread == 0.0
    varied = measure_diversity(VARIED)
    assert varied.embedding_spread > 0.1
    assert varied.embedder == "hash:384" and varied.embedder_source == "default"
    models = {"embedder": {"embedder": "hash:384"}}
    run = [g.model_copy(update={"metadata": {"models": models}}) for g in VARIED]
    assert measure_diversity(run).embedder_source == "run"
    given = inspect_dataset(VARIED, embedder="hash").diversity
    assert given is not None and given.embedder_source == "given"


def test_files_and_sections_covered_with_their_shares_when_the_corpus_is_known() -> None:
    diversity = measure_diversity(VARIED, files_total=4, chunks_total=10)
    assert (diversity.files_covered, diversity.files_share) == (2, 0.5)
    assert (diversity.sections_covered, diversity.sections_share) == (3, 0.3)
    assert diversity.sections_by == "seed chunk"
    unknown = measure_diversity(VARIED)
    assert unknown.files_share is None and unknown.sections_share is None
    by_heading = measure_diversity(
        [golden("q one", heading=["Setup", "Wiring"]), golden("q two", heading=["Setup", "Wiring"])]
    )
    assert by_heading.sections_by == "heading" and by_heading.sections_covered == 1


def test_the_corpus_totals_come_from_the_run_manifest() -> None:
    manifest = {"coverage": {"files_ingested": 14, "chunks_stored": 16}}
    assert corpus_totals(manifest) == (14, 16)
    assert corpus_totals({"coverage": {"files_ingested": True}}) == (None, None)
    assert corpus_totals(None) == (None, None)


#: every number docs/quality.md explains, as inspect and the report name it
NUMBERS = (
    "distinct-1",
    "distinct-2",
    "self-repetition",
    "embedding spread",
    "files covered",
    "sections covered",
)


def test_inspect_prints_the_diversity_numbers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = Dataset(TEMPLATED).save(tmp_path / "goldens.jsonl")
    assert main(["inspect", str(path)]) == EXIT_OK
    out = capsys.readouterr().out
    assert "diversity of 3 inputs" in out
    assert all(number in out for number in NUMBERS), out
    assert "self-repetition (word triples)" in out and "0.833" in out
    assert "the default embedder hash:384" in out
    assert "2 (the corpus's files are not known)" in out
    assert main(["inspect", str(path), "--json"]) == EXIT_OK
    printed = json.loads(capsys.readouterr().out)
    assert printed["diversity"]["self_repetition"] == pytest.approx(0.8333, abs=1e-4)


def test_the_dataset_report_shows_the_diversity_numbers_escaped() -> None:
    html = dataset_report(
        [*VARIED, golden("<b>bold</b> question?", source="<i>x</i>.md")],
        manifest={"run_id": "r", "coverage": {"files_ingested": 6, "chunks_stored": 12}},
    )
    section = html[html.index('<section id="diversity">') :]
    section = section[: section.index("</section>")]
    assert all(number in section for number in NUMBERS), section
    assert "distinct-2 (word pairs)" in section and "embedding spread" in section
    assert "3 of 6 (50.0%)" in section  # files covered of the run's corpus
    assert "<b>" not in html.split("<script")[0]


def test_the_quality_docs_explain_each_number() -> None:
    docs = (Path(__file__).parent.parent / "docs" / "quality.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| ([a-z0-9 -]+) \|", docs, re.MULTILINE)
    assert set(NUMBERS) <= set(rows)
