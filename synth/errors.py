"""Every error synth raises, in one tree.

::

    SynthError
    ├── ConfigError (also ValueError)     bad argument, option, pipeline file or spec
    ├── IngestError                       a document cannot be read
    ├── StoreError                        the vector store failed
    ├── DatasetError                      a dataset file is malformed (names file, line/row, field)
    ├── CacheError                        the response cache failed (never taken for a model failure)
    ├── HubError                          a push to the Hugging Face Hub failed (no network, token
    │                                     refused, no such repository)
    ├── EndpointError                     a server no retry will fix: nothing listens, wrong path,
    │                                     every request refused (stops the run; not an item's failure)
    └── ModelError                        a model call failed
        ├── AuthenticationError           key missing or refused (not retried)
        ├── BadRequestError               the request was refused as invalid (not retried)
        ├── RateLimitError                429 (retried, honouring Retry-After)
        ├── ServerError                   5xx (retried)
        ├── ModelTimeoutError             the call timed out (retried)
        ├── ModelConnectionError          the connection failed (retried)
        ├── IncompleteCompletionError     the reply was cut off or filtered
        └── OutputParseError              the reply could not be parsed; keeps the raw text

    SynthWarning (also UserWarning)       something finished, but not as asked
    ├── ShortfallWarning                  a generate call delivered fewer goldens than asked
    └── FailedItemsWarning                an evaluation scored some items without a system's
                                          answer or a judge's verdict (they failed)

SDK errors are translated inside their adapter and nowhere else. A warning is given with
:func:`warnings.warn`, so ``warnings.simplefilter("error", SynthWarning)`` turns it into an error.
"""

from __future__ import annotations

from typing import Any


class SynthError(Exception):
    """Base class of every error raised by synth."""


class ConfigError(SynthError, ValueError):
    """An argument, option, spec or pipeline file is invalid."""


class IngestError(SynthError):
    """A document could not be read."""


class ReaderMissing(IngestError):
    """A file's reader is an optional extra that is not installed: the file is skipped, and its
    status line names the extra."""


class StoreError(SynthError):
    """The vector store failed."""


class DatasetError(SynthError):
    """A dataset file is malformed; the message names the file, the line or row and the field."""


class CacheError(SynthError):
    """The response cache failed."""


class HubError(SynthError):
    """Pushing a dataset to the Hugging Face Hub failed; the message says why in one line."""


class EndpointError(SynthError):
    """A model or embedding server that no retry will fix, before it ever answered well.

    Raised when the first requests to a server all fail the same hopeless way (nothing listens at
    the address, the path answers 404, every request is refused as invalid). It is not a
    :class:`ModelError`: it stops the whole run instead of failing one item. ``base_url`` is the
    server (redacted); the message names it and the fix.
    """

    def __init__(self, message: str, base_url: str | None = None) -> None:
        super().__init__(message)
        self.base_url = base_url


class ModelError(SynthError):
    """A model call failed."""

    #: short machine-readable kind, used to count failures by kind
    kind = "model"


class AuthenticationError(ModelError):
    kind = "auth"


class BadRequestError(ModelError):
    kind = "bad_request"

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        #: the HTTP status, when the refusal came as one (400, 404, 422, ...)
        self.status = status


class RateLimitError(ModelError):
    kind = "rate_limit"

    def __init__(
        self, message: str, retry_after: float | None = None, rate_limits: Any = None
    ) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        #: the budgets the 429's headers stated (synth.llm._rate_headers.RateLimits), if any
        self.rate_limits = rate_limits


class ServerError(ModelError):
    kind = "server"


class ModelTimeoutError(ModelError):
    kind = "timeout"


class ModelConnectionError(ModelError):
    kind = "connection"

    def __init__(self, message: str, unreachable: bool = False) -> None:
        super().__init__(message)
        #: the connection could not be made at all (refused, unknown host), not dropped midway
        self.unreachable = unreachable


class IncompleteCompletionError(ModelError):
    """The reply stopped early: cut off at the token limit, or filtered."""

    kind = "incomplete"

    def __init__(self, message: str, finish_reason: str | None = None, text: str = "") -> None:
        super().__init__(message)
        self.finish_reason = finish_reason
        self.text = text


class OutputParseError(ModelError):
    """The reply could not be parsed; ``raw`` keeps the text as received."""

    kind = "invalid_output"

    def __init__(self, message: str, raw: str = "") -> None:
        super().__init__(message)
        self.raw = raw


class SynthWarning(UserWarning):
    """Base class of every warning synth gives: the call finished, but not as asked."""


class ShortfallWarning(SynthWarning):
    """A generate call delivered fewer goldens than asked; the dataset's ``shortfall`` says why."""


class FailedItemsWarning(SynthWarning):
    """Some items of an evaluation failed (the system raised, or a judge failed); the report's
    ``errors`` counts them by source and each item's ``errors`` says what happened."""


def raw_reply(error: BaseException | None) -> str | None:
    """The reply text a failed request kept (an unparsable or cut-off reply), if any."""
    return getattr(error, "raw", None) or getattr(error, "text", None) or None


__all__ = [
    "AuthenticationError",
    "BadRequestError",
    "CacheError",
    "ConfigError",
    "DatasetError",
    "EndpointError",
    "FailedItemsWarning",
    "HubError",
    "IncompleteCompletionError",
    "IngestError",
    "ModelConnectionError",
    "ModelError",
    "ModelTimeoutError",
    "OutputParseError",
    "RateLimitError",
    "ServerError",
    "ShortfallWarning",
    "StoreError",
    "SynthError",
    "SynthWarning",
    "raw_reply",
]
