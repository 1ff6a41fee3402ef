"""The two models an end-to-end generation test runs against, behind one small interface.

- ``scripted``: :class:`synth_replies.Replies` in process (a :class:`~synth.FunctionModel`), which
  answers synth's own prompts the way the fake server's smart mode does (``synth_replies.reply``);
- ``generic``: :class:`fake_openai.FakeOpenAI` in its generic mode, reached through the real
  ``openai`` SDK over HTTP, which answers every structured request from its JSON schema alone and
  knows nothing of synth's prompts (as any OpenAI-compatible server with structured outputs does).

A test module defines its ``model`` fixture over :data:`MODES` with :func:`open_mode`, builds its
synthesizers with :meth:`ModelMode.synthesizer`, and reads what the model was asked from
:meth:`ModelMode.prompts`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import fake_openai
import pytest
from synth_replies import Replies

from synth import FunctionModel, Synthesizer

MODES = ("scripted", "generic")


class ModelMode:
    """One model (scripted or generic server) and the synthesizers made against it."""

    def __init__(self, mode: str, server: fake_openai.FakeOpenAI | None = None) -> None:
        self.mode = mode
        self.server = server
        self.replies = Replies()
        self._made: list[Synthesizer] = []

    @property
    def provider(self) -> str:
        """The provider name goldens record for the generator."""
        return "function" if self.server is None else "openai"

    def synthesizer(self, replies: Replies | None = None, **kw: Any) -> Synthesizer:
        """A Synthesizer on this model (the hash embedder unless told); closed at teardown.

        ``replies`` (scripted mode only) replaces the default :class:`Replies`, e.g. with delays.
        """
        kw.setdefault("embedder", "hash")
        if self.server is None:
            if replies is not None:
                self.replies = replies
            synth = Synthesizer(FunctionModel(self.replies, name="replies"), **kw)
        else:
            assert replies is None, "the generic server takes no scripted replies"
            # it never reads the prompt, so it cannot quote the context: its answers are kept
            # ungrounded (their grounding is still recorded); test_pipeline_trust drops them
            kw.setdefault("grounding_threshold", 0.0)
            synth = Synthesizer("openai:fake-model", base_url=self.server.url, **kw)
        self._made.append(synth)
        return synth

    def prompts(self) -> list[str]:
        """The user prompts of every chat request the model received, in order."""
        if self.server is None:
            return list(self.replies.prompts)
        return [
            "\n".join(
                str(m.get("content", ""))
                for m in r.body.get("messages") or []
                if m.get("role") != "system"
            )
            for r in self.server.requests_to("chat")
        ]

    def close(self) -> None:
        for synth in self._made:
            synth.close()


def open_mode(mode: str, monkeypatch: pytest.MonkeyPatch, **server: Any) -> Iterator[ModelMode]:
    """Yield a :class:`ModelMode`; the generic one starts its server (``server`` kwargs) first."""
    if mode == "scripted":
        made = ModelMode(mode)
        try:
            yield made
        finally:
            made.close()
        return
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-generic-not-a-real-key")
    with fake_openai.FakeOpenAI(mode="generic", **server) as fake:
        made = ModelMode(mode, fake)
        try:
            yield made
        finally:
            made.close()


#: ``with model_mode("generic", monkeypatch, latency=0.01) as model:`` for a test that needs more
#: than one server, or one set up its own way
model_mode = contextlib.contextmanager(open_mode)
