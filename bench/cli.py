"""Command-line bench: ``synth generate`` and ``synth evaluate`` as users run them, timed process start to exit.

Everything at its defaults but the server: ``synth generate CORPUS --goldens 60 --embedder
openai:text-embedding-3-small --base-url URL`` (no ``--max-concurrent``: the run finds its level),
then ``synth evaluate`` of 60 answered items with an OpenAI judge and its default metrics
(faithfulness and answer relevance; no ``--n-jobs``), and the same with ``--n-jobs 4`` (the old
default). Each command is its own process in a fresh folder (no response cache), against the fake
server (``tests/fake_openai.py`` as a subprocess; ``bench/compare_replies.py`` answers synth's
prompts) with 0.5 s per chat request and 0.1 s per embeddings request. The corpus is
``sample_docs`` (13 files: text, Markdown, PDF, .docx) and ``--copies`` re-spelled copies of it
(``bench/generate.py``'s).

Reported per command: wall time from spawn to exit, requests (the server's log), the peak in
flight, and the floor: ``chain x latency`` (one golden's dependent requests, as bench/generate.py
counts them; embeddings at their own latency) plus the import time of the modules the command
needs (``python -c "import synth.pipeline, ..."``, measured here), against which the wall time's
ratio is given. ``--synth-path`` runs another checkout's synth.

``--deepeval-python PYTHON`` also runs DeepEval as its users do, each run its own process started
with that interpreter (``bench/_deepeval_cli.py``): ``Synthesizer().generate_goldens_from_docs``
at its defaults on the same corpus, and ``evaluate`` of the same answered items with its
``FaithfulnessMetric()`` and ``AnswerRelevancyMetric()``, both against the same fake server
(``OPENAI_BASE_URL``); the ratios (time per golden, evaluation time, requests) are printed last.

    python bench/cli.py --out bench-results/cli.json
    python bench/cli.py --deepeval-python /work/deepeval-venv/bin/python --out bench-results/cli.json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _server import FakeServer, ServerOptions, read_log, request_counts  # noqa: E402
from _util import REPO, header, markdown_table, work_dir, write_json  # noqa: E402
from generate import build_corpus, chain_of  # noqa: E402

DEEPEVAL_DRIVER = Path(__file__).resolve().parent / "_deepeval_cli.py"

REPLIES = "bench.compare_replies:reply"
#: what each command imports before its first request, timed apart
IMPORTS = {
    "generate": "import synth.cli.generate, synth.pipeline, openai, chromadb",
    "evaluate": "import synth.cli.evaluate, synth.evaluate.answers, openai",
}


#: the checkout whose synth runs (--synth-path: another one, to compare before and after)
SYNTH_PATH = [REPO]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return {**env, "OPENAI_API_KEY": "sk-bench-fake", "PYTHONPATH": str(SYNTH_PATH[0])}


def precompile(checkout: Path) -> None:
    """Byte-compile the checkout's synth, as pip does a wheel's modules when it installs them: an
    editable install (under ``PYTHONDONTWRITEBYTECODE=1``, as here) would compile them again in
    every process, 0.2 to 0.3 s of each command's start that no installed synth pays."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(checkout / "synth")], check=True)


def import_seconds(code: str, repeat: int = 3) -> float:
    """The fastest of ``repeat`` fresh interpreters importing ``code``, less a bare one's start."""

    def once(statement: str) -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", statement], env=_env(), check=True)
        return time.perf_counter() - start

    bare = min(once("pass") for _ in range(repeat))
    return round(min(once(code) for _ in range(repeat)) - bare, 3)


