"""``synth generate``: the pipeline file and flags in, the dataset and the per-stage table out."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synth.cli._exits import EXIT_ERROR, EXIT_OK, EXIT_PARTIAL
from synth.cli._flags import (
    add_gates,
    add_language_flag,
    add_limits,
    check_gates,
    language_from_args,
)
from synth.cli.ingest import (
    add_chroma_flag,
    add_ray_flag,
    add_web_flags,
    chroma_source,
    web_from_args,
)
from synth.errors import ConfigError

# the library is imported where a command runs, not with the module: `synth --help` declares the
# arguments of every command and must not pay for the pipeline
if TYPE_CHECKING:
    from rich.console import Console

    from synth.contexts.coverage import Coverage
    from synth.dataset import Dataset
    from synth.pipeline import Synthesizer
    from synth.run.config import PipelineConfig
    from synth.run.plan import Plan

DEFAULT_OUTPUT = "goldens.jsonl"

NO_MODEL_LINES = (
    "no model named and no API key found; name one of these ways:",
    "  set OPENAI_API_KEY (or ANTHROPIC_API_KEY, GEMINI_API_KEY) and optionally --model provider:model,",
    "  or --base-url URL --model openai:NAME for a local OpenAI-compatible server (Ollama, vLLM, ...),",
    "  or --model offline: the built-in extractive model, no key and no network (a first run, a smoke test).",
)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Declare ``synth generate`` and its arguments on ``sub``."""
    p = sub.add_parser(
        "generate",
        help="generate goldens from documents",
        description="Run the generation pipeline (ingest, select, critic, group, inputs, filter, "
        "evolve, style, expected, dedup) over documents and write the goldens; print the "
        "per-stage table. Killed or interrupted, the same command resumes the run.",
    )
    add_arguments(p)
    p.set_defaults(func=run)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare the arguments of ``synth generate`` on ``p``."""
    p.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="document files or folders, or http(s) URLs of pages or sitemaps",
    )
    add_chroma_flag(p)
    p.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help=f"dataset file; its suffix picks the format: .jsonl .json .csv .parquet "
        f"(default: the pipeline's output, else {DEFAULT_OUTPUT})",
    )
    p.add_argument(
        "--goldens", type=int, metavar="N", help="deliver exactly N goldens (topping up)"
    )
    p.add_argument(
        "--model",
        metavar="SPEC",
        help="generator model, provider:model (offline: the built-in extractive model, no key)",
    )
    p.add_argument("--critic-model", metavar="SPEC", help="critic model (default: --model)")
    p.add_argument(
        "--embedder", metavar="SPEC", help="openai:<model>, local:all-MiniLM-L6-v2 or hash"
    )
    p.add_argument(
        "--base-url", metavar="URL", help="an OpenAI-compatible server for openai:<model>"
    )
    p.add_argument("--seed", type=int, metavar="N", help="the run's seed (0)")
    add_language_flag(p)
    p.add_argument(
        "--run-dir",
        metavar="DIR",
        help="where the run keeps its stage outputs and manifest (default: .synth/runs/<run id>; "
        "the same command finds the same run and resumes it)",
    )
    add_limits(p)
    p.add_argument(
        "--pipeline", metavar="FILE", help="a pipeline file (pipelines/*.toml); flags win"
    )
    p.add_argument(
        "--plan",
        action="store_true",
        help="ingest and select contexts only; print the expected requests, tokens and cost",
    )
    add_conversation_flags(p)
    add_tool_flags(p)
    p.add_argument(
        "--absolute",
        action="store_true",
        help="record each golden's source_files as absolute paths (default: relative to the "
        "folder the command runs in)",
    )
    add_gates(p)
    _add_output_flags(p)


def _add_output_flags(p: argparse.ArgumentParser) -> None:
    """Where the ingest runs (``--ray``); how the run shows what it did: JSON, one line, HTML."""
    add_ray_flag(p)
    add_web_flags(p)
    p.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    p.add_argument("--quiet", action="store_true", help="no progress display; print one line")
    p.add_argument(
        "--report",
        action="store_true",
        help="also write the dataset's HTML report beside it (OUT with .html; see synth report)",
    )


def pipeline_from_args(args: argparse.Namespace) -> PipelineConfig:
    """The pipeline file (or the defaults) with the flags laid over it; a flag's bad value is
    reported by the flag's name."""
    from synth.llm.batch import BatchConfig
    from synth.run.config import PipelineConfig, load_pipeline

    for flag, value in (("--goldens", args.goldens), ("--max-concurrent", args.max_concurrent)):
        if value is not None and value < 1:
            raise ConfigError(f"{flag} must be at least 1, got {value}")
    for flag, value in (("--rpm", args.rpm), ("--tpm", args.tpm), ("--timeout", args.timeout)):
        if value is not None and not value > 0:  # nan too
            raise ConfigError(f"{flag} must be positive, got {value:g}")
    check_gates(args)
    config = load_pipeline(args.pipeline) if args.pipeline else PipelineConfig()
    generation = config.generation.with_gates(args.grounding_threshold, args.max_easy_share)
    generation = generation.with_language(language_from_args(args.language))
    return config.override(
        generation=generation if generation is not config.generation else None,
        model=args.model,
        critic_model=args.critic_model,
        embedder=args.embedder,
        base_url=args.base_url,
        num_goldens=args.goldens,
        seed=args.seed,
        max_concurrent=args.max_concurrent,
        rpm=args.rpm,
        tpm=args.tpm,
        timeout=args.timeout,
        output=args.output,
        batch=BatchConfig() if getattr(args, "batch", False) and config.batch is None else None,
        ray=args.ray,
    )


