"""What the provider adapters share: SDK calls off the event loop, argument checks, identity."""

from __future__ import annotations

import asyncio
import difflib
import functools
import inspect
from abc import abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NoReturn

from pydantic import BaseModel

from synth.errors import (
    BadRequestError,
    ConfigError,
    ModelConnectionError,
    ModelError,
    ModelTimeoutError,
)
from synth.llm._http import EndpointGuard, check_base_url
from synth.llm._redact import redact_options, redact_text, redact_url, secret_values
from synth.llm.base import LLM, Completion

STRUCTURED_MODES = ("auto", "json_schema", "json_object", "prompt")


def import_sdk(module: str, package: str, provider: str) -> Any:
    """Import an optional SDK, or say which package to install."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ConfigError(
            f"the {provider} provider needs the {package!r} package: pip install {package}"
        ) from exc


def accepted_arguments(fn: Callable[..., Any]) -> set[str] | None:
    """The keyword arguments ``fn`` takes, or ``None`` when it takes any (``**kwargs``)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    return {p.name for p in params if p.kind is not inspect.Parameter.POSITIONAL_ONLY}


def refuse_reserved(options: Mapping[str, Any], reserved: Iterable[str]) -> None:
    """Raise :class:`ConfigError` when ``options`` sets an argument synth sets itself."""
    bad = sorted(set(options) & set(reserved))
    if bad:
        raise ConfigError(f"options may not set {', '.join(bad)}: synth sets them")


def refuse_unknown(names: Iterable[str], accepted: set[str] | None, where: str) -> None:
    """Raise :class:`ConfigError` for every name ``accepted`` does not contain."""
    if accepted is None:
        return
    unknown = sorted(set(names) - accepted)
    if unknown:
        hints = []
        for name in unknown:
            close = difflib.get_close_matches(name, sorted(accepted), n=1)
            hints.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        raise ConfigError(f"{where} does not take {', '.join(hints)}")


