"""DeepEval's Synthesizer and synth's, side by side: same folder, same fake server, same settings.

deepeval is not a synth dependency. Install it in a separate venv and point this script at it::

    python3.11 -m venv /work/deepeval-venv
    /work/deepeval-venv/bin/pip install deepeval langchain-community docx2txt -e .
    .venv/bin/python bench/compare.py --deepeval-python /work/deepeval-venv/bin/python \\
        --out bench-results/compare.json

(or run the script with the deepeval venv's own python). When deepeval cannot be imported, the
script says so and exits 0.

Each tool runs in its own interpreter against its own fake OpenAI-compatible server
(``tests/fake_openai.py``, same latency, faults and seed), once per scenario: by default ``clean``
(no faults), ``http500`` (5% HTTP 500s) and ``faults`` (5% HTTP 500s and 5% invalid JSON bodies).
``synth-exact`` is synth asked for exactly the number of goldens DeepEval's call asks for at most
(``num_goldens``), to show the top-up. Both ask for the same thing:
``--goldens-per-context`` goldens from each of up to ``--contexts-per-document`` contexts per file,
chunks of ``--chunk-size`` tokens, one evolution, a critic filter, expected outputs, at most
``--max-concurrent`` requests at once; both embed through the server. Counted from the server's own
request log: chat and embedding requests, how each ended, the peak in flight.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _server import FakeServer, ServerOptions, parse_faults, read_log, request_counts  # noqa: E402
from _util import REPO, header, markdown_table, work_dir, write_json  # noqa: E402

TOOLS = ("deepeval", "synth", "synth-exact")
DEFAULT_SCENARIOS = (
    "clean:",
    "http500:server_error=0.05",
    "faults:server_error=0.05,invalid_json=0.05",
)
#: synth's stages get tests/synth_replies.py's answers, DeepEval's the fake server's default
REPLIES = "bench.compare_replies:reply"
PACKAGES = ("synth", "openai", "chromadb", "tiktoken")
INSTALL_HINT = (
    "install it in a separate venv (it is not a synth dependency):\n"
    "  python3.11 -m venv /work/deepeval-venv\n"
    "  /work/deepeval-venv/bin/pip install deepeval langchain-community docx2txt -e .\n"
    "then: python bench/compare.py --deepeval-python /work/deepeval-venv/bin/python"
)


# ---- children --------------------------------------------------------------------------------------


def child_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("tool", choices=TOOLS)  # synth-exact: synth with num_goldens set
    parser.add_argument("--url", required=True)
    parser.add_argument("--folder", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--goldens-per-context", type=int, required=True)
    parser.add_argument("--contexts-per-document", type=int, required=True)
    parser.add_argument("--max-concurrent", type=int, required=True)
    parser.add_argument("--chunk-size", type=int, required=True)
    parser.add_argument("--embedder", required=True)
    parser.add_argument("--num-goldens", type=int)
    args = parser.parse_args(argv)
    if args.tool == "deepeval":
        from _deepeval_run import run_deepeval

        result = run_deepeval(
            args.folder,
            args.url,
            goldens_per_context=args.goldens_per_context,
            contexts_per_document=args.contexts_per_document,
            max_concurrent=args.max_concurrent,
            chunk_size=args.chunk_size,
        )
    else:
        from _deepeval_run import document_paths
        from _synth_run import run_synth

        paths = document_paths(args.folder)  # the very files DeepEval is given
        result = run_synth(
            paths,
            args.url,
            args.work,
            num_goldens=args.num_goldens,
            goldens_per_context=args.goldens_per_context,
            contexts_per_document=args.contexts_per_document,
            max_concurrent=args.max_concurrent,
            chunk_size=args.chunk_size,
            embedder=args.embedder,
        )
        result["tool"] = args.tool
        result["files"] = len(paths)
        result["asked"] = args.num_goldens or (
            len(paths) * args.contexts_per_document * args.goldens_per_context
        )
    print(json.dumps(result))
    return 0


def _deepeval_version(python: str) -> str | None:
    """deepeval's version in ``python``'s environment, or None when it cannot be imported."""
    probe = "import importlib.metadata as m, deepeval; print(m.version('deepeval'))"
    done = subprocess.run(
        [python, "-c", probe],
        capture_output=True,
        text=True,
        timeout=300,
        env={**_child_env(), "DEEPEVAL_TELEMETRY_OPT_OUT": "1"},
    )
    return done.stdout.strip() or None if done.returncode == 0 else None


def _child_env() -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["DEEPEVAL_TELEMETRY_OPT_OUT"] = "1"
    env["ANONYMIZED_TELEMETRY"] = "False"
    env["PYTHONUNBUFFERED"] = "1"
    return env


def run_one(
    tool: str,
    python: str,
    scenario: str,
    options: ServerOptions,
    args: argparse.Namespace,
    work: Path,
) -> dict[str, Any]:
    """One tool in one scenario: start a server, run the tool against it, count what it saw."""
    folder = work / f"{tool}-{scenario}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    log = folder / "requests.jsonl"
    command = [
        python,
        str(Path(__file__).resolve()),
        "--child",
        tool,
        "--folder",
        str(args.folder.resolve()),
        "--work",
        str(folder),
        "--goldens-per-context",
        str(args.goldens_per_context),
        "--contexts-per-document",
        str(args.contexts_per_document),
        "--max-concurrent",
        str(args.max_concurrent),
        "--chunk-size",
        str(args.chunk_size),
        "--embedder",
        args.embedder,
    ]
    if tool == "synth-exact":
        from _deepeval_run import document_paths

        asked = len(document_paths(args.folder)) * args.contexts_per_document
        command += ["--num-goldens", str(asked * args.goldens_per_context)]
    with FakeServer(options, log) as server:
        started = time.perf_counter()
        done = subprocess.run(
            [*command, "--url", server.url],
            capture_output=True,
            text=True,
            cwd=folder,
            env=_child_env(),
            timeout=args.timeout,
        )
        outside = time.perf_counter() - started
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        result: dict[str, Any] = {
            "tool": tool,
            "delivered": 0,
            "asked": None,
            "seconds": outside,
            "error": f"exit {done.returncode}: {done.stderr.strip().splitlines()[-1:]}",
        }
    else:
        result = json.loads(lines[-1])
    result["scenario"] = scenario
    result["server"] = options.describe()
    result["process_seconds"] = outside
    result["requests"] = request_counts(read_log(log))
    delivered = result.get("delivered") or 0
    result["requests_per_golden"] = (
        result["requests"]["requests"] / delivered if delivered else None
    )
    result["chat_per_golden"] = result["requests"]["chat"] / delivered if delivered else None
    return result


def table(rows: list[dict[str, Any]]) -> str:
    body = []
    for row in rows:
        counts = row["requests"]
        failed = counts["requests"] - counts["ok"]
        outcome = row.get("error") or (
            f"partial: {row['shortfall'][0]}" if row.get("shortfall") else "complete"
        )
        body.append(
            [
                row["tool"],
                row["scenario"],
                row["seconds"],
                f"{row.get('delivered', 0)} / {row.get('asked')}",
                counts["chat"],
                counts["embeddings"],
                row["requests_per_golden"],
                row["chat_per_golden"],
                failed,
                counts["peak_in_flight"],
                outcome[:120],
            ]
        )
    return markdown_table(
        [
            "tool",
            "scenario",
            "wall s",
            "goldens delivered / asked",
            "chat requests",
            "embedding requests",
            "requests per golden",
            "chat per golden",
            "faulted requests",
            "peak in flight",
            "outcome",
        ],
        body,
    )


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        return child_main(argv[1:])
    parser = argparse.ArgumentParser(
        description="Run DeepEval's Synthesizer and synth's on the same folder and fake server, "
        "and print both side by side (wall time, goldens, requests per golden, faults)."
    )
    parser.add_argument("--folder", type=Path, default=REPO / "sample_docs")
    parser.add_argument(
        "--deepeval-python",
        default=sys.executable,
        help="the interpreter that has deepeval installed (default: this one)",
    )
    parser.add_argument(
        "--synth-python",
        default=sys.executable,
        help="the interpreter that runs synth (default: this one)",
    )
    parser.add_argument("--latency", type=float, default=0.5, help="seconds per request")
    parser.add_argument(
        "--scenario",
        action="append",
        metavar="NAME:KIND=RATE,...",
        help="a server set-up to run both tools against, e.g. 'faults:server_error=0.05'; "
        f"repeatable (default: {' '.join(DEFAULT_SCENARIOS)})",
    )
    parser.add_argument("--rpm", type=int, help="requests per minute the server allows")
    parser.add_argument(
        "--tools",
        default=",".join(TOOLS),
        help="deepeval, synth (the same call as DeepEval's), synth-exact (synth asked for "
        "exactly as many goldens as DeepEval's call asks at most); default all three",
    )
    parser.add_argument("--goldens-per-context", type=int, default=2)
    parser.add_argument("--contexts-per-document", type=int, default=3)
    parser.add_argument("--max-concurrent", type=int, default=32)
    parser.add_argument("--chunk-size", type=int, default=1024)
    parser.add_argument(
        "--embedder",
        default="openai:text-embedding-3-small",
        help="synth's embedder (default: OpenAI's, through the fake server, as DeepEval does)",
    )
    parser.add_argument("--seed", type=int, default=0, help="the fake server's fault seed")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per tool run")
    parser.add_argument("--out", type=Path, help="write the results here as JSON")
    parser.add_argument("--workdir", type=Path, help="scratch folder (default: temporary)")
    args = parser.parse_args(argv)

    tools = [tool.strip() for tool in args.tools.split(",") if tool.strip()]
    if set(tools) - set(TOOLS) or not tools:
        parser.error(f"--tools takes {', '.join(TOOLS)}")
    scenarios: list[tuple[str, dict[str, float]]] = []
    for text in args.scenario or DEFAULT_SCENARIOS:
        name, _, faults = text.partition(":")
        try:
            scenarios.append((name.strip() or "clean", parse_faults(faults)))
        except ValueError:
            parser.error(f"bad --scenario {text!r}: expected NAME:KIND=RATE,...")
    deepeval_version = None
    if "deepeval" in tools:
        deepeval_version = _deepeval_version(args.deepeval_python)
        if deepeval_version is None:
            print(f"deepeval is not importable with {args.deepeval_python}; nothing to compare.")
            print(INSTALL_HINT)
            return 0

    rows = []
    with work_dir(args.workdir, "compare") as work:
        for scenario, faults in scenarios:
            options = ServerOptions(
                latency=args.latency, faults=faults, rpm=args.rpm, seed=args.seed, replies=REPLIES
            )
            for tool in tools:
                python = args.deepeval_python if tool == "deepeval" else args.synth_python
                row = run_one(tool, python, scenario, options, args, work)
                rows.append(row)
                print(
                    f"{tool} / {scenario}: {row.get('delivered')} goldens in {row['seconds']:.1f} s, "
                    f"{row['requests']['requests']} requests"
                    + (f", error {row['error']}" if row.get("error") else ""),
                    file=sys.stderr,
                    flush=True,
                )
    rendered = table(rows)
    payload = {
        **header(["bench/compare.py", *argv], PACKAGES),
        "deepeval_version": deepeval_version,
        "settings": {
            "folder": str(args.folder),
            "latency": args.latency,
            "scenarios": {name: faults for name, faults in scenarios},
            "rpm": args.rpm,
            "goldens_per_context": args.goldens_per_context,
            "contexts_per_document": args.contexts_per_document,
            "max_concurrent": args.max_concurrent,
            "chunk_size": args.chunk_size,
            "synth_embedder": args.embedder,
        },
        "rows": rows,
        "table": rendered,
    }
    write_json(args.out, payload)  # first: printing to a closed pipe must not lose it
    print(rendered)
    return 0


if __name__ == "__main__":
    sys.exit(main())