def check_output(path: str | os.PathLike[str]) -> Path:
    """``path`` when a dataset can be written there: a known suffix, in a folder that exists and
    can be written to. Otherwise one ConfigError line saying what to change (checked before the
    run, so a mistake costs no request; :func:`~synth.run.output.claim_output` then proves the
    folder writable by creating the output's lock file in it)."""
    from synth.dataset import SUFFIXES

    output = Path(path)
    suffix = output.suffix.lower()
    if suffix not in SUFFIXES:
        raise ConfigError(
            f"cannot write {output}: unsupported suffix {output.suffix or '(none)'!r}; "
            f"use one of {', '.join(SUFFIXES)}"
        )
    if suffix == ".parquet" and importlib.util.find_spec("pyarrow") is None:
        raise ConfigError(f"cannot write {output}: .parquet needs pyarrow (pip install pyarrow)")
    folder = output.parent
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise ConfigError(f"cannot write {output}: the folder {folder} {what}")
    if output.is_dir():
        raise ConfigError(f"cannot write {output}: it is a folder; name a file")
    target = output if output.exists() else folder
    if not os.access(target, os.W_OK):
        raise ConfigError(f"cannot write {output}: no permission to write to {target}")
    if output.exists():
        _refuse_reviewed(output)
    return output


def _refuse_reviewed(output: Path) -> None:
    """Raise one ConfigError line when ``output`` holds goldens a review decided: the run's
    dataset would replace them, and a reviewer's hours with them. A file synth cannot read as a
    dataset is not a reviewed one: it is replaced, as before."""
    from synth.dataset import Dataset
    from synth.dataset.review import counts
    from synth.errors import DatasetError

    try:
        statuses = counts(Dataset.load(output))
    except (DatasetError, ConfigError, OSError, ValueError):
        return
    reviewed = statuses["accepted"] + statuses["rejected"]
    if reviewed:
        goldens = "golden" if reviewed == 1 else "goldens"
        raise ConfigError(
            f"cannot write {output}: it holds {reviewed} reviewed {goldens} "
            f"({statuses['accepted']} accepted, {statuses['rejected']} rejected) this run would "
            "replace; choose another -o or move the file away (synth refill keeps a review)"
        )


