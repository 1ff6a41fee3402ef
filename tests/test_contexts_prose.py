"""The prose filter: non-prose chunks (tables of contents, indexes, reference lists, table art) are
kept out of the seeds by plain-code rules, counted with their reason and detail."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from ingest_files import make_pdf
from rich.console import Console

from synth import Synthesizer
from synth.cli._generate_view import render_table
from synth.contexts.config import ContextConstructionConfig
from synth.contexts.prose import RULES, check_prose
from synth.ingest import chunk_documents, load_documents

CHAPTERS = {
    "Charging": (
        "The battery charges from any USB-C supply that delivers at least fifteen watts. A full "
        "charge takes about three hours, and the indicator turns green when it is done. Charging "
        "below freezing is blocked by the controller, because lithium cells plate metal when they "
        "take current in the cold. Leave the unit indoors for an hour before you plug it in after "
        "a winter night in the car. The controller also lowers the current once the cells pass "
        "eighty percent, which is why the last part of a charge is slower than the first."
    ),
    "Storage": (
        "For storage longer than a month, leave the battery at about half charge and keep it "
        "somewhere dry between ten and twenty-five degrees. A full battery left in a hot room "
        "loses capacity faster than one stored half full. Check the charge every three months "
        "and top it up to half if it has fallen below a quarter. The unit draws a small current "
        "even when switched off, so a battery stored empty can fall too low to wake up again."
    ),
    "Cleaning": (
        "Wipe the housing with a damp cloth and a drop of mild soap; solvents cloud the display "
        "window and weaken the seals around the ports. Dry the charging port with a soft brush "
        "before you connect a cable, since water in the port triggers the corrosion alarm and "
        "blocks charging until the contacts are dry. Never rinse the unit under a tap: the "
        "pressure relief valve is not made to keep out running water."
    ),
}
TOC_LINES = [
    ("Safety notes", 2),
    ("Charging", 3),
    ("Charging in the cold", 3),
    ("Storage", 4),
    ("Long-term storage", 4),
    ("Cleaning", 5),
    ("The charging port", 5),
    ("Warranty", 6),
    ("Index", 7),
]
INDEX_TERMS = [
    "alarm, corrosion, 5",
    "battery, storage of, 4",
    "brush, soft, 5",
    "charge indicator, 3",
    "charging, in the cold, 3",
    "cleaning, 5",
    "controller, 3",
    "housing, 5",
    "port, charging, 5",
    "seals, 5",
    "storage, long-term, 4",
    "USB-C supply, 3",
    "valve, pressure relief, 5",
    "warranty, 6",
]


def toc_page() -> str:
    return "Contents\n" + "\n".join(
        f"{title} {'.' * (40 - len(title))} {n}" for title, n in TOC_LINES
    )


def index_page() -> str:
    return "Index\n" + "\n".join(INDEX_TERMS)


@pytest.fixture(scope="module")
def manual(tmp_path_factory) -> Path:
    """A real PDF: a table of contents (page 1), three prose chapters (pages 2 to 4), an index
    (page 5)."""
    folder = tmp_path_factory.mktemp("manual")
    pages = [toc_page(), *(f"{title}\n\n{text}" for title, text in CHAPTERS.items()), index_page()]
    make_pdf(folder / "manual.pdf", pages)
    return folder


def test_a_table_of_contents_breaks_the_dotted_leaders_rule_with_its_figures() -> None:
    verdict = check_prose(toc_page())
    assert verdict is not None and verdict.reason == "dotted_leaders"
    assert verdict.detail == "9 of 10 lines end in dotted leaders and a number"


def test_an_index_breaks_the_page_number_rule() -> None:
    verdict = check_prose(index_page())
    assert verdict is not None and verdict.reason == "page_number_lines"
    assert verdict.detail.startswith("14 of 15 lines")


def test_a_reference_list_is_not_prose() -> None:
    refs = "\n".join(
        f"[{i}] Author{i}, A. and Writer, B. Batteries in the cold, vol. {i}. Journal, {1990 + i}."
        for i in range(1, 8)
    )
    verdict = check_prose("References\n" + refs)
    assert verdict is not None and verdict.reason == "reference_list"


def test_table_art_and_number_tables_are_not_prose_but_a_table_with_text_is() -> None:
    art = "\n".join(
        ["+------+------+------+"] + ["|  ##  |  ##  |  ##  |", "+------+------+------+"] * 6
    )
    assert check_prose(art + "\nfigure one")  # too few words to judge? no: the symbols decide
    numbers = "\n".join(" ".join(str(100 * r + c) for c in range(8)) for r in range(6))
    verdict = check_prose(numbers + "\nvalues per cell")
    assert verdict is not None and verdict.reason == "few_alphabetic_words"
    worded = "\n".join(
        f"| {name} | charges in {n} hours from a supply of fifteen watts |"
        for n, name in enumerate(["small pack", "large pack", "spare cell", "field unit"], 2)
    )
    assert check_prose(worded) is None


def test_navigation_of_short_lines_is_not_prose() -> None:
    menu = "\n".join(["Home", "Products", "Batteries and chargers", "Support", "Contact us"] * 3)
    verdict = check_prose(menu + "\nSign in")
    assert verdict is not None and verdict.reason == "short_lines"


@pytest.mark.parametrize("title", list(CHAPTERS))
def test_prose_passes_every_rule(title: str) -> None:
    assert check_prose(CHAPTERS[title]) is None
    # wrapped as a PDF's text is, one line every few words
    words = CHAPTERS[title].split()
    wrapped = "\n".join(" ".join(words[i : i + 9]) for i in range(0, len(words), 9))
    assert check_prose(wrapped) is None


def test_a_text_too_short_to_judge_passes() -> None:
    assert check_prose("1 2 3 4 5 ....... 6") is None


def test_the_rules_are_named_in_the_order_they_are_tried() -> None:
    assert RULES[0] == "dotted_leaders" and len(set(RULES)) == len(RULES) == 7


def test_no_seed_of_a_real_pdf_comes_from_its_contents_or_index_page_and_the_drops_are_counted(
    manual: Path, tmp_path: Path
) -> None:
    import fake_openai

    config = ContextConstructionConfig(chunk_size=160, max_context_length=1)
    with fake_openai.FakeOpenAI(mode="generic") as server:  # answers from the JSON schema alone
        synth = Synthesizer(
            "openai:fake-model",
            base_url=server.url,
            embedder="hash",
            cache=None,
            context_construction_config=config,
            run_dir=str(tmp_path / "run"),
        )
        with synth, pytest.warns(UserWarning):  # generic answers are ungrounded: a shortfall
            synth.generate_goldens_from_docs(manual, num_goldens=4)
        critic_prompts = [
            json.dumps(r.body) for r in server.requests if "<passage" in json.dumps(r.body)
        ]
    run = Path(synth.last_run_dir)
    rejects = [json.loads(line) for line in (run / "rejects.jsonl").read_text().splitlines()]
    prose_drops = [r for r in rejects if r["stage"] == "prose"]
    assert {r["reason"] for r in prose_drops} == {"dotted_leaders", "page_number_lines"}
    assert all(r["detail"].split()[1] == "of" for r in prose_drops)
    # every seed the critic saw, and every context made, is from the chapters' pages
    seeds = [
        seed
        for line in (run / "critic.jsonl").read_text().splitlines()
        for seed in json.loads(line)["seeds"]
    ]
    assert seeds
    dropped_ids = {r["chunk_id"] for r in prose_drops}
    assert not dropped_ids & set(seeds)
    # by the pages the chunks were cut from: the contents are page 1, the index page 5
    pages = {
        chunk.id: set(range(chunk.page_start or 0, (chunk.page_end or 0) + 1))
        for chunk in chunk_documents(load_documents(manual).documents, chunk_size=config.chunk_size)
    }
    assert set(seeds) <= set(pages) and dropped_ids <= set(pages)
    assert all(pages[seed] <= {2, 3, 4} for seed in seeds), {s: pages[s] for s in seeds}
    assert all(pages[chunk] & {1, 5} for chunk in dropped_ids)
    assert critic_prompts and not any(
        "Contents" in p or "valve, pressure" in p for p in critic_prompts
    )
    manifest = synth.manifest
    rows = {r["stage"]: r for r in manifest["stages"]}
    # the run used every chunk and drew them again (the reuse pass): each draw is one drop
    counted = rows["prose"]["dropped"]
    assert set(counted) == {"dotted_leaders", "page_number_lines"}
    assert sum(counted.values()) == len(prose_drops) == manifest["contexts"]["seeds_not_prose"]
    assert rows["prose"]["items_out"] == rows["critic"]["items_in"] > 0
    out = io.StringIO()
    Console(file=out, width=200).print(render_table(manifest["stages"]))
    line = next(row for row in out.getvalue().splitlines() if row.strip("│ ").startswith("prose"))
    assert f"dotted_leaders: {counted['dotted_leaders']}" in line and "page_number_lines" in line
