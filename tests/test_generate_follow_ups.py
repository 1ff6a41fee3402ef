"""The follow-up check (synth/generate/follow_ups.py) driven directly, in this thread: the follow-ups
of a conversation, the one request for a candidate's conversations, the verdicts recorded and the
drops. The whole runs of tests/test_conversations.py reach it on a run's worker thread, where
mutmut records nothing."""

from __future__ import annotations

import asyncio
import json
import re

from synth import FunctionModel
from synth.errors import OutputParseError
from synth.generate.base import Source
from synth.generate.draft import Draft
from synth.generate.follow_ups import (
    STANDALONE,
    FollowUpReply,
    FollowUpStep,
    Verdict,
    build_prompt,
    follow_ups,
    judge,
)
from synth.stage.templates import PromptSet, default_prompts

MESSAGE = re.compile(r'<message index="(\d+)">\n?(.*?)\n?</message>', re.DOTALL)


def conversation(i: int, *users: str) -> Draft:
    """A draft whose conversation has ``users`` as its user turns, each answered."""
    rows = []
    for text in users:
        rows.append({"role": "user", "content": text})
        rows.append({"role": "assistant", "content": f"answer to {text}"})
    return Draft(id=f"d{i}", input="x", conversation={"turns": rows})


class Critic(FunctionModel):
    """Calls a follow-up standalone when it is in ``alone``; keeps each prompt and label."""

    def __init__(self, alone: dict[str, str] | None = None, reply: str | None = None) -> None:
        self.prompts: list[str] = []
        self.labels: list[str | None] = []
        alone = alone or {}

        def answer(prompt: str, system: str | None = None) -> str:
            self.prompts.append(prompt)
            if reply is not None:
                return reply
            verdicts = [
                {"index": int(i), "standalone": text in alone, "reason": alone.get(text, "  ")}
                for i, text in MESSAGE.findall(prompt)
            ]
            return json.dumps({"verdicts": verdicts})

        super().__init__(answer, name="critic")

    async def arequest(self, prompt, *, system=None, schema=None, label=None):
        self.labels.append(label)
        return await super().arequest(prompt, system=system, schema=schema, label=label)


def run(drafts: list[Draft], critic: Critic, prompts: PromptSet | None = None) -> list[Draft]:
    step = FollowUpStep(critic, prompts or default_prompts())
    return asyncio.run(step.run(drafts, Source("k")))


def test_the_follow_ups_are_the_user_turns_after_the_first_numbered_from_one() -> None:
    draft = conversation(0, "What is it?", "And then?", "And after that?")
    assert follow_ups(draft) == [(3, "And then?"), (5, "And after that?")]
    assert follow_ups(conversation(1, "Only one?")) == []
    assert follow_ups(Draft(id="d", input="x")) == []  # no conversation
    assert follow_ups(Draft(id="d", input="x", conversation={"turns": None})) == []
    assistant_first = Draft(
        id="d",
        input="x",
        conversation={
            "turns": [
                {"role": "assistant", "content": "Hello."},
                {"role": "user", "content": "Hi?"},
                {"role": "user", "content": "And?"},
            ]
        },
    )
    assert follow_ups(assistant_first) == [(3, "And?")]


def test_the_prompt_shows_each_message_numbered_and_their_count() -> None:
    prompt = build_prompt([" And then? ", "And that?"])
    assert '<message index="1">And then?</message>' in prompt.replace("\n", "")
    assert '<message index="2">And that?</message>' in prompt.replace("\n", "")
    assert "Messages (2 in all):" in prompt
    own = PromptSet({"follow_ups": "MINE $count $messages"})
    assert build_prompt(["a"], own).startswith("MINE 1 <messages>")


def test_one_request_judges_every_follow_up_of_the_candidate_and_records_the_verdicts() -> None:
    first = conversation(0, "What is a heat pump?", "And its price?", "And in winter?")
    second = conversation(1, "How long does it last?", "Which detail explains that?")
    critic = Critic({"Which detail explains that?": " a question of its own "})
    out = run([first, second], critic)
    assert out == [first, second]
    [prompt] = critic.prompts  # one request for both conversations
    assert critic.labels == ["follow_ups"]
    assert MESSAGE.findall(prompt) == [
        ("1", "And its price?"),
        ("2", "And in winter?"),
        ("3", "Which detail explains that?"),
    ]
    assert "What is a heat pump?" not in prompt  # each follow-up is shown alone
    assert first.kept
    assert first.metadata["follow_ups"] == [
        {"turn": 3, "standalone": False, "reason": ""},
        {"turn": 5, "standalone": False, "reason": ""},
    ]
    assert (second.dropped_at, second.drop_reason) == ("follow_ups", STANDALONE)
    assert second.drop_detail == "turn 3 can be understood alone: a question of its own"
    assert second.metadata["follow_ups"] == [
        {"turn": 3, "standalone": True, "reason": "a question of its own"}
    ]