def small_corpus_note(reused: int) -> str:
    """The note printed when some chunks had to sit in two contexts."""
    sits = "chunk sits" if reused == 1 else "chunks sit"
    return (
        "note: the corpus is small for this many contexts: seeds were drawn a second time and "
        f"{reused} {sits} in two contexts"
    )


def run(args: argparse.Namespace) -> int:
    """Generate the goldens the arguments ask for; EXIT_PARTIAL when fewer than asked."""
    from synth.run.output import claim_output

    check_tool_flags(args)
    config = pipeline_from_args(args)
    output = Path(config.output or DEFAULT_OUTPUT)
    tools = getattr(args, "tools", None) is not None  # no collection: PATHs are documents
    chroma = None if tools else chroma_source(args)
    if chroma is not None and (args.plan or getattr(args, "conversational", False)):
        raise ConfigError(
            "--from-chroma makes single-turn goldens; drop --plan and --conversational"
        )
    if args.plan:
        return _run(args, config, output)
    # before the first request: the output can be written, and no other run is writing it
    check_output(output)
    with claim_output(output) as claim:
        ctrl_c = getattr(args, "ctrl_c", None)  # set by synth.cli.main
        if ctrl_c is not None:  # a forced end (a second Ctrl-C) leaves no lock file either
            ctrl_c.last_words.append(claim.release)
        return _run(args, config, output)


def _stdout_console() -> Console:
    """The console tables are printed to (never cut when piped: see print_fitted); rich is
    imported when one is printed, not by a ``--json`` or ``--quiet`` run (0.1 s of its start)."""
    from synth.cli.console import CommandConsole

    return CommandConsole(highlight=False)


def _run(args: argparse.Namespace, config: PipelineConfig, output: Path) -> int:
    from synth.run.models import default_model_spec

    if config.model is None and default_model_spec(config.base_url) is None:
        for line in NO_MODEL_LINES:
            print(line, file=sys.stderr)
        if getattr(args, "tools", None) is not None or chroma_source(args) is not None:
            return EXIT_ERROR
        print("What the run would do (--plan):", file=sys.stderr, flush=True)
        plan = _synthesizer(config, args).plan_from_docs(args.paths, num_goldens=config.num_goldens)
        _print_plan(plan, args, _stdout_console())
        return EXIT_ERROR
    synthesizer = _synthesizer(config, args)
    if args.plan and getattr(args, "conversational", False):
        raise ConfigError("--plan estimates single-turn runs; drop --conversational")
    if args.plan:
        _print_plan(
            synthesizer.plan_from_docs(args.paths, num_goldens=config.num_goldens),
            args,
            _stdout_console(),
        )
        return EXIT_OK
    dataset = _generate(synthesizer, args, config)
    dataset.save(output)
    manifest = synthesizer.manifest or {}
    report = _write_report(dataset, manifest, output) if args.report else None
    _print_notes(manifest, args)
    if args.json:
        written = {"output": str(output), **({"report": str(report)} if report else {})}
        print(json.dumps({**written, "goldens": len(dataset), **manifest}, ensure_ascii=False))
    else:
        if not args.quiet:
            _print_table(manifest, dataset, _stdout_console())
        print(_summary(manifest, output, dataset))
        if report is not None:
            print(f"report: {report}")
    short = dataset.shortfall
    if short is None:
        return EXIT_OK
    sys.stdout.flush()  # the summary first, then the line that explains the exit code
    print(f"synth: {short} (exit code {EXIT_PARTIAL})", file=sys.stderr)
    return EXIT_PARTIAL


def _write_report(dataset: Dataset, manifest: dict[str, Any], output: Path) -> Path:
    """The dataset's HTML report, written beside it (``goldens.jsonl`` -> ``goldens.html``)."""
    from synth.cli.report import write_beside
    from synth.report import dataset_report

    return write_beside(output, dataset_report(dataset, manifest=manifest or None, source=output))


