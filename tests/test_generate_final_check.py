"""The final check of each input, after evolution and styling (synth/generate/final_check.py)."""

from __future__ import annotations

import json
import re

import pytest

from synth.data import Context
from synth.errors import ServerError
from synth.generate import final_check
from synth.generate.draft import Draft
from synth.llm.base import FunctionModel, run_sync
from synth.stage.stats import StageStats
from synth.stage.templates import PromptSet

CONTEXT = Context(
    id="ctx",
    chunk_ids=["manual.md#0"],
    texts=[
        "# Veltrana X200\n## Warranty\nThe X200 battery has a warranty of ten years from the "
        "date of purchase, covering manufacturing defects."
    ],
    source_files=["docs/manual.md"],
)
ITEM = re.compile(r'<(input|item) index="(\d+)">\n(.*?)\n</\1>', re.DOTALL)
INPUT = re.compile(r"<input>\n(.*?)\n</input>", re.DOTALL)


class Critic:
    """Judges by tables: ``alone`` maps an input to its standalone verdict (default True),
    ``answerable`` to its answerability (default fully), ``rewrites`` an input to its rewrite."""

    def __init__(
        self,
        alone: dict[str, bool] | None = None,
        answerable: dict[str, str] | None = None,
        rewrites: dict[str, str] | None = None,
        fail: str | None = None,
        leave_out: set[tuple[str, str]] | None = None,
    ) -> None:
        self.leave_out = leave_out or set()  # (kind, input): the first reply of that kind omits it
        self.alone = alone or {}
        self.answerable = answerable or {}
        self.rewrites = rewrites or {}
        self.fail = fail
        self.prompts: list[tuple[str, str]] = []

    def __call__(self, prompt: str, system: str | None) -> str:
        items = [(int(i), text) for _, i, text in ITEM.findall(prompt)]
        if "You see each question alone" in prompt:
            kind = "alone"
        elif "You check questions written" in prompt:
            kind = "context"
        else:
            kind = "rewrite"
        self.prompts.append((kind, prompt))
        omitted = {(k, t) for k, t in self.leave_out if k == kind}
        self.leave_out -= omitted
        items = [(i, t) for i, t in items if (kind, t) not in omitted]
        if kind == self.fail:
            raise ServerError("503")
        if kind == "alone":
            verdicts = [
                {"index": i, "reason": "why", "standalone": self.alone.get(t, True)}
                for i, t in items
            ]
            return json.dumps({"verdicts": verdicts})
        if kind == "context":
            verdicts = [
                {"index": i, "quotes": [], "answerable": self.answerable.get(t, "fully")}
                for i, t in items
            ]
            return json.dumps({"verdicts": verdicts})
        out = []
        for i, block in items:
            text = INPUT.findall(block)[0]
            out.append({"index": i, "input": self.rewrites.get(text, text)})
        return json.dumps({"inputs": out})

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.prompts]


def check(critic: Critic, *texts: str, kind: str | None = None) -> tuple[list[Draft], StageStats]:
    drafts = [Draft(id=f"d{i}", input=t, context=CONTEXT) for i, t in enumerate(texts)]
    stats = StageStats(stage="check")
    run_sync(final_check.run(drafts, FunctionModel(critic), stats=stats, question_type=kind))
    return drafts, stats


GOOD = "How long is the warranty on the Veltrana X200 battery?"


def test_a_good_input_costs_two_requests_and_is_kept_as_it_is() -> None:
    critic = Critic()
    drafts, stats = check(critic, GOOD)
    assert drafts[0].kept and drafts[0].input == GOOD and not drafts[0].history
    assert sorted(critic.kinds()) == ["alone", "context"] and stats.requests == 2
    assert stats.items_in == stats.items_out == 1


def test_the_alone_check_sees_neither_the_context_nor_its_orientation() -> None:
    critic = Critic()
    check(critic, GOOD)
    alone = next(p for kind, p in critic.prompts if kind == "alone")
    with_context = next(p for kind, p in critic.prompts if kind == "context")
    assert "ten years" not in alone and "manual.md" not in alone and "<context>" not in alone
    assert "ten years" in with_context and "manual.md" in with_context


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("What does the passage say about the warranty?", "meta_reference"),
        (
            "Is it so that the X200 battery has a warranty of ten years from the date?",
            "copied_span",
        ),
        ("How long is the X200 warranty? And what does it cover?", "double_question"),
        ("How long is the X200 warranty " + "really " * 90 + "?", "too_long"),
    ],
)
def test_a_plain_problem_is_asked_again_once_then_dropped_with_its_reason(
    text: str, reason: str
) -> None:
    critic = Critic()  # rewrites nothing: the rewrite repeats the input
    drafts, stats = check(critic, text)
    draft = drafts[0]
    assert draft.drop_reason == reason and draft.dropped_at == "check"
    assert draft.drop_detail and draft.drop_detail.endswith("after it was asked again")
    # no model check for an input plain code already faults: one rewrite, nothing else
    assert critic.kinds() == ["rewrite"]
    rewrite = critic.prompts[0][1]
    assert "<feedback>" in rewrite and text.split()[0] in rewrite
    assert stats.dropped == {reason: 1} and stats.notes["asked_again"] == 1


