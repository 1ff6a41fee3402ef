"""``openai:<model>``: embeddings from OpenAI or any OpenAI-compatible server.

The ``openai`` SDK is imported when the first batch is sent. The API key comes from
``OPENAI_API_KEY``; it is handed to the SDK client and kept nowhere else (not in ``name``,
``identity()`` or ``repr``). ``base_url`` (argument, else ``OPENAI_BASE_URL``) points at another
server; such servers often need no key, so a placeholder is sent when none is set.

Every batch goes the way a chat request goes: the SDK's own retries are off, and synth's one retry
loop (:func:`~synth.llm.retry.with_retries`, honouring ``Retry-After``) waits out 429s, 5xx,
timeouts and dropped connections, and asks again for a reply that was cut off or malformed (the
wrong number of vectors, a value that is not a number, the wrong dimension). With a ``limiter``
each request holds one of the run's ``max_concurrent`` slots and its requests-per-minute budget.
Requests, retries by kind and failures are counted into ``usage`` under the label
``embeddings:<label>`` (the pipeline passes its stage: ``ingest``, ``dedup``). SDK errors become
synth errors here, their messages redacted; a server that no retry will fix stops the run with
one :class:`~synth.errors.EndpointError`.
"""

from __future__ import annotations

import base64
import binascii
import os
import random
import threading
from typing import Any, NoReturn

import numpy as np

from synth.errors import (
    AuthenticationError,
    ConfigError,
    IncompleteCompletionError,
    ModelConnectionError,
    ModelError,
    ModelTimeoutError,
    OutputParseError,
    ServerError,
)
from synth.llm._http import (
    OPENAI_DEFAULT_URL,
    EndpointGuard,
    check_base_url,
    error_for_status,
    unreachable,
)
from synth.llm._redact import redact_text, redact_url
from synth.llm.base import run_sync
from synth.llm.limiter import RateLimiter
from synth.llm.retry import RetryConfig, with_retries
from synth.llm.usage import EMBEDDINGS_LABEL, UNLABELLED, Usage
from synth.store.embedder import Embedder

DEFAULT_OPENAI_MODEL = "text-embedding-3-small"
#: known output sizes; other models are measured with one request when asked
_KNOWN_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