def _generate(
    synthesizer: Synthesizer, args: argparse.Namespace, config: PipelineConfig
) -> Dataset:
    """The dataset the run delivers, shown on a live display unless ``--quiet`` or ``--json``."""
    from synth.run.progress import NullProgress

    if args.quiet or args.json:
        synthesizer.progress = NullProgress()
    else:
        from synth.cli._generate_view import RichProgress
        from synth.cli.console import CommandConsole

        synthesizer.progress = RichProgress(CommandConsole(stderr=True, highlight=False))
    # set by synth.cli.main; absent when run() is called directly
    ctrl_c = getattr(args, "ctrl_c", None)
    if ctrl_c is not None:
        ctrl_c.where = lambda: synthesizer.last_run_dir
        ctrl_c.last_words.append(synthesizer.mark_interrupted)  # before a forced end, too
    try:
        if getattr(args, "tools", None) is not None:
            dataset = make_tool_goldens(synthesizer, args, config.num_goldens)
        else:
            dataset = make_goldens(synthesizer, args, config.num_goldens)
        if ctrl_c is not None and ctrl_c.interrupted:
            raise KeyboardInterrupt  # pressed, and swallowed on the way: stopped all the same
    except KeyboardInterrupt:
        synthesizer.close()
        where = synthesizer.last_run_dir
        if where is not None:
            print(
                f"stopped; everything done so far is kept in {where}: "
                "run the same command again to resume",
                file=sys.stderr,
            )
        raise
    finally:
        synthesizer.close()
    return dataset


def _print_notes(manifest: dict[str, Any], args: argparse.Namespace) -> None:
    """The lines on stderr that come before the result: ``--debug``'s first drop of each kind,
    and the replay note that ``--quiet`` hid with the display."""
    from synth.run.dir import replay_note
    from synth.run.rejects import first_drops

    if getattr(args, "debug", False) and manifest.get("run_dir"):
        for line in first_drops(manifest["run_dir"]):  # the first drop of each kind, with why
            print(f"synth: debug: {line}", file=sys.stderr)
    sessions = manifest.get("sessions") or [{}]
    if sessions[-1].get("replayed") and args.quiet and not args.json:
        # the progress display (not shown with --quiet) has said it already
        failures = int(manifest.get("totals", {}).get("failures", 0) or 0)
        print(replay_note(str(manifest.get("run_dir")), failures), file=sys.stderr)


def _print_table(manifest: dict[str, Any], dataset: Dataset, out: Console) -> None:
    """The per-stage table, then why the run is short and whether the corpus was too small."""
    from synth.cli._generate_view import render_table
    from synth.cli.console import print_fitted

    width = out.width if out.is_terminal else None  # a pipe: the whole table, at its width
    stages = manifest.get("stages", [])
    print_fitted(out, render_table(stages, title=f"run {manifest.get('run_id')}", width=width))
    short = dataset.shortfall
    for reason in short.reasons if short is not None else ():
        print(f"fewer goldens than asked: {reason}")
    contexts = manifest.get("contexts") or {}
    if contexts.get("corpus_too_small"):
        print(small_corpus_note(int(contexts.get("reused_chunks", 0))))
    if manifest.get("coverage"):
        from synth.contexts.coverage import Coverage

        _print_coverage(Coverage.model_validate(manifest["coverage"]), out)


def _print_coverage(coverage: Coverage, out: Console) -> None:
    """The coverage line, and the table of the files that fell short of their share."""
    from synth.cli._generate_view import coverage_line, render_coverage
    from synth.cli.console import print_fitted

    print(coverage_line(coverage))
    if coverage.short:
        print_fitted(out, render_coverage(coverage, only_short=True))


def _synthesizer(config: PipelineConfig, args: argparse.Namespace) -> Synthesizer:
    from synth.pipeline import Synthesizer

    return Synthesizer.from_pipeline(
        config,
        run_dir=args.run_dir,
        absolute_paths=True if args.absolute else None,
        web=web_from_args(args),
    )