def test_the_first_standalone_follow_up_is_named_and_one_without_a_reason_says_so() -> None:
    draft = conversation(0, "Q?", "And A?", "B alone?", "C alone?")
    judge(draft, [Verdict(False, "x"), Verdict(True, ""), Verdict(True, "second")], [3, 5, 7])
    assert draft.drop_reason == STANDALONE
    assert draft.drop_detail == "turn 5 can be understood alone: no reason"
    assert [r["turn"] for r in draft.metadata["follow_ups"]] == [3, 5, 7]


def test_a_verdict_the_critic_could_not_give_drops_the_conversation_as_a_model_error() -> None:
    draft = conversation(0, "Q?", "And A?", "And B?")
    error = OutputParseError("the critic judged messages 1 of 2", raw="{}")
    judge(draft, [Verdict(False, "x"), error], [3, 5])
    assert (draft.dropped_at, draft.drop_reason) == ("follow_ups", "model_error:invalid_output")
    assert draft.drop_detail == "the critic judged messages 1 of 2" and draft.drop_raw == "{}"
    assert "follow_ups" not in draft.metadata  # no verdicts recorded from a failed request


def test_a_critic_that_fails_drops_every_conversation_it_judged() -> None:
    drafts = [conversation(0, "Q?", "And A?"), conversation(1, "R?", "And B?")]
    run(drafts, Critic(reply="not json"))
    for draft in drafts:
        assert draft.dropped_at == "follow_ups"
        assert draft.drop_reason is not None and draft.drop_reason.startswith("model_error:")


def test_dropped_conversations_are_not_asked_about() -> None:
    earlier = conversation(0, "Q?", "Which one alone?")
    earlier.drop("conversations", "earlier")
    kept = conversation(2, "Q?", "And then?")
    critic = Critic()
    run([earlier, kept], critic)
    [prompt] = critic.prompts
    assert MESSAGE.findall(prompt) == [("1", "And then?")]
    assert earlier.drop_reason == "earlier"  # left as it was
    assert kept.kept and kept.metadata["follow_ups"][0]["turn"] == 3


def test_a_candidate_whose_conversations_have_no_follow_up_asks_nothing_and_drops_them() -> None:
    drafts = [conversation(0, "Only one?"), conversation(1, "Only this?")]
    critic = Critic()
    run(drafts, critic)
    assert critic.prompts == []
    for draft in drafts:
        assert (draft.dropped_at, draft.drop_reason) == ("follow_ups", STANDALONE)
        assert draft.drop_detail == "the conversation has no follow-up"


def test_the_reply_schema_is_one_verdict_per_message() -> None:
    reply = FollowUpReply.model_validate({"verdicts": [{"index": 1, "standalone": True}]})
    assert reply.verdicts[0].reason == ""


def test_each_conversation_gets_the_verdicts_of_its_own_follow_ups() -> None:
    # 2, 1 and 2 follow-ups: only the third's second one stands alone
    drafts = [
        conversation(0, "Q?", "And A?", "And B?"),
        conversation(1, "R?", "And C?"),
        conversation(2, "S?", "And D?", "E alone?"),
    ]
    run(drafts, Critic({"E alone?": "its own question"}))
    assert [d.kept for d in drafts] == [True, True, False]
    assert [[r["turn"] for r in d.metadata["follow_ups"]] for d in drafts] == [[3, 5], [3], [3, 5]]
    assert drafts[2].drop_detail == "turn 5 can be understood alone: its own question"


def test_the_step_asks_with_the_runs_own_prompts() -> None:
    own = PromptSet({"follow_ups": "MINE $count $messages"})
    critic = Critic()
    run([conversation(0, "Q?", "And A?")], critic, own)
    assert critic.prompts[0].startswith("MINE 1 <messages>")


def test_a_reply_that_never_judges_every_message_says_which_it_judged() -> None:
    reply = json.dumps({"verdicts": [{"index": 9, "standalone": False, "reason": "x"}]})
    draft = conversation(0, "Q?", "And A?", "And B?")
    run([draft], Critic(reply=reply))
    assert draft.drop_reason == "model_error:invalid_output"
    assert draft.drop_detail is not None
    assert draft.drop_detail.startswith("the critic judged messages [9], expected 1..2")
