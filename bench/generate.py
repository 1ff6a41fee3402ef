"""Generation bench: the full pipeline against the fake OpenAI server, and how close it runs to the floor.

For each asked number of goldens it starts the fake server (``tests/fake_openai.py`` with
``tests/synth_replies.py`` answering synth's prompts, or with ``--generic`` answering from the JSON
schema alone, ``--sloppy missing=0.2`` spoiling batch replies; a latency per request, optional
faults and a requests-per-minute limit), then runs ``Synthesizer.generate_goldens_from_docs(num_goldens=N)`` in a
fresh interpreter on a corpus (``sample_docs`` repeated ``--copies`` times, each copy after the first
re-spelled so copies do not duplicate each other; or ``--folder``), with no
response cache, a new run directory and the ``hash`` embedder unless told otherwise.

Reported: goldens delivered, wall time, requests and tokens per golden and per stage (the run's
manifest), peak requests in flight (the server's log), and wall time over the floor. The wall time
is that of the ``generate_goldens_from_docs`` call, ingest included, in an interpreter that has
already imported synth, chromadb and the openai SDK (as a long-lived process has); the imports,
paid once per process, are timed and reported apart. The floor is

    floor = max(longest chain of dependent requests x latency, requests / rate limit)

The chain is one golden's path through the stages that made requests: context critic, inputs,
filter rounds, ``num_evolutions`` evolutions, style, expected output (and embeddings, when the
embedder calls the server). A third bound, ``requests x latency / max_concurrent``, is what the
concurrency limit allows; it is reported next to the floor.

    python bench/generate.py --goldens 200 --latency 0.5 --out bench-results/generate.json
    python bench/generate.py --goldens 60 --generic --sloppy missing=0.2 --latency 0.05
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _server import FakeServer, ServerOptions, parse_faults, read_log, request_counts  # noqa: E402
from _util import REPO, header, markdown_table, work_dir, write_json  # noqa: E402

REPLIES = "synth_replies:reply"  # tests/synth_replies.py, importable by the server script
AIM_RATIO = 1.5
AIM_REQUESTS_PER_GOLDEN = 3.0
PACKAGES = ("synth", "openai", "chromadb", "tiktoken", "pydantic")
#: stages in pipeline order, as the manifest names them
STAGES = (
    "ingest",
    "prose",
    "critic",
    "group",
    "inputs",
    "filter",
    "evolve",
    "style",
    "expected",
    "dedup",
)


# ---- the child: one run -------------------------------------------------------------------------


def child_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--goldens", type=int, required=True)
    parser.add_argument("--max-concurrent", type=int, required=True)
    parser.add_argument("--embedder", required=True)
    parser.add_argument("--pipeline")
    parser.add_argument("--chunk-size", type=int, required=True)
    parser.add_argument("--client-rpm", type=float)
    parser.add_argument("--rpm-window", type=float, default=60.0)
    parser.add_argument("--no-difficulty", action="store_true")
    args = parser.parse_args(argv)
    from _synth_run import run_synth

    if args.no_difficulty:  # the bench's control: every stage as usual, no difficulty measured
        from synth.run.difficulty import DifficultyMeter

        async def unmeasured(self: DifficultyMeter, drafts: Any, vectors: Any) -> None:
            return None

        DifficultyMeter.measure = unmeasured  # type: ignore[method-assign]

    result = run_synth(
        [str(args.corpus)],
        args.url,
        args.work,
        num_goldens=args.goldens,
        goldens_per_context=2,
        contexts_per_document=None,
        max_concurrent=args.max_concurrent,
        chunk_size=args.chunk_size,
        embedder=args.embedder,
        pipeline=args.pipeline,
        client_rpm=args.client_rpm,
        rpm_window=args.rpm_window,
    )
    print(json.dumps(result))
    return 0


# ---- the bench ----------------------------------------------------------------------------------------


def build_corpus(work: Path, copies: int) -> Path:
    """``sample_docs`` ``copies`` times over, in ``work/corpus/copy-NN/``, no two copies alike.

    Copy 1 is ``sample_docs`` as it is. Copies 2 and up hold every sample document's text (as
    read by synth) with each word of four letters or more swapped for another word of the
    corpus of the same length (a permutation fixed by the copy), written as ``.md``. Plain copies
    would give identical contexts, identical questions and a dedup stage dropping nearly
    everything; swapped ones keep each copy's structure and length while making its contexts,
    questions and embeddings its own, and keep them English, as a real corpus is in its own
    language: an earlier re-spelling (a suffix added to each word) read as Swedish or Polish to
    the language check, which dropped answers and made a refill tail no real corpus would.
    """
    from synth import load_documents

    corpus = work / "corpus"
    shutil.rmtree(corpus, ignore_errors=True)
    shutil.copytree(REPO / "sample_docs", corpus / "copy-01")
    documents = load_documents(REPO / "sample_docs").documents
    vocabulary = sorted({w.lower() for d in documents for w in _LONG_WORD.findall(d.text)})
    for number in range(2, copies + 1):
        swap = _swaps(vocabulary, number)
        for document in documents:
            target = (corpus / f"copy-{number:02d}" / document.path).with_suffix(".md")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(_respell(document.text, swap), encoding="utf-8")
    return corpus


_LONG_WORD = re.compile(r"[A-Za-z]{4,}")


def _swaps(vocabulary: list[str], copy: int) -> dict[str, str]:
    """Each word of ``vocabulary`` mapped to another of the same length, shuffled by ``copy``."""
    by_length: dict[int, list[str]] = {}
    for word in vocabulary:
        by_length.setdefault(len(word), []).append(word)
    swap: dict[str, str] = {}
    for length, group in sorted(by_length.items()):
        images = list(group)
        random.Random(f"{copy}:{length}").shuffle(images)
        swap.update(zip(group, images, strict=True))
    return swap


def _respell(text: str, swap: dict[str, str]) -> str:
    def respell(match: re.Match[str]) -> str:
        word = match.group(0)
        image = swap.get(word.lower(), word.lower())
        if word.isupper():
            return image.upper()
        return image.capitalize() if word[0].isupper() else image

    return _LONG_WORD.sub(respell, text)


def chain_of(run: dict[str, Any], embeddings: int) -> dict[str, int]:
    """One golden's chain of dependent requests, stage by stage (stages that made none left out).

    Filter rounds are the filter's requests over the inputs' (each round is one request per
    context); evolutions are ``num_evolutions`` requests one after another.
    """
    requests = {row["stage"]: int(row.get("requests", 0)) for row in run["stages"]}
    chain: dict[str, int] = {}
    if embeddings:
        chain["embeddings"] = 1
    if requests.get("critic"):
        chain["critic"] = 1
    if requests.get("inputs"):
        chain["inputs"] = 1
        group_row = next((row for row in run["stages"] if row["stage"] == "group"), {})
        if chain.get("critic") and (group_row.get("notes") or {}).get("asked_ahead_used"):
            # the inputs were asked beside the critic (DocsFeed.warm_with): one round for both,
            # after the chunks' embeddings the guessed contexts need
            del chain["critic"]
    if requests.get("filter"):
        chain["filter"] = max(1, round(requests["filter"] / max(1, requests.get("inputs", 1))))
    if requests.get("evolve"):
        evolution = (run.get("config") or {}).get("evolution") or {}
        chain["evolve"] = int(evolution.get("num_evolutions", 1))
        evolve_row = next((row for row in run["stages"] if row["stage"] == "evolve"), {})
        if chain.get("filter") and (evolve_row.get("notes") or {}).get("ahead_kept"):
            # evolve ran ahead of the filter (synth.run.ahead): the first evolution was asked
            # for beside the filter's first round, not after it
            chain["evolve"] -= 1
            if not chain["evolve"]:
                del chain["evolve"]
    for stage in ("style", "check", "expected"):
        if requests.get(stage):
            chain[stage] = 1
    expected_row = next((row for row in run["stages"] if row["stage"] == "expected"), {})
    if chain.get("check") and (expected_row.get("notes") or {}).get("ahead_kept"):
        # the expected outputs were asked beside the final check (synth.run.ahead): one round
        del chain["check"]
    return chain


def measure(
    corpus: Path, goldens: int, options: ServerOptions, args: argparse.Namespace, work: Path
) -> dict[str, Any]:
    """One run of ``goldens`` goldens against a fresh server; the run's figures and the floor."""
    folder = work / f"run-{goldens}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    log = folder / "requests.jsonl"
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        "--corpus",
        str(corpus),
        "--work",
        str(folder),
        "--goldens",
        str(goldens),
        "--max-concurrent",
        str(args.max_concurrent),
        "--embedder",
        args.embedder,
        "--chunk-size",
        str(args.chunk_size),
    ]
    if args.pipeline:
        command += ["--pipeline", str(Path(args.pipeline).resolve())]
    if args.no_difficulty:
        command.append("--no-difficulty")
    if args.pace and options.rpm:
        command += ["--client-rpm", str(options.rpm), "--rpm-window", str(options.rpm_window)]
    with FakeServer(options, log) as server:
        started = time.perf_counter()
        done = subprocess.run(
            [*command, "--url", server.url],
            capture_output=True,
            text=True,
            cwd=folder,
            timeout=args.timeout,
        )
        outside = time.perf_counter() - started
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"the run failed ({done.returncode}):\n{done.stderr[-4000:]}")
    run = json.loads(lines[-1])
    rows = read_log(log)
    counts = request_counts(rows)
    delivered = run["delivered"]
    chain = chain_of(run, counts["embeddings"])
    depth = sum(chain.values())
    paced = sum(1 for row in rows if row["outcome"] != "rpm_limit")  # what the limit admitted
    rate = options.rpm / options.rpm_window if options.rpm else None
    chain_floor = depth * options.latency
    rate_floor = paced / rate if rate else 0.0
    floor = max(chain_floor, rate_floor)
    concurrency_floor = len(rows) * options.latency / args.max_concurrent
    totals = run.get("totals") or {}
    tokens = int(totals.get("input_tokens", 0)) + int(totals.get("output_tokens", 0))
    window = (
        max(row["finished"] or row["started"] for row in rows) - min(row["started"] for row in rows)
        if rows
        else 0.0
    )
    # the server logs time.monotonic(), the clock the run's start was read on (same machine)
    before_first = (
        min(row["started"] for row in rows) - run["started_monotonic"]
        if rows and run.get("started_monotonic") is not None
        else None
    )
    return {
        "goldens_asked": goldens,
        "goldens_delivered": delivered,
        "status": run.get("status"),
        "error": run.get("error"),
        "shortfall": run.get("shortfall"),
        "seconds": run["seconds"],
        "import_seconds": run.get("import_seconds"),
        "process_seconds": outside,
        "request_window_seconds": window,
        "before_first_request_seconds": before_first,
        "requests": counts,
        "requests_per_golden": counts["requests"] / delivered if delivered else None,
        "chat_per_golden": counts["chat"] / delivered if delivered else None,
        "ok_per_golden": counts["ok"] / delivered if delivered else None,
        "manifest_requests": int(totals.get("requests", 0)),
        "retries": int(totals.get("retries", 0)),
        "failures": int(totals.get("failures", 0)),
        "tokens": tokens,
        "tokens_per_golden": tokens / delivered if delivered else None,
        "chain": chain,
        "chain_length": depth,
        "chain_floor_seconds": chain_floor,
        "rate_floor_seconds": rate_floor,
        "floor_seconds": floor,
        "floor_ratio": run["seconds"] / floor if floor else None,
        "window_floor_ratio": window / floor if floor else None,
        "concurrency_floor_seconds": concurrency_floor,
        "bound_seconds": max(floor, concurrency_floor),
        "bound_ratio": run["seconds"] / max(floor, concurrency_floor),
        "stages": run["stages"],
        "contexts": run.get("contexts"),
        "max_concurrent": run.get("max_concurrent"),
        "sample": run.get("sample"),
    }


