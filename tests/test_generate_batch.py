"""Batch replies: which entries match which items (each rule), per-n schemas that parsing does not
enforce, and the salvage loop (one smaller re-ask, whole re-asks bounded by max_reasks, counted, and
refused replies evicted from the cache)."""

from __future__ import annotations

import json
import re

import pytest

from synth.contexts.critic import CriticReply
from synth.errors import OutputParseError
from synth.generate.expected import ExpectedReply
from synth.generate.inputs import InputsReply
from synth.llm.base import FunctionModel, run_sync
from synth.llm.factory import wrap_llm
from synth.llm.structured import json_schema, parse_verdict, strict_json_schema
from synth.stage.batch import (
    BatchRequest,
    ask_batch,
    batch_schema,
    describe,
    match_entries,
)
from synth.stage.stats import StageStats

# ---- matching: one test per rule ---------------------------------------------------------------


def test_in_range_unique_indices_match_their_items() -> None:
    match = match_entries([2, 1, 3], 3)
    assert match.found == {1: 1, 2: 0, 3: 2} and match.missing == () and not match.by_order


def test_a_missing_entry_leaves_only_its_item_unmatched() -> None:
    match = match_entries([1, 3], 3)
    assert match.found == {1: 0, 3: 1} and match.missing == (2,)


def test_a_consistent_shift_with_exactly_n_entries_matches_by_order() -> None:
    assert match_entries([0, 1, 2], 3).found == {1: 0, 2: 1, 3: 2}
    assert match_entries([0, 1, 2], 3).by_order
    assert match_entries([2, 3, 4], 3).found == {1: 0, 2: 1, 3: 2}
    # one entry short: no longer a shift, so only what is in range matches
    assert match_entries([0, 1], 3).found == {1: 1}
    # not consecutive in reply order: no shift either
    assert match_entries([1, 0, 2], 3).found == {1: 0, 2: 2}


def test_a_duplicated_index_matches_nothing_unless_the_copies_are_identical() -> None:
    same = [{"i": 1, "t": "a"}, {"i": 2, "t": "b"}, {"i": 2, "t": "b"}]
    assert match_entries([1, 2, 2], 2, same).found == {1: 0, 2: 1}
    differ = [{"i": 1, "t": "a"}, {"i": 2, "t": "b"}, {"i": 2, "t": "c"}]
    match = match_entries([1, 2, 2], 2, differ)
    assert match.found == {1: 0} and match.missing == (2,)
    # without the entries to compare, a duplicate is ambiguous
    assert match_entries([1, 1], 2).found == {}


def test_out_of_range_extras_are_ignored() -> None:
    match = match_entries([0, 1, 2, 9], 2)
    assert match.found == {1: 1, 2: 2} and match.missing == ()


def test_all_the_same_number_matches_at_most_that_item() -> None:
    assert match_entries([1, 1, 1], 3).found == {}
    assert match_entries([4, 4, 4], 3).found == {}
    assert match_entries([7], 1).found == {1: 0}  # one entry for one item: a shift


def test_the_detail_names_what_was_given_and_what_was_expected() -> None:
    assert describe("critic scored passages", [2, 3], 2) == (
        "critic scored passages [2, 3], expected 1..2"
    )


# ---- schemas -------------------------------------------------------------------------------------


def test_the_schema_for_n_items_bounds_the_array_and_the_index_but_parsing_does_not() -> None:
    schema = batch_schema(CriticReply, 3)
    assert schema is batch_schema(CriticReply, 3)  # made once
    assert schema.__name__ == "CriticReply"
    sent = json_schema(schema)
    array = sent["properties"]["scores"]
    assert array["minItems"] == 3 and array["maxItems"] == 3
    item = sent["$defs"][array["items"]["$ref"].split("/")[-1]]
    assert item["properties"]["index"]["minimum"] == 1
    assert item["properties"]["index"]["maximum"] == 3
    # a partial, misnumbered reply still parses, so it can be salvaged
    entry = {
        "reason": "",
        "prose": True,
        "disqualifier": "none",
        "self_contained": 2,
        "informative": 2,
        "coherent": 2,
    }
    reply = parse_verdict(json.dumps({"scores": [{**entry, "index": 9}]}), schema)
    assert [s.index for s in reply.scores] == [9]
    inputs = json_schema(batch_schema(InputsReply, 4))["properties"]["inputs"]
    assert inputs["minItems"] == 4 and inputs["maxItems"] == 4


