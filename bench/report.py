"""Report bench: how long writing a dataset or an evaluation report takes, and opening it in
chromium.

The dataset (``--kind dataset``) is ``--goldens`` goldens made here (seeded): each with two chunks
of about ``--words`` words (every chunk shared by two goldens, as neighbouring goldens share
chunks in a run), one or two cited spans, a grounding score, a difficulty label, critic and
filter scores. The evaluation (``--kind evaluation``) is an answers report of as many items
(seeded): two text metrics, two judge metrics scored by a panel of two with their verdicts kept
(a reason or a list of claims each), one failure in fifty.

Reported, each the fastest of ``--repeat`` runs:

- ``write``: ``dataset_report`` (inspection, figures, table data, rendering) or
  ``evaluation_report`` (figures, item and failure tables, rendering) plus writing the file;
- ``open``: in Debian's chromium (``/usr/bin/chromium``, driven by Playwright), seconds from the
  start of navigation to the load event (``load_s``), to the first table page drawn (``table_s``),
  the later of the two (``open_s``), and to every plot drawn (``plots_s``: plotly.js is parsed
  after the load); the page's requests are routed and any but its own file fails the bench.

    python bench/report.py
    python bench/report.py --goldens 5000 --repeat 3 --out bench-results/report.json
    python bench/report.py --kind evaluation --goldens 5000 --repeat 3
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

from synth import AnswerEvaluation, ItemResult
from synth.data import Golden
from synth.dataset import Dataset
from synth.evaluate.report import summarize
from synth.report import dataset_report, evaluation_report

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


def make_evaluation(count: int, words: int, seed: int) -> AnswerEvaluation:
    """An answers report of ``count`` items scored by a panel of two, verdicts kept, seeded."""
    rng = random.Random(seed)
    items = []
    for i in range(count):
        scores: dict[str, float] = {"exact_match": float(rng.random() < 0.3)}
        scores["token_f1"] = round(rng.random(), 3)
        verdicts, errors = {}, {}
        for metric in ("faithfulness", "answer_relevance"):
            panel = []
            for judge in ("gpt", "claude"):
                key = f"{metric}/{judge}"
                if rng.random() < 0.02:
                    scores[key] = float("nan")
                    errors[key] = "invalid_output: reply is not one JSON object"
                    continue
                scores[key] = round(rng.random(), 2)
                panel.append(scores[key])
                reason = " ".join(rng.choices(VOCABULARY, k=20))
                verdicts[key] = (
                    {
                        "claims": [reason],
                        "verdicts": [{"index": 1, "supported": rng.random() < 0.7}],
                    }
                    if metric == "faithfulness"
                    else {"score": rng.randint(1, 5), "reason": reason}
                )
            scores[metric] = sum(panel) / len(panel) if panel else float("nan")
        items.append(
            ItemResult(
                id=f"item-{i:05d}",
                question=" ".join(rng.choices(VOCABULARY, k=rng.randint(8, 20))) + "?",
                answer=" ".join(rng.choices(VOCABULARY, k=rng.randint(20, 60))) + ".",
                references=[" ".join(rng.choices(VOCABULARY, k=words // 5)) + "."],
                scores=scores,
                errors=errors,
                verdicts=verdicts,
            )
        )
    report = AnswerEvaluation(
        items=items,
        config={"system": "bench", "seed": seed},
        judges={"gpt": {"provider": "openai", "model": "gpt"}, "claude": {"model": "claude"}},
        agreement={"faithfulness": 0.41, "answer_relevance": 0.52},
    )
    order = [*items[0].scores]
    summarize(report, order, seed, n_resamples=200)  # the intervals are not what is measured
    return report


def measure_write(page: Any, path: Path) -> float:
    """Seconds to make the page of ``page()`` and write it."""
    started = time.perf_counter()
    path.write_text(page(), encoding="utf-8")
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
    parser.add_argument("--kind", choices=("dataset", "evaluation"), default="dataset")
    parser.add_argument("--goldens", type=int, default=5000, help="goldens, or evaluated items")
    parser.add_argument("--words", type=int, default=150)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    if args.kind == "dataset":
        dataset = make_dataset(args.goldens, args.words, args.seed)
        page = lambda: dataset_report(dataset)  # noqa: E731
    else:
        report = make_evaluation(args.goldens, args.words, args.seed)
        page = lambda: evaluation_report(report)  # noqa: E731
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"{args.kind}.html"
        writes = [measure_write(page, path) for _ in range(args.repeat)]
        size = path.stat().st_size
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=args.chromium)
            opens = [measure_open(browser, path) for _ in range(args.repeat)]
            browser.close()
    result = {
        "kind": args.kind,
        "items": args.goldens,
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
