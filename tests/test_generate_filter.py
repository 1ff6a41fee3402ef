"""The input filter: batched scoring, rewrite with feedback, keep the best version, drop with reason."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest

from synth.data import Context
from synth.errors import OutputParseError, ServerError
from synth.generate import filter as input_filter
from synth.generate.config import FiltrationConfig
from synth.generate.draft import Draft
from synth.llm.base import FunctionModel, run_sync
from synth.stage.stats import StageStats

CONTEXT = Context(
    id="ctx_b",
    chunk_ids=["b#0"],
    texts=["Bread needs yeast, flour and water."],
    source_files=["bread.txt"],
)
# one numbered input (filter, expected) or item (rewrite: an <input> and its <feedback>)
ITEM = re.compile(r'<(input|item) index="(\d+)">\n(.*?)\n</\1>', re.DOTALL)
PAIR = re.compile(r"<input>\n(.*?)\n</input>\n<feedback>\n(.*?)\n</feedback>", re.DOTALL)


def items_of(prompt: str) -> list[tuple[str, str]]:
    """``(index, text)`` of every numbered input or item of a prompt."""
    return [(index, text) for _, index, text in ITEM.findall(prompt)]


class Critic:
    """Scores inputs from a table and rewrites them along a chain; records every request."""

    def __init__(
        self,
        scores: dict[str, float],
        rewrites: dict[str, str],
        fail_rewrite: bool = False,
        inline: bool = False,
    ):
        self.scores = scores
        self.rewrites = rewrites
        self.fail_rewrite = fail_rewrite
        self.inline = inline  # propose the rewrite inside the scoring reply
        self.calls: list[str] = []

    def __call__(self, prompt: str, system: str | None) -> str:
        items = items_of(prompt)
        if "You review" in prompt:
            self.calls.append("score")
            verdicts = []
            for i, t in items:
                verdict = {"index": int(i), "score": self.scores[t], "feedback": f"fix {t}"}
                if self.inline and self.scores[t] < 0.5:
                    verdict["rewrite"] = self.rewrites[t]
                verdicts.append(verdict)
            return json.dumps({"scores": verdicts})
        assert "You improve" in prompt
        self.calls.append("rewrite")
        if self.fail_rewrite:
            raise ServerError("503")
        out = []
        for i, block in items:
            text, feedback = PAIR.findall(block)[0]
            assert feedback == f"fix {text}"
            out.append({"index": int(i), "input": self.rewrites[text]})
        return json.dumps({"inputs": out})


def drafts(*texts: str) -> list[Draft]:
    return [Draft(id=f"d{i}", input=t, context=CONTEXT) for i, t in enumerate(texts)]


def test_prompts_and_parse() -> None:
    prompt = input_filter.build_prompt(["What is in bread?", "Why?"], CONTEXT)
    assert items_of(prompt) == [("1", "What is in bread?"), ("2", "Why?")]
    assert "self-containment" in prompt and "Bread needs yeast" in prompt
    rewrite = input_filter.build_rewrite_prompt([("Why?", "say what about")], CONTEXT)
    assert PAIR.findall(rewrite) == [("Why?", "say what about")]
    assert '<items>\n<item index="1">\n<input>\nWhy?' in rewrite
    scores = input_filter.parse(
        json.dumps({"scores": [{"index": 1, "score": 0.25, "feedback": "vague"}]}), 1
    )
    assert scores[0].score == 0.25 and scores[0].feedback == "vague"


@pytest.mark.parametrize(
    "text",
    [
        json.dumps({"scores": [{"index": 1, "score": 2}]}),
        json.dumps({"scores": [{"index": 3, "score": 0.5}, {"index": 4, "score": 0.5}]}),
        json.dumps({"scores": [{"index": 1, "score": 0.5}, {"index": 1, "score": 0.6}]}),
        json.dumps({"scores": []}),
        "score: 0.9",
    ],
)
def test_parse_malformed(text: str) -> None:
    """Nothing matches item 1 (out of range, differing duplicates, no entry, no JSON)."""
    with pytest.raises(OutputParseError) as info:
        input_filter.parse(text, 1)
    assert info.value.raw == text


def test_parse_keeps_what_the_batch_rules_match() -> None:
    """parse applies the pipeline's matching rules: a consistent shift matches by order."""
    text = json.dumps({"scores": [{"index": 0, "score": 0.5}, {"index": 1, "score": 0.7}]})
    assert [s.score for s in input_filter.parse(text, 2)] == [0.5, 0.7]