def test_strict_schemas_keep_bounds_for_openai_and_drop_those_anthropic_refuses() -> None:
    schema = batch_schema(CriticReply, 3)
    openai = json.dumps(strict_json_schema(schema))
    assert '"maxItems": 3' in openai and '"maximum": 3' in openai
    anthropic = strict_json_schema(schema, bounds=False)
    text = json.dumps(anthropic)
    for keyword in ("maximum", "minimum", "maxItems"):
        assert f'"{keyword}"' not in text, keyword
    assert anthropic is not None
    assert anthropic["properties"]["scores"]["minItems"] == 1  # only 0 or 1 is accepted


# ---- the salvage loop ----------------------------------------------------------------------------

ITEM = re.compile(r"^\[(\d+)\] (.*)$", re.MULTILINE)


def _prompt(items: list[str]):
    def build(positions: list[int]) -> str:
        lines = [f"[{k}] {items[i]}" for k, i in enumerate(positions, start=1)]
        return "Answer each:\n" + "\n".join(lines)

    return build


def _value(entry) -> str:
    text = entry.expected_output.strip()
    if not text:
        raise OutputParseError("the answer is blank")
    return text


class Script:
    """Answers a numbered prompt, spoiling the replies named in ``plan`` (one per request)."""

    def __init__(self, plan: list[str | None]) -> None:
        self.plan = list(plan)
        self.prompts: list[str] = []

    def __call__(self, prompt: str, system: str | None) -> str:
        self.prompts.append(prompt)
        items = ITEM.findall(prompt)
        outputs = [{"index": int(i), "expected_output": f"answer to {t}"} for i, t in items]
        how = self.plan.pop(0) if self.plan else None
        if how == "missing":
            outputs = outputs[1:]
        elif how == "unnumbered":
            outputs = [{**o, "index": 1} for o in outputs]
        elif how == "blank":
            outputs[-1]["expected_output"] = " "
        return json.dumps({"outputs": outputs})


def _ask(llm, items: list[str], stats: StageStats | None = None):
    request = BatchRequest(
        "expected", ExpectedReply, "the reply answers items", _prompt(items), _value
    )
    return run_sync(ask_batch(llm, request, len(items), stats))


def test_a_missing_entry_is_asked_again_alone_in_one_smaller_request() -> None:
    script = Script(["missing"])
    llm = wrap_llm(FunctionModel(script), cache={})
    stats = StageStats(stage="expected")
    out = _ask(llm, ["a", "b", "c"], stats)
    assert out == ["answer to a", "answer to b", "answer to c"]
    assert len(script.prompts) == 2
    assert ITEM.findall(script.prompts[1]) == [("1", "a")]  # only the missing one, renumbered
    assert llm.usage.total.retries == {"partial": 1}
    assert stats.requests == 2 and stats.notes["reask_partial"] == 1


def test_a_step_whose_items_may_stay_unanswered_is_not_asked_again_for_them() -> None:
    request = BatchRequest(
        "evolve", ExpectedReply, "the reply answers items", _prompt(["a", "b", "c"]), _value,
        unanswered=lambda: "as it was",
    )  # fmt: skip

    def ask(how: str) -> tuple[list, Script, StageStats]:
        script = Script([how])
        stats = StageStats(stage="evolve")
        llm = wrap_llm(FunctionModel(script), cache={})
        out = run_sync(ask_batch(llm, request, 3, stats))
        assert llm.usage.total.retries == ({"unmatched": 1} if how == "unnumbered" else {})
        return out, script, stats

    out, script, stats = ask("missing")  # the first left out
    assert out == ["as it was", "answer to b", "answer to c"]
    assert len(script.prompts) == 1 and stats.requests == 1
    out, script, _ = ask("blank")  # the last given blank: the same
    assert out == ["answer to a", "answer to b", "as it was"] and len(script.prompts) == 1
    # a reply that answers none of them is still asked again, as a malformed one is
    out, script, _ = ask("unnumbered")
    assert out == ["answer to a", "answer to b", "answer to c"] and len(script.prompts) == 2


