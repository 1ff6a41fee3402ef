"""Formats bench: for each format synth reads beyond text, Word and PDF, what its reader costs to
install and to run, and what it gets right, against markitdown when one is given.

It writes ``--files`` files of each format (in a scratch folder) with the format's own library: web
pages with a menu, a sidebar and a footer around an article of headed sections; decks of slides
with speaker notes; workbooks of two sheets of priced products; CSV files of the same rows; e-books
of chapters with subheadings; and for the general converter (markitdown, the ``convert`` extra)
notebooks of headed Markdown cells around code cells and old ``.xls`` workbooks of the same rows.
Then, per format:

* ``install_mb``: the reader's library and what it alone pulls in (its requirements, recursively,
  less what synth's other dependencies already need), as installed in this environment;
* ``import_s``: importing synth's reader module (and so its library) in a fresh interpreter that
  has imported ``synth.ingest`` already;
* ``ms_per_file``, ``mb_per_s``: reading every file (after one warm-up read), and its input rate;
* what it got right over all files: ``boilerplate`` (pages whose text keeps menu or footer words),
  ``headings`` (section headings found as sections), ``notes`` (speaker notes kept), ``cells_named``
  (rows whose line names the price column), ``rows`` (rows found at all), ``chapters`` (chapter
  paragraphs found).

With ``--markitdown PYTHON`` (an interpreter that has markitdown installed, say in a scratch venv) the
same files are converted by ``MarkItDown().convert`` there and scored by the same checks (headings
as Markdown ``#`` lines, since it returns no sections).

    python bench/formats.py --files 20 --out bench-results/formats.json
    python bench/formats.py --files 20 --markitdown /tmp/mdvenv/bin/python
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _util import REPO, header, markdown_table, work_dir, write_json  # noqa: E402
from format_files import (  # noqa: E402
    FOOTER_TEXT,
    NAV_WORDS,
    make_epub,
    make_html,
    make_ipynb,
    make_pptx,
    make_xls,
    make_xlsx,
)

#: format -> (suffix, the library that reads it, synth's reader module: the converter's imports
#: markitdown at its first read, so its import is measured with it)
FORMATS = {
    "html": (".html", "trafilatura", "synth.ingest.html"),
    "pptx": (".pptx", "python-pptx", "synth.ingest.pptx"),
    "xlsx": (".xlsx", "openpyxl", "synth.ingest.xlsx"),
    "csv": (".csv", "", "synth.ingest.delimited"),
    "epub": (".epub", "ebooklib", "synth.ingest.epub"),
    "ipynb": (".ipynb", "markitdown", "synth.ingest.converted, markitdown.converters"),
    "xls": (".xls", "markitdown", "synth.ingest.converted, markitdown.converters"),
}
#: what a format needs beside its library (markitdown's extras for it)
ALSO = {"xls": ("xlrd",)}
SECTIONS, SLIDES, ROWS, CHAPTERS = 12, 15, 200, 8
WORDS = "pump valve filter tank sensor membrane radio receiver cable mount season harvest".split()


def _sentence(seed: int, length: int = 18) -> str:
    words = [WORDS[(seed * 7 + i * 3) % len(WORDS)] for i in range(length)]
    return f"Note {seed}: " + " ".join(words).capitalize() + "."


def build(folder: Path, files: int) -> dict[str, Any]:
    """The corpus, and what each file must read as (headings, notes, rows, paragraphs)."""
    truth: dict[str, Any] = {"headings": {}, "notes": {}, "rows": {}, "chapters": {}}
    for n in range(files):
        sections = [
            (2 + s % 2, f"Section {n}-{s}", [_sentence(n * 100 + s), _sentence(n * 100 + s + 50)])
            for s in range(SECTIONS)
        ]
        page = make_html(folder / f"page{n}.html", f"Guide {n}", sections)
        truth["headings"][page.name] = [f"Guide {n}", *(h for _, h, _ in sections)]
        slides = [
            (f"Slide {n}-{s}", [_sentence(s), _sentence(s + 1)], f"Say {n}-{s} aloud.")
            for s in range(SLIDES)
        ]
        deck = make_pptx(folder / f"deck{n}.pptx", slides)
        truth["notes"][deck.name] = [notes for _, _, notes in slides]
        rows = [
            ["Product", "Price", "Units"],
            *([f"Item {n}-{r}", 1.25 + r, r * 3] for r in range(ROWS)),
        ]
        book = make_xlsx(folder / f"book{n}.xlsx", {"Prices": rows, "Stock": rows[: ROWS // 2]})
        truth["rows"][book.name] = [row[0] for row in rows[1:]]
        table = folder / f"table{n}.csv"
        table.write_text("\n".join(",".join(str(v) for v in row) for row in rows) + "\n")
        truth["rows"][table.name] = [row[0] for row in rows[1:]]
        chapters = [
            (
                f"Chapter {c}",
                f"Chapter {c}",
                [("", [_sentence(c)]), (f"Part {n}-{c}", [_sentence(c + 9)])],
            )
            for c in range(CHAPTERS)
        ]
        ebook = make_epub(folder / f"book{n}.epub", chapters)
        truth["chapters"][ebook.name] = [
            p for _, _, parts in chapters for _, ps in parts for p in ps
        ]
        cells = [
            cell
            for s in range(SECTIONS)
            for cell in (
                ("markdown", f"## Step {n}-{s}\n\n{_sentence(s)}"),
                ("code", f"values = load({s})\nvalues.plot()"),
            )
        ]
        notebook = make_ipynb(
            folder / f"notebook{n}.ipynb", [("markdown", f"# Analysis {n}")] + cells
        )
        truth["headings"][notebook.name] = [
            f"Analysis {n}",
            *(f"Step {n}-{s}" for s in range(SECTIONS)),
        ]
        old = make_xls(folder / f"old{n}.xls", {"Prices": rows, "Stock": rows[: ROWS // 2]})
        truth["rows"][old.name] = [row[0] for row in rows[1:]]
    return truth


def score(
    kind: str, name: str, text: str, headings: list[list[str]], truth: dict[str, Any]
) -> dict[str, float]:
    """What a reader got right in one file: each check a share from 0 to 1."""
    if kind == "html":
        found = {path[-1] for path in headings}
        wanted = truth["headings"][name]
        leaked = FOOTER_TEXT[:30] in text or any(word in text for word in NAV_WORDS)
        return {
            "boilerplate": float(leaked),
            "headings": sum(h in found for h in wanted) / len(wanted),
        }
    if kind == "pptx":
        notes = truth["notes"][name]
        return {"notes": sum(note in text for note in notes) / len(notes)}
    if kind == "ipynb":
        found = {path[-1] for path in headings}
        wanted = truth["headings"][name]
        return {"headings": sum(h in found for h in wanted) / len(wanted)}
    if kind in ("xlsx", "csv", "xls"):
        items = truth["rows"][name]
        lines = text.splitlines()
        named = sum(any(item in line and "Price" in line for line in lines) for item in items)
        shares = {"cells_named": named / len(items)}
        if kind == "xls":
            shares["rows"] = sum(item in text for item in items) / len(items)
        return shares
    wanted = truth["chapters"][name]
    return {"chapters": sum(p in text for p in wanted) / len(wanted)}


def measure_synth(folder: Path, truth: dict[str, Any]) -> dict[str, dict[str, Any]]:
    from synth.ingest.registry import registered_loaders

    table = registered_loaders()
    results = {}
    for kind, (suffix, _, _) in FORMATS.items():
        files = sorted(folder.glob(f"*{suffix}"))
        table[suffix](files[0])  # warm-up: the library's import is measured apart
        scores: list[dict[str, float]] = []
        started = time.perf_counter()
        documents = [table[suffix](file) for file in files]
        elapsed = time.perf_counter() - started
        for file, document in zip(files, documents, strict=True):
            paths = [section.path for section in document.sections]
            scores.append(score(kind, file.name, document.text, paths, truth))
        results[kind] = _summary(files, elapsed, scores)
    return results


def _summary(files: list[Path], elapsed: float, scores: list[dict[str, float]]) -> dict[str, Any]:
    size = sum(file.stat().st_size for file in files)
    checks = {key: round(sum(s[key] for s in scores) / len(scores), 3) for key in scores[0]}
    return {
        "files": len(files),
        "input_mb": round(size / 1e6, 2),
        "ms_per_file": round(1000 * elapsed / len(files), 1),
        "mb_per_s": round(size / 1e6 / elapsed, 2),
        **checks,
    }


_MARKITDOWN_CHILD = """
import json, sys, time
from pathlib import Path
from markitdown import MarkItDown
converter = MarkItDown()
out = {}
for name in sys.argv[1:]:
    converter.convert(name)  # warm-up per format is cheap; the first call imports the converter
    started = time.perf_counter()
    text = converter.convert(name).text_content
    out[Path(name).name] = [time.perf_counter() - started, text]
