"""``openai:<model>``: embeddings from OpenAI or any OpenAI-compatible server.

The ``openai`` SDK is imported when the first batch is sent. The API key comes from
``OPENAI_API_KEY``; it is handed to the SDK client and kept nowhere else (not in ``name``,
``identity()`` or ``repr``). ``base_url`` (argument, else ``OPENAI_BASE_URL``) points at another
server; such servers often need no key, so a placeholder is sent when none is set.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from synth.errors import (
    AuthenticationError,
    BadRequestError,
    ConfigError,
    ModelConnectionError,
    ModelError,
    ModelTimeoutError,
    RateLimitError,
    ServerError,
)
from synth.store.embedder import Embedder

DEFAULT_OPENAI_MODEL = "text-embedding-3-small"
#: known output sizes; other models are measured with one request when asked
_KNOWN_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


class OpenAIEmbedder(Embedder):
    """Embeddings from the OpenAI ``/embeddings`` endpoint (or a compatible server)."""

    default_batch_size = 128
    remote = True

    def __init__(
        self,
        model: str = DEFAULT_OPENAI_MODEL,
        *,
        base_url: str | None = None,
        batch_size: int | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
    ) -> None:
        super().__init__(batch_size=batch_size)
        if not model:
            raise ConfigError(
                "openai embedder needs a model name, e.g. openai:text-embedding-3-small"
            )
        self.model = model
        self.name = f"openai:{model}"
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        self.timeout = timeout
        self.max_retries = max_retries
        if not os.environ.get("OPENAI_API_KEY") and self.base_url is None:
            raise AuthenticationError(
                "openai embedder: OPENAI_API_KEY is not set (or give a base_url for a local server)"
            )
        self._client: Any = None
        self._dimension: int | None = _KNOWN_DIMENSIONS.get(model)

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._dimension = int(self._embed_batch(["dimension probe"]).shape[1])
        return self._dimension

    def identity(self) -> dict[str, Any]:
        # the dimension is fixed by the model name; asking for it could cost a request
        return {"embedder": self.name}

    def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            client.close()

    def _make_client(self) -> Any:
        import openai

        return openai.OpenAI(
            api_key=os.environ.get("OPENAI_API_KEY") or "not-needed",
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=self.max_retries,
        )

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        import openai

        if self._client is None:
            self._client = self._make_client()
        # the endpoint refuses empty strings
        inputs = [text if text.strip() else " " for text in texts]
        try:
            response = self._client.embeddings.create(
                model=self.model, input=inputs, encoding_format="float"
            )
        except openai.OpenAIError as exc:
            raise _translate(exc, self.name) from exc
        rows = sorted(response.data, key=lambda item: item.index)
        vectors = np.asarray([row.embedding for row in rows], dtype=np.float32)
        if self._dimension is None and vectors.ndim == 2:
            self._dimension = int(vectors.shape[1])
        return vectors


def _translate(exc: Exception, name: str) -> ModelError:
    """Map an ``openai`` SDK error onto synth's model error tree."""
    import openai

    message = f"{name} embeddings: {getattr(exc, 'message', None) or exc}"
    if isinstance(exc, openai.APITimeoutError):
        return ModelTimeoutError(message)
    if isinstance(exc, openai.APIConnectionError):
        return ModelConnectionError(message)
    if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
        return AuthenticationError(message)
    if isinstance(exc, openai.RateLimitError):
        return RateLimitError(message)
    if isinstance(exc, openai.InternalServerError):
        return ServerError(message)
    if isinstance(exc, openai.APIStatusError) and 400 <= exc.status_code < 500:
        return BadRequestError(message)
    return ModelError(message)


__all__ = ["DEFAULT_OPENAI_MODEL", "OpenAIEmbedder"]
