"""Rate-limit bench: how much of a provider's requests- or tokens-per-minute limit a run's limiter uses.

Each scenario starts the fake server (``tests/fake_openai.py``, a subprocess) answering like a
hosted model (0.9 to 2.1 s a request) under a limit of ``--rpm`` requests a minute, or of as many
tokens a minute as ``--rpm`` of these requests carry (prompt and reply), with and without OpenAI's
``x-ratelimit-*`` headers, and without them with the 429s answered at once (``/429-at-once``: a
hosted provider refuses before any model work; the fake server otherwise answers a 429 after the
latency); ``--requests`` chat requests are sent at once through ``make_llm``, the real openai SDK
and a limiter made as a run makes it (adaptive from ``RUN_START``, no ``--rpm``).

The server's window slides: at most ``rpm`` requests (or tokens) within any minute. N requests
cannot all be answered sooner than ``(ceil(N / rpm) - 1)`` minutes plus one answer's time (under
the tokens limit: ``ceil(tokens they spent / tpm) - 1``), the *floor*; a run's *share of the allowed rate* is that floor over the time it took (first request
sent to last answer). Counted from the server's log: requests answered, 429s.

    python bench/ratelimit.py --out bench-results/ratelimit.json
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _server import FakeServer, ServerOptions, read_log, request_counts  # noqa: E402
from _util import REPO, header, markdown_table, work_dir, write_json  # noqa: E402

sys.path.insert(0, str(REPO))

#: a prompt of this many words (the fake server counts words, plus 4 a message)
PROMPT_WORDS = 120
MEAN_LATENCY = 1.5


def prompt(i: int) -> str:
    words = [f"w{(i * 7 + k) % 997}" for k in range(PROMPT_WORDS - 2)]
    return f"question {i} " + " ".join(words)


@dataclass
class LimitedServer(ServerOptions):
    """The fake server's options, and whether its rate limit's 429s are answered at once."""

    refuse_at_once: bool = False

    def args(self) -> list[str]:
        return super().args() + (["--refuse-at-once"] if self.refuse_at_once else [])

    def describe(self) -> str:
        return super().describe() + (", 429s at once" if self.refuse_at_once else "")


def scenarios(rpm: int) -> dict[str, ServerOptions]:
    tokens = round(rpm * (PROMPT_WORDS + 4) * 1.15)  # and about 15% more for the replies
    hosted: dict[str, Any] = {"latency": 0.9, "latency_max": 2.1}
    return {
        "rpm+headers": LimitedServer(**hosted, rpm=rpm, rate_headers=True),
        "rpm": LimitedServer(**hosted, rpm=rpm),
        "rpm/429-at-once": LimitedServer(**hosted, rpm=rpm, refuse_at_once=True),
        "tpm+headers": LimitedServer(**hosted, tpm=tokens, rate_headers=True),
        "tpm": LimitedServer(**hosted, tpm=tokens),
        "tpm/429-at-once": LimitedServer(**hosted, tpm=tokens, refuse_at_once=True),
    }


def run_one(url: str, requests: int) -> dict[str, Any]:
    """Send ``requests`` requests at once through a run's limiter; its report."""
    from synth import make_llm
    from synth.run.models import make_limiter

    limiter = make_limiter(None, None, None)
    llm = make_llm("openai:m", base_url=url, api_key="sk-bench", limiter=limiter, max_retries=50)
    with llm:

        async def main() -> None:
            await asyncio.gather(*[llm.acomplete(prompt(i)) for i in range(requests)])

        asyncio.run(main())
    return limiter.concurrency()


def measure(name: str, options: ServerOptions, args: Any, work: Path) -> dict[str, Any]:
    log = work / f"{name.replace('+', '-').replace('/', '-')}.jsonl"
    started = time.perf_counter()
    with FakeServer(options, log) as server:
        report = run_one(server.url, args.requests)
    wall = time.perf_counter() - started
    rows = read_log(log)
    counts = request_counts(rows)
    ok = [r for r in rows if r["outcome"] == "ok"]
    span = max(r["finished"] for r in ok) - min(r["started"] for r in rows)
    if options.tpm:  # the tokens the answered requests spent, over the tokens allowed a minute
        spent = sum((r.get("usage") or {}).get("total_tokens", 0) for r in ok)
        windows = math.ceil(spent / options.tpm)
    else:
        windows = math.ceil(args.requests / args.rpm)
    floor = (windows - 1) * 60.0 + MEAN_LATENCY
    return {
        "scenario": name,
        "server": options.describe(),
        "answered": len(ok),
        "refused": sum(n for kind, n in counts["outcomes"].items() if kind != "ok"),
        "span_s": round(span, 1),
        "floor_s": round(floor, 1),
        "share_of_allowed_rate": round(floor / span, 3),
        "wall_s": round(wall, 1),
        "level": report.get("level"),
        "peak_level": report.get("peak_level"),
        "cuts": report.get("cuts"),
        "holds": report.get("holds"),
        "paced_by_provider": report.get("paced_by_provider"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rpm", type=int, default=300, help="the limit, per minute (300)")
    parser.add_argument("--requests", type=int, default=600, help="requests per run (600)")
    parser.add_argument("--scenarios", help="which, comma-separated (default: all six)")
    parser.add_argument("--work", type=Path, help="scratch folder (default: a temporary one)")
    parser.add_argument("--out", help="write the results as JSON here")
    args = parser.parse_args(argv)
    chosen = scenarios(args.rpm)
    names = args.scenarios.split(",") if args.scenarios else list(chosen)
    rows = []
    with work_dir(args.work, "ratelimit") as work:
        for name in names:
            rows.append(measure(name, chosen[name], args, work))
            print(rows[-1], flush=True)
    write_json(args.out, {**header(sys.argv, ("synth", "openai")), "rows": rows})
    columns = ["scenario", "answered", "refused", "span_s", "floor_s", "share_of_allowed_rate"]
    columns += ["peak_level", "cuts", "holds", "paced_by_provider"]
    print(markdown_table(columns, [[row.get(c, "") for c in columns] for row in rows]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
