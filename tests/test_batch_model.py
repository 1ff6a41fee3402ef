"""The batch layer of a model's chain (synth.llm.batch): which providers have a Batch API, the
custom id of each request (a resumed run asks the same ids), the name usage is priced under, and
the distinct batch layers of a run's models."""

from __future__ import annotations

import pytest
from pydantic import BaseModel
from scripted_batches import FAST, MemoryLog, ScriptedAPI, bounded

from synth.errors import ConfigError
from synth.llm._openai_batch import OpenAIBatchAPI
from synth.llm.base import Completion, FunctionModel
from synth.llm.batch import BatchModel, batch_api, batch_models
from synth.llm.factory import make_llm
from synth.llm.openai import OpenAIModel
from synth.llm.wrapper import WrapperModel

KEY = "sk-batch-model-test-not-a-real-key-0123456789"


@pytest.fixture
def adapter(monkeypatch: pytest.MonkeyPatch) -> OpenAIModel:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return OpenAIModel("fake-model", base_url="http://127.0.0.1:9/v1")


def layer(adapter: OpenAIModel) -> tuple[BatchModel, ScriptedAPI]:
    api = ScriptedAPI()
    return BatchModel(adapter, FAST, api=api), api


def test_an_openai_model_gets_the_openai_batch_api_and_a_function_model_none(
    adapter: OpenAIModel,
) -> None:
    assert isinstance(batch_api(adapter), OpenAIBatchAPI)
    assert isinstance(BatchModel(adapter).api, OpenAIBatchAPI)
    with pytest.raises(ConfigError, match="need an openai: or anthropic: model, not 'function'"):
        batch_api(FunctionModel(lambda prompt, system: "x"))


def test_an_anthropic_model_gets_the_message_batches_api_of_its_own_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("anthropic")
    from synth.llm._anthropic_batch import AnthropicBatchAPI
    from synth.llm.anthropic import AnthropicModel

    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    claude = AnthropicModel("claude-fake", base_url="http://127.0.0.1:9")
    api = batch_api(claude)
    assert isinstance(api, AnthropicBatchAPI)
    assert api.body("p", None, None)["model"] == "claude-fake"


def test_the_batch_layer_is_priced_under_its_models_batch_name(adapter: OpenAIModel) -> None:
    model, _ = layer(adapter)
    assert model.model == "fake-model@batch" and model.provider == "openai"
    assert model.batcher.model == "openai:fake-model"  # the journal's and the report's name
    assert repr(model) == f"BatchModel({adapter!r})"
    assert model.config == FAST and BatchModel(adapter).config.settle == 1.0


def test_a_request_asked_again_gets_a_new_id_and_a_new_run_asks_the_same_ids(
    adapter: OpenAIModel,
) -> None:
    model, api = layer(adapter)

    async def ask_twice() -> list[Completion]:
        first = await model.arequest("p", system="s")
        return [first, await model.arequest("p", system="s"), await model.arequest("q")]

    assert [c.text for c in bounded(ask_twice)] == ["P", "P", "Q"]
    ids = [cid for lines in api.ids() for cid in lines]
    p1, p2, q1 = ids
    assert p1.endswith("-1") and p2.endswith("-2") and q1.endswith("-1")
    assert p1.removesuffix("-1") == p2.removesuffix("-2") != q1.removesuffix("-1")
    assert len(p1) == 40 + 2  # the body's hash, then how many times it was asked
    # a new run (bound again) asks the same requests under the same ids, journaled in its log
    log = MemoryLog()
    model.bind(lambda: log, lambda text: None, {})
    bounded(ask_twice)
    assert [cid for lines in api.ids()[3:] for cid in lines] == ids
    assert [record["custom_ids"] for record in log.records.values()] == [[p1], [p2], [q1]]


class Reply(BaseModel):
    answer: str


def test_the_line_sent_is_the_providers_body_of_the_prompt_under_its_label(
    adapter: OpenAIModel,
) -> None:
    model, api = layer(adapter)
    asked: list[tuple] = []
    body = api.body

    def recorded(prompt: str, system: str | None, schema: object) -> dict:
        asked.append((prompt, system, schema))
        return body(prompt, system, schema)

    api.body = recorded  # type: ignore[method-assign]
    report: dict = {}
    model.bind(MemoryLog, lambda text: None, report)
    reply = bounded(
        lambda: model.arequest("the prompt", system="sys", schema=Reply, label="critic")
    )
    assert reply.text == "THE PROMPT" and asked == [("the prompt", "sys", Reply)]
    assert report["openai:fake-model"]["stages"]["critic"]["requests"] == 1


def test_the_batch_layers_of_a_runs_models_are_listed_once_each(adapter: OpenAIModel) -> None:
    shared = make_llm(BatchModel(adapter, FAST, api=ScriptedAPI()))
    other = make_llm(BatchModel(adapter, FAST, api=ScriptedAPI()))
    plain = make_llm(lambda prompt, system: "x")
    assert isinstance(shared, WrapperModel)
    found = batch_models([shared, plain, shared, other, adapter])
    assert found == [shared.layer(BatchModel), other.layer(BatchModel)]  # type: ignore[attr-defined]
    assert batch_models([plain, adapter]) == []
