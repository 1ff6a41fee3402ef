"""Conversations bench: requests per conversational golden against single-turn ones.

Both runs generate ``--goldens`` goldens from ``sample_docs`` (the same corpus, seed and hash
embedder) against the fake OpenAI server answering synth's prompts (``tests/synth_replies``),
through the real openai SDK, with no response cache; ``--standalone`` is the share of
conversations whose follow-up stands alone (dropped and replaced, as a model that writes some
would cost). Reported per run: goldens, chat requests, requests per golden and per stage.

    python bench/conversations.py
    python bench/conversations.py --goldens 10 --standalone 0.3 --out bench-results/conv.json
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

import fake_openai  # noqa: E402
import synth_replies  # noqa: E402
from _util import header, markdown_table, write_json  # noqa: E402

from synth import Synthesizer  # noqa: E402

SAMPLE = HERE.parent / "sample_docs"


def measure(kind: str, goldens: int, folder: Path) -> dict[str, Any]:
    """One run of ``kind`` (``single-turn`` or ``conversational``): what it asked for."""
    with fake_openai.FakeOpenAI(reply=synth_replies.reply) as fake:
        synth = Synthesizer(
            "openai:fake-model",
            base_url=fake.url,
            embedder="hash",
            cache=None,
            run_dir=folder / kind / "run",
            store_path=folder / kind / "chroma",
        )
        with synth:
            if kind == "conversational":
                made = synth.generate_conversational_goldens_from_docs(SAMPLE, num_goldens=goldens)
            else:
                made = synth.generate_goldens_from_docs(SAMPLE, num_goldens=goldens)
            manifest = synth.manifest or {}
        chat = fake.request_count("chat")
    stages = {row["stage"]: row["requests"] for row in manifest["stages"] if row["requests"]}
    return {
        "kind": kind,
        "goldens": len(made),
        "chat_requests": chat,
        "requests_per_golden": round(chat / len(made), 2) if len(made) else None,
        "stages": stages,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--goldens", type=int, default=10)
    parser.add_argument("--standalone", type=float, default=0.0)
    parser.add_argument("--out", help="also write the results here as JSON")
    args = parser.parse_args(argv)
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-not-a-real-key")
    os.environ["SYNTH_REPLIES_STANDALONE"] = str(args.standalone)
    with tempfile.TemporaryDirectory() as tmp:
        results = [measure(k, args.goldens, Path(tmp)) for k in ("single-turn", "conversational")]
    rows = [
        [
            r["kind"],
            r["goldens"],
            r["chat_requests"],
            r["requests_per_golden"],
            ", ".join(f"{s} {n}" for s, n in r["stages"].items()),
        ]
        for r in results
    ]
    print(markdown_table(["run", "goldens", "chat requests", "per golden", "by stage"], rows))
    write_json(args.out, {**header(sys.argv, ("synth",)), "runs": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
