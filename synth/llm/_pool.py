"""Connection pools for many requests in flight: several small pools instead of one large one.

The HTTP clients of the openai and anthropic SDKs keep one connection pool (httpcore's). For every
request it starts and every response it closes, that pool looks at each of its connections, and
for each idle one asks the socket whether the server has closed it (a ``select`` call). With
hundreds of requests in flight that is hundreds of checks per request, a large share of the
client's time. :class:`ShardedTransport` gives each thread one of several pools, in turn, so a pool
serves at most :data:`PER_POOL` of the model's threads (a thread has one request in flight at a
time) and its checks stay short. The pools share one TLS context: making one reads the system's
certificates (about 30 ms, mostly with the interpreter's lock released), so it is made in a thread
of its own as soon as the transport is, while the run reads its documents, and the pools on the
first request.

:func:`pooled_http_client` makes the SDK's own client class with this transport, keeping the
defaults the SDK sets (timeout, redirects, proxies from the environment); it returns None when one
pool is enough or the SDK's client cannot take a transport, and the SDK's own client is used.
"""

from __future__ import annotations

import importlib
import itertools
import math
import threading
from typing import Any

#: connections per pool
PER_POOL = 16


def pooled_http_client(sdk: Any, max_in_flight: int) -> Any | None:
    """An instance of the SDK's default HTTP client class whose requests go through
    :class:`ShardedTransport` pools sized for ``max_in_flight``; None when one pool is enough or
    the SDK does not offer what it needs."""
    factory = getattr(sdk, "DefaultHttpxClient", None)
    if max_in_flight <= PER_POOL or not isinstance(factory, type):
        return None
    httpx = _httpx_of(factory)
    if httpx is None:
        return None
    pools = math.ceil(max_in_flight / PER_POOL)
    return factory(transport=ShardedTransport(httpx, pools))


def _httpx_of(factory: type) -> Any | None:
    """The httpx package (``httpx`` or the SDK's ``httpx2``) that ``factory`` builds on."""
    for base in factory.__mro__:
        package = base.__module__.split(".")[0]
        if package.startswith("httpx"):
            module = importlib.import_module(package)
            needed = ("BaseTransport", "HTTPTransport", "Limits", "create_ssl_context")
            return module if all(hasattr(module, name) for name in needed) else None
    return None


class ShardedTransport:
    """An httpx transport with ``pools`` connection pools; each thread keeps to one of them."""

    def __init__(self, httpx: Any, pools: int, per_pool: int = PER_POOL) -> None:
        self._httpx = httpx
        self._count = pools
        # no cap on connections: a pool's threads bound them, and a cap would make requests wait
        self._limits = httpx.Limits(max_connections=None, max_keepalive_connections=per_pool)
        self._context = _Made(httpx.create_ssl_context)
        self._pools: list[Any] | None = None  # made on the first request
        self._lock = threading.Lock()
        self._turn = itertools.count()
        self._mine = threading.local()

    def __len__(self) -> int:
        return self._count

    def handle_request(self, request: Any) -> Any:
        pool = getattr(self._mine, "pool", None)
        if pool is None:
            pools = self._pools if self._pools is not None else self._make_pools()
            pool = self._mine.pool = pools[next(self._turn) % len(pools)]
        return pool.handle_request(request)

    def _make_pools(self) -> list[Any]:
        with self._lock:
            if self._pools is None:
                context = self._context.result()  # a failure to make it is raised here
                self._pools = [
                    self._httpx.HTTPTransport(verify=context, limits=self._limits)
                    for _ in range(self._count)
                ]
            return self._pools

    def close(self) -> None:
        self._context.wait()
        for pool in self._pools or []:
            pool.close()

    def __enter__(self) -> ShardedTransport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Made:
    """``make()`` called in a thread of its own at once; :meth:`result` waits for what it gave."""

    def __init__(self, make: Any) -> None:
        self._make = make
        self._value: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="synth-tls-context", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._make()
        except BaseException as exc:  # handed over to the thread that asks for the result
            self._error = exc

    def wait(self) -> None:
        self._thread.join()

    def result(self) -> Any:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value


__all__ = ["PER_POOL", "ShardedTransport", "pooled_http_client"]
