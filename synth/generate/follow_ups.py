"""The follow-up check: every user turn after the first must depend on the turns before it.

The critic sees each follow-up alone, without the conversation, and says whether it can be
understood on its own; one request per candidate holds the follow-ups of all its live
conversations. A conversation with a follow-up the critic calls standalone is dropped as
``standalone_follow_up`` (a multi-turn golden whose turns could each be asked alone tests nothing a
single-turn one does not); one the critic could not judge is dropped as ``model_error:<kind>``.
Each conversation records its verdicts (``metadata["follow_ups"]``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from synth.errors import ModelError
from synth.generate.base import Source
from synth.generate.draft import Draft, drop_failed, live
from synth.llm.base import LLM
from synth.stage.batch import BatchRequest, ask_batch
from synth.stage.templates import PromptSet, default_prompts
from synth.stage.text import tagged_list

LABEL = "follow_ups"
STANDALONE = "standalone_follow_up"
WHAT = "the critic judged messages"


class _Verdict(BaseModel):
    index: int
    reason: str = Field(default="")
    standalone: bool


class FollowUpReply(BaseModel):
    """The reply schema: one verdict per message, in order."""

    verdicts: list[_Verdict]


@dataclass(frozen=True)
class Verdict:
    """Whether one follow-up can be understood alone, and why."""

    standalone: bool
    reason: str


def build_prompt(messages: Sequence[str], prompts: PromptSet | None = None) -> str:
    """The prompt asking whether each of ``messages`` stands on its own."""
    return (prompts or default_prompts()).render(
        LABEL, messages=tagged_list("messages", "message", list(messages)), count=len(messages)
    )


def _verdict(entry: _Verdict) -> Verdict:
    return Verdict(entry.standalone, entry.reason.strip())


def follow_ups(draft: Draft) -> list[tuple[int, str]]:
    """``(turn number, text)`` of the draft's user turns after the first (turns from 1)."""
    turns: list[dict[str, Any]] = (draft.conversation or {}).get("turns") or []
    users = [(n, t["content"]) for n, t in enumerate(turns, start=1) if t["role"] == "user"]
    return users[1:]


def judge(draft: Draft, verdicts: Sequence[Verdict | ModelError], numbers: Sequence[int]) -> None:
    """Record the verdicts on the draft; drop it when one failed or a follow-up stands alone."""
    failed = next((v for v in verdicts if isinstance(v, ModelError)), None)
    if failed is not None:
        drop_failed(draft, LABEL, failed)
        return
    recorded = [
        {"turn": n, "standalone": v.standalone, "reason": v.reason}
        for n, v in zip(numbers, verdicts, strict=True)
        if isinstance(v, Verdict)
    ]
    draft.metadata["follow_ups"] = recorded
    alone = [r for r in recorded if r["standalone"]]
    if alone:
        first = alone[0]
        detail = f"turn {first['turn']} can be understood alone: {first['reason'] or 'no reason'}"
        draft.drop(LABEL, STANDALONE, detail)


@dataclass(frozen=True)
class FollowUpStep:
    """The follow-up check as a step: one critic request for a candidate's conversations."""

    name: ClassVar[str] = LABEL
    critic: LLM
    prompts: PromptSet

    async def run(self, drafts: list[Draft], source: Source) -> list[Draft]:
        todo = [(d, follow_ups(d)) for d in live(drafts)]
        messages = [text for _, ups in todo for _, text in ups]
        if not messages:
            for draft, _ in todo:  # the shape check keeps none without a follow-up
                draft.drop(LABEL, STANDALONE, "the conversation has no follow-up")
            return drafts

        def prompt(positions: list[int]) -> str:
            return build_prompt([messages[i] for i in positions], self.prompts)

        request = BatchRequest(LABEL, FollowUpReply, WHAT, prompt, _verdict)
        verdicts = await ask_batch(self.critic, request, len(messages))
        at = 0
        for draft, ups in todo:
            mine = verdicts[at : at + len(ups)]
            at += len(ups)
            judge(draft, mine, [n for n, _ in ups])
        return drafts


__all__ = [
    "STANDALONE",
    "FollowUpReply",
    "FollowUpStep",
    "Verdict",
    "build_prompt",
    "follow_ups",
    "judge",
]
