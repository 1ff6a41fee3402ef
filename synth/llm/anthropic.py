"""The Anthropic adapter: the Messages API through the ``anthropic`` SDK (imported when a model is made).

The Messages API requires ``max_tokens``; without one, 4096 is sent (and shows in the identity).
Structured calls use structured outputs (``output_config`` with a JSON schema) on models that have
them, else the schema goes into the prompt. SDK errors become synth errors here.

Prompt caching: Anthropic caches a prompt's prefix only up to a ``cache_control`` breakpoint, at a
tenth of the input price for a read (1.25 times for the write), and a breakpoint covers all that
precedes it, the system message included. A request sets one, after the shared prefix of the user
message that every step of one context starts with (what every input must be, the orientation and
the context, up to the first ``</context>``: untrusted text cannot hold that tag, see
``synth._untrusted``), which then goes as a text block of its own. A
prefix shorter than the model's minimum (1,024 tokens; 2,048 for Haiku) is simply not cached.

Every reply states the key's budgets in `anthropic-ratelimit-*` headers; the adapter asks for the raw
response so they reach the limiter with the completion, as the OpenAI adapter's do.
"""

from __future__ import annotations

import os
import re
from typing import Any

from pydantic import BaseModel

from synth.errors import (
    AuthenticationError,
    ModelConnectionError,
    ModelError,
    ModelTimeoutError,
)
from synth.llm._adapter import (
    SDKModel,
    accepted_arguments,
    import_sdk,
    refuse_reserved,
    refuse_unknown,
)
from synth.llm._http import error_for_status, unreachable
from synth.llm._rate_headers import read_reply
from synth.llm.base import Completion
from synth.llm.structured import schema_instructions, strict_json_schema

DEFAULT_MAX_TOKENS = 4096
RESERVED = ("model", "messages", "max_tokens", "system", "stream")
#: models with structured outputs (JSON schema in ``output_config``)
_STRUCTURED = re.compile(r"^claude-(opus|sonnet|haiku)-(4-[1-9]|[5-9])")
#: what ends the part of a prompt that the steps of one context share (see the module)
SHARED_PREFIX_END = "</context>"
_EPHEMERAL = {"type": "ephemeral"}
_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}


class AnthropicModel(SDKModel):
    """A Claude model through the Anthropic Messages API."""

    provider = "anthropic"
    default_max_tokens = DEFAULT_MAX_TOKENS

    def configure(self) -> None:
        self._create = self._client.messages.create
        # the raw response carries the rate-limit headers every reply sets (the limiter paces
        # to them); a client without it (a stand-in) is asked as it is
        raw = getattr(self._client.messages, "with_raw_response", None)
        self._send = getattr(raw, "create", None) or self._create
        accepted = accepted_arguments(self._create)
        refuse_reserved(self.options, RESERVED)
        refuse_unknown(self.options, accepted, f"{type(self._client).__name__}.messages.create")
        self._sends_timeout = self.timeout is not None and (
            accepted is None or "timeout" in accepted
        )
        takes_format = accepted is None or "output_config" in accepted
        if self.structured == "auto":
            self._mode = (
                "json_schema" if takes_format and _STRUCTURED.match(self.model) else "prompt"
            )
        elif self.structured == "json_schema" and takes_format:
            self._mode = "json_schema"
        else:
            self._mode = "prompt"  # Anthropic has no JSON mode without a schema

    def load_sdk(self) -> None:
        self._sdk = import_sdk("anthropic", "anthropic", "anthropic")

    def new_client(self, base_url: str | None, api_key: str | None) -> Any:
        kwargs: dict[str, Any] = {"timeout": self.timeout, "max_retries": 0}
        if base_url:
            kwargs["base_url"] = base_url
        if api_key:
            kwargs["api_key"] = api_key
        elif not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
            raise AuthenticationError("no Anthropic API key: set ANTHROPIC_API_KEY or pass client=")
        return self._sdk.Anthropic(**kwargs)

    def request_arguments(
        self, prompt: str, system: str | None, schema: type[BaseModel] | None
    ) -> dict[str, Any]:
        """The keyword arguments of ``messages.create`` for one request."""
        strict = (
            strict_json_schema(schema, bounds=False)  # Anthropic refuses numeric and length bounds
            if schema is not None and self._mode == "json_schema"
            else None
        )
        if schema is not None and strict is None:
            prompt = f"{prompt}\n\n{schema_instructions(schema)}"
        kwargs: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": [{"role": "user", "content": cached_blocks(prompt)}],
            **self.options,
        }
        if system:
            kwargs["system"] = system
        if strict is not None:
            config = dict(kwargs.get("output_config") or {})
            config["format"] = {"type": "json_schema", "schema": strict}
            kwargs["output_config"] = config
        if self._sends_timeout:
            kwargs["timeout"] = self.timeout
        return kwargs

    async def send_request(
        self, prompt: str, system: str | None, schema: type[BaseModel] | None
    ) -> Completion:
        response = await self.call(self._send, **self.request_arguments(prompt, system, schema))
        return read_reply(response, self.completion_of)

    async def call(self, fn: Any, **kwargs: Any) -> Any:
        """Call an SDK method, its errors translated to synth's (the key hidden)."""
        sdk = self._sdk
        try:
            return await super().call(fn, **kwargs)
        except sdk.APITimeoutError as exc:
            self.fail(ModelTimeoutError(f"{self.model}: the request timed out"), exc)
        except sdk.APIConnectionError as exc:
            self.fail(
                ModelConnectionError(
                    f"{self.model}: connection failed: {exc}", unreachable=unreachable(exc)
                ),
                exc,
            )
        except sdk.APIStatusError as exc:
            headers = getattr(exc.response, "headers", None)
            self.fail(error_for_status(exc.status_code, f"{self.model}: {exc}", headers), exc)
        except sdk.APIError as exc:
            self.fail(ModelError(f"{self.model}: {type(exc).__name__}: {exc}"), exc)

    def completion_of(self, message: Any) -> Completion:
        """The Completion of a Messages API reply (also a Message Batches result's)."""
        text = "".join(
            getattr(block, "text", "")
            for block in message.content
            if getattr(block, "type", "") == "text"
        )
        usage = getattr(message, "usage", None)
        raw = getattr(message, "stop_reason", None)
        fresh = getattr(usage, "input_tokens", None)
        # Anthropic's input_tokens leaves out the tokens read from and written to the cache
        read = getattr(usage, "cache_read_input_tokens", None) or 0
        written = getattr(usage, "cache_creation_input_tokens", None) or 0
        return Completion(
            text=text,
            model=getattr(message, "model", None) or self.model,
            input_tokens=None if fresh is None else fresh + read + written,
            output_tokens=getattr(usage, "output_tokens", None),
            cached_input_tokens=read,
            cache_write_tokens=written,
            finish_reason=_FINISH.get(raw or "", raw),
        )


def cached_blocks(prompt: str) -> str | list[dict[str, Any]]:
    """The user message's content: its shared prefix (through the first ``</context>``) as a text
    block with a cache breakpoint, then the rest; the prompt as it is when it has none."""
    end = prompt.find(SHARED_PREFIX_END)
    if end < 0:
        return prompt
    end += len(SHARED_PREFIX_END)
    blocks: list[dict[str, Any]] = [
        {"type": "text", "text": prompt[:end], "cache_control": _EPHEMERAL}
    ]
    if prompt[end:].strip():
        blocks.append({"type": "text", "text": prompt[end:]})
    return blocks


__all__ = ["AnthropicModel", "cached_blocks"]