def _summary(manifest: dict[str, Any], output: Path, dataset: Dataset) -> str:
    """The closing line: the goldens written of those asked, the requests, cost and run."""
    totals = manifest.get("totals", {})
    per = manifest.get("requests_per_golden")
    asked = dataset.metadata.get("num_goldens", manifest.get("num_goldens"))
    count = len(dataset)
    of = f" of {asked}" if asked else ""
    sessions = manifest.get("sessions") or []
    parts = manifest.get("parts") or {}  # a call of one run per question type
    resumed = ""
    if len(sessions) > 1 or any(p.get("resumed") for p in parts.values()):
        # the totals are the whole run's: say what this command added
        made = sum(int(row.get("requests", 0)) for row in sessions[-1].get("usage", {}).values())
        resumed = f"; {made} made by this resumed run"
    folders = [str(p.get("run_dir")) for p in parts.values()] or [str(manifest.get("run_dir"))]
    runs = ("runs " if len(folders) > 1 else "run ") + ", ".join(folders)
    models = manifest.get("models") or {}
    offline = any(isinstance(m, dict) and m.get("provider") == "offline" for m in models.values())
    answered = " answered offline" if offline else ""  # no request left the machine
    return (
        f"wrote {count}{of} goldens to {os.fspath(output)}; {totals.get('requests', 0)} requests"
        f"{answered} "
        f"({per if per is not None else '-'} per golden, {totals.get('cached', 0)} cached"
        f"{resumed}), cost ${totals.get('cost_usd', 0):.4f}; {runs}"
    )


def _print_plan(plan: Plan, args: argparse.Namespace, out: Console) -> None:
    from synth.cli._generate_view import coverage_line, render_coverage, render_plan
    from synth.cli.console import print_fitted

    if args.json:
        print(json.dumps(plan.to_json(), ensure_ascii=False))
        return
    print_fitted(out, render_plan(plan))
    if plan.coverage is not None:
        print(coverage_line(plan.coverage))
        print_fitted(out, render_coverage(plan.coverage))
    for note in plan.notes:
        print(f"note: {note}")


# ---- ``synth generate --conversational``: its flags, and the call that makes conversations.
def add_conversation_flags(p: argparse.ArgumentParser) -> None:
    """Declare ``--conversational`` and ``--max-turns`` on ``p``."""
    p.add_argument(
        "--conversational",
        action="store_true",
        help="make conversations (ConversationalGolden: scenario, persona, turns) instead of "
        "single questions; each follow-up depends on the turns before it",
    )
    p.add_argument(
        "--max-turns",
        type=int,
        metavar="N",
        help="with --conversational: user turns per conversation at most, 2 or more (3)",
    )


def make_goldens(
    synthesizer: Synthesizer, args: argparse.Namespace, num_goldens: int | None
) -> Dataset:
    """Single-turn goldens, or with ``--conversational`` conversations."""
    max_turns = getattr(args, "max_turns", None)
    if not getattr(args, "conversational", False):
        if max_turns is not None:
            raise ConfigError("--max-turns needs --conversational")
        chroma = getattr(args, "from_chroma", None)
        if chroma is not None:
            from synth.store.imported import parse_chroma_spec

            where, name = parse_chroma_spec(chroma)
            return synthesizer.generate_goldens_from_chroma(where, name, num_goldens=num_goldens)
        return synthesizer.generate_goldens_from_docs(args.paths, num_goldens=num_goldens)
    if max_turns is not None:
        from synth.generate.conversation import ConversationConfig  # not for --help

        if max_turns < 2:  # the flag the user typed, not the setting behind it
            raise ConfigError(f"--max-turns must be at least 2, got {max_turns}")

        synthesizer.conversation_config = ConversationConfig(max_turns=max_turns)
    return synthesizer.generate_conversational_goldens_from_docs(
        args.paths, num_goldens=num_goldens
    )


