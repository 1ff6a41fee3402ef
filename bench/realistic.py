"""The realistic bench: synth and DeepEval at their defaults against a server that behaves like a hosted model.

The server (``tests/fake_openai.py`` as a subprocess) answers each chat request after 1.5 s with 40%
jitter (uniform from 0.9 to 2.1 s), then 10 ms a completion token, each embeddings request after
0.2 s, and runs the provider's automatic prompt cache (a request whose first 1,024 tokens or more
repeat an earlier answered request's reports them as ``prompt_tokens_details.cached_tokens``,
OpenAI's rule). Every token is counted by the server with tiktoken, so both tools are billed alike.

Both tools run as their users run them, each command its own process in a fresh folder, on the same
corpus (``sample_docs`` and a re-spelled copy, ``bench/generate.py``'s: 28 files) and server:

- ``synth generate CORPUS --goldens N --embedder openai:text-embedding-3-small --base-url URL``
  (everything else at its defaults), then ``synth evaluate`` of the goldens answered with their
  expected outputs, with an OpenAI judge and its default metrics;
- DeepEval's ``Synthesizer().generate_goldens_from_docs`` and ``evaluate`` with
  ``FaithfulnessMetric()`` and ``AnswerRelevancyMetric()``, at their defaults
  (``bench/_deepeval_cli.py``, run by ``--deepeval-python``).

Reported per command: wall time (spawn to exit, and its split: to the first request, the request
phase, after the last answer), goldens, requests, prompt / cached / completion tokens, dollars per
golden at gpt-4.1-mini list prices (both tools' chat tokens, whatever model they name; embeddings
at text-embedding-3-small's), and for generation the chain floor: one golden's dependent chat
requests (``bench/generate.py``'s ``chain_of``) times the mean time the server took to answer a
chat request in that run, plus the embeddings' 0.2 s; and the run's own account from its
manifest's ``timeline`` (``run_*``: its request phase, and the chain floor of each stage's mean
latency, filter and evolve side by side).

    python bench/realistic.py --out bench-results/realistic.json
    python bench/realistic.py --deepeval-python /tmp/deepeval-venv/bin/python --out r.json

``--evaluate-only`` times the evaluations alone (synth's, and DeepEval's with
``--deepeval-python``), on the answered goldens an earlier run left in
``--work`` (one generation makes them when none did), so the evaluation can be run again and
again on the same items; the load average when it started is printed with the table.

    python bench/realistic.py --work w --evaluate-only --out r.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cli  # noqa: E402
from _server import ServerOptions, read_log  # noqa: E402
from _util import REPO, header, markdown_table, work_dir, write_json  # noqa: E402
from generate import build_corpus, chain_of  # noqa: E402

#: list prices, dollars per million tokens (OpenAI, December 2026): gpt-4.1-mini input, cached
#: input and output; text-embedding-3-small
PRICES = {"input": 0.40, "cached": 0.10, "output": 1.60, "embedding": 0.02}

HOSTED = ServerOptions(
    latency=0.9,
    latency_max=2.1,
    embedding_latency=0.2,
    token_latency=0.01,
    prompt_cache=True,
    replies=cli.REPLIES,
)


def dollars(row: dict[str, Any]) -> float:
    """What the command's requests cost at :data:`PRICES`."""
    fresh = row["prompt_tokens"] - row["cached_tokens"]
    total = (
        fresh * PRICES["input"]
        + row["cached_tokens"] * PRICES["cached"]
        + row["completion_tokens"] * PRICES["output"]
        + row["embedding_tokens"] * PRICES["embedding"]
    )
    return total / 1_000_000


def mean_chat_seconds(log: Path) -> float:
    """How long the server took, on average, to answer a chat request that it answered."""
    times = [
        r["finished"] - r["started"]
        for r in read_log(log)
        if r["path"].endswith("/chat/completions") and r["outcome"] == "ok"
    ]
    return statistics.fmean(times) if times else 0.0


def round_trip(log: Path) -> dict[str, Any]:
    """How an evaluation's requests left: how many were sent before the first reply came back
    (all of them when they leave in one round trip), and the longest time the server took over
    one of them, the floor of a request phase whose requests all leave at once."""
    rows = [r for r in read_log(log) if r["path"].endswith("/chat/completions")]
    if not rows:
        return {}
    first_reply = min(r.get("finished") or math.inf for r in rows)
    return {
        "sent_before_first_reply": sum(r["started"] < first_reply for r in rows),
        "longest_request_s": round(
            max((r.get("finished") or r["started"]) - r["started"] for r in rows), 2
        ),  # fmt: skip
    }