def embeddings_label(label: str | None) -> str:
    """The usage label an embedding request for ``label`` (a stage) is counted under."""
    return f"{EMBEDDINGS_LABEL}{label or UNLABELLED}"


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
        max_retries: int | None = None,
        retry: RetryConfig | None = None,
        limiter: RateLimiter | None = None,
        usage: Usage | None = None,
        seed: int | None = None,
    ) -> None:
        """``retry`` is the run's retry policy (``max_retries`` overrides its count); ``limiter``
        the run's shared one (none: no pacing); ``usage`` where requests and retries are counted."""
        super().__init__(batch_size=batch_size)
        if not model:
            raise ConfigError(
                "openai embedder needs a model name, e.g. openai:text-embedding-3-small"
            )
        self.model = model
        self.name = f"openai:{model}"
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        check_base_url(self.base_url, "--base-url" if base_url else "OPENAI_BASE_URL")
        self.timeout = timeout
        retry = retry or RetryConfig()
        if max_retries is not None:
            retry = retry.model_copy(update={"max_retries": max_retries})
        self.retry = retry
        self.limiter = limiter
        self.usage = usage if usage is not None else Usage()
        self._rng = random.Random(seed)
        if not os.environ.get("OPENAI_API_KEY") and self.base_url is None:
            raise AuthenticationError(
                "openai embedder: OPENAI_API_KEY is not set (or give a base_url for a local server)"
            )
        self._client: Any = None
        self._client_lock = threading.Lock()
        self._dimension: int | None = _KNOWN_DIMENSIONS.get(model)
        #: the length of the vectors the server returned (every reply must have it)
        self._seen_dimension: int | None = None
        self._guard = EndpointGuard(
            self.base_url or OPENAI_DEFAULT_URL,
            "embedding",
            "check --base-url (or OPENAI_BASE_URL) and the embedder's model name",
            refusals=1,  # a batch of chunks is never the one request the server cannot take
        )

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._dimension = int(self._embed_batch(["dimension probe"]).shape[1])
        return self._dimension

    def identity(self) -> dict[str, Any]:
        # the dimension is fixed by the model name; asking for it could cost a request
        return {"embedder": self.name}

    def share(self, *, limiter: Any = None, usage: Any = None) -> None:
        """Make the next requests hold slots of ``limiter`` and count into ``usage`` (a run's)."""
        if limiter is not None:
            self.limiter = limiter
        if usage is not None:
            self.usage = usage

    def close(self) -> None:
        with self._client_lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def _make_client(self) -> Any:
        openai = _openai()

        return openai.OpenAI(
            api_key=os.environ.get("OPENAI_API_KEY") or "not-needed",
            base_url=self.base_url or OPENAI_DEFAULT_URL,  # an empty OPENAI_BASE_URL is unset
            timeout=self.timeout,
            max_retries=0,  # synth retries, counts and paces them
        )

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        return self._embed_labelled(texts, None)

    def _embed_labelled(self, texts: list[str], label: str | None) -> np.ndarray:
        return run_sync(self._aembed_batch(texts, embeddings_label(label)))

    async def _aembed_batch(self, texts: list[str], label: str) -> np.ndarray:
        # the endpoint refuses empty strings
        inputs = [text if text.strip() else " " for text in texts]
        self.usage.record(self.name, label, calls=1)
        try:
            vectors = await with_retries(
                lambda: self._attempt(inputs, label),
                self.retry,
                self._rng,
                on_retry=lambda kind: self.usage.record(self.name, label, retry=kind),
            )
        except ModelError as exc:
            self.usage.record(self.name, label, failure=exc.kind)
            raise
        self.usage.record(self.name, label, responses=1)
        return vectors

    async def _attempt(self, inputs: list[str], label: str) -> np.ndarray:
        self._guard.check()
        if self.limiter is None:
            return self._send(inputs, label)
        async with self.limiter.slot("embeddings"):
            # this batch's own event loop (see run_sync): blocking it blocks no other request
            return self._send(inputs, label)

    def _send(self, inputs: list[str], label: str) -> np.ndarray:
        """One request; the vectors it returned, checked."""
        openai = _openai()

        with self._client_lock:
            if self._client is None:
                self._client = self._make_client()
            client = self._client
        self.usage.record(self.name, label, requests=1)
        try:
            response = client.embeddings.create(
                model=self.model, input=inputs, encoding_format="base64"
            )
        except ValueError as exc:  # the body was cut off: it does not parse as JSON
            raise IncompleteCompletionError(
                self._message(f"the reply was cut off ({type(exc).__name__})"), "length"
            ) from None
        except openai.OpenAIError as exc:
            self._raise(exc)
        self._guard.ok()
        return self._vectors(response, len(inputs))

    def _vectors(self, response: Any, count: int) -> np.ndarray:
        """The reply's vectors in input order; :class:`OutputParseError` when malformed."""
        data = list(getattr(response, "data", None) or [])
        if len(data) != count:
            raise OutputParseError(
                self._message(f"the reply has {len(data)} vectors for {count} texts")
            )
        try:
            rows = sorted(data, key=lambda item: int(item.index))
            found = [_vector(row.embedding) for row in rows]
        except (TypeError, ValueError, AttributeError) as exc:
            raise OutputParseError(
                self._message(f"the reply's vectors are not lists of numbers ({exc})")
            ) from None
        if [int(row.index) for row in rows] != list(range(count)):
            raise OutputParseError(self._message("the reply's vectors are not numbered 0..n-1"))
        if len({vector.shape[0] for vector in found}) > 1 or not found[0].shape[0]:
            raise OutputParseError(self._message("the reply's vectors differ in length"))
        vectors = np.stack(found)
        seen = self._seen_dimension
        if seen is not None and vectors.shape[1] != seen:
            raise OutputParseError(
                self._message(f"the reply's vectors have {vectors.shape[1]} values, not {seen}")
            )
        if not np.isfinite(vectors).all():
            raise OutputParseError(self._message("the reply's vectors hold NaN or infinity"))
        # the first good reply fixes the dimension (a compatible server may not give the size
        # the model name has at OpenAI); every later reply must match it
        self._seen_dimension = self._dimension = int(vectors.shape[1])
        return vectors

    def _message(self, text: str) -> str:
        server = redact_url(self.base_url) or "api.openai.com"
        return redact_text(f"{self.name} embeddings ({server}): {text}", self._secrets())

    @staticmethod
    def _secrets() -> tuple[str, ...]:
        key = os.environ.get("OPENAI_API_KEY") or ""
        return (key,) if len(key) >= 8 else ()

    def _raise(self, exc: Exception) -> NoReturn:
        """Raise ``exc`` (from the SDK) as a synth error, translated as the chat adapter does,
        its message redacted and the SDK's exception (which may quote a key) not chained."""
        openai = _openai()

        detail = getattr(exc, "message", None) or str(exc)
        error: ModelError
        if isinstance(exc, openai.APITimeoutError):
            silent = self._guard.timed_out(self.timeout)
            if silent is not None:  # not a minute of timeouts per retry, for every batch
                raise silent from None
            error = ModelTimeoutError(self._message("the request timed out"))
        elif isinstance(exc, openai.APIConnectionError):
            error = ModelConnectionError(
                self._message(f"connection failed: {detail}"), unreachable=unreachable(exc)
            )
        elif isinstance(exc, openai.APIStatusError):
            error = error_for_status(
                exc.status_code,
                self._message(detail),
                exc.response.headers,
                getattr(exc, "code", None),
            )
            error.args = (redact_text(str(error), self._secrets()),)
        elif isinstance(exc, openai.APIResponseValidationError):
            error = ServerError(self._message(f"the server's reply is malformed: {detail}"))
        else:
            error = ModelError(self._message(f"{type(exc).__name__}: {detail}"))
        stop = self._guard.failed(error)
        if stop is not None:
            raise stop from None
        raise error from None


def _openai() -> Any:
    """The openai SDK (or which package to install)."""
    from synth.llm._adapter import import_sdk

    return import_sdk("openai", "openai", "openai")


def _vector(value: Any) -> np.ndarray:
    """One reply vector as float32: base64 of little-endian floats, as asked (the SDK's own
    default; a list of numbers costs the SDK a Python object per value to read), or the list a
    server that ignores ``encoding_format`` sends instead. ValueError when it is neither."""
    if isinstance(value, str):
        try:
            raw = base64.b64decode(value, validate=True)
        except binascii.Error as exc:
            raise ValueError(f"a vector is not base64 ({exc})") from None
        if not raw or len(raw) % 4:
            raise ValueError(f"a base64 vector of {len(raw)} bytes is not float32 values")
        return np.frombuffer(raw, dtype="<f4").astype(np.float32)
    vector = np.asarray(value, dtype=np.float32)
    if vector.ndim != 1:
        raise ValueError("a vector is not a list of numbers")
    return vector


__all__ = ["DEFAULT_OPENAI_MODEL", "OpenAIEmbedder", "embeddings_label"]
