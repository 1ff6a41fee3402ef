"""docs/pipeline.md names every reader: each built-in suffix has a row in its table of readers,
and the sources beyond a folder (web pages, a Chroma collection, objects) are named with a link."""

from __future__ import annotations

import re
from pathlib import Path

from synth.ingest.registry import registered_loaders

PIPELINE = Path(__file__).resolve().parents[1] / "docs" / "pipeline.md"


def test_every_built_in_suffix_has_a_row_in_the_readers_table() -> None:
    text = PIPELINE.read_text(encoding="utf-8")
    table = text[text.index("| Suffix | Reader (library) |") :].split("\n\n", 1)[0]
    documented = set(re.findall(r"`(\.[a-z0-9]+)`", table))
    assert set(registered_loaders()) - documented == set()


def test_the_sources_beyond_a_folder_are_named_and_linked() -> None:
    text = PIPELINE.read_text(encoding="utf-8")
    ingest = text[text.index("## 1. Ingest") :].split("\n## ", 1)[0]
    assert "(sources.md)" in ingest
    for way in ("sitemap", "--from-chroma PATH:COLLECTION", "LangChain", "LlamaIndex"):
        assert way in ingest, way