def tables(results: list[dict[str, Any]]) -> dict[str, str]:
    summary_rows = []
    for r in results:
        summary_rows.append(
            [
                f"{r['goldens_delivered']} / {r['goldens_asked']}",
                r["seconds"],
                r["import_seconds"],
                r["before_first_request_seconds"],
                r["request_window_seconds"],
                r["requests"]["chat"],
                r["requests"]["embeddings"],
                r["requests_per_golden"],
                r["ok_per_golden"],
                r["tokens_per_golden"],
                r["requests"]["requests"] - r["requests"]["ok"],
                r["requests"]["peak_in_flight"],
                " + ".join(f"{k}{'' if v == 1 else f' x{v}'}" for k, v in r["chain"].items()),
                r["floor_seconds"],
                r["floor_ratio"],
                r["concurrency_floor_seconds"],
                r["bound_ratio"],
            ]
        )
    summary = markdown_table(
        [
            "goldens",
            "wall s",
            "imports before it s",
            "start to first request s",
            "first to last request s",
            "chat requests",
            "embedding requests",
            "requests per golden",
            "answered ok per golden",
            "tokens per golden",
            "faulted requests",
            "peak in flight",
            "chain",
            "floor s",
            "wall / floor",
            "requests x latency / concurrency s",
            "wall / max(both)",
        ],
        summary_rows,
    )
    stage_rows = []
    for r in results:
        delivered = r["goldens_delivered"] or 1
        for row in r["stages"]:
            requests = int(row.get("requests", 0))
            tokens = int(row.get("input_tokens", 0)) + int(row.get("output_tokens", 0))
            dropped = row.get("dropped") or {}
            stage_rows.append(
                [
                    r["goldens_asked"],
                    row["stage"],
                    row.get("items_in", 0),
                    row.get("items_out", 0),
                    ", ".join(f"{k}: {v}" for k, v in dropped.items()) or "",
                    requests,
                    requests / delivered,
                    tokens,
                    tokens / delivered,
                    int(row.get("retries", 0)),
                ]
            )
    stages = markdown_table(
        [
            "asked",
            "stage",
            "in",
            "out",
            "dropped",
            "requests",
            "requests per golden",
            "tokens",
            "tokens per golden",
            "retries",
        ],
        stage_rows,
    )
    return {"summary": summary, "stages": stages}


