"""Adaptive concurrency bench: the level synth's limiter finds against servers that behave differently.

Each scenario starts the fake server (``tests/fake_openai.py``, a subprocess) and sends
``--requests`` chat requests at once through ``make_llm`` and the real openai SDK, sharing one
:class:`~synth.RateLimiter` made as a run makes it: adaptive (from ``RUN_START``, ceiling 256, as
a run without ``--max-concurrent``) and
fixed at 32 (the old default), side by side. The scenarios:

- ``open``: no limit (latency 0.5 s): the level should rise far past 32;
- ``concurrency``: the server answers 429 at once when 16 requests are being served;
- ``rate``: the server answers 429 above 40 requests per second (a sliding window);
- ``queue``: 8 workers, the rest queued (a small local server): the level should stop rising.

Counted from the server's log: requests, 429s (all, and those that arrived after ``--settle``
seconds), the peak in flight; from the limiter: the level reached, its peak and its cuts.

    python bench/adaptive.py --out bench-results/adaptive.json
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _server import FakeServer, ServerOptions, read_log, request_counts  # noqa: E402
from _util import REPO, header, markdown_table, work_dir, write_json  # noqa: E402

sys.path.insert(0, str(REPO))

SCENARIOS: dict[str, ServerOptions] = {
    "open": ServerOptions(latency=0.5),
    "concurrency": ServerOptions(latency=0.5, max_in_flight=16),
    "rate": ServerOptions(latency=0.5, rpm=40, rpm_window=1.0),
    "queue": ServerOptions(latency=0.2, workers=8),
}
REFUSED = ("rpm_limit", "concurrency_limit", "rate_limit")


def run_one(url: str, adaptive: bool, requests: int) -> dict[str, Any]:
    """Send ``requests`` requests at once; the limiter's report and the wall time."""
    from synth import make_llm
    from synth.run.models import make_limiter

    # a run's own limiter: without --max-concurrent adaptive (from RUN_START, ceiling 256)
    limiter = make_limiter(None if adaptive else 32, None, None)
    llm = make_llm("openai:m", base_url=url, api_key="sk-bench", limiter=limiter, max_retries=20)
    start = time.perf_counter()
    with llm:

        async def main() -> None:
            await asyncio.gather(*[llm.acomplete(f"question {i}") for i in range(requests)])

        asyncio.run(main())
    return {"wall_s": round(time.perf_counter() - start, 2), **limiter.concurrency()}


def refused_after(rows: list[dict[str, Any]], settle: float) -> tuple[int, int]:
    """429s and requests among those that arrived ``settle`` seconds or more after the first."""
    if not rows:
        return 0, 0
    first = min(row["started"] for row in rows)
    later = [row for row in rows if row["started"] - first >= settle]
    return sum(row["outcome"] in REFUSED for row in later), len(later)


def measure(name: str, options: ServerOptions, adaptive: bool, args: Any, work: Path) -> dict:
    log = work / f"{name}-{'adaptive' if adaptive else 'fixed'}.jsonl"
    with FakeServer(options, log) as server:
        result = run_one(server.url, adaptive, args.requests)
    rows = read_log(log)
    counts = request_counts(rows)
    refused = sum(counts["outcomes"].get(kind, 0) for kind in REFUSED)
    late, late_total = refused_after(rows, args.settle)
    return {
        "scenario": name,
        "server": options.describe(),
        "limiter": "adaptive (256)" if adaptive else "fixed 32",
        **result,
        "requests": counts["requests"],
        "refused": refused,
        "refused_after_settle": late,
        "requests_after_settle": late_total,
        "refused_share_after_settle": round(late / late_total, 4) if late_total else 0.0,
        "server_peak_in_flight": counts["peak_in_flight"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=600, help="requests per run (600)")
    parser.add_argument("--settle", type=float, default=3.0, help="the first seconds (3)")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS), help="which, comma-separated")
    parser.add_argument("--work", type=Path, help="scratch folder (default: a temporary one)")
    parser.add_argument("--out", help="write the results as JSON here")
    args = parser.parse_args(argv)
    rows = []
    with work_dir(args.work, "adaptive") as work:
        for name in args.scenarios.split(","):
            for adaptive in (True, False):
                rows.append(measure(name, SCENARIOS[name], adaptive, args, work))
    write_json(args.out, {**header(sys.argv, ("synth", "openai")), "rows": rows})
    columns = ["scenario", "limiter", "wall_s", "level", "peak_level", "cuts", "requests"]
    columns += ["refused", "refused_share_after_settle", "server_peak_in_flight"]
    table = [[row.get(c, "") for c in columns] for row in rows]
    print(markdown_table(columns, table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