class SDKModel(LLM):
    """Base of the provider adapters.

    Subclasses set ``provider`` and implement :meth:`load_sdk`, :meth:`new_client`,
    :meth:`configure` and ``arequest``.
    """

    #: sent when no ``max_tokens`` is given (for APIs that require one)
    default_max_tokens: int | None = None
    #: what to check when the server is unusable (the end of :class:`EndpointError`'s line)
    endpoint_fix = "check --base-url and --model"

    def __init__(
        self,
        model: str,
        *,
        client: Any = None,
        options: Mapping[str, Any] | None = None,
        max_tokens: int | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float | None = 120.0,
        structured: str = "auto",
        max_workers: int = 32,
    ) -> None:
        """Check the shared arguments, load the SDK, make (or adopt) the client, then configure.

        With no ``client``, :meth:`new_client` makes one from ``base_url`` and ``api_key`` and this
        model owns (and closes) it; a client passed in goes through :meth:`adopt_client`.
        """
        if client is not None and (base_url or api_key):
            raise ConfigError("give base_url and api_key to your client, or pass no client")
        check_base_url(base_url or None, "--base-url")
        if self.default_max_tokens is not None:
            max_tokens = max_tokens or self.default_max_tokens
        if not model or not isinstance(model, str):
            raise ConfigError(f"the {self.provider} provider needs a model name")
        if structured not in STRUCTURED_MODES:
            raise ConfigError(
                f"structured must be one of {', '.join(STRUCTURED_MODES)}, got {structured!r}"
            )
        if max_tokens is not None and (not isinstance(max_tokens, int) or max_tokens < 1):
            raise ConfigError(f"max_tokens must be a positive integer, got {max_tokens!r}")
        self.model = model
        self.options = dict(options or {})
        self.max_tokens = max_tokens
        self.structured = structured
        self.base_url = base_url
        self.timeout = timeout
        self._max_workers = max_workers
        self._executor: ThreadPoolExecutor | None = None
        self._owned_client: Any = None
        self._secrets: tuple[str, ...] = ()
        self.load_sdk()
        if client is None:
            client = self.new_client(base_url, api_key)
            self._owned_client = client
        else:
            client = self.adopt_client(client)
        self.keep_secret(client, api_key)
        self.base_url = self.client_base_url(client, base_url)
        self._client = client
        self._guard = EndpointGuard(self.base_url, "model", self.endpoint_fix)
        self.configure()

    async def arequest(
        self,
        prompt: str,
        *,
        system: str | None = None,
        schema: type[BaseModel] | None = None,
        label: str | None = None,
    ) -> Completion:
        """The provider's reply; a server no retry will fix raises :class:`EndpointError`.

        Until the server has answered once, a refused connection, an unknown host, a 404 or
        repeated 400s stop the run (see :class:`~synth.llm._http.EndpointGuard`); after that they
        are one item's failure, as every other error is.
        """
        return await self.guarded(lambda: self.send_request(prompt, system, schema))

    async def guarded(
        self, send: Callable[[], Awaitable[Completion]], *, timeouts: bool = False
    ) -> Completion:
        """The reply ``send()`` gets from this model's server, through its
        :class:`~synth.llm._http.EndpointGuard` (see :meth:`arequest`); a Batch API's requests
        go to the same server, so they go through it too. ``timeouts``: a request that timed out
        before the server ever answered stops the run too (a Batch API's chain has no
        :class:`~synth.llm.timeout.TimeoutModel` to say the server is silent)."""
        self._guard.check()
        try:
            completion = await send()
        except (BadRequestError, ModelConnectionError) as exc:
            stop = self._guard.failed(exc)
            if stop is not None:
                raise stop from None
            raise
        except ModelTimeoutError:
            silent = self._guard.timed_out(self.timeout or 0) if timeouts else None
            if silent is not None:
                raise silent from None
            raise
        self._guard.ok()
        return completion

    @abstractmethod
    async def send_request(
        self, prompt: str, system: str | None, schema: type[BaseModel] | None
    ) -> Completion:
        """Send one request through the provider's SDK and return its reply as a Completion."""

    @abstractmethod
    def load_sdk(self) -> None:
        """Import the provider's SDK (see :func:`import_sdk`) and keep what the adapter needs."""

    @abstractmethod
    def new_client(self, base_url: str | None, api_key: str | None) -> Any:
        """A client of the SDK for ``base_url`` and ``api_key`` (else the provider's env vars)."""

    @abstractmethod
    def configure(self) -> None:
        """Check ``options`` against the client and settle how requests are made."""

    def adopt_client(self, client: Any) -> Any:
        """The client passed in, as this model will use it: by default with SDK retries off."""
        return self.without_sdk_retries(client)

    def client_base_url(self, client: Any, base_url: str | None) -> str | None:
        """The endpoint ``client`` calls, as shown in the identity: by default its ``base_url``."""
        return str(getattr(client, "base_url", "") or "") or None

    def keep_secret(self, client: Any, api_key: str | None = None) -> None:
        """Remember the values an error message must not repeat (the key, secret options)."""
        self._secrets = secret_values(client, self.options, api_key)

    def fail(self, error: ModelError, cause: BaseException) -> NoReturn:
        """Raise ``error`` (translated from the SDK's ``cause``) with any secret hidden.

        A server or gateway may echo a key in its error; then the SDK's exception is not chained
        either, so a logged traceback cannot show it.
        """
        message = str(error)
        clean = redact_text(message, self._secrets)
        if clean != message:
            error.args = (clean,)
            raise error from None
        raise error from cause

    @staticmethod
    def without_sdk_retries(client: Any) -> Any:
        """``client`` with the SDK's own retries off (synth retries, counts and paces them)."""
        retries = getattr(client, "max_retries", None)
        with_options = getattr(client, "with_options", None)
        if isinstance(retries, int) and retries > 0 and callable(with_options):
            return with_options(max_retries=0)
        return client

    async def call(self, fn: Callable[..., Any], **kwargs: Any) -> Any:
        """Call an SDK method: awaited when async, else on this model's threads (never the loop's)."""
        if inspect.iscoroutinefunction(inspect.unwrap(fn)):
            return await fn(**kwargs)
        loop = asyncio.get_running_loop()
        result = await loop.run_in_executor(self._threads(), functools.partial(fn, **kwargs))
        if inspect.isawaitable(result):  # an async method hidden behind a plain wrapper
            result = await result
        return result

    def _threads(self) -> ThreadPoolExecutor:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(self._max_workers, f"synth-{self.provider}")
        return self._executor

    def identity(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "model": self.model,
            "base_url": redact_url(self.base_url),
            "options": redact_options(self.options),
            "max_tokens": self.max_tokens,
            "structured": self.structured,
        }

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
        client, self._owned_client = self._owned_client, None
        if client is not None and hasattr(client, "close"):
            client.close()

    def __repr__(self) -> str:
        parts = [f"{self.provider}:{self.model}"]
        if self.base_url:
            parts.append(f"base_url={redact_url(self.base_url)!r}")
        if self.options:
            parts.append(f"options={redact_options(self.options)!r}")
        if self.max_tokens is not None:
            parts.append(f"max_tokens={self.max_tokens}")
        return f"{type(self).__name__}({', '.join(parts)})"


__all__ = [
    "STRUCTURED_MODES",
    "SDKModel",
    "accepted_arguments",
    "import_sdk",
    "refuse_reserved",
    "refuse_unknown",
]
