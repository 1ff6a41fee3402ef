"""The ``synth`` command: argument parsing only; the work is done by the library functions.

Each subcommand has an ``_add_<name>`` function that declares its arguments and a ``_run_<name>``
function that calls the library. A :class:`~synth.errors.SynthError` becomes one line on stderr and
exit code 2; ``--debug`` shows the traceback instead. Every exit code is one of the ``EXIT_*``
constants below (docs/cli.md has the table).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

from synth._interrupt import EXIT_INTERRUPTED
from synth.errors import SynthError, SynthWarning

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

#: everything asked was done
EXIT_OK = 0
#: ``synth ingest``: no file could be read
EXIT_NOTHING_READ = 1
#: a usage error or a ``synth: error:`` line (nothing, or nothing useful, was written)
EXIT_ERROR = 2
#: the output was written but is short: fewer goldens than asked, or evaluation items that failed
EXIT_PARTIAL = 3
# EXIT_INTERRUPTED (130, Ctrl-C) is defined with its handler in synth._interrupt
#: stdout was closed early (``synth ... | head``): 128 + SIGPIPE, what a shell reports for it
EXIT_CLOSED_PIPE = 141


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

    from synth.cli.console import CommandConsole
    from synth.ingest import make_chunking_config
    from synth.store import ingest_documents, make_embedder
    from synth.store._ingest_view import ingest_progress, print_ingest_report

    errors = CommandConsole(stderr=True, highlight=False)
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
            )
    finally:
        embedder.close()
    if args.json:
        print(json.dumps(report.to_json(), ensure_ascii=False))
    else:
        print_ingest_report(report, CommandConsole(highlight=False))
    return EXIT_OK if report.any_read else EXIT_NOTHING_READ


# ---- export (foundation issue) -------------------------------------------------------------------
_OWN_FORMATS = ("jsonl", "json", "csv", "parquet")


def _add_export(sub: argparse._SubParsersAction) -> None:
    from synth.dataset._export import EXPORT_FORMATS

    p = sub.add_parser(
        "export",
        help="convert a dataset to another of synth's formats or to another tool's",
        description="Write a saved dataset in another of synth's own formats (jsonl, json, csv, "
        "parquet: lossless, metadata included; picked by -o's suffix or --format), or for "
        "another tool: deepeval goldens (.json or .jsonl), deepeval CSV (.csv), ragas samples "
        "(.jsonl or .json), judgeval 1.x examples (.json) or judgeval 0.0.x examples "
        "(judgeval-legacy, .json). `synth` reads them all back.",
    )
    p.add_argument("dataset", help="a saved dataset (.json, .jsonl, .csv, .parquet)")
    p.add_argument(
        "-f",
        "--format",
        choices=[*_OWN_FORMATS, *EXPORT_FORMATS],
        help="synth's own format or the tool (default: synth's format -o's suffix names)",
    )
    p.add_argument(
        "-o",
        "--output",
        help="file to write (default: next to DATASET, e.g. goldens.deepeval.json)",
    )
    p.set_defaults(func=_run_export)


def _run_export(args: argparse.Namespace) -> int:
    from pathlib import Path

    from synth.dataset import SUFFIXES, Dataset
    from synth.dataset._export import default_export_path, export_format
    from synth.errors import ConfigError

    source = Path(args.dataset)
    own = args.format in _OWN_FORMATS or args.format is None
    if args.format is None:
        if not args.output:
            raise ConfigError(
                "name the file to write with -o (its suffix picks the format) or --format"
            )
        output = Path(args.output)
        if output.suffix.lower() not in SUFFIXES:
            raise ConfigError(
                f"{output}: unsupported dataset suffix {output.suffix or '(none)'!r}; use one of "
                f"{', '.join(SUFFIXES)}, or name another tool's format with --format"
            )
    elif own:
        suffix = f".{args.format}"
        output = Path(args.output) if args.output else source.with_suffix(suffix)
        if output.suffix.lower() != suffix:
            raise ConfigError(f"{output}: a {args.format} dataset is written as {suffix}")
    else:
        output = Path(args.output) if args.output else default_export_path(source, args.format)
    if output.resolve() == source.resolve():
        raise ConfigError(f"{output}: is the dataset being exported; choose another -o")
    dataset = Dataset.load(source)
    if own:
        dataset.save(output)
        what = f"synth dataset, {output.suffix.lower().lstrip('.')}"
    else:
        dataset.export(output, format=args.format)
        what = export_format(args.format).description
    print(f"wrote {len(dataset)} goldens to {output} ({what})")
    return EXIT_OK


# ---- generate (pipeline issue) -------------------------------------------------------------------
def _add_generate(sub: argparse._SubParsersAction) -> None:
    from synth.cli.generate import add_arguments

    p = sub.add_parser(
        "generate",
        help="generate goldens from documents",
        description="Run the generation pipeline (ingest, select, critic, group, inputs, filter, "
        "evolve, style, expected, dedup) over documents and write the goldens; print the "
        "per-stage table. Killed or interrupted, the same command resumes the run.",
    )
    add_arguments(p)
    p.set_defaults(func=_run_generate)


def _run_generate(args: argparse.Namespace) -> int:
    from synth.cli.generate import run

    return run(args)


# ---- evaluate, compare, benchmark (evaluator issue) ----------------------------------------------
def _judging_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--judge",
        action="append",
        default=[],
        metavar="[NAME=]SPEC",
        help="a judge: provider:model (openai, anthropic, gemini) or module:function "
        "fn(prompt, system) -> str; repeat for a panel",
    )
    p.add_argument(
        "--metric",
        action="append",
        metavar="NAME",
        help="judge metric: faithfulness, answer_relevance, context_precision, context_recall, "
        "answer_correctness (default with judges and no --criteria: faithfulness and "
        "answer_relevance); repeatable",
    )
    p.add_argument(
        "--text-metric",
        action="append",
        metavar="NAME",
        help="exact_match or token_f1 (default: both); 'none' for neither",
    )
    p.add_argument(
        "--criteria",
        action="append",
        default=[],
        metavar="NAME=RUBRIC",
        help="a judge metric: the answer rated 1-5 against RUBRIC; repeatable (alone, it "
        "replaces the default metrics: add them with --metric)",
    )
    p.add_argument("--base-url", help="OpenAI-compatible server for openai:<model> judges")
    p.add_argument("--n-jobs", type=int, default=4, metavar="N", help="calls at once (4)")
    p.add_argument("--keep-verdicts", action="store_true", help="keep every verdict in the report")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap and tests (0)")
    p.add_argument("--json", action="store_true", help="print the result as JSON, not tables")


def _judging_kwargs(args: argparse.Namespace) -> dict:
    from synth.errors import ConfigError
    from synth.evaluate._specs import judge_models, split_name

    criteria = {}
    for raw in args.criteria:
        name, rubric = split_name(raw)
        if name is None:
            raise ConfigError(f"--criteria takes NAME=RUBRIC, got {raw!r}")
        criteria[name] = rubric
    text = args.text_metric
    if text is not None and [t.lower() for t in text] == ["none"]:
        text = []
    kwargs: dict = {
        "judges": judge_models(args.judge, base_url=args.base_url) or None,
        "metrics": args.metric,
        "criteria": criteria or None,
        "n_jobs": args.n_jobs,
        "keep_verdicts": args.keep_verdicts,
        "seed": args.seed,
    }
    if text is not None:
        kwargs["text_metrics"] = text
    return kwargs


def _close_models(judges: dict | None) -> None:
    """Close the judge models ``--judge`` made from provider specs (not a user's callables)."""
    from synth.llm.base import LLM

    for model in (judges or {}).values():
        if isinstance(model, LLM):
            model.close()


def _add_evaluate(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "evaluate",
        help="score a system's answers (or retrieval) on a dataset",
        description="Ask a system every question of DATASET and score its answers with the text "
        "metrics (exact match, token F1) and each judge; or, with --retriever, score the ranked "
        "context ids against each item's context_ids. Without --system the stored answers "
        "(actual_output) are scored. Prints tables; -o writes the report (.json, .jsonl, .yaml, "
        ".toml).",
    )
    p.add_argument("dataset", help="a saved dataset (.json, .jsonl, .csv, .parquet)")
    p.add_argument("--system", metavar="MODULE:FUNCTION", help="fn(question) -> answer")
    p.add_argument(
        "--retriever", metavar="MODULE:FUNCTION", help="fn(question) -> ranked ids or hits"
    )
    p.add_argument(
        "-k", action="append", type=int, metavar="K", help="retrieval cut-off; repeatable (10)"
    )
    p.add_argument("-o", "--output", metavar="REPORT", help="write the report here")
    _judging_arguments(p)
    p.set_defaults(func=_run_evaluate)


def _run_evaluate(args: argparse.Namespace) -> int:
    from synth.errors import ConfigError
    from synth.evaluate import _io, _tables
    from synth.evaluate._run import failure_summary
    from synth.evaluate._specs import load_callable
    from synth.evaluate.answers import evaluate_answers
    from synth.evaluate.report import Evaluation
    from synth.evaluate.retrieval import evaluate_retrieval

    report: Evaluation
    if args.retriever:
        if args.system or args.judge:
            raise ConfigError("--retriever scores retrieval alone; drop --system and --judge")
        report = evaluate_retrieval(
            load_callable(args.retriever),
            args.dataset,
            k=args.k or 10,
            n_jobs=args.n_jobs,
            seed=args.seed,
        )
    else:
        system = load_callable(args.system) if args.system else None
        kwargs = _judging_kwargs(args)
        try:
            report = evaluate_answers(system, args.dataset, **kwargs)
        finally:
            _close_models(kwargs["judges"])
    if args.output:
        report.write(args.output)
    if args.json:
        print(_io.dumps(report.to_document(), "json"), end="")
    else:
        _tables.show(_tables.evaluation_tables(report))
        if args.output:
            print(f"wrote {args.output}")
    return _failed_items_code([("", failure_summary(report))])


def _failed_items_code(summaries: list[tuple[str, str | None]]) -> int:
    """EXIT_PARTIAL, after one line on stderr per report whose items failed; else EXIT_OK."""
    failed = [(name, line) for name, line in summaries if line is not None]
    if not failed:
        return EXIT_OK
    sys.stdout.flush()  # the tables first, then the lines that explain the exit code
    for name, line in failed:
        print(f"synth: {name}{line} (exit code {EXIT_PARTIAL})", file=sys.stderr)
    return EXIT_PARTIAL


def _add_compare(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compare",
        help="compare two reports item by item",
        description="Pair two reports by item id and show, per metric, both means, the delta "
        "(B - A) with its bootstrap 95% interval and the paired sign-flip p-value (exact for "
        "few items, Monte Carlo with --seed otherwise).",
    )
    p.add_argument("a", metavar="A", help="the baseline report")
    p.add_argument("b", metavar="B", help="the report compared with it")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap and tests (0)")
    p.add_argument(
        "-o", "--output", metavar="FILE", help="write the comparison (.json/.yaml/.toml)"
    )
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.set_defaults(func=_run_compare)


def _run_compare(args: argparse.Namespace) -> int:
    from pathlib import Path

    from synth.evaluate import _io, _tables
    from synth.evaluate.report import read_report

    comparison = read_report(args.a).compare(read_report(args.b), seed=args.seed)
    if args.output:
        comparison.write(args.output)
    if args.json:
        print(_io.dumps(comparison.model_dump(), "json"), end="")
    else:
        _tables.show(_tables.comparison_table(comparison, Path(args.a).stem, Path(args.b).stem))
    return EXIT_OK


def _add_benchmark(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "benchmark",
        help="run several systems on one dataset: a leaderboard and pairwise comparisons",
        description="Run every system on the same items with the same judges (every judge call "
        "cached), rank them with bootstrap intervals and compare every pair.",
    )
    p.add_argument("dataset", help="a saved dataset (.json, .jsonl, .csv, .parquet)")
    p.add_argument(
        "--system",
        action="append",
        required=True,
        metavar="NAME=MODULE:FUNCTION",
        help="a system fn(question) -> answer; repeat for each system",
    )
    p.add_argument("--rank-by", metavar="METRIC", help="the ranking metric")
    p.add_argument("-o", "--output", metavar="FILE", help="write the result (.json/.yaml/.toml)")
    _judging_arguments(p)
    p.set_defaults(func=_run_benchmark)


def _run_benchmark(args: argparse.Namespace) -> int:
    from synth.evaluate import _io, _tables
    from synth.evaluate._run import failure_summary
    from synth.evaluate._specs import systems
    from synth.evaluate.benchmark import benchmark

    kwargs = _judging_kwargs(args)
    try:
        result = benchmark(systems(args.system), args.dataset, rank_by=args.rank_by, **kwargs)
    finally:
        _close_models(kwargs["judges"])
    if args.output:
        result.write(args.output)
    if args.json:
        print(_io.dumps(result.model_dump(), "json"), end="")
    else:
        _tables.show(_tables.benchmark_tables(result))
        if args.output:
            print(f"wrote {args.output}")
    return _failed_items_code(
        [(f"system {name}: ", failure_summary(report)) for name, report in result.reports.items()]
    )


# --------------------------------------------------------------------------------------------------
class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line, with where to look for the fix."""

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        # argparse's own swallows a failed write: a closed pipe must reach main() (exit 141)
        if message:
            (file or sys.stderr).write(message)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


#: the subcommands, in the order the data flows
_COMMANDS = (_add_ingest, _add_generate, _add_export, _add_evaluate, _add_compare, _add_benchmark)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="synth",
        description="Turn documents into an evaluation dataset, then score systems against it.",
    )
    debug_help = "show full tracebacks on errors"
    parser.add_argument("--debug", action="store_true", help=debug_help)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in _COMMANDS:
        add(sub)
    for command in sub.choices.values():
        # also accepted after the subcommand; SUPPRESS keeps a --debug given before it
        command.add_argument(
            "--debug", action="store_true", default=argparse.SUPPRESS, help=debug_help
        )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default: this process's arguments); return its exit code
    (one of the ``EXIT_*`` constants).

    Run as the program, Ctrl-C is honoured at every moment (see :mod:`synth._interrupt`): exit
    130 within a deadline, whatever the command was doing.
    """
    try:
        try:
            return _main(argv)
        finally:
            sys.stdout.flush()  # a closed pipe is found here, not at exit where it cannot be handled
    except BrokenPipeError:
        return _closed_pipe()
    except KeyboardInterrupt:  # pressed between the command's end and the handler's
        print("synth: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _main(argv: Sequence[str] | None) -> int:
    from synth._interrupt import CtrlC, run_as_program

    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_ERROR
    ctrl_c = args.ctrl_c = CtrlC()  # a command may say where a rerun resumes: ctrl_c.where
    as_program = argv is None and run_as_program()
    with ctrl_c if as_program else contextlib.nullcontext():
        code = _run_command(args)
        if ctrl_c.interrupted:  # even when something on the way swallowed the KeyboardInterrupt
            if as_program:
                ctrl_c.exit_now()
            return EXIT_INTERRUPTED
    return code


def _run_command(args: argparse.Namespace) -> int:
    """The command's exit code: a SynthError is one line on stderr and 2, Ctrl-C 130."""
    try:
        with warnings.catch_warnings():
            # the command says it in its own lines and its exit code (EXIT_PARTIAL)
            warnings.simplefilter("ignore", SynthWarning)
            return int(args.func(args) or 0)
    except BrokenPipeError:
        raise  # stdout was closed: see main()
    except (SynthError, OSError) as exc:  # OSError: a path the user gave cannot be read or written
        if args.debug:
            raise
        print(f"synth: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("synth: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _closed_pipe() -> int:
    """End quietly after stdout was closed by its reader (``synth ... | head``).

    What is still buffered for stdout can never be written: stdout is pointed at the null device,
    so the interpreter's flush at exit neither fails nor prints "Exception ignored" (as Python's
    documentation of SIGPIPE recommends).
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout is not a real file (captured): nothing to redirect
        pass
    return EXIT_CLOSED_PIPE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
