"""``synth ingest``: documents in; every file's status and the totals out."""

from __future__ import annotations

import argparse
from typing import Any

from synth.cli._exits import EXIT_NOTHING_READ, EXIT_OK
from synth.errors import ConfigError


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Declare ``synth ingest`` and its arguments on ``sub``."""
    p = sub.add_parser(
        "ingest",
        help="parse, chunk, embed and store documents",
        description="Read .txt, .md, .docx, .pdf, .html, .pptx, .xlsx, .csv and .epub files "
        "(and .ipynb, .xls and .msg with the convert extra; folders are walked), cut them into token chunks, embed the chunks not stored yet and store them in Chroma. Prints every "
        "file with its status, then the totals. Exits 1 when no file could be read.",
    )
    p.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="files or folders to ingest, or http(s) URLs of pages or sitemaps",
    )
    add_chroma_flag(p)
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
    add_ray_flag(p)
    add_web_flags(p)
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    p.set_defaults(func=run)


def add_ray_flag(p: argparse.ArgumentParser) -> None:
    """``--ray [ADDRESS]``: ingest on a Ray cluster (``synth ingest`` and ``synth generate``)."""
    p.add_argument(
        "--ray",
        nargs="?",
        const=True,
        metavar="ADDRESS",
        help="read, chunk and embed the files as Ray tasks on the cluster at ADDRESS "
        "(host:port; without it, a Ray started for this command), stored by this process; "
        "needs pip install 'synth[ray]'",
    )


def add_chroma_flag(p: argparse.ArgumentParser) -> None:
    """``--from-chroma PATH:COLLECTION``: a collection another program built, instead of PATHs."""
    p.add_argument(
        "--from-chroma",
        metavar="PATH:COLLECTION",
        help="read a Chroma collection built elsewhere (a folder or http://host:port, a colon, "
        "its name) instead of PATHs: its documents are the chunks and its vectors are used as "
        "they are, nothing embedded",
    )


def chroma_source(args: argparse.Namespace) -> tuple[str, str] | None:
    """``(location, collection)`` of ``--from-chroma``, or None; ConfigError when the command
    line gives both PATHs and ``--from-chroma``, or neither."""
    spec = getattr(args, "from_chroma", None)
    if spec is not None and args.paths:
        raise ConfigError("give PATHs or --from-chroma, not both")
    if spec is None:
        if not args.paths:
            raise ConfigError("give at least one PATH (a file, folder or URL) or --from-chroma")
        return None
    from synth.store.imported import parse_chroma_spec

    return parse_chroma_spec(spec)


def add_web_flags(p: argparse.ArgumentParser) -> None:
    """``--max-pages`` and ``--web-rate``: how URLs are read (``synth ingest``, ``generate``)."""
    p.add_argument(
        "--max-pages",
        type=int,
        metavar="N",
        help="pages fetched at most from the URLs and sitemaps given (500)",
    )
    p.add_argument(
        "--web-rate",
        type=float,
        metavar="R",
        help="requests per second to one web host (2; robots.txt may ask fewer)",
    )


def web_from_args(args: argparse.Namespace) -> Any:
    """The :class:`~synth.ingest.web.WebOptions` the flags ask for (None: the defaults)."""
    pages, rate = getattr(args, "max_pages", None), getattr(args, "web_rate", None)
    if pages is None and rate is None:
        return None
    if pages is not None and pages < 1:
        raise ConfigError(f"--max-pages must be at least 1, got {pages}")
    if rate is not None and not rate > 0:  # nan too
        raise ConfigError(f"--web-rate must be positive, got {rate:g}")
    from synth.ingest.web import WebOptions

    given = {"max_pages": pages, "rate": rate}
    return WebOptions(**{k: v for k, v in given.items() if v is not None})


def run(args: argparse.Namespace) -> int:
    """Ingest ``args.paths``; EXIT_NOTHING_READ when no file could be read."""
    # imported here, not above: `synth --help` must not pay for the store and the readers
    import json

    from synth.cli._ingest_view import ingest_progress, print_ingest_report
    from synth.cli.console import CommandConsole
    from synth.ingest import make_chunking_config
    from synth.store import ingest_documents, make_embedder

    errors = CommandConsole(stderr=True, highlight=False)
    chroma = chroma_source(args)
    if chroma is not None:  # read, shown, nothing embedded nor stored
        from synth.store.imported import read_chroma_collection

        report = read_chroma_collection(*chroma).report
        if args.json:
            print(json.dumps(report.to_json(), ensure_ascii=False))
        else:
            print_ingest_report(report, CommandConsole(highlight=False))
        return EXIT_OK
    embedder = make_embedder(args.embedder, base_url=args.base_url, batch_size=args.batch_size)
    if embedder.notice:
        errors.print(embedder.notice, markup=False, soft_wrap=True)  # one line, never wrapped
    chunking = make_chunking_config(
        chunk_size=args.chunk_size, chunk_overlap=args.chunk_overlap, encoding=args.encoding
    )
    try:
        with ingest_progress(errors) as on_file:
            report = ingest_documents(
                args.paths,
                embedder=embedder,
                chunking=chunking,
                store_path=args.store_path,
                store_url=args.store_url,
                password=args.password,
                on_file=on_file,
                ray=args.ray,
                web=web_from_args(args),
            )
    finally:
        embedder.close()
    if args.json:
        print(json.dumps(report.to_json(), ensure_ascii=False))
    else:
        print_ingest_report(report, CommandConsole(highlight=False))
    return EXIT_OK if report.any_read else EXIT_NOTHING_READ


__all__ = [
    "add_chroma_flag",
    "add_parser",
    "add_ray_flag",
    "add_web_flags",
    "chroma_source",
    "run",
    "web_from_args",
]