def parse_counts(text: str) -> list[int]:
    counts = [int(part) for part in text.split(",") if part.strip()]
    if not counts or any(count < 1 for count in counts):
        raise argparse.ArgumentTypeError("goldens are positive integers, e.g. 20,200")
    return counts


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        return child_main(argv[1:])
    parser = argparse.ArgumentParser(
        description="Run synth's full generation pipeline against the fake OpenAI server and "
        "report goldens, time, requests and tokens per golden and per stage, and wall time over "
        "the floor."
    )
    parser.add_argument(
        "--goldens", type=parse_counts, default=[200], help="goldens per run, e.g. 20,200"
    )
    parser.add_argument("--latency", type=float, default=0.5, help="seconds per request (0.5)")
    parser.add_argument("--faults", default="", help="e.g. server_error=0.05,invalid_json=0.02")
    parser.add_argument("--rpm", type=int, help="requests per --rpm-window the server allows")
    parser.add_argument("--rpm-window", type=float, default=60.0)
    parser.add_argument(
        "--generic",
        action="store_true",
        help="the server answers from the JSON schema alone, knowing none of synth's prompts",
    )
    parser.add_argument(
        "--sloppy",
        default="",
        help="with --generic: spoiled batch replies, e.g. missing=0.2 (missing, duplicated, "
        "renumbered, unnumbered)",
    )
    parser.add_argument(
        "--pace",
        action="store_true",
        help="with --rpm: give synth the same budget (Synthesizer(rpm=, rate_window=), what "
        "`synth generate --rpm` sets), so it paces itself instead of being refused",
    )
    parser.add_argument(
        "--copies",
        type=int,
        default=12,
        help="copies of sample_docs in the corpus, each re-spelled (default 12)",
    )
    parser.add_argument("--folder", type=Path, help="use this folder as the corpus instead")
    parser.add_argument(
        "--pipeline", help="a pipeline file (default: the built-in default pipeline)"
    )
    parser.add_argument("--max-concurrent", type=int, default=32)
    parser.add_argument("--embedder", default="hash", help="embedder spec (default hash)")
    parser.add_argument("--chunk-size", type=int, default=1024)
    parser.add_argument(
        "--no-difficulty",
        action="store_true",
        help="measure no golden's difficulty (the control for what measuring it costs)",
    )
    parser.add_argument("--seed", type=int, default=0, help="the fake server's fault seed")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds per run")
    parser.add_argument("--out", type=Path, help="write the results here as JSON")
    parser.add_argument("--workdir", type=Path, help="scratch folder (default: temporary)")
    args = parser.parse_args(argv)
    if args.copies < 1:
        parser.error("--copies must be at least 1")
    if args.sloppy and not args.generic:
        parser.error("--sloppy needs --generic")

    options = ServerOptions(
        latency=args.latency,
        faults=parse_faults(args.faults),
        rpm=args.rpm,
        rpm_window=args.rpm_window,
        replies=REPLIES,
        seed=args.seed,
        generic=args.generic,
        sloppy=parse_faults(args.sloppy),
    )
    results = []
    with work_dir(args.workdir, "generate") as work:
        corpus = args.folder.resolve() if args.folder else build_corpus(work, args.copies)
        for goldens in args.goldens:
            result = measure(corpus, goldens, options, args, work)
            results.append(result)
            print(
                f"{goldens} goldens asked: {result['goldens_delivered']} delivered in "
                f"{result['seconds']:.1f} s, {result['requests']['requests']} requests, "
                f"wall/floor {result['floor_ratio'] or math.nan:.2f}",
                file=sys.stderr,
                flush=True,
            )
    rendered = tables(results)
    payload = {
        **header(["bench/generate.py", *argv], PACKAGES),
        "settings": {
            "server": options.describe(),
            "latency": args.latency,
            "faults": options.faults,
            "rpm": args.rpm,
            "rpm_window": args.rpm_window,
            "client_paced": bool(args.pace and args.rpm),
            "corpus": str(args.folder)
            if args.folder
            else f"sample_docs x {args.copies} (copies 2+ re-spelled, as .md)",
            "pipeline": args.pipeline or "default",
            "max_concurrent": args.max_concurrent,
            "embedder": args.embedder,
            "difficulty": "not measured" if args.no_difficulty else "measured",
        },
        "aims": {"floor_ratio": AIM_RATIO, "requests_per_golden": AIM_REQUESTS_PER_GOLDEN},
        "runs": results,
        "tables": rendered,
    }
    write_json(args.out, payload)  # first: printing to a closed pipe must not lose it
    for title, rendered_table in rendered.items():
        print(f"\n### {title}\n\n{rendered_table}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