def synth_evaluate(items: Path, work: Path) -> dict[str, Any]:
    """``synth evaluate`` of the answered goldens with an OpenAI judge at its default metrics."""
    row = cli.evaluate(items, work, HOSTED, None)
    return {**row, **round_trip(work / "evaluate-default" / "requests.jsonl")}


def synth_generate(corpus: Path, work: Path, goldens: int) -> dict[str, Any]:
    """``synth generate`` at its defaults; its measures, the chain floor among them."""
    folder = work / "generate"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    argv = ["generate", str(corpus), "--goldens", str(goldens), "--embedder",
            "openai:text-embedding-3-small", "--base-url", "{URL}", "--json", "-o", "goldens.jsonl"]  # fmt: skip
    log = folder / "requests.jsonl"
    row = cli.run_command(argv, folder, log, HOSTED)
    manifest = json.loads(row.pop("stdout").strip().splitlines()[-1])
    chain = chain_of(manifest, row["embeddings"])
    embeddings = chain.pop("embeddings", 0)
    floor = sum(chain.values()) * mean_chat_seconds(log) + embeddings * HOSTED.embedding_latency
    # the run's own account (its manifest's timeline): request phase over the chain floor of
    # each stage's mean latency, in the process's clock
    timeline = manifest.get("timeline") or {}
    return {
        "delivered": manifest.get("goldens"),
        "level": (manifest.get("concurrency") or {}).get("peak_level"),
        "run_to_first_request_s": timeline.get("to_first_request_s"),
        "run_requests_s": timeline.get("requests_s"),
        "run_chain_floor_s": timeline.get("chain_floor_s"),
        "run_requests_over_floor": timeline.get("requests_over_floor"),
        "timeline": timeline.get("stages"),
        "speculation": speculation(manifest),
        "chain": sum(chain.values()) + embeddings,
        "chain_floor_s": round(floor, 2),
        "requests_over_floor": round(row["requests_s"] / floor, 2) if floor else None,
        **row,
    }


def speculation(manifest: dict[str, Any]) -> dict[str, Any]:
    """The requests the run made speculatively and threw away, from its manifest's stage notes:
    evolutions run beside the filter and expected outputs asked beside the final check for inputs
    it then dropped or rewrote (``ahead_wasted``, ``ahead_redone``: ``synth.run.ahead``), and
    inputs asked for contexts guessed before the critic's verdicts that no candidate used
    (``inputs_asked_ahead`` less ``asked_ahead_used``: ``synth.contexts.guess``), each priced at
    its stage's mean tokens per request (the expected outputs, asked several to a request: per
    input answered)."""
    stages = {row["stage"]: row for row in manifest.get("stages") or []}

    def per_request(stage: str, per: str = "requests") -> tuple[float, float]:
        row = stages.get(stage) or {}
        n = max(1, row.get(per, 0))
        return row.get("input_tokens", 0) / n, row.get("output_tokens", 0) / n

    def thrown_away(stage: str) -> int:
        notes = (stages.get(stage) or {}).get("notes") or {}
        return int(notes.get("ahead_wasted", 0) + notes.get("ahead_redone", 0))

    group = (stages.get("group") or {}).get("notes") or {}
    wasted = {
        "evolve_ahead": (thrown_away("evolve"), per_request("evolve")),
        "expected_ahead": (thrown_away("expected"), per_request("expected", "items_in")),
        "inputs_guessed": (
            max(0, group.get("inputs_asked_ahead", 0) - group.get("asked_ahead_used", 0)),
            per_request("inputs"),
        ),
    }
    out: dict[str, Any] = {}
    for name, (requests, (tokens_in, tokens_out)) in wasted.items():
        dollars = (
            requests * tokens_in * PRICES["input"] + requests * tokens_out * PRICES["output"]
        ) / 1e6
        out[name] = {"requests": requests, "prompt_tokens": round(requests * tokens_in),
                     "completion_tokens": round(requests * tokens_out), "dollars": round(dollars, 5)}  # fmt: skip
    return out


def finish(row: dict[str, Any], goldens: int | None) -> dict[str, Any]:
    """``row`` with its cost, its share of cached prompt tokens and, for generation, per golden."""
    row["dollars"] = round(dollars(row), 4)
    row["cached_share"] = round(row["cached_tokens"] / max(1, row["prompt_tokens"]), 3)
    if goldens:
        row["s_per_golden"] = round(row["wall_s"] / goldens, 3)
        row["dollars_per_1000_goldens"] = round(1000 * row["dollars"] / goldens, 2)
        row["prompt_tokens_per_golden"] = round(row["prompt_tokens"] / goldens)
    return row


