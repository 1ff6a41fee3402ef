"""Review bench: how long ``synth review`` takes to open a big dataset, and to save one decision.

The dataset is ``--goldens`` goldens made by ``bench/report.py``'s ``make_dataset`` (seeded: two
chunks of about ``--words`` words each, a cited span, every measurement), saved as ``.jsonl`` (and
``.json`` with ``--json``). Reported:

- ``startup_s``: from starting ``synth review FILE --no-browser`` to the URL it prints (imports,
  reading the file, serialising every golden once);
- in Debian's chromium (``/usr/bin/chromium``, Playwright), seconds from the start of navigation
  to the first contentful paint (``first_paint_s``), to the page's script having drawn the first
  golden and the list (``ready_s``), and to the load event (``load_s``); ``open_s`` is the later of
  ready and load, the fastest of ``--repeat`` openings; every request but the server's fails it;
- ``save_ms``: one decision through the store (re-serialise one golden, rewrite the file with
  fsync and rename), in-process, median / 95th percentile / max of ``--decisions``;
- ``request_ms``: one decision through HTTP to the running server (what the page waits for).

    python bench/review.py
    python bench/review.py --goldens 5000 --decisions 200 --json --out bench-results/review.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from report import make_dataset

from synth.review import ReviewStore

TIMES = """() => {
  const first = (name) => performance.getEntriesByName(name)[0]?.startTime;
  return {paint: first("first-contentful-paint"), ready: first("synth:review-ready"),
          load: performance.getEntriesByType("navigation")[0].loadEventEnd};
}"""


def spread(samples: list[float]) -> dict[str, float]:
    """Median, 95th percentile and max of ``samples`` (seconds), in milliseconds."""
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "median": round(statistics.median(ordered) * 1000, 2),
        "p95": round(p95 * 1000, 2),
        "max": round(ordered[-1] * 1000, 2),
    }


def measure_saves(path: Path, decisions: int) -> dict[str, float]:
    """Decisions through the store itself: the file rewrite each one costs."""
    store = ReviewStore(path, reviewer="bench")
    samples = []
    for i in range(decisions):
        key = store.keys[i % len(store.keys)]
        started = time.perf_counter()
        store.decide(key, "accepted" if i % 2 else "rejected", None)
        samples.append(time.perf_counter() - started)
    return spread(samples)


def start_server(path: Path) -> tuple[subprocess.Popen[str], str, float]:
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "synth", "review", str(path), "--no-browser"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.strip().startswith("http://127.0.0.1:"):
            return proc, line.strip(), time.perf_counter() - started
    raise SystemExit("synth review printed no URL")


def measure_open(browser: Any, url: str) -> dict[str, float]:
    origin = url.split("/?")[0]
    page = browser.new_page(viewport={"width": 1360, "height": 900})
    blocked: list[str] = []
    page.route(
        "**/*",
        lambda r: (
            r.continue_()
            if r.request.url.startswith(origin + "/")
            else (blocked.append(r.request.url), r.abort())
        ),
    )
    page.goto(url, wait_until="load")
    page.wait_for_function("performance.getEntriesByName('synth:review-ready').length > 0")
    times = page.evaluate(TIMES)
    page.close()
    if blocked:
        raise SystemExit(f"the review page made requests: {blocked}")
    return {
        "first_paint_s": times["paint"] / 1000,
        "ready_s": times["ready"] / 1000,
        "load_s": times["load"] / 1000,
        "open_s": max(times["ready"], times["load"]) / 1000,
    }


def measure_requests(url: str, decisions: int) -> dict[str, float]:
    import httpx

    origin, token = url.split("/?")[0], url.split("token=")[1]
    with httpx.Client(base_url=origin, headers={"X-Synth-Token": token}) as client:
        keys = [g["key"] for g in client.get("/api/goldens").json()["goldens"]]
        samples = []
        for i in range(decisions):
            started = time.perf_counter()
            answer = client.post("/api/decide", json={"key": keys[-1 - i], "status": "accepted"})
            samples.append(time.perf_counter() - started)
            answer.raise_for_status()
    return spread(samples)


def bench_file(path: Path, args: argparse.Namespace) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    proc, url, startup = start_server(path)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=args.chromium)
            opens = [measure_open(browser, url) for _ in range(args.repeat)]
            browser.close()
        requests = measure_requests(url, args.decisions)
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
    return {
        "file": path.suffix,
        "bytes": path.stat().st_size,
        "startup_s": round(startup, 3),
        **{key: round(min(o[key] for o in opens), 3) for key in opens[0]},
        "request_ms": requests,
        "save_ms": measure_saves(path, args.decisions),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--goldens", type=int, default=5000)
    parser.add_argument("--words", type=int, default=150)
    parser.add_argument("--decisions", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="also bench a .json dataset")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    dataset = make_dataset(args.goldens, args.words, args.seed)
    results = []
    with tempfile.TemporaryDirectory() as folder:
        for suffix in (".jsonl", ".json") if args.json else (".jsonl",):
            path = dataset.save(Path(folder) / f"goldens{suffix}")
            results.append({"goldens": args.goldens, **bench_file(path, args)})
            print(json.dumps(results[-1]), flush=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
