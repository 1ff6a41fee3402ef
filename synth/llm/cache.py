"""Response caching: an identical request to the same endpoint is answered without a call.

The key is a SHA-256 over the model's identity (provider, model, redacted options, base URL,
``max_tokens``, structured mode), the system prompt, the prompt and the schema's JSON. API keys are
never part of an identity, so never part of a key. Only complete replies are stored, and with a
schema only replies that parse, so a cached reply is always a usable one; a reply that parses but
that its caller then refuses (a batch reply it cannot match) is removed with :func:`forget_reply`, so
a rerun asks again instead of replaying it. Identical requests in flight at the same time are sent
once.

``cache`` is any ``MutableMapping[str, str]``: a dict, a ``shelve`` file, or :class:`SQLiteCache`.
Anything the mapping raises (other than a miss) becomes :class:`CacheError`, never a model error.
An entry that is not a stored reply (a damaged row) is a miss, said on the ``synth`` logger: the
request is made again and its reply replaces the entry.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import sqlite3
import threading
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from typing import Any

from pydantic import BaseModel

from synth._ids import text_hash
from synth.errors import CacheError, ConfigError, IncompleteCompletionError, OutputParseError
from synth.llm.base import LLM, Completion, check_complete
from synth.llm.sqlite_cache import SQLiteCache
from synth.llm.structured import json_schema, parse_verdict
from synth.llm.wrapper import WrapperModel

CACHE_FORMAT = 1
#: where a damaged entry is said (Python prints a warning there when nothing else is set up)
log = logging.getLogger(__name__)


def cache_key(
    identity: dict[str, Any], prompt: str, system: str | None, schema: type[BaseModel] | None
) -> str:
    """The cache key of one request (hex SHA-256)."""
    payload = {
        "format": CACHE_FORMAT,
        "identity": identity,
        "system": system,
        "prompt": prompt,
        "schema": json_schema(schema) if schema is not None else None,
    }
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return text_hash(blob)


def _encode(completion: Completion) -> str:
    row = dataclasses.asdict(completion)
    row.pop("cached")
    return json.dumps(row, sort_keys=True, default=str)


def _decode(value: Any) -> Completion:
    if isinstance(value, bytes):
        value = value.decode("utf-8")
    row = json.loads(value)
    return Completion(**row, cached=True)


class CacheModel(WrapperModel):
    """Answers from ``cache`` when it can; stores complete (and, with a schema, valid) replies."""

    def __init__(self, inner: LLM, cache: MutableMapping[str, str]) -> None:
        super().__init__(inner)
        if not all(hasattr(cache, m) for m in ("__getitem__", "__setitem__")):
            raise ConfigError(f"cache must be a mutable mapping, got {type(cache).__name__}")
        self.cache = cache
        self._lock = threading.Lock()
        self._pending: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Future[Completion]]] = {}

    def key(
        self, prompt: str, *, system: str | None = None, schema: type[BaseModel] | None = None
    ) -> str:
        return cache_key(self.inner.identity(), prompt, system, schema)

    @contextmanager
    def _mapping(self, what: str) -> Iterator[None]:
        try:
            yield
        except KeyError:
            raise
        except CacheError:
            raise
        except Exception as exc:  # a user's mapping may fail in any way; it is a cache failure
            if _thread_bound(exc):
                raise CacheError(
                    f"the cache {type(self.cache).__name__} works only in the thread that opened it, "
                    f"and it was used from another; use SQLiteCache (safe across threads) or a dict"
                ) from exc
            raise CacheError(f"cache {what} failed: {type(exc).__name__}: {exc}") from exc

    def lookup(self, key: str) -> Completion | None:
        """The cached reply for ``key``, or ``None``: also when the entry is not a stored reply
        (damaged), which is said on the log; the reply asked again then replaces it."""
        try:
            with self._mapping("read"):
                value = self.cache[key]
        except KeyError:
            return None
        try:
            return _decode(value)
        except (ValueError, TypeError) as exc:
            log.warning(
                "synth: warning: cache entry %s... in %s is not a stored reply (%s); "
                "asking again, the new reply replaces it",
                key[:12],
                _where(self.cache),
                exc,
            )
            return None

    def store(self, key: str, completion: Completion) -> None:
        with self._mapping("write"):
            self.cache[key] = _encode(completion)

    def forget(
        self, prompt: str, *, system: str | None = None, schema: type[BaseModel] | None = None
    ) -> bool:
        """Remove the stored reply of this request; whether there was one.

        For a reply that parsed but that its caller then found unusable (a batch it cannot match):
        kept, it would be replayed by every rerun instead of being asked again.
        """
        key = self.key(prompt, system=system, schema=schema)
        try:
            with self._mapping("delete"):
                del self.cache[key]
        except KeyError:
            return False
        return True

    async def arequest(
        self,
        prompt: str,
        *,
        system: str | None = None,
        schema: type[BaseModel] | None = None,
        label: str | None = None,
    ) -> Completion:
        key = self.key(prompt, system=system, schema=schema)
        hit = self.lookup(key)
        if hit is not None:
            return hit
        loop = asyncio.get_running_loop()
        with self._lock:
            pending = self._pending.get(key)
            if pending is None or pending[0] is not loop:
                future: asyncio.Future[Completion] = loop.create_future()
                self._pending[key] = (loop, future)
                owner = True
            else:
                future, owner = pending[1], False
        if not owner:
            try:
                return dataclasses.replace(await asyncio.shield(future), cached=True)
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if not future.cancelled() or (task is not None and task.cancelling()):
                    raise
            # the request we were waiting for was cancelled, not us: make it ourselves
            return await self.arequest(prompt, system=system, schema=schema, label=label)
        try:
            completion = await self.inner.arequest(
                prompt, system=system, schema=schema, label=label
            )
            if _usable(completion, schema):
                self.store(key, completion)
        except asyncio.CancelledError:
            future.cancel()
            raise
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved here, so an unwaited future logs nothing
            raise
        else:
            future.set_result(completion)
            return completion
        finally:
            with self._lock:
                if self._pending.get(key, (None, None))[1] is future:
                    del self._pending[key]

    def __repr__(self) -> str:
        return f"CacheModel({self.inner!r}, cache={type(self.cache).__name__})"


def forget_reply(
    llm: LLM, prompt: str, *, system: str | None = None, schema: type[BaseModel] | None = None
) -> bool:
    """Remove this request's reply from the response cache of ``llm``'s chain, if it has one."""
    cache = llm.layer(CacheModel) if isinstance(llm, WrapperModel) else None
    return cache.forget(prompt, system=system, schema=schema) if cache is not None else False


def _where(cache: MutableMapping[str, str]) -> str:
    """The cache as a line names it: its file, or the kind of mapping it is."""
    if isinstance(cache, SQLiteCache):
        return str(cache.path)
    return f"the {type(cache).__name__} cache"


def _thread_bound(exc: BaseException) -> bool:
    """Whether ``exc`` says the mapping was used outside the thread that opened it.

    sqlite3 raises ``ProgrammingError``; ``shelve`` on Python 3.13+ (``dbm.sqlite3``) re-raises it
    as its own ``OSError`` subclass with the same message, so the message is what tells.
    """
    text = str(exc)
    return (
        isinstance(exc, sqlite3.ProgrammingError | OSError)
        and "thread" in text
        and ("same thread" in text or "created in a thread" in text)
    )


def _usable(completion: Completion, schema: type[BaseModel] | None) -> bool:
    try:
        check_complete(completion)
        if schema is not None:
            parse_verdict(completion.text, schema)
    except (IncompleteCompletionError, OutputParseError):
        return False
    return True


__all__ = ["CACHE_FORMAT", "CacheModel", "cache_key", "forget_reply"]
