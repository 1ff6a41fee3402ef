"""Every error synth raises, in one tree.

::

    SynthError
    ├── ConfigError (also ValueError)     bad argument, option, pipeline file or spec
    ├── IngestError                       a document cannot be read
    ├── StoreError                        the vector store failed
    ├── DatasetError                      a dataset file is malformed (names file, line/row, field)
    ├── CacheError                        the response cache failed (never taken for a model failure)
    └── ModelError                        a model call failed
        ├── AuthenticationError           key missing or refused (not retried)
        ├── BadRequestError               the request was refused as invalid (not retried)
        ├── RateLimitError                429 (retried, honouring Retry-After)
        ├── ServerError                   5xx (retried)
        ├── ModelTimeoutError             the call timed out (retried)
        ├── ModelConnectionError          the connection failed (retried)
        ├── IncompleteCompletionError     the reply was cut off or filtered
        └── OutputParseError              the reply could not be parsed; keeps the raw text

SDK errors are translated inside their adapter and nowhere else.
"""

from __future__ import annotations


class SynthError(Exception):
    """Base class of every error raised by synth."""


class ConfigError(SynthError, ValueError):
    """An argument, option, spec or pipeline file is invalid."""


class IngestError(SynthError):
    """A document could not be read."""


class StoreError(SynthError):
    """The vector store failed."""


class DatasetError(SynthError):
    """A dataset file is malformed; the message names the file, the line or row and the field."""


class CacheError(SynthError):
    """The response cache failed."""


class ModelError(SynthError):
    """A model call failed."""

    #: short machine-readable kind, used to count failures by kind
    kind = "model"


class AuthenticationError(ModelError):
    kind = "auth"


class BadRequestError(ModelError):
    kind = "bad_request"


class RateLimitError(ModelError):
    kind = "rate_limit"

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ServerError(ModelError):
    kind = "server"


class ModelTimeoutError(ModelError):
    kind = "timeout"


class ModelConnectionError(ModelError):
    kind = "connection"


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


__all__ = [
    "AuthenticationError",
    "BadRequestError",
    "CacheError",
    "ConfigError",
    "DatasetError",
    "IncompleteCompletionError",
    "IngestError",
    "ModelConnectionError",
    "ModelError",
    "ModelTimeoutError",
    "OutputParseError",
    "RateLimitError",
    "ServerError",
    "StoreError",
    "SynthError",
]
