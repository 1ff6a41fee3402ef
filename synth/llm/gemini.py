"""The Gemini adapter: ``generate_content`` through the ``google-genai`` SDK (imported when a model is made).

``max_tokens`` is sent as ``max_output_tokens``; ``options`` are ``GenerateContentConfig`` fields.
Structured calls use ``response_mime_type`` ``application/json`` with ``response_json_schema``, or
JSON mode with the schema in the prompt (``structured="json_object"``). SDK errors become synth
errors here.
"""

from __future__ import annotations

import copy
import os
from typing import Any

from pydantic import BaseModel

from synth.errors import (
    AuthenticationError,
    ModelConnectionError,
    ModelError,
    ModelTimeoutError,
)
from synth.llm._adapter import SDKModel, import_sdk, refuse_reserved, refuse_unknown
from synth.llm._http import error_for_status, unreachable
from synth.llm.base import Completion
from synth.llm.structured import json_schema, schema_instructions

RESERVED = ("system_instruction", "max_output_tokens", "http_options")
_FILTERED = {
    "SAFETY",
    "RECITATION",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "LANGUAGE",
    "IMAGE_SAFETY",
    "IMAGE_PROHIBITED_CONTENT",
}


def _transport_errors() -> tuple[type[BaseException], ...]:
    """The HTTP libraries' transport errors (timeouts, refused connections) google-genai lets through."""
    found: list[type[BaseException]] = [TimeoutError, ConnectionError]
    for name in ("httpx", "httpx2"):
        try:
            module = __import__(name)
        except ImportError:
            continue
        error = getattr(module, "TransportError", None)
        if isinstance(error, type):
            found.append(error)
    return tuple(found)


def _client_base_url(client: Any) -> str | None:
    """The endpoint a google-genai client calls (kept in its private HTTP options), if it says."""
    options = getattr(getattr(client, "_api_client", None), "_http_options", None)
    url = getattr(options, "base_url", None)
    return str(url) if url else None


class GeminiModel(SDKModel):
    """A Gemini model through the Google Gen AI SDK."""

    provider = "gemini"

    def configure(self) -> None:
        refuse_reserved(self.options, RESERVED)
        config_type = getattr(getattr(self._genai, "types", None), "GenerateContentConfig", None)
        fields = getattr(config_type, "model_fields", None)
        refuse_unknown(self.options, set(fields) if fields else None, "GenerateContentConfig")
        self._generate = self._client.models.generate_content
        self._mode = "json_schema" if self.structured == "auto" else self.structured
        self._transport = _transport_errors()

    def load_sdk(self) -> None:
        self._genai = import_sdk("google.genai", "google-genai", "gemini")
        self._errors = import_sdk("google.genai.errors", "google-genai", "gemini")

    def new_client(self, base_url: str | None, api_key: str | None) -> Any:
        key = api_key or os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY")
        if not key:
            raise AuthenticationError(
                "no Gemini API key: set GEMINI_API_KEY (or GOOGLE_API_KEY), or pass client="
            )
        http_options: dict[str, Any] = {}
        if base_url:
            http_options["base_url"] = base_url
        return self._genai.Client(api_key=key, http_options=http_options or None)

    def adopt_client(self, client: Any) -> Any:
        return client  # google-genai has no SDK retries to turn off

    def client_base_url(self, client: Any, base_url: str | None) -> str | None:
        return base_url or _client_base_url(client)

    def request_arguments(
        self, prompt: str, system: str | None, schema: type[BaseModel] | None
    ) -> dict[str, Any]:
        """The keyword arguments of ``models.generate_content`` for one request."""
        config: dict[str, Any] = dict(self.options)
        if system:
            config["system_instruction"] = system
        if self.max_tokens is not None:
            config["max_output_tokens"] = self.max_tokens
        if schema is not None and self._mode == "json_schema":
            config["response_mime_type"] = "application/json"
            config["response_json_schema"] = copy.deepcopy(
                json_schema(schema)
            )  # shared: the SDK may edit it
        elif schema is not None:
            if self._mode == "json_object":
                config["response_mime_type"] = "application/json"
            prompt = f"{prompt}\n\n{schema_instructions(schema)}"
        if self.timeout is not None:
            config["http_options"] = {"timeout": int(self.timeout * 1000)}
        return {"model": self.model, "contents": prompt, "config": config}

    async def send_request(
        self, prompt: str, system: str | None, schema: type[BaseModel] | None
    ) -> Completion:
        try:
            response = await self.call(
                self._generate, **self.request_arguments(prompt, system, schema)
            )
        except self._errors.APIError as exc:
            status = getattr(exc, "code", None)
            headers = getattr(getattr(exc, "response", None), "headers", None)
            self.fail(error_for_status(status, f"{self.model}: {exc}", headers), exc)
        except self._transport as exc:
            if isinstance(exc, TimeoutError) or "Timeout" in type(exc).__name__:
                self.fail(ModelTimeoutError(f"{self.model}: the request timed out"), exc)
            self.fail(
                ModelConnectionError(
                    f"{self.model}: connection failed: {exc}", unreachable=unreachable(exc)
                ),
                exc,
            )
        return self._completion(response)

    def _completion(self, response: Any) -> Completion:
        candidates = getattr(response, "candidates", None) or []
        raw = getattr(candidates[0], "finish_reason", None) if candidates else None
        raw_name = getattr(raw, "name", None) or (str(raw) if raw is not None else None)
        if raw_name is None:
            feedback = getattr(response, "prompt_feedback", None)
            if getattr(feedback, "block_reason", None):
                raw_name = "SAFETY"
        if raw_name in (None, "STOP", "FINISH_REASON_UNSPECIFIED"):
            finish = "stop" if raw_name or candidates else None
        elif raw_name == "MAX_TOKENS":
            finish = "length"
        elif raw_name in _FILTERED:
            finish = "content_filter"
        else:
            finish = raw_name.lower()
        try:
            text = response.text or ""
        except ValueError as exc:  # older SDKs raise when the reply has no text part
            raise ModelError(f"{self.model}: the reply has no text: {exc}") from exc
        usage = getattr(response, "usage_metadata", None)
        output = getattr(usage, "candidates_token_count", None)
        thoughts = getattr(usage, "thoughts_token_count", None)
        if output is not None and thoughts:
            output += thoughts  # thinking tokens are billed as output
        return Completion(
            text=text,
            model=getattr(response, "model_version", None) or self.model,
            input_tokens=getattr(usage, "prompt_token_count", None),
            output_tokens=output,
            # part of prompt_token_count, billed at the cached price
            cached_input_tokens=getattr(usage, "cached_content_token_count", None),
            finish_reason=finish,
        )


__all__ = ["GeminiModel"]