def compare(rows: dict[str, dict[str, Any]]) -> dict[str, float]:
    """synth over DeepEval: time and dollars per golden, evaluation time (lower is better)."""
    out: dict[str, float] = {}
    synth, deepeval = rows.get("synth generate"), rows.get("deepeval generate")
    if synth and deepeval and synth.get("s_per_golden") and deepeval.get("s_per_golden"):
        out["time_per_golden_synth_over_deepeval"] = round(
            synth["s_per_golden"] / deepeval["s_per_golden"], 3
        )
        out["dollars_per_golden_synth_over_deepeval"] = round(
            synth["dollars_per_1000_goldens"] / deepeval["dollars_per_1000_goldens"], 3
        )
    if "synth evaluate" in rows and "deepeval evaluate" in rows:
        out["evaluate_time_synth_over_deepeval"] = round(
            rows["synth evaluate"]["wall_s"] / rows["deepeval evaluate"]["wall_s"], 3
        )
    return out


COLUMNS = [
    "command",
    "wall_s",
    "cpu_s",
    "to_first_s",
    "requests_s",
    "after_last_s",
    "delivered",
    "requests",
    "prompt_tokens",
    "cached_tokens",
    "completion_tokens",
    "dollars_per_1000_goldens",
    "s_per_golden",
    "chain_floor_s",
    "requests_over_floor",
    "run_requests_s",
    "run_chain_floor_s",
    "run_requests_over_floor",
    "sent_before_first_reply",
    "longest_request_s",
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--goldens", type=int, default=60)
    parser.add_argument("--copies", type=int, default=2, help="copies of sample_docs (2)")
    parser.add_argument("--synth-path", type=Path, default=REPO, help="the checkout to run")
    parser.add_argument("--deepeval-python", help="an interpreter with deepeval: run it too")
    parser.add_argument("--skip-evaluate", action="store_true", help="generation only")
    parser.add_argument(
        "--evaluate-only",
        action="store_true",
        help="evaluation only, of the answered goldens an earlier run left in --work (made once "
        "when missing)",
    )
    parser.add_argument("--work", type=Path, help="scratch folder (default: a temporary one)")
    parser.add_argument("--out", help="write the results as JSON here")
    args = parser.parse_args(argv)
    if args.evaluate_only and (args.skip_evaluate or args.work is None):
        parser.error("--evaluate-only needs --work (where the answered goldens are kept) and "
                     "no --skip-evaluate")  # fmt: skip
    load = os.getloadavg()[0]
    cli.SYNTH_PATH[0] = args.synth_path.resolve()
    cli.precompile(cli.SYNTH_PATH[0])
    rows: dict[str, dict[str, Any]] = {}
    with work_dir(args.work, "realistic") as work:
        corpus = build_corpus(work, args.copies)
        items = work / "answered.json"
        if not (args.evaluate_only and items.exists()):
            made = synth_generate(corpus, work, args.goldens)
            if not args.evaluate_only:
                rows["synth generate"] = finish(made, made["delivered"])
            cli.answered_items(work / "generate" / "goldens.jsonl", items)
        if not args.skip_evaluate:
            rows["synth evaluate"] = finish(synth_evaluate(items, work), None)
        if args.deepeval_python and not args.evaluate_only:
            made = cli.deepeval_generate(corpus, work, HOSTED, args.deepeval_python)
            made["chain_floor_s"] = None
            rows["deepeval generate"] = finish(made, made["delivered"])
        if args.deepeval_python and not args.skip_evaluate:
            scored = cli.deepeval_evaluate(items, work, HOSTED, args.deepeval_python)
            scored.update(round_trip(work / "deepeval-evaluate" / "requests.jsonl"))
            rows["deepeval evaluate"] = finish(scored, None)
    for name, row in rows.items():
        row["command"] = name
    ratios = compare(rows)
    write_json(
        args.out,
        {
            **header(sys.argv, ("synth", "openai", "chromadb")),
            "load_average": round(load, 2),
            "server": HOSTED.describe(),
            "prices_per_million_tokens": PRICES,
            "rows": list(rows.values()),
            "ratios": ratios,
        },
    )
    print(f"server: {HOSTED.describe()}; load average {load:.2f} at the start")
    print(markdown_table(COLUMNS, [[row.get(c, "") for c in COLUMNS] for row in rows.values()]))
    for name, value in ratios.items():
        print(f"{name}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
