"""The OpenAI adapter: chat completions through the ``openai`` SDK, for OpenAI and any compatible server.

Structured calls use ``response_format`` ``json_schema`` (strict when the schema allows) for models
that support it, else ``json_object``, else plain prompting with the schema in the prompt; a server
that refuses a response format is asked again with the next simpler one, once, and the model
remembers. ``max_tokens`` is sent as ``max_completion_tokens``. A client passed in is used with its
SDK retries off (synth retries and counts them). SDK errors become synth errors here, with the key and
secret options hidden from their messages.

Requests go through the SDK's own ``client.post("/chat/completions", ...)``, which is what
``chat.completions.create`` ends in, when the client is the SDK's ``OpenAI`` and every option is
plain JSON: ``create`` first walks the whole request, its JSON schema included, against its
parameter types, which takes about a millisecond a request and changes nothing in plain JSON (the
same bytes are sent either way; a test compares them). At hundreds of requests in flight that is a
fifth of the client's time. Any other client, or options holding other objects, go through
``create``. A posted request asks the SDK for the raw response (as ``with_raw_response`` does), so
the reply's rate-limit headers reach the limiter (:mod:`synth.llm._rate_headers`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from synth.errors import (
    AuthenticationError,
    BadRequestError,
    ConfigError,
    ModelConnectionError,
    ModelError,
    ModelTimeoutError,
    ServerError,
)
from synth.llm._adapter import (
    SDKModel,
    accepted_arguments,
    import_sdk,
    refuse_reserved,
    refuse_unknown,
)
from synth.llm._http import OPENAI_DEFAULT_URL, check_base_url, error_for_status, unreachable
from synth.llm._pool import pooled_http_client
from synth.llm._rate_headers import read_reply
from synth.llm.base import REQUESTS_SENT, Completion
from synth.llm.structured import json_schema, schema_instructions, schema_name, strict_json_schema

#: arguments synth sets itself; they cannot come from ``options``
RESERVED = ("model", "messages", "stream", "n")
#: older models that know ``json_object`` but not ``json_schema``
_JSON_OBJECT_ONLY = re.compile(r"^(gpt-3\.5|gpt-4-|gpt-4$|gpt-4-turbo)")
_NEXT_MODE = {"json_schema": "json_object", "json_object": "prompt"}
#: the header that makes the SDK's client return the raw response (``with_raw_response``'s)
_RAW_RESPONSE = "X-Stainless-Raw-Response"
_FINISH = {"stop": "stop", "length": "length", "content_filter": "content_filter"}
#: ``create``'s arguments that are request options, not part of the body, and their names in
#: the client's own request options
_REQUEST_OPTIONS = {
    "extra_headers": "headers",
    "extra_query": "params",
    "extra_body": "extra_json",
    "timeout": "timeout",
}


class OpenAIModel(SDKModel):
    """A chat model behind the OpenAI API or any OpenAI-compatible server (vLLM, Ollama, a gateway)."""

    provider = "openai"
    endpoint_fix = "check --base-url (or OPENAI_BASE_URL) and --model"

    def configure(self) -> None:
        self._create = self._client.chat.completions.create
        plain = isinstance(self._client, self._sdk.OpenAI) and _is_plain_json(self.options)
        self._send = self._post if plain else self._create
        accepted = accepted_arguments(self._create)
        where = f"{type(self._client).__name__}.chat.completions.create"
        refuse_reserved(self.options, RESERVED)
        refuse_unknown(self.options, accepted, where)
        if self.max_tokens is not None:
            if accepted is not None and "max_completion_tokens" not in accepted:
                raise ConfigError(
                    f"{where} does not take max_completion_tokens (openai>=1.45 does); "
                    f"pass options={{'max_tokens': {self.max_tokens}}} instead"
                )
            if "max_tokens" in self.options:
                raise ConfigError("pass max_tokens or options['max_tokens'], not both")
        self._sends_timeout = self.timeout is not None and (
            accepted is None or "timeout" in accepted
        )
        self._mode = self._initial_mode(accepted)

    def load_sdk(self) -> None:
        self._sdk = import_sdk("openai", "openai", "openai")

    def new_client(self, base_url: str | None, api_key: str | None) -> Any:
        openai = self._sdk
        if not base_url:
            # an empty OPENAI_BASE_URL is unset, as everywhere in synth (the SDK would call "")
            base_url = os.environ.get("OPENAI_BASE_URL") or None
            check_base_url(base_url, "OPENAI_BASE_URL")
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key and base_url:
            key = "unused"  # a local OpenAI-compatible server usually needs no key
        if not key:
            raise AuthenticationError(
                "no OpenAI API key: set OPENAI_API_KEY, or point base_url (--base-url, "
                "OPENAI_BASE_URL) at a local OpenAI-compatible server"
            )
        options: dict[str, Any] = {}
        http_client = pooled_http_client(openai, self._max_workers)
        if http_client is not None:  # many requests in flight: several small connection pools
            options["http_client"] = http_client
        return openai.OpenAI(
            api_key=key,
            base_url=base_url or OPENAI_DEFAULT_URL,
            timeout=self.timeout,
            max_retries=0,
            **options,
        )

    def _initial_mode(self, accepted: set[str] | None) -> str:
        if accepted is not None and "response_format" not in accepted:
            return "prompt"
        if "response_format" in self.options:
            return "options"  # the user chose the response format for every call
        if self.structured != "auto":
            return self.structured
        return "json_object" if _JSON_OBJECT_ONLY.match(self.model) else "json_schema"

    def request_arguments(
        self, prompt: str, system: str | None, schema: type[BaseModel] | None, mode: str
    ) -> dict[str, Any]:
        """The keyword arguments of ``chat.completions.create`` for one request."""
        if schema is not None and (
            mode in ("json_object", "prompt")
            or (mode == "options" and not self._format_has_schema())
        ):
            prompt = f"{prompt}\n\n{schema_instructions(schema)}"
        messages = [{"role": "system", "content": system}] if system else []
        messages.append({"role": "user", "content": prompt})
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages, **self.options}
        if self.max_tokens is not None:
            kwargs["max_completion_tokens"] = self.max_tokens
        if schema is not None and mode == "json_schema":
            strict = strict_json_schema(schema)
            body = strict if strict is not None else json_schema(schema)
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": schema_name(schema),
                    "schema": body,
                    "strict": strict is not None,
                },
            }
        elif schema is not None and mode == "json_object":
            kwargs["response_format"] = {"type": "json_object"}
        if self._sends_timeout:
            kwargs["timeout"] = self.timeout
        return kwargs

    def _post(self, **arguments: Any) -> Any:
        """What ``chat.completions.create(**arguments)`` returns, posted by the client itself
        (see the module docstring): the request options apart, the rest as the body."""
        options = {
            name: arguments.pop(key) for key, name in _REQUEST_OPTIONS.items() if key in arguments
        }
        options["headers"] = {**(options.get("headers") or {}), _RAW_RESPONSE: "true"}
        return self._client.post(
            "/chat/completions",
            body=arguments,
            cast_to=self._sdk.types.chat.ChatCompletion,
            options=options,
        )

    def _format_has_schema(self) -> bool:
        """Whether the ``response_format`` the user set in ``options`` gives the model a schema."""
        chosen = self.options.get("response_format")
        return isinstance(chosen, Mapping) and chosen.get("type") == "json_schema"

    async def send_request(
        self, prompt: str, system: str | None, schema: type[BaseModel] | None
    ) -> Completion:
        sent = 0
        while True:
            mode = self._mode
            sent += 1
            try:
                response = await self.call(
                    self._send, **self.request_arguments(prompt, system, schema, mode)
                )
            except BadRequestError as exc:
                refused = "response_format" in str(exc) or "json_schema" in str(exc)
                if schema is not None and refused and mode in _NEXT_MODE:
                    self._mode = _NEXT_MODE[mode]  # remember: this server does not take it
                    continue
                raise
            completion = read_reply(response, self._completion)
            if sent > 1:  # the refused requests were sent too; usage counts them
                completion.extra[REQUESTS_SENT] = sent
            return completion

    async def call(self, fn: Any, **kwargs: Any) -> Any:
        openai = self._sdk
        try:
            return await super().call(fn, **kwargs)
        except openai.APITimeoutError as exc:
            self.fail(ModelTimeoutError(f"{self.model}: the request timed out"), exc)
        except openai.APIConnectionError as exc:
            self.fail(
                ModelConnectionError(
                    f"{self.model}: connection failed: {exc}", unreachable=unreachable(exc)
                ),
                exc,
            )
        except openai.APIStatusError as exc:
            code = getattr(exc, "code", None)
            status = error_for_status(
                exc.status_code, f"{self.model}: {exc}", exc.response.headers, code
            )
            self.fail(status, exc)
        except openai.APIResponseValidationError as exc:
            self.fail(ServerError(f"{self.model}: the server's reply is malformed: {exc}"), exc)
        except openai.OpenAIError as exc:
            self.fail(ModelError(f"{self.model}: {type(exc).__name__}: {exc}"), exc)

    def _completion(self, response: Any) -> Completion:
        choices = getattr(response, "choices", None) or []
        if not choices:
            raise ServerError(f"{self.model}: the reply has no choices")
        choice = choices[0]
        message = choice.message
        text = message.content or ""
        raw_finish = choice.finish_reason
        finish = _FINISH.get(raw_finish or "", raw_finish)
        extra: dict[str, Any] = {}
        refusal = getattr(message, "refusal", None)
        if refusal:
            finish, extra["refusal"] = "content_filter", refusal
        usage = getattr(response, "usage", None)
        details = getattr(usage, "prompt_tokens_details", None)
        return Completion(
            text=text,
            model=getattr(response, "model", None) or self.model,
            input_tokens=getattr(usage, "prompt_tokens", None),
            output_tokens=getattr(usage, "completion_tokens", None),
            cached_input_tokens=getattr(details, "cached_tokens", None),
            finish_reason=finish,
            extra=extra,
        )


def _is_plain_json(value: Any) -> bool:
    """Whether ``value`` is made only of JSON's own types (dicts with string keys)."""
    if value is None or isinstance(value, str | int | float | bool):
        return True
    if isinstance(value, list):
        return all(_is_plain_json(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_plain_json(v) for k, v in value.items())
    return False


__all__ = ["OpenAIModel"]