def test_a_rewrite_is_read_stripped_from_the_critics_own_reply() -> None:
    critic = Critic({"Why?": 0.1, "Better?": 0.9}, {"Why?": " Better? "})
    out = run_sync(input_filter.run(drafts("Why?"), FunctionModel(critic), FiltrationConfig()))
    assert out[0].kept and out[0].input == "Better?"
    assert critic.calls == ["score", "rewrite", "score"]


def test_a_blank_rewrite_is_asked_again_then_drops_the_draft_with_the_raw_reply() -> None:
    critic = Critic({"Why?": 0.1}, {"Why?": "  "})
    out = run_sync(input_filter.run(drafts("Why?"), FunctionModel(critic), FiltrationConfig()))
    assert critic.calls == ["score", "rewrite", "rewrite", "rewrite"]  # max_reasks 2
    assert out[0].drop_reason == "model_error:invalid_output"
    assert "the rewritten input is blank" in (out[0].drop_detail or "")
    assert out[0].drop_raw == json.dumps({"inputs": [{"index": 1, "input": "  "}]})


def test_passing_inputs_cost_one_request_per_context() -> None:
    critic = Critic({"What is in bread?": 0.9, "What does yeast do in bread?": 0.8}, {})
    stats = StageStats(stage="filter")
    out = run_sync(
        input_filter.run(
            drafts("What is in bread?", "What does yeast do in bread?"),
            FunctionModel(critic),
            FiltrationConfig(),
            stats=stats,
        )
    )
    assert critic.calls == ["score"] and stats.requests == 1
    assert [d.input_quality for d in out] == [0.9, 0.8] and all(d.kept for d in out)
    assert (stats.items_in, stats.items_out) == (2, 2)


def test_rewrite_loop_only_rewrites_failing_inputs_until_they_pass() -> None:
    critic = Critic(
        {
            "Good question about flour?": 0.9,
            "Why?": 0.1,
            "Why is it?": 0.3,
            "Why does bread need yeast?": 0.8,
        },
        {"Why?": "Why is it?", "Why is it?": "Why does bread need yeast?"},
    )
    stats = StageStats(stage="filter")
    out = run_sync(
        input_filter.run(
            drafts("Good question about flour?", "Why?"),
            FunctionModel(critic),
            FiltrationConfig(),
            stats=stats,
        )
    )
    assert critic.calls == ["score", "rewrite", "score", "rewrite", "score"]
    assert out[0].input == "Good question about flour?" and out[0].history == []
    assert (
        out[1].input == "Why does bread need yeast?" and out[1].input_quality == 0.8 and out[1].kept
    )
    assert [h["input"] for h in out[1].history] == ["Why?", "Why is it?"]
    assert stats.notes["rewritten"] == 2 and stats.requests == 5


def test_rewrites_proposed_with_the_score_save_the_rewrite_request() -> None:
    critic = Critic(
        {
            "Good question about flour?": 0.9,
            "Why?": 0.1,
            "Why is it?": 0.3,
            "Why does bread need yeast?": 0.8,
        },
        {"Why?": "Why is it?", "Why is it?": "Why does bread need yeast?"},
        inline=True,
    )
    stats = StageStats(stage="filter")
    out = run_sync(
        input_filter.run(
            drafts("Good question about flour?", "Why?"),
            FunctionModel(critic),
            FiltrationConfig(),
            stats=stats,
        )
    )
    assert critic.calls == ["score", "score", "score"] and stats.requests == 3
    assert (
        out[1].input == "Why does bread need yeast?" and out[1].input_quality == 0.8 and out[1].kept
    )