def run_command(
    argv: list[str], cwd: Path, log: Path, options: ServerOptions, program: list[str] | None = None
) -> dict[str, Any]:
    """``python -m synth argv`` (or ``program argv``, with ``OPENAI_BASE_URL`` set) against a
    fresh fake server; its wall time, output and log."""
    with FakeServer(options, log) as server:
        env = _env()
        if program is None:
            program = [sys.executable, "-m", "synth"]
        else:
            env = {**env, "OPENAI_BASE_URL": server.url, "DEEPEVAL_TELEMETRY_OPT_OUT": "1"}
            env.pop("PYTHONPATH")
        command = [*program, *[a.replace("{URL}", server.url) for a in argv]]
        start = time.monotonic()  # the server's log times are the same clock's
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
        end = time.monotonic()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the server is not waited for yet
    if done.returncode not in (0, 3):
        raise RuntimeError(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    rows = read_log(log)
    return {
        "wall_s": round(end - start, 2),
        # the command's own CPU seconds (user and system): what load stretches least
        "cpu_s": round(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, 2),
        **time_split(rows, start, end),
        "exit": done.returncode,
        "stdout": done.stdout,
        **request_counts(rows),
    }


def time_split(rows: list[dict[str, Any]], start: float, end: float) -> dict[str, float]:
    """Seconds from spawn to the first request, from it to the last answer, and from that to
    exit (the server logs ``time.monotonic()``, one clock for every process of the machine)."""
    if not rows:
        return {}
    first = min(r["started"] for r in rows)
    last = max(r.get("finished") or r["started"] for r in rows)
    return {
        "to_first_s": round(first - start, 2),
        "requests_s": round(last - first, 2),
        "after_last_s": round(end - last, 2),
    }


def generate(corpus: Path, work: Path, options: ServerOptions, goldens: int) -> dict[str, Any]:
    folder = work / "generate"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    argv = ["generate", str(corpus), "--goldens", str(goldens), "--embedder",
            "openai:text-embedding-3-small", "--base-url", "{URL}", "--json", "-o", "goldens.jsonl"]  # fmt: skip
    result = run_command(argv, folder, folder / "requests.jsonl", options)
    manifest = json.loads(result.pop("stdout").strip().splitlines()[-1])
    chain = chain_of(manifest, result["embeddings"])
    embeddings = chain.pop("embeddings", 0)
    chain_floor = embeddings * (options.embedding_latency or options.latency)
    chain_floor += sum(chain.values()) * options.latency
    return {
        "command": f"synth generate --goldens {goldens} (defaults)",
        "delivered": manifest.get("goldens"),
        "requests_per_golden": manifest.get("requests_per_golden"),
        "level": (manifest.get("concurrency") or {}).get("peak_level"),
        "chain": sum(chain.values()) + embeddings,
        "chain_floor_s": round(chain_floor, 2),
        **result,
    }


def answered_items(goldens: Path, target: Path) -> int:
    """The goldens as evaluation items answered with their expected output; how many."""
    items = []
    for line in goldens.read_text(encoding="utf-8").splitlines():
        golden = json.loads(line)
        items.append(
            {
                "id": str(len(items)),
                "question": golden["input"],
                "reference": golden.get("expected_output") or "",
                "contexts": golden.get("context") or [],
                "answer": golden.get("expected_output") or "",
            }
        )
    target.write_text(json.dumps(items), encoding="utf-8")
    return len(items)


def evaluate(items: Path, work: Path, options: ServerOptions, n_jobs: int | None) -> dict:
    folder = work / f"evaluate-{n_jobs or 'default'}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    argv = ["evaluate", str(items), "--judge", "openai:gpt-4.1-mini", "--base-url", "{URL}",
            "-o", "report.json"]  # fmt: skip
    if n_jobs is not None:
        argv += ["--n-jobs", str(n_jobs)]
    result = run_command(argv, folder, folder / "requests.jsonl", options)
    result.pop("stdout")
    label = f"--n-jobs {n_jobs}" if n_jobs else "(defaults)"
    return {
        "command": f"synth evaluate {label}",
        "chain": 1,
        "chain_floor_s": options.latency,
        **result,
    }


def _deepeval(
    command: str, given: Path, work: Path, options: ServerOptions, python: str
) -> tuple[dict, dict]:
    """Run the DeepEval driver's ``command`` on ``given`` in a fresh folder of ``work``, with
    DeepEval's own ``python``: the process's measurements and the driver's output."""
    folder = work / f"deepeval-{command}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    argv = [command, str(given), str(folder / "out.json")]
    program = [python, str(DEEPEVAL_DRIVER)]
    result = run_command(argv, folder, folder / "requests.jsonl", options, program)
    result.pop("stdout")
    return result, json.loads((folder / "out.json").read_text(encoding="utf-8"))


def deepeval_generate(corpus: Path, work: Path, options: ServerOptions, python: str) -> dict:
    """DeepEval's ``generate_goldens_from_docs`` at its defaults on ``corpus``, its own process."""
    result, out = _deepeval("generate", corpus, work, options, python)
    # DeepEval's chain: embeddings, critic, inputs, filter, evolve, expected (as synth's)
    chain = {"embeddings": 1, "chat": 5}
    floor = chain["embeddings"] * (options.embedding_latency or options.latency)
    return {
        "command": "deepeval generate_goldens_from_docs (defaults)",
        "delivered": out["delivered"],
        "chain": sum(chain.values()),
        "chain_floor_s": round(floor + chain["chat"] * options.latency, 2),
        **result,
    }


