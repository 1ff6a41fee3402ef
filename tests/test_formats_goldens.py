"""Goldens from a folder of a web page, a slide deck, a workbook and an e-book, each written by its
own library: exactly the number asked for, every citation found in its passage, every passage
named by where it sits (heading, slide, sheet, chapter), and no menu or footer in any context."""

from __future__ import annotations

from pathlib import Path

import pytest
import synth_replies
from fake_openai import FakeOpenAI
from format_files import FOOTER_TEXT, NAV_WORDS, make_epub, make_html, make_pptx, make_xlsx

from synth import ChunkStore, Synthesizer, load_documents
from synth.contexts import ContextConstructionConfig

GOLDENS = 8

PAGE = [
    (2, "Installation", [
        "Mount the humidity widget one metre above the soil, away from the irrigation nozzles.",
        "The widget reports its readings over radio every ten minutes to the receiver box.",
    ]),
    (3, "Linux", [
        "On Linux the receiver appears as a serial device; the widgetd daemon reads it.",
        "Users of the receiver must belong to the dialout group before widgetd can open it.",
    ]),
    (2, "Maintenance", [
        "Clean the sensor membrane every three months with distilled water and a soft brush.",
        "Never use alcohol on the membrane, because alcohol cracks its thin polymer layer.",
    ]),
]  # fmt: skip
SLIDES = [
    ("Quarterly results", [
        "Revenue grew twelve percent to four million euros in the third quarter.",
        "Greenhouse sales in Spain doubled after the spring trade fair in Almeria.",
    ], "Mention that the Lyon office opened in August with eleven engineers."),
    ("Hiring plan", [
        "The company will hire three firmware engineers and one field technician.",
    ], "Recruiting starts in January; the budget is approved by the board."),
    ("Risks", [
        "The radio chip supplier announced a price rise of eight percent for next year.",
    ], ""),
]  # fmt: skip
SHEETS = {
    "Prices": [
        ["Product", "Price", "Currency"],
        ["Humidity widget", 49.5, "EUR"],
        ["Receiver box", 120.0, "EUR"],
        ["Membrane kit", 15.25, "EUR"],
    ],
    "Stock": [
        ["Product", "Units", "Warehouse"],
        ["Humidity widget", 340, "Lyon"],
        ["Receiver box", 85, "Valencia"],
    ],
}
CHAPTERS = [
    ("The Harbour", "The Harbour", [
        ("", ["The ferry to the island left the harbour at dawn with forty passengers aboard."]),
        ("Night watch", ["At night the lighthouse keeper wrote long letters to his sister."]),
    ]),
    ("The Storm", "The Storm", [
        ("", ["A storm from the west broke the wooden pier and flooded the fish market."]),
    ]),
    ("Coming Home", "", [
        ("", ["In May the fishermen rebuilt the pier with stones carried from the old quarry."]),
    ]),
]  # fmt: skip


def _corpus(root: Path) -> tuple[Path, dict[str, list[str]]]:
    """The folder, and the heading path each passage of it must be found under."""
    folder = root / "knowledge"
    make_html(folder / "widget.html", "Widget Guide", PAGE)
    make_pptx(folder / "results.pptx", SLIDES)
    make_xlsx(folder / "catalogue.xlsx", SHEETS)
    make_epub(folder / "tides.epub", CHAPTERS)
    where: dict[str, list[str]] = {"Widget Guide": ["Widget Guide"]}
    stack: dict[int, str] = {}
    for level, heading, paragraphs in PAGE:
        stack = {k: v for k, v in stack.items() if k < level} | {level: heading}
        path = ["Widget Guide", *(stack[k] for k in sorted(stack))]
        where |= {heading: path} | dict.fromkeys(paragraphs, path)
    for title, lines, notes in SLIDES:
        where |= dict.fromkeys([title, *lines, notes], [title])
    for name in SHEETS:
        where[f"Sheet: {name} | "] = [name]  # every line of a sheet starts with its name
    for title, _, parts in CHAPTERS:
        for subheading, paragraphs in parts:
            path = [title, subheading] if subheading else [title]
            where |= dict.fromkeys([*paragraphs, *([subheading] if subheading else [])], path)
    where.pop("", None)
    return folder, where