def test_parse_keeps_an_inline_rewrite() -> None:
    text = json.dumps(
        {
            "scores": [
                {"index": 1, "score": 0.2, "feedback": "vague", "rewrite": " Why does dough rise? "}
            ]
        }
    )
    assert input_filter.parse(text, 1)[0].rewrite == "Why does dough rise?"


def test_never_passing_keeps_best_version_and_drops_with_reason() -> None:
    critic = Critic(
        {"Why?": 0.2, "Why so?": 0.45, "Why so, then?": 0.1, "Why so, then, really?": 0.3},
        {"Why?": "Why so?", "Why so?": "Why so, then?", "Why so, then?": "Why so, then, really?"},
    )
    stats = StageStats(stage="filter")
    out = run_sync(
        input_filter.run(
            drafts("Why?"),
            FunctionModel(critic),
            FiltrationConfig(max_quality_retries=3),
            stats=stats,
        )
    )
    draft = out[0]
    assert (
        not draft.kept
        and draft.drop_reason == "below_input_quality_threshold"
        and draft.dropped_at == "filter"
    )
    assert (
        draft.input == "Why so?" and draft.input_quality == 0.45 and draft.feedback == "fix Why so?"
    )
    assert critic.calls.count("rewrite") == 3
    assert stats.dropped == {"below_input_quality_threshold": 1} and stats.items_out == 0


def test_zero_retries_drops_at_once() -> None:
    critic = Critic({"Why?": 0.2}, {})
    out = run_sync(
        input_filter.run(
            drafts("Why?"), FunctionModel(critic), FiltrationConfig(max_quality_retries=0)
        )
    )
    assert critic.calls == ["score"] and out[0].drop_reason == "below_input_quality_threshold"


def test_model_failure_while_scoring_drops_the_batch() -> None:
    def broken(prompt: str, system: str | None) -> str:
        raise ServerError("500")

    stats = StageStats(stage="filter")
    out = run_sync(
        input_filter.run(drafts("a?", "b?"), FunctionModel(broken), FiltrationConfig(), stats=stats)
    )
    assert [d.drop_reason for d in out] == ["model_error:server"] * 2
    assert stats.dropped == {"model_error:server": 2}


def test_model_failure_while_rewriting_keeps_passing_inputs() -> None:
    critic = Critic({"Fine question about dough?": 0.9, "Why?": 0.1}, {}, fail_rewrite=True)
    out = run_sync(
        input_filter.run(
            drafts("Fine question about dough?", "Why?"), FunctionModel(critic), FiltrationConfig()
        )
    )
    assert out[0].kept and out[1].drop_reason == "model_error:server"


def test_already_dropped_drafts_pass_through_uncounted() -> None:
    critic = Critic({"Fine?": 0.9}, {})
    items = drafts("Fine?", "gone")
    items[1].drop("inputs", "model_error:server")
    stats = StageStats(stage="filter")
    out = run_sync(input_filter.run(items, FunctionModel(critic), FiltrationConfig(), stats=stats))
    assert len(out) == 2 and out[1].dropped_at == "inputs" and stats.items_in == 1


def test_a_score_at_the_threshold_passes_and_just_below_it_is_rewritten() -> None:
    critic = Critic(
        {"What is in rye bread?": 0.5, "Rye?": 0.49, "What grain is rye bread made of?": 0.7},
        {"Rye?": "What grain is rye bread made of?"},
    )
    out = run_sync(
        input_filter.run(
            drafts("What is in rye bread?", "Rye?"), FunctionModel(critic), FiltrationConfig()
        )
    )
    assert critic.calls == ["score", "rewrite", "score"]  # only the 0.49 one was rewritten
    assert out[0].input == "What is in rye bread?" and out[0].input_quality == 0.5
    assert out[0].kept and out[0].history == []
    assert out[1].input == "What grain is rye bread made of?" and out[1].input_quality == 0.7