# ---- ``synth generate --tools``: its flags, and the call that makes goldens for an agent.
def add_tool_flags(p: argparse.ArgumentParser) -> None:
    """Declare ``--tools``, ``--tools-exec`` and ``--tool-kinds`` on ``p``."""
    p.add_argument(
        "--tools",
        metavar="SOURCE",
        help="make goldens for an agent from its tools: a JSON file of OpenAI or Anthropic tool "
        "definitions, an OpenAPI 3 spec (.json/.yaml), an MCP server's URL, or the command that "
        "starts one over stdio (quoted); each golden a request and the calls expected. With "
        "document PATHs too (before or after), they are the agent's knowledge base: the "
        "knowledge kind's goldens are answered from them",
    )
    p.add_argument(
        "--tools-exec",
        metavar="MODULE:FUNCTION",
        help="with --tools: run each expected call through FUNCTION(name, arguments) and record "
        "its result (an MCP server's tools are run on the server unless this is 'none')",
    )
    p.add_argument(
        "--tool-kinds",
        metavar="KIND=SHARE,...",
        help="with --tools: the kinds and their shares, each exact in count (default "
        "single_call=0.4,sequence=0.2,parallel=0.2,no_tool=0.1,missing_argument=0.1; with "
        "documents single_call=0.3,sequence=0.15,parallel=0.15,no_tool=0.1,"
        "missing_argument=0.1,knowledge=0.2)",
    )


def parse_kinds(text: str) -> dict[str, float]:
    """``single_call=0.5,sequence=0.5`` as a mapping (a kind alone weighs 1)."""
    kinds: dict[str, float] = {}
    for part in text.split(","):
        name, _, share = part.strip().partition("=")
        if not name:
            continue
        try:
            kinds[name.strip()] = float(share) if share else 1.0
        except ValueError:
            raise ConfigError(f"--tool-kinds: {part.strip()!r} is not KIND=SHARE") from None
        if kinds[name.strip()] < 0:
            raise ConfigError(f"--tool-kinds: the share of {name.strip()} must be 0 or more")
    if not kinds:
        raise ConfigError("--tool-kinds: name at least one kind")
    return kinds


def check_tool_flags(args: argparse.Namespace) -> None:
    """Refuse the flags that make no sense together, before any request."""
    tools = getattr(args, "tools", None)
    if tools is None:
        for flag in ("tools_exec", "tool_kinds"):
            if getattr(args, flag, None) is not None:
                raise ConfigError(f"--{flag.replace('_', '-')} needs --tools SOURCE")
        if not args.paths and getattr(args, "from_chroma", None) is None:
            raise ConfigError(
                "name the documents to generate from (PATH ...), --from-chroma PATH:COLLECTION "
                "or --tools SOURCE"
            )
        return
    if getattr(args, "from_chroma", None) is not None:
        raise ConfigError(
            "--tools reads the agent's documents from files, folders or URLs (PATH ...), not "
            "from --from-chroma"
        )
    for flag in ("plan", "conversational"):
        if getattr(args, flag, False):
            raise ConfigError(f"--{flag} does not apply to --tools")


def make_tool_goldens(
    synthesizer: Synthesizer, args: argparse.Namespace, num_goldens: int | None
) -> Dataset:
    """The goldens ``--tools`` asks for: exactly ``num_goldens`` (``--goldens``) of them, the
    document PATHs (if any) the agent's knowledge base."""
    if num_goldens is None:
        raise ConfigError("--tools needs --goldens N")
    kinds = parse_kinds(args.tool_kinds) if args.tool_kinds else None
    execute: Any = None
    if args.tools_exec is not None:
        execute = False if args.tools_exec.lower() == "none" else args.tools_exec
    return synthesizer.generate_goldens_from_tools(
        args.tools,
        num_goldens=num_goldens,
        kinds=kinds,
        execute=execute,
        documents=args.paths or None,
    )


__all__ = [
    "DEFAULT_OUTPUT",
    "NO_MODEL_LINES",
    "add_arguments",
    "add_parser",
    "check_output",
    "pipeline_from_args",
    "run",
    "small_corpus_note",
]