def test_a_rewrite_that_fixes_the_problem_is_kept_with_the_old_input_in_history() -> None:
    bad = "What does the passage say about the warranty?"
    critic = Critic(rewrites={bad: GOOD})
    drafts, _ = check(critic, bad)
    assert drafts[0].kept and drafts[0].input == GOOD
    assert drafts[0].history == [
        {
            "stage": "check",
            "input": bad,
            "problem": "meta_reference",
            "detail": "it refers to 'the passage' (en), which its user never sees",
        }
    ]
    assert critic.kinds()[0] == "rewrite" and sorted(critic.kinds()[1:]) == ["alone", "context"]


def test_inputs_plain_code_faults_are_rewritten_before_the_critic_sees_the_context_once() -> None:
    bad = "What does the passage say about the warranty?"
    critic = Critic(rewrites={bad: "What does the X200 warranty cover?"})
    drafts, stats = check(critic, GOOD, bad)
    assert all(d.kept for d in drafts)
    # one rewrite, then one request of each check for both inputs: three in all
    assert critic.kinds()[0] == "rewrite" and sorted(critic.kinds()[1:]) == ["alone", "context"]
    assert stats.requests == 3


def test_an_input_rewritten_for_plain_code_that_the_critic_then_faults_is_not_asked_again() -> None:
    bad, vague = "What does the passage say about the warranty?", "What does it cover?"
    critic = Critic(rewrites={bad: vague}, alone={vague: False})
    drafts, stats = check(critic, bad)
    assert drafts[0].drop_reason == "not_standalone"
    assert drafts[0].drop_detail and drafts[0].drop_detail.endswith("after it was asked again")
    assert critic.kinds().count("rewrite") == 1 and stats.notes["asked_again"] == 1


def test_an_input_the_critic_cannot_understand_alone_is_dropped_not_standalone() -> None:
    vague = "How long does the device last?"
    drafts, _ = check(Critic(alone={vague: False}), vague)
    assert drafts[0].drop_reason == "not_standalone"
    assert drafts[0].drop_detail.startswith("seen alone, it cannot be understood: why")


def test_an_input_its_context_answers_only_in_part_is_dropped_unanswerable() -> None:
    partial = "How long is the X200 warranty and what does a repair cost?"
    drafts, _ = check(Critic(answerable={partial: "partly"}), partial)
    assert drafts[0].drop_reason == "unanswerable"
    assert "answers it only in part" in drafts[0].drop_detail


def test_double_questions_are_allowed_in_a_double_run_and_out_of_scope_skips_the_context() -> None:
    double = "How long is the X200 warranty? What defects does it cover?"
    critic = Critic()
    drafts, _ = check(critic, double, kind="double")
    assert drafts[0].kept and critic.kinds() != ["rewrite"]
    outside = Critic(answerable={GOOD: "no"})
    drafts, stats = check(outside, GOOD, kind="out_of_scope")
    assert drafts[0].kept and outside.kinds() == ["alone"] and stats.requests == 1


def test_an_input_the_context_checks_reply_leaves_out_is_left_to_its_answer_not_asked_again() -> (
    None
):
    """The expected-output step judges how fully the context answers every input it answers, so
    an input the check with the context leaves out is not asked about again; one the check alone
    leaves out is, as nothing else would judge it."""
    other = "What does the Veltrana X200 warranty cover?"
    critic = Critic(leave_out={("context", other)})
    drafts, stats = check(critic, GOOD, other)
    assert all(d.kept for d in drafts)
    assert sorted(critic.kinds()) == ["alone", "context"] and stats.requests == 2
    assert stats.notes["check_context_left_to_the_answer"] == 1
    alone = Critic(leave_out={("alone", other)})
    drafts, stats = check(alone, GOOD, other)
    assert all(d.kept for d in drafts)
    assert sorted(alone.kinds()) == ["alone", "alone", "context"] and stats.requests == 3


def test_a_failed_check_request_drops_its_inputs_as_a_model_error() -> None:
    drafts, _ = check(Critic(fail="context"), GOOD)
    assert drafts[0].drop_reason == "model_error:server"


def test_the_step_foresees_keeping_the_live_inputs_plain_code_passes() -> None:
    texts = [
        GOOD,
        "What does the passage say about the warranty?",
        "Is it so that the X200 battery has a warranty of ten years from the date?",
        "How long is the X200 warranty? What defects does it cover?",
        "What does the X200 warranty cover?",
    ]
    drafts = [Draft(id=f"d{i}", input=t, context=CONTEXT) for i, t in enumerate(texts)]
    drafts[4].drop("filter", "below_input_quality_threshold", "scored 0.2")
    step = final_check.FinalCheckStep(FunctionModel(Critic()), PromptSet())
    assert [d.id for d in step.foreseen_kept(drafts)] == ["d0"]
    double = final_check.FinalCheckStep(FunctionModel(Critic()), PromptSet(), "double")
    assert [d.id for d in double.foreseen_kept(drafts)] == ["d0", "d3"]
