"""What a Synthesizer holds: its arguments as given, and, once a run asked, the models it made."""

from __future__ import annotations

import gc
import re
import weakref
from pathlib import Path
from typing import Any

import pytest
from synth_replies import Replies

from synth import ConfigError, FunctionModel, Synthesizer

CONTEXTS = [["Solar panels lose a tenth of their output in winter, the report says."]]


def test_the_constructor_stores_and_makes_nothing() -> None:
    synth = Synthesizer("openai:gpt-4.1-mini", embedder="openai:text-embedding-3-small")
    assert synth.model == "openai:gpt-4.1-mini" and synth.max_concurrent is None
    assert synth.manifest is None and synth.last_run_dir is None
    synth.close()  # nothing was made: nothing to release
    assert not (Path.cwd() / ".synth").exists()  # no cache file, no store, no run directory


def test_a_synthesizer_that_ran_is_freed_as_soon_as_it_is_let_go() -> None:
    """The models it made hold no reference back to it: no collection is needed to free it."""
    synth = Synthesizer(FunctionModel(Replies(), name="replies"), embedder="hash", cache=None)
    assert len(synth.generate_goldens_from_contexts(CONTEXTS, num_goldens=1)) == 1
    gone = weakref.ref(synth)
    gc.disable()
    try:
        del synth
        assert gone() is None
    finally:
        gc.enable()


def test_each_sync_twin_says_what_its_async_method_says() -> None:
    for name in ("docs", "contexts", "scratch", "goldens"):
        twin = getattr(Synthesizer, f"generate_goldens_from_{name}")
        method = getattr(Synthesizer, f"a_generate_goldens_from_{name}")
        assert twin.__name__ == f"generate_goldens_from_{name}"
        assert f":meth:`a_generate_goldens_from_{name}`" in twin.__doc__
        assert method.__doc__.split()[:4] == twin.__doc__.split("\n\n", 1)[1].split()[:4]


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("gpt-4.1-mini", "openai:gpt-4.1-mini"),
        ("claude-haiku-4-5", "anthropic:claude-haiku-4-5"),
        ("gemini-2.5-flash", "gemini:gemini-2.5-flash"),
        ("openai:llama3.1:8b", "openai:llama3.1:8b"),
    ],
)
def test_a_bare_model_name_gets_its_provider_when_named(given: str, kept: str) -> None:
    assert Synthesizer(given, critic_model=given).model == kept
    assert Synthesizer(critic_model=given).critic_model == kept


def test_a_bare_openai_model_name_runs(fake_openai_docs: Any) -> None:
    synth = Synthesizer("gpt-4.1-mini", base_url=fake_openai_docs.url, embedder="hash", cache=None)
    try:
        assert len(synth.generate_goldens_from_contexts(CONTEXTS, num_goldens=1)) == 1
    finally:
        synth.close()
    assert synth.manifest is not None
    assert {r.body["model"] for r in fake_openai_docs.requests} == {"gpt-4.1-mini"}


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("openai", "model 'openai' names a provider but no model"),
        ("opnai:gpt-4.1", "model 'opnai:gpt-4.1': unknown model provider 'opnai'; did you mean"),
        ("antropic", "model 'antropic': unknown model provider 'antropic'; did you mean"),
        ("gpt 4", "model 'gpt 4' is not a model name"),
        ("  ", "a model spec is 'provider:model'"),
        (42, "model is a 'provider:model' spec, an LLM or a callable"),
    ],
)
def test_an_unusable_model_is_refused_when_named(given: Any, says: str) -> None:
    with pytest.raises(ConfigError, match="^" + re.escape(says)):
        Synthesizer(given)
    assert not (Path.cwd() / ".synth").exists()
