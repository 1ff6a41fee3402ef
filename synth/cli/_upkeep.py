"""What ``synth refill`` and ``synth update`` share: the flags that say how new goldens are made
(the run's settings by default) and the Synthesizer built from them."""

from __future__ import annotations

import argparse
from typing import Any

from synth.cli._flags import add_gates, check_gates


def add_run_flags(p: argparse.ArgumentParser) -> None:
    """The settings of the run that makes the new goldens: the past run's unless a flag says."""
    p.add_argument(
        "--pipeline",
        metavar="FILE",
        help="take the settings from this pipeline file instead of the run's manifest",
    )
    p.add_argument(
        "--model", metavar="SPEC", help="generator model as provider:model (default: the run's)"
    )
    p.add_argument(
        "--critic-model",
        metavar="SPEC",
        help="critic model as provider:model (default: the run's; --model when the run's critic "
        "was its generator)",
    )
    p.add_argument("--embedder", metavar="SPEC", help="embedder spec (default: the run's)")
    p.add_argument("--base-url", metavar="URL", help="an OpenAI-compatible server's URL")
    p.add_argument("--max-concurrent", type=int, metavar="N", help="requests in flight at most")
    p.add_argument(
        "--run-dir",
        metavar="DIR",
        help="where the run that makes the new goldens keeps its outputs",
    )
    add_gates(p)


def check_run_flags(args: argparse.Namespace) -> None:
    """Raise ConfigError naming the first run flag whose value cannot be used."""
    from synth.errors import ConfigError

    if args.max_concurrent is not None and args.max_concurrent < 1:
        raise ConfigError(f"--max-concurrent must be at least 1, got {args.max_concurrent}")
    check_gates(args)


def synthesizer_options(
    args: argparse.Namespace, manifest: dict[str, Any] | None, *, makes_goldens: bool = True
) -> dict[str, Any]:
    """The Synthesizer's arguments: the pipeline file's, else the run's, with the flags over them;
    new goldens for a dataset made elsewhere need ``--docs`` and ``--model`` (said in one line)."""
    from synth.dataset.refill import run_options
    from synth.errors import ConfigError
    from synth.run.config import load_pipeline

    if args.pipeline:
        options = load_pipeline(args.pipeline).synthesizer_options()
    elif manifest is not None:
        options = run_options(manifest)
    elif makes_goldens:
        missing = [
            flag for flag, value in (("--docs", args.docs), ("--model", args.model)) if not value
        ]
        if missing:
            raise ConfigError(
                f"{args.dataset} was not made by a synth run found here (no run manifest): "
                f"making new goldens for it needs {' and '.join(missing)}"
            )
        options = {}
    else:
        options = {}
    flags = {
        "model": args.model,
        "critic_model": args.critic_model,
        "embedder": args.embedder,
        "base_url": args.base_url,
        "max_concurrent": args.max_concurrent,
        "run_dir": args.run_dir,
        "grounding_threshold": args.grounding_threshold,
        "max_easy_share": args.max_easy_share,
    }
    if args.model and not args.critic_model and options.get("critic_model") == options.get("model"):
        # the run's critic was its generator: a new --model is the critic too, as in generate
        # (else the critic would still call the model the user just moved away from)
        flags["critic_model"] = args.model
    options.update({k: v for k, v in flags.items() if v is not None})
    return options


__all__ = ["add_run_flags", "check_run_flags", "synthesizer_options"]