print(json.dumps(out))
"""


def measure_markitdown(python: str, folder: Path, truth: dict[str, Any]) -> dict[str, Any]:
    suffixes = {s for s, library, _ in FORMATS.values() if library != "markitdown"}
    files = sorted(p for p in folder.iterdir() if p.suffix in suffixes)
    done = subprocess.run(
        [python, "-c", _MARKITDOWN_CHILD, *map(str, files)],
        capture_output=True,
        text=True,
        check=True,
        timeout=3600,
    )
    converted = json.loads(done.stdout.splitlines()[-1])
    results = {}
    for kind, (suffix, library, _) in FORMATS.items():
        if library == "markitdown":  # synth reads these through markitdown itself
            continue
        mine = [f for f in files if f.suffix == suffix]
        elapsed = sum(converted[f.name][0] for f in mine)
        scores = []
        for file in mine:
            text = converted[file.name][1]
            headings = [[m] for m in re.findall(r"(?m)^#{1,6} +(.+?) *$", text)]
            scores.append(score(kind, file.name, text, headings, truth))
        results[kind] = _summary(mine, elapsed, scores)
    size = _site_size(python)
    return {"formats": results, "install_mb": size}


def _site_size(python: str) -> float:
    """The size of everything installed in ``python``'s environment, in MB."""
    code = "import site, sys; print(site.getsitepackages()[0])"
    site_dir = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    total = sum(p.stat().st_size for p in Path(site_dir.stdout.strip()).rglob("*") if p.is_file())
    return round(total / 1e6, 1)