def _expected_path(text: str, where: dict[str, list[str]]) -> list[str]:
    """The path of the passage a chunk starts with (the first one found in it)."""
    found = [(text.find(passage), path) for passage, path in where.items() if passage in text]
    assert found, f"no known passage in chunk {text[:80]!r}"
    return min(found, key=lambda item: item[0])[1]


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("formats")
    folder, where = _corpus(root)
    with FakeOpenAI(reply=synth_replies.reply) as server:
        synth = Synthesizer(
            "openai:fake-model",
            base_url=server.url,
            embedder="hash",
            cache=None,
            run_dir=root / "run",
            store_path=root / "chroma",
            context_construction_config=ContextConstructionConfig(chunk_size=48),
            progress=False,
        )
        with synth, pytest.MonkeyPatch.context() as patch:
            patch.setenv("OPENAI_API_KEY", "sk-test-formats")
            dataset = synth.generate_goldens_from_docs(str(folder), num_goldens=GOLDENS)
    store = ChunkStore("hash", path=root / "chroma", chunking={"chunk_size": 48})
    try:
        chunks = store.chunks()
    finally:
        store.close()
    return dataset, where, load_documents(folder), chunks


def test_exactly_the_goldens_asked_for_come_from_every_format(generated):
    dataset, _, report, _ = generated
    assert report.counts() == {"ok": 4, "error": 0, "skipped": 0}
    assert len(dataset) == GOLDENS
    sources = {Path(name).suffix for golden in dataset for name in golden.source_files}
    assert sources == {".html", ".pptx", ".xlsx", ".epub"}


def test_every_citation_is_found_in_a_passage_of_its_file(generated):
    dataset, _, report, chunks = generated
    texts = {Path(d.path).name: d.text for d in report.documents}
    file_of = {chunk.id: Path(chunk.source).name for chunk in chunks}
    for golden in dataset:
        citations = golden.metadata["citations"]
        assert citations, golden.input
        named = {Path(name).name for name in golden.source_files}
        for citation in citations:
            index = golden.context_ids.index(citation["chunk_id"])
            passage = golden.context[index][citation["start"] : citation["end"]]
            assert passage and citation["ratio"] >= 0.9
            cited_file = file_of[citation["chunk_id"]]
            assert cited_file in named  # the golden names the file its quote comes from
            assert passage in texts[cited_file], (cited_file, passage)


def test_every_passage_is_named_by_the_heading_slide_sheet_or_chapter_it_sits_under(generated):
    dataset, where, _, _ = generated
    for golden in dataset:
        paths = golden.metadata["heading_paths"]
        assert len(paths) == len(golden.context)
        for text, path in zip(golden.context, paths, strict=True):
            assert path == _expected_path(text, where), text[:80]


def test_no_menu_sidebar_or_footer_text_reaches_a_chunk_or_a_context(generated):
    dataset, _, _, chunks = generated
    assert {Path(c.source).suffix for c in chunks} == {".html", ".pptx", ".xlsx", ".epub"}
    texts = [c.text for c in chunks] + [text for golden in dataset for text in golden.context]
    for text in texts:
        assert FOOTER_TEXT not in text and "Copyright" not in text
        assert not any(word in text for word in NAV_WORDS if word != "Products"), text
        assert "Related:" not in text and "tracking" not in text


def test_the_report_names_the_place_of_each_golden_s_cited_passages(generated):
    from synth.report._rows import table

    dataset, where, _, _ = generated
    shown = table(list(dataset))
    at = [column["key"] for column in shown["columns"]].index("section")
    for golden, row in zip(dataset, shown["rows"], strict=True):
        cited = [golden.context_ids.index(c["chunk_id"]) for c in golden.metadata["citations"]]
        places = [" > ".join(_expected_path(golden.context[i], where)) for i in cited]
        assert row[at] == "; ".join(dict.fromkeys(places))


def test_the_report_names_only_the_places_cited_and_every_place_when_none_is():
    from synth import Golden
    from synth.report._rows import table

    def golden(citations: list[dict]) -> Golden:
        return Golden(
            input="How much is the widget?",
            context=["Sheet: Prices | Row 2 | Product: Widget", "Installation\n\nMount it."],
            context_ids=["c1", "c2"],
            metadata={
                "heading_paths": [["Prices"], ["Guide", "Installation"]],
                "citations": citations,
            },
        )

    cited = [{"chunk_id": "c2", "start": 14, "end": 23, "quote": "Mount it."}]
    shown = table([golden(cited), golden([]), Golden(input="No headings?")])
    at = [column["key"] for column in shown["columns"]].index("section")
    assert [row[at] for row in shown["rows"]] == [
        "Guide > Installation",
        "Prices; Guide > Installation",
        None,
    ]
