"""The ``synth`` command: argument parsing only; the work is done by the library functions.

Each subcommand has an ``_add_<name>`` function that declares its arguments and a ``_run_<name>``
function that calls the library. A :class:`~synth.errors.SynthError` becomes one line on stderr and
exit code 2; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from synth.errors import SynthError


# ---- ingest (foundation issue) -------------------------------------------------------------------
def _add_ingest(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "ingest",
        help="parse, chunk, embed and store documents",
        description="Read .txt, .md, .docx and .pdf files (folders are walked), cut them into "
        "token chunks, embed the chunks not stored yet and store them in Chroma. Prints every "
        "file with its status, then the totals. Exits 1 when no file could be read.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="files or folders to ingest")
    p.add_argument(
        "--embedder",
        metavar="SPEC",
        help="openai:<model>, local:all-MiniLM-L6-v2 or hash[:DIM] (default: openai when "
        "OPENAI_API_KEY is set, else local when installed, else hash)",
    )
    p.add_argument(
        "--base-url", help="OpenAI-compatible server for openai:<model> (default: $OPENAI_BASE_URL)"
    )
    p.add_argument("--batch-size", type=int, metavar="N", help="texts per embedding request")
    p.add_argument("--chunk-size", type=int, default=1024, metavar="N", help="tokens (1024)")
    p.add_argument("--chunk-overlap", type=int, default=0, metavar="N", help="tokens (0)")
    p.add_argument("--encoding", default="cl100k_base", help="tiktoken encoding (cl100k_base)")
    p.add_argument(
        "--store-path", default=".synth/chroma", metavar="DIR", help="embedded Chroma folder"
    )
    p.add_argument("--store-url", metavar="URL", help="a Chroma server, http://host:port")
    p.add_argument("--password", help="password for encrypted PDFs")
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    p.set_defaults(func=_run_ingest)


def _run_ingest(args: argparse.Namespace) -> int:
    import json

    from rich.console import Console

    from synth.ingest import make_chunking_config
    from synth.store import ingest_documents, make_embedder
    from synth.store._ingest_view import ingest_progress, print_ingest_report

    errors = Console(stderr=True, highlight=False)
    embedder = make_embedder(args.embedder, base_url=args.base_url, batch_size=args.batch_size)
    if embedder.notice:
        errors.print(embedder.notice, markup=False)
    chunking = make_chunking_config(
        chunk_size=args.chunk_size, chunk_overlap=args.chunk_overlap, encoding=args.encoding
    )
    with ingest_progress(errors) as on_file:
        report = ingest_documents(
            args.paths,
            embedder=embedder,
            chunking=chunking,
            store_path=args.store_path,
            store_url=args.store_url,
            password=args.password,
            on_file=on_file,
        )
    if args.json:
        print(json.dumps(report.to_json(), ensure_ascii=False))
    else:
        print_ingest_report(report, Console(highlight=False))
    return 0 if report.any_read else 1


# ---- export (foundation issue) -------------------------------------------------------------------
def _add_export(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "export",
        help="write a dataset in another tool's format",
        description="Write a saved dataset as deepeval goldens (.json or .jsonl), ragas samples "
        "(.jsonl or .json) or judgeval examples (.json). `synth` reads all three back.",
    )
    p.add_argument("dataset", help="a saved dataset (.json, .jsonl, .csv, .parquet)")
    p.add_argument(
        "-f", "--format", required=True, choices=["deepeval", "ragas", "judgeval"], help="the tool"
    )
    p.add_argument(
        "-o",
        "--output",
        help="file to write (default: next to DATASET, e.g. goldens.deepeval.json)",
    )
    p.set_defaults(func=_run_export)


def _run_export(args: argparse.Namespace) -> int:
    from pathlib import Path

    from synth._dataset_export import default_export_path, export_format
    from synth.dataset import Dataset
    from synth.errors import ConfigError

    source = Path(args.dataset)
    output = Path(args.output) if args.output else default_export_path(source, args.format)
    if output.resolve() == source.resolve():
        raise ConfigError(f"{output}: is the dataset being exported; choose another -o")
    dataset = Dataset.load(source)
    dataset.export(output, format=args.format)
    print(f"wrote {len(dataset)} goldens to {output} ({export_format(args.format).description})")
    return 0


# ---- generate (pipeline issue) -------------------------------------------------------------------


# ---- evaluate, compare, benchmark (evaluator issue) ----------------------------------------------


# --------------------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="synth",
        description="Turn documents into an evaluation dataset, then score systems against it.",
    )
    parser.add_argument("--debug", action="store_true", help="show full tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, add in sorted(globals().items()):
        if name.startswith("_add_") and callable(add):
            add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except SynthError as exc:
        if args.debug:
            raise
        print(f"synth: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("synth: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