def test_a_blank_entry_is_asked_again_like_a_missing_one() -> None:
    script = Script(["blank"])
    out = _ask(wrap_llm(FunctionModel(script), cache={}), ["a", "b"])
    assert out == ["answer to a", "answer to b"]
    assert ITEM.findall(script.prompts[1]) == [("1", "b")]


def test_an_unmatched_reply_is_asked_again_whole_up_to_max_reasks_then_fails_with_detail() -> None:
    cache: dict[str, str] = {}
    script = Script(["unnumbered"] * 10)
    llm = wrap_llm(FunctionModel(script), cache=cache, max_reasks=2)
    out = _ask(llm, ["a", "b"])
    assert len(script.prompts) == 3 and len(set(script.prompts)) == 1  # the same request, asked 3x
    assert all(isinstance(o, OutputParseError) for o in out)
    error = out[0]
    assert isinstance(error, OutputParseError)
    assert str(error) == "the reply answers items [1, 1], expected 1..2"
    assert '"index": 1' in error.raw
    assert llm.usage.total.retries == {"unmatched": 2}
    assert cache == {}  # nothing unusable is kept for a rerun to replay


def test_an_unmatched_reply_then_a_good_one_delivers_everything() -> None:
    script = Script(["unnumbered", None])
    llm = wrap_llm(FunctionModel(script), cache={})
    assert _ask(llm, ["a", "b"]) == ["answer to a", "answer to b"]
    assert llm.usage.total.retries == {"unmatched": 1}


def test_no_reask_budget_keeps_what_matched_and_fails_only_the_rest() -> None:
    script = Script(["missing"])
    out = _ask(wrap_llm(FunctionModel(script), cache={}, max_reasks=0), ["a", "b", "c"])
    assert isinstance(out[0], OutputParseError) and out[1:] == ["answer to b", "answer to c"]
    assert "[2, 3], expected 1..3" in str(out[0])


@pytest.mark.parametrize("how", ["missing", "unnumbered"])
def test_a_rerun_on_the_same_cache_never_replays_an_unusable_reply(how: str) -> None:
    cache: dict[str, str] = {}
    first = Script([how] * 10)
    out = _ask(wrap_llm(FunctionModel(first), cache=cache, max_reasks=0), ["a", "b"])
    assert any(isinstance(o, OutputParseError) for o in out)
    fixed = Script([])
    again = _ask(wrap_llm(FunctionModel(fixed), cache=cache, max_reasks=0), ["a", "b"])
    assert again == ["answer to a", "answer to b"]
    assert len(fixed.prompts) == 1  # the batch given up on is asked again whole
    assert len(ITEM.findall(fixed.prompts[0])) == 2


def test_a_partial_reply_that_led_to_a_reask_is_replayed_and_only_the_reask_asked_again() -> None:
    cache: dict[str, str] = {}
    first = Script(["missing", "missing"])  # the re-ask for the one missing item comes back empty
    out = _ask(wrap_llm(FunctionModel(first), cache=cache, max_reasks=1), ["a", "b", "c"])
    assert isinstance(out[0], OutputParseError) and out[1:] == ["answer to b", "answer to c"]
    fixed = Script([])
    again = _ask(wrap_llm(FunctionModel(fixed), cache=cache, max_reasks=1), ["a", "b", "c"])
    assert again == ["answer to a", "answer to b", "answer to c"]
    assert [ITEM.findall(p) for p in fixed.prompts] == [[("1", "a")]]


def test_a_reply_its_step_refuses_is_asked_again_and_counted_as_refused() -> None:
    """ask_checked: a reply that parses but fails the step's check (a blank input) is evicted and
    asked again, counted as ``refused`` (not as a malformed reply)."""
    from synth.stage.call import ask_checked

    replies = iter(['{"inputs": [" "]}', '{"inputs": ["What is it?"]}'])
    cache: dict[str, str] = {}
    llm = wrap_llm(FunctionModel(lambda prompt, system: next(replies)), cache=cache)

    def check(reply: InputsReply) -> list[str]:
        texts = [t.strip() for t in reply.inputs]
        if not all(texts):
            raise OutputParseError("the reply holds a blank input")
        return texts

    def parse(text: str) -> list[str]:
        return check(parse_verdict(text, InputsReply))

    out = run_sync(ask_checked(llm, "Ask one question.", InputsReply, parse, "inputs", None))
    assert out == ["What is it?"]
    assert llm.usage.total.retries == {"refused": 1}
    assert len(cache) == 1 and "What is it?" in next(iter(cache.values()))


