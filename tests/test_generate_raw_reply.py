"""A reply a stage refuses keeps the model's own text, exactly as the server sent it over HTTP."""

from __future__ import annotations

import pytest

from synth.data import Context
from synth.generate import evolve, expected, inputs
from synth.generate.config import EvolutionConfig, GenerationConfig
from synth.generate.draft import Draft
from synth.llm import make_llm
from synth.llm.base import run_sync

CONTEXT = Context(
    id="ctx_r",
    chunk_ids=["r#0"],
    texts=["Rye bread needs a sour starter."],
    source_files=["rye.txt"],
)
# valid JSON of each schema that the stage refuses (a blank input or answer), spaced and keyed in
# a way re-serialising the parsed reply would not reproduce
BLANK_INPUTS = '{ "inputs" :\n  [ "   " ] }'
BLANK_EVOLVED = '{"evolved":[{"index":1,"input":"\\u0020 "}]}'
BLANK_ANSWER = '{ "outputs": [ { "expected_output": " ", "index": 1 } ] }'


def _llm(server):  # type: ignore[no-untyped-def]
    return make_llm("openai:fake-model", base_url=server.url, api_key="sk-test", max_retries=0)


def test_inputs_refused_reply_keeps_the_servers_text(fake_openai) -> None:  # type: ignore[no-untyped-def]
    fake_openai.reply = BLANK_INPUTS
    out = run_sync(inputs.run(CONTEXT, _llm(fake_openai), GenerationConfig()))
    assert [d.drop_reason for d in out] == ["model_error:invalid_output"]
    assert out[0].drop_raw == BLANK_INPUTS


def test_evolve_refused_reply_keeps_the_servers_text(fake_openai) -> None:  # type: ignore[no-untyped-def]
    fake_openai.reply = BLANK_EVOLVED
    draft = Draft(id="d0", input="Why rye?", context=CONTEXT)
    config = EvolutionConfig(num_evolutions=1)
    out = run_sync(evolve.run([draft], _llm(fake_openai), config, seed=0))
    assert out[0].drop_reason == "model_error:invalid_output"
    assert out[0].drop_raw == BLANK_EVOLVED


def test_batch_refused_reply_keeps_the_servers_text(fake_openai) -> None:  # type: ignore[no-untyped-def]
    fake_openai.reply = BLANK_ANSWER
    draft = Draft(id="d0", input="Why rye?", context=CONTEXT)
    out = run_sync(expected.run([draft], _llm(fake_openai)))
    assert out[0].drop_reason == "model_error:invalid_output"
    assert out[0].drop_raw == BLANK_ANSWER


@pytest.mark.parametrize("text", [BLANK_INPUTS, BLANK_EVOLVED, BLANK_ANSWER])
def test_the_replies_differ_from_their_reserialised_json(text: str) -> None:
    """The tests above would pass on re-serialised JSON if these were already in that form."""
    from pydantic import BaseModel

    models: dict[str, type[BaseModel]] = {
        BLANK_INPUTS: inputs.InputsReply,
        BLANK_EVOLVED: evolve.EvolveReply,
        BLANK_ANSWER: expected.ExpectedReply,
    }
    assert models[text].model_validate_json(text).model_dump_json() != text