# ---- what the gaps mutmut found pin down ---------------------------------------------------------


class Sent(FunctionModel):
    """The critic as a model that records each request's prompt and label and hands the critic
    the prompt without the custom templates' marker."""

    def __init__(self, critic: Callable[[str, str | None], str]) -> None:
        super().__init__(lambda prompt, system: critic(prompt.removeprefix(MARK), system))
        self.sent: list[tuple[str, str | None]] = []

    async def arequest(self, prompt, *, system=None, schema=None, label=None):  # type: ignore[no-untyped-def]
        self.sent.append((prompt, label))
        return await super().arequest(prompt, system=system, schema=schema, label=label)


MARK = "Custom. "


def scores_06(prompt: str, system: str | None) -> str:
    """Scores every input 0.6, whatever the threshold."""
    return json.dumps({"scores": [{"index": int(i), "score": 0.6} for i, _ in items_of(prompt)]})


def _custom_prompts():  # type: ignore[no-untyped-def]
    from synth.stage.templates import PromptSet, default_prompts

    default = default_prompts()
    texts = {name: MARK + default.text(name) for name in ("filter", "rewrite")}
    texts["filter"] = MARK + "(rewrite below $threshold) " + default.text("filter")
    return PromptSet(texts)


def test_the_prompts_count_their_items_and_keep_the_threshold_from_the_critic() -> None:
    prompt = input_filter.build_prompt(["What is in bread?", "Why?"], CONTEXT)
    assert "Inputs (2 in all):" in prompt and "0.5" not in prompt  # the threshold is not shown
    rewrite = input_filter.build_rewrite_prompt([("Why?", "say what about")], CONTEXT)
    assert "Inputs with feedback (1 in all):" in rewrite


def test_check_reply_says_what_it_lacks_and_keeps_the_replys_json() -> None:
    reply = input_filter.FilterReply.model_validate({"scores": [{"index": 1, "score": 0.5}]})
    with pytest.raises(OutputParseError) as info:
        input_filter.check_reply(reply, 2)
    assert str(info.value) == "the filter reply covers items [1], expected 1..2"
    assert info.value.raw == reply.model_dump_json()


def test_every_request_uses_the_runs_prompts_context_threshold_and_label() -> None:
    critic = Critic({"Why?": 0.1, "Why does bread rise?": 0.9}, {"Why?": "Why does bread rise?"})
    model = Sent(critic)
    out = run_sync(
        input_filter.run(
            drafts("Why?"),
            model,
            FiltrationConfig(synthetic_input_quality_threshold=0.5),
            prompts=_custom_prompts(),
        )
    )
    assert out[0].kept and critic.calls == ["score", "rewrite", "score"]
    assert [label for _, label in model.sent] == ["filter", "filter_rewrite", "filter"]
    for prompt, _ in model.sent:
        assert prompt.startswith(MARK) and "Bread needs yeast, flour and water." in prompt
    strict = Sent(scores_06)
    config = FiltrationConfig(synthetic_input_quality_threshold=0.7, max_quality_retries=0)
    run_sync(input_filter.run(drafts("Why?"), strict, config, prompts=_custom_prompts()))
    assert "(rewrite below 0.7)" in strict.sent[0][0]  # a template that shows it gets it


def test_the_step_runs_the_filter_with_its_config_and_prompts() -> None:
    from synth.generate.base import Source

    model = Sent(scores_06)
    config = FiltrationConfig(synthetic_input_quality_threshold=0.7, max_quality_retries=0)
    step = input_filter.FilterStep(model, config, _custom_prompts())
    items = drafts("Why?")
    out = run_sync(step.run(items, Source(key="k", context=CONTEXT)))
    assert out == items and out[0].drop_reason == "below_input_quality_threshold"
    assert model.sent[0][0].startswith(MARK) and "(rewrite below 0.7)" in model.sent[0][0]