# ---- what the gaps mutmut found pin down ---------------------------------------------------------


def test_a_schema_without_exactly_one_list_field_is_refused_by_name() -> None:
    from pydantic import BaseModel

    from synth.stage.batch import list_field

    class TwoLists(BaseModel):
        a: list[int]
        b: list[str]

    with pytest.raises(TypeError) as info:
        list_field(TwoLists)
    assert str(info.value) == "TwoLists must have exactly one list field, has ['a', 'b']"


def test_no_items_match_nothing_and_a_shift_leaves_nothing_missing() -> None:
    empty = match_entries([], 0)
    assert (empty.found, empty.missing, empty.by_order) == ({}, (), False)
    shifted = match_entries([0, 1], 2)
    assert (shifted.found, shifted.missing, shifted.by_order) == ({1: 0, 2: 1}, (), True)


def test_read_batch_matches_identical_copies_and_says_how_many_items_it_read_for() -> None:
    from synth.stage.batch import read_batch

    entry = {"index": 1, "expected_output": "one"}
    text = json.dumps({"outputs": [entry, entry, {"index": 2, "expected_output": " "}]})
    got = read_batch(text, ExpectedReply, 2, _value)
    assert (got.n, got.indices, got.values, got.missing) == (2, [1, 1, 2], {1: "one"}, ())
    assert got.problems == ["item 2: the answer is blank"]


def test_values_of_says_what_is_missing_or_unusable_and_keeps_the_replys_json() -> None:
    from synth.stage.batch import values_of

    short = ExpectedReply.model_validate({"outputs": [{"index": 1, "expected_output": "a"}]})
    with pytest.raises(OutputParseError) as info:
        values_of(short, 2, "the reply answers items", _value)
    assert str(info.value) == "the reply answers items [1], expected 1..2"
    assert info.value.raw == short.model_dump_json()
    blank = ExpectedReply.model_validate({"outputs": [{"index": 1, "expected_output": " "}]})
    with pytest.raises(OutputParseError) as info:
        values_of(blank, 1, "the reply answers items", _value, raw="as sent")
    assert str(info.value) == "item 1: the answer is blank"
    assert info.value.raw == "as sent"


class Sent(FunctionModel):
    """A function model that records the label and the schema of every request."""

    def __init__(self, fn) -> None:  # type: ignore[no-untyped-def]
        super().__init__(fn)
        self.sent: list[tuple[str | None, dict]] = []

    async def arequest(self, prompt, *, system=None, schema=None, label=None):  # type: ignore[no-untyped-def]
        self.sent.append((label, json_schema(schema)))
        return await super().arequest(prompt, system=system, schema=schema, label=label)


def test_each_request_is_sent_under_the_steps_label_with_a_schema_for_its_own_items() -> None:
    model = Sent(Script(["missing"]))
    llm = wrap_llm(model, cache={})
    assert _ask(llm, ["a", "b", "c"]) == ["answer to a", "answer to b", "answer to c"]
    assert [label for label, _ in model.sent] == ["expected", "expected"]
    sizes = [schema["properties"]["outputs"]["maxItems"] for _, schema in model.sent]
    assert sizes == [3, 1]
    assert [schema["properties"]["outputs"]["minItems"] for _, schema in model.sent] == [3, 1]
    # the re-ask is counted under the step's label
    assert llm.usage.by_label()["expected"].retries == {"partial": 1}


def test_a_batch_given_up_on_lists_every_problem_after_the_numbers() -> None:
    out = _ask(wrap_llm(FunctionModel(Script(["blank"])), cache={}, max_reasks=0), ["a", "b"])
    assert out[0] == "answer to a"
    error = out[1]
    assert isinstance(error, OutputParseError)
    assert str(error) == (
        "the reply answers items [1, 2], expected 1..2; item 2: the answer is blank"
    )
