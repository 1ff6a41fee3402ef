"""``synth generate --conversational``: its flags, and the call that makes conversations."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from synth.errors import ConfigError

if TYPE_CHECKING:
    from synth.dataset import Dataset
    from synth.pipeline import Synthesizer


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

        synthesizer.conversation_config = ConversationConfig(max_turns=max_turns)
    return synthesizer.generate_conversational_goldens_from_docs(
        args.paths, num_goldens=num_goldens
    )


__all__ = ["add_conversation_flags", "make_goldens"]