def _requirements(name: str) -> set[str]:
    from packaging.requirements import Requirement

    found = set()
    for line in importlib.metadata.requires(name) or []:
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
            found.add(_canonical(requirement.name))
    return found


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _closure(names: set[str]) -> set[str]:
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        try:
            todo.extend(_requirements(name))
        except importlib.metadata.PackageNotFoundError:
            continue
        seen.add(name)
    return seen


def _installed_mb(name: str) -> float:
    distribution = importlib.metadata.distribution(name)
    files = [Path(str(distribution.locate_file(f))) for f in distribution.files or []]
    return sum(f.stat().st_size for f in files if f.is_file()) / 1e6


def install_sizes() -> dict[str, dict[str, Any]]:
    """Each reader library with what it alone pulls in, installed, in MB."""
    core = {_canonical(n) for n in _requirements("synth")}
    sizes = {}
    for kind, (_, library, _) in FORMATS.items():
        if not library:
            sizes[kind] = {"library": "standard library", "packages": [], "install_mb": 0.0}
            continue
        others = _closure(core - {_canonical(library)})
        alone = sorted(_closure({_canonical(library), *ALSO.get(kind, ())}) - others)
        mb = sum(_installed_mb(name) for name in alone)
        sizes[kind] = {"library": library, "packages": alone, "install_mb": round(mb, 1)}
    return sizes


def import_seconds(module: str) -> float:
    """Seconds to import ``module`` in a fresh interpreter that has imported ``synth.ingest``."""
    code = (
        "import synth.ingest, time; t = time.perf_counter(); "
        f"import {module}; print(time.perf_counter() - t)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    return round(float(done.stdout.strip()), 2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=20, help="files of each format")
    parser.add_argument("--markitdown", help="an interpreter with markitdown installed")
    parser.add_argument("--workdir", type=Path, help="scratch folder (default: a temporary one)")
    parser.add_argument("--out", help="write the results as JSON here")
    args = parser.parse_args(argv)
    result: dict[str, Any] = header(
        sys.argv, ("synth", *dict.fromkeys(lib for _, lib, _ in FORMATS.values() if lib))
    )
    with work_dir(args.workdir, "formats") as folder:
        truth = build(folder, args.files)
        synth = measure_synth(folder, truth)
        sizes = install_sizes()
        for kind, (_, _, module) in FORMATS.items():
            synth[kind] = {**sizes[kind], "import_s": import_seconds(module), **synth[kind]}
        result["synth"] = synth
        if args.markitdown:
            result["markitdown"] = measure_markitdown(args.markitdown, folder, truth)
    rows = [
        [kind, m["library"], m["install_mb"], m["import_s"], m["ms_per_file"], m["mb_per_s"],
         ", ".join(f"{k} {v}" for k, v in m.items() if k in _CHECKS)]
        for kind, m in synth.items()
    ]  # fmt: skip
    print(
        markdown_table(
            ["format", "library", "install MB", "import s", "ms/file", "MB/s", "checks"], rows
        )
    )
    if args.markitdown:
        other = result["markitdown"]
        print(f"\nmarkitdown (its environment: {other['install_mb']} MB)")
        rows = [
            [
                kind,
                m["ms_per_file"],
                m["mb_per_s"],
                ", ".join(f"{k} {v}" for k, v in m.items() if k in _CHECKS),
            ]
            for kind, m in other["formats"].items()
        ]
        print(markdown_table(["format", "ms/file", "MB/s", "checks"], rows))
    write_json(args.out, result)
    return 0


_CHECKS = ("boilerplate", "headings", "notes", "cells_named", "rows", "chapters")

if __name__ == "__main__":
    raise SystemExit(main())
