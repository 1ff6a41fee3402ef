"""Report bench: how long writing a dataset report takes, and opening it in chromium.

The dataset is ``--goldens`` goldens made here (seeded): each with two chunks of about ``--words``
words (every chunk shared by two goldens, as neighbouring goldens share chunks in a run), one or
two cited spans, a grounding score, a difficulty label, critic and filter scores.

Reported, each the fastest of ``--repeat`` runs:

- ``write``: ``dataset_report`` (inspection, figures, table data, rendering) plus writing the file;
- ``open``: in Debian's chromium (``/usr/bin/chromium``, driven by Playwright), seconds from the
  start of navigation to the load event (``load_s``), to the first table page drawn (``table_s``),
  the later of the two (``open_s``), and to every plot drawn (``plots_s``: plotly.js is parsed
  after the load); the page's requests are routed and any but its own file fails the bench.

    python bench/report.py
    python bench/report.py --goldens 5000 --repeat 3 --out bench-results/report.json
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from synth.data import Golden
from synth.dataset import Dataset
from synth.report import dataset_report

VOCABULARY = (
    "battery gateway reserve inverter solar grid firmware cell module panel storm mode".split()
)
# the page marks when its table and its plots are drawn (performance.mark); times are from the
# start of navigation, read in the page so that the parse of plotly.js does not delay the reading
TIMES = """() => {
  const mark = (name) => performance.getEntriesByName(name)[0]?.startTime;
  return {load: performance.getEntriesByType("navigation")[0].loadEventEnd,
          table: mark("synth:table-drawn"), plots: mark("synth:plots-drawn")};
}"""


def make_dataset(count: int, words: int, seed: int) -> Dataset:
    """``count`` goldens over ``count`` chunks of about ``words`` words, seeded."""
    rng = random.Random(seed)
    chunks = [" ".join(rng.choices(VOCABULARY, k=words)) + "." for _ in range(count)]
    goldens = []
    for i in range(count):
        ids = [f"c{i // 2}", f"c{i // 2 + 1}"]
        texts = [chunks[i // 2], chunks[(i // 2 + 1) % count]]
        start = rng.randrange(0, max(len(texts[0]) - 40, 1))
        goldens.append(
            Golden(
                input=" ".join(rng.choices(VOCABULARY, k=rng.randint(8, 20))) + "?",
                expected_output=texts[0][start : start + 40],
                context=texts,
                context_ids=ids,
                source_files=[f"docs/file_{i % 40:02d}.pdf"],
                metadata={
                    "evolutions": [rng.choice(["reasoning", "hypothetical", "in_breadth"])],
                    "context_quality": round(rng.uniform(0.5, 1), 2),
                    "input_quality": round(rng.uniform(0.5, 1), 2),
                    "citations": [
                        {
                            "quote": texts[0][start : start + 40],
                            "chunk_id": ids[0],
                            "start": start,
                            "end": start + 40,
                            "page": i % 9 + 1,
                            "ratio": 1.0,
                        }
                    ],
                    "grounding": {"score": round(rng.random(), 2)},
                    "difficulty": {"label": rng.choice(["easy", "medium", "hard"])},
                },
            )
        )
    return Dataset(goldens, {"run_id": "bench", "seed": seed})


def measure_write(dataset: Dataset, path: Path) -> float:
    started = time.perf_counter()
    path.write_text(dataset_report(dataset), encoding="utf-8")
    return time.perf_counter() - started


def measure_open(browser: Any, path: Path) -> dict[str, float]:
    """Seconds from navigation to the load event, the first table page, and every plot drawn."""
    url = path.as_uri()
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    blocked: list[str] = []
    page.route(
        "**/*",
        lambda r: (
            r.continue_() if r.request.url == url else (blocked.append(r.request.url), r.abort())
        ),
    )
    page.goto(url, wait_until="load")
    page.wait_for_function("performance.getEntriesByName('synth:plots-drawn').length > 0")
    times = page.evaluate(TIMES)
    page.close()
    if blocked:
        raise SystemExit(f"the report made requests: {blocked}")
    return {
        "load_s": times["load"] / 1000,
        "table_s": times["table"] / 1000,
        "open_s": max(times["load"], times["table"]) / 1000,
        "plots_s": times["plots"] / 1000,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--goldens", type=int, default=5000)
    parser.add_argument("--words", type=int, default=150)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    dataset = make_dataset(args.goldens, args.words, args.seed)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "dataset.html"
        writes = [measure_write(dataset, path) for _ in range(args.repeat)]
        size = path.stat().st_size
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=args.chromium)
            opens = [measure_open(browser, path) for _ in range(args.repeat)]
            browser.close()
    result = {
        "goldens": args.goldens,
        "bytes": size,
        "write_s": round(min(writes), 3),
        **{key: round(min(o[key] for o in opens), 3) for key in opens[0]},
    }
    print(json.dumps(result))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