def deepeval_evaluate(items: Path, work: Path, options: ServerOptions, python: str) -> dict:
    """DeepEval's ``evaluate`` with ``FaithfulnessMetric()`` and ``AnswerRelevancyMetric()``."""
    result, out = _deepeval("evaluate", items, work, options, python)
    return {
        "command": "deepeval evaluate, faithfulness + answer relevancy (defaults)",
        "scores": out["scores"],
        **result,
    }


def ratios(rows: list[dict[str, Any]]) -> dict[str, float]:
    """synth against DeepEval: time per golden, evaluation time, requests (DeepEval / synth)."""

    def first(prefix: str) -> dict[str, Any] | None:
        return next((row for row in rows if row["command"].startswith(prefix)), None)

    synth_gen, de_gen = rows[0], first("deepeval generate")
    synth_eval, de_eval = rows[1], first("deepeval evaluate")
    out: dict[str, float] = {}
    if de_gen and de_gen["delivered"] and synth_gen["delivered"]:
        synth_per = synth_gen["wall_s"] / synth_gen["delivered"]
        de_per = de_gen["wall_s"] / de_gen["delivered"]
        out["generate_s_per_golden_synth"] = round(synth_per, 3)
        out["generate_s_per_golden_deepeval"] = round(de_per, 3)
        out["generate_per_golden_deepeval_over_synth"] = round(de_per / synth_per, 1)
        out["generate_requests_per_golden_synth"] = round(
            synth_gen["requests"] / synth_gen["delivered"], 2
        )
        out["generate_requests_per_golden_deepeval"] = round(
            de_gen["requests"] / de_gen["delivered"], 2
        )
    if de_eval:
        out["evaluate_deepeval_over_synth"] = round(de_eval["wall_s"] / synth_eval["wall_s"], 1)
        out["evaluate_requests_deepeval_over_synth"] = round(
            de_eval["requests"] / synth_eval["requests"], 1
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--goldens", type=int, default=60)
    parser.add_argument("--copies", type=int, default=2, help="copies of sample_docs (2)")
    parser.add_argument("--synth-path", type=Path, default=REPO, help="the checkout to run")
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--embedding-latency", type=float, default=0.1)
    parser.add_argument(
        "--deepeval-python", help="an interpreter with deepeval installed: run DeepEval too"
    )
    parser.add_argument("--work", type=Path, help="scratch folder (default: a temporary one)")
    parser.add_argument("--out", help="write the results as JSON here")
    args = parser.parse_args(argv)
    SYNTH_PATH[0] = args.synth_path.resolve()
    options = ServerOptions(
        latency=args.latency, embedding_latency=args.embedding_latency, replies=REPLIES
    )
    rows = []
    precompile(SYNTH_PATH[0])
    with work_dir(args.work, "cli") as work:
        corpus = build_corpus(work, args.copies)
        imports = {name: import_seconds(code) for name, code in IMPORTS.items()}
        rows.append(generate(corpus, work, options, args.goldens))
        items = work / "answered.json"
        answered_items(work / "generate" / "goldens.jsonl", items)
        for n_jobs in (None, 4):
            rows.append(evaluate(items, work, options, n_jobs))
        if args.deepeval_python:
            rows.append(deepeval_generate(corpus, work, options, args.deepeval_python))
            rows.append(deepeval_evaluate(items, work, options, args.deepeval_python))
    for row in rows:
        if row["command"].startswith("deepeval"):
            continue
        row["imports_s"] = imports["generate" if "generate" in row["command"] else "evaluate"]
        row["bound_s"] = round(row["chain_floor_s"] + row["imports_s"], 2)
        row["wall_over_bound"] = round(row["wall_s"] / row["bound_s"], 2)
    compared = ratios(rows)
    write_json(
        args.out,
        {
            **header(sys.argv, ("synth", "openai", "chromadb")),
            "server": options.describe(),
            "rows": rows,
            "ratios": compared,
        },
    )
    columns = [
        "command",
        "wall_s",
        "to_first_s",
        "requests_s",
        "after_last_s",
        "delivered",
        "requests",
        "chat",
        "embeddings",
        "peak_in_flight",
        "chain",
    ]
    columns += ["chain_floor_s", "imports_s", "bound_s", "wall_over_bound"]
    print(f"server: {options.describe()}")
    print(markdown_table(columns, [[row.get(c, "") for c in columns] for row in rows]))
    for name, value in compared.items():
        print(f"{name}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
