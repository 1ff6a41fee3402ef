"""Language-models bench: how long a doubtful language check holds a run's event loop.

A text lingua's trigrams leave in doubt is judged with its full models, whose models for short
texts take seconds to load, once a process, holding the interpreter while they do
(``synth._language.load_full_models`` loads them one language at a time, so a loop runs in
between). Each trial is a fresh interpreter running an event loop with a ticker (a task that
wakes every 10 ms, as a run's requests and progress do) while it checks texts as a run does:
``--head-start`` seconds of settled texts first (the run's first questions), then one doubtful
text (prepared on a thread, then checked, as the steps do). It reports the ticker's longest pause
(how long nothing else on the loop could run), how long the doubtful check took and the process's
peak memory, with the models loaded ahead on a thread as the loop starts (``ahead``, what a run
does as its first wave goes out) and loaded when the doubtful text needs them (``on demand``),
trials in turn::

    python bench/language_models.py --trials 3 --head-start 3 --out bench-results/language-models.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import REPO, header, markdown_table, write_json  # noqa: E402

#: the doubtful text of bench/cli.py's runs (compare_replies' made-up words) and settled ones
DOUBTFUL = "whileixix Stormenen Watchanet is activeanan."
SETTLED = "How long does the battery of the solar lamp last on a sunny day?"

#: one trial, in its own interpreter: prints a JSON line
TRIAL = f"""
import asyncio, json, resource, sys, threading, time
from synth._language import check_language, full_models_for, load_full_models, prepare_checks

async def main(head_start, ahead):
    pauses = []
    async def tick():
        last = time.perf_counter()
        while True:
            await asyncio.sleep(0.01)
            now = time.perf_counter()
            pauses.append(now - last)
            last = now
    ticker = asyncio.create_task(tick())
    await asyncio.sleep(0)  # the ticker is running before anything is checked
    if ahead:
        codes = full_models_for("en")
        threading.Thread(target=load_full_models, args=(codes,), daemon=True).start()
    end = time.perf_counter() + head_start
    while time.perf_counter() < end:
        check_language({SETTLED!r}, "en")
        await asyncio.sleep(0.05)
    start = time.perf_counter()
    await prepare_checks([{DOUBTFUL!r}], "en")  # as the steps do: judged on a thread
    verdict = check_language({DOUBTFUL!r}, "en")
    check_s = time.perf_counter() - start
    await asyncio.sleep(0.05)
    ticker.cancel()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({{"max_pause_s": max(pauses), "check_s": check_s, "verdict": verdict.status,
                      "rss_mib": rss}}))

asyncio.run(main(float(sys.argv[1]), sys.argv[2] == "ahead"))
"""


def trial(mode: str, head_start: float, synth_path: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(synth_path)}
    done = subprocess.run(
        [sys.executable, "-c", TRIAL, str(head_start), mode],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument(
        "--head-start", type=float, default=3.0, help="seconds before the doubt (3)"
    )
    parser.add_argument("--synth-path", type=Path, default=REPO)
    parser.add_argument("--out", help="write the results as JSON here")
    args = parser.parse_args()
    found: dict[str, list[dict[str, Any]]] = {"ahead": [], "on demand": []}
    for _ in range(args.trials):
        for mode, trials in found.items():
            trials.append(trial(mode, args.head_start, args.synth_path))
    rows = []
    for name, trials in found.items():
        rows.append(
            [
                name,
                args.head_start,
                round(statistics.median(t["max_pause_s"] for t in trials), 3),
                round(max(t["max_pause_s"] for t in trials), 3),
                round(statistics.median(t["check_s"] for t in trials), 3),
                round(statistics.median(t["rss_mib"] for t in trials)),
                ", ".join(sorted({t["verdict"] for t in trials})),
            ]
        )
    headers = [
        "full models",
        "head start s",
        "longest pause s (median)",
        "(max)",
        "doubtful check s",
        "peak RSS MiB",
        "verdict",
    ]
    print(markdown_table(headers, rows))
    write_json(
        args.out, {**header(sys.argv, ["lingua-language-detector"]), "trials": found, "rows": rows}
    )


if __name__ == "__main__":
    main()