def test_each_rewrite_is_kept_in_history_with_the_score_feedback_and_round_it_replaced() -> None:
    critic = Critic(
        {"Why?": 0.1, "Why is it?": 0.3, "Why does bread need yeast?": 0.8},
        {"Why?": "Why is it?", "Why is it?": "Why does bread need yeast?"},
    )
    out = run_sync(input_filter.run(drafts("Why?"), FunctionModel(critic), FiltrationConfig()))
    assert out[0].history == [
        {"stage": "filter", "input": "Why?", "score": 0.1, "feedback": "fix Why?", "attempt": 1},
        {
            "stage": "filter",
            "input": "Why is it?",
            "score": 0.3,
            "feedback": "fix Why is it?",
            "attempt": 2,
        },
    ]


def test_a_later_version_scoring_only_as_well_does_not_replace_the_best() -> None:
    critic = Critic({"Why?": 0.2, "Why so?": 0.2}, {"Why?": "Why so?"})
    out = run_sync(
        input_filter.run(
            drafts("Why?"), FunctionModel(critic), FiltrationConfig(max_quality_retries=1)
        )
    )
    assert out[0].input == "Why?" and out[0].feedback == "fix Why?"
    assert out[0].drop_reason == "below_input_quality_threshold"


def test_failures_drop_at_the_filter_with_what_failed() -> None:
    def broken(prompt: str, system: str | None) -> str:
        raise ServerError("500")

    scored = run_sync(input_filter.run(drafts("a?"), FunctionModel(broken), FiltrationConfig()))
    assert (scored[0].dropped_at, scored[0].drop_reason) == ("filter", "model_error:server")
    critic = Critic({"Why?": 0.1}, {}, fail_rewrite=True)
    rewritten = run_sync(
        input_filter.run(drafts("Why?"), FunctionModel(critic), FiltrationConfig())
    )
    assert (rewritten[0].dropped_at, rewritten[0].drop_reason) == ("filter", "model_error:server")
    # the rewrite's rescoring fails: the draft is dropped for that failure, not as below threshold
    rescore = Critic({"Why?": 0.1, "Why so?": 0.9}, {"Why?": "Why so?"})
    calls = iter([True, True, False])

    def then_broken(prompt: str, system: str | None) -> str:
        if next(calls, False):
            return rescore(prompt, system)
        raise ServerError("500")

    out = run_sync(input_filter.run(drafts("Why?"), FunctionModel(then_broken), FiltrationConfig()))
    assert (out[0].dropped_at, out[0].drop_reason) == ("filter", "model_error:server")
    assert out[0].input == "Why?"


def test_unmatched_replies_drop_with_the_reply_and_items_they_lacked() -> None:
    def misnumbered(prompt: str, system: str | None) -> str:
        return json.dumps({"scores": [{"index": 5, "score": 0.9}]})

    out = run_sync(
        input_filter.run(drafts("a?", "b?"), FunctionModel(misnumbered), FiltrationConfig())
    )
    assert out[0].drop_detail == "the filter reply covers items [5], expected 1..2"
    critic = Critic({"Why?": 0.1}, {"Why?": "  "})
    out = run_sync(input_filter.run(drafts("Why?"), FunctionModel(critic), FiltrationConfig()))
    assert out[0].drop_detail == (
        "the rewrite reply covers items [1], expected 1..1; item 1: the rewritten input is blank"
    )


def test_the_filter_prompt_anchors_its_scale_at_both_ends_and_between() -> None:
    """An unanchored 0-to-1 score drifts from model to model: the prompt says what 1.0, a small
    flaw, an unmet criterion and 0.0 are worth (issue 42's calibration), never the threshold."""
    from synth.stage.templates import default_prompts

    prompt = default_prompts().text("filter")
    anchors = re.findall(r"\b([01]\.\d) when\b", prompt)
    assert anchors == ["1.0", "0.8", "0.3", "0.0"]
