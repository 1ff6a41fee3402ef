"""Several small connection pools: each thread keeps to one, and the SDK's client takes them."""

from __future__ import annotations

import threading
import types

import httpx2
import openai
import pytest

from synth.llm._pool import PER_POOL, ShardedTransport, pooled_http_client


class Recorder:
    """Stands in for one pool: notes which thread sent each request."""

    def __init__(self) -> None:
        self.threads: list[str] = []
        self.closed = False

    def handle_request(self, request: object) -> str:
        self.threads.append(threading.current_thread().name)
        return "response"

    def close(self) -> None:
        self.closed = True


def test_each_thread_keeps_to_one_pool_and_threads_are_spread_in_turn() -> None:
    transport = ShardedTransport(httpx2, pools=3)
    recorders = [Recorder() for _ in range(3)]
    transport._pools = recorders  # type: ignore[assignment]

    def send() -> None:
        for _ in range(5):
            transport.handle_request(object())

    threads = [threading.Thread(target=send, name=f"t{i}") for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    by_pool = [set(r.threads) for r in recorders]
    assert [len(r.threads) for r in recorders] == [10, 10, 10]  # two threads each, 5 requests
    assert all(len(ids) == 2 for ids in by_pool)
    assert set.union(*by_pool) == {t.name for t in threads}
    with transport:
        pass
    assert all(r.closed for r in recorders)


def test_the_sdk_client_gets_pools_only_when_one_is_not_enough() -> None:
    assert pooled_http_client(openai, PER_POOL) is None
    assert pooled_http_client(types.SimpleNamespace(), 256) is None  # no DefaultHttpxClient
    client = pooled_http_client(openai, 100)
    assert isinstance(client, openai.DefaultHttpxClient)
    assert isinstance(client._transport, ShardedTransport) and len(client._transport) == 7
    assert client.follow_redirects  # the SDK's defaults are kept
    client.close()


class FakeHttpx:
    """The parts of httpx a ShardedTransport uses, recording where the TLS context is made."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.contexts: list[str] = []  # the thread each TLS context was made in
        self.transports: list[object] = []

    def create_ssl_context(self) -> object:
        self.contexts.append(threading.current_thread().name)
        if self.fail:
            raise OSError("no certificates")
        return "context"

    def Limits(self, **kwargs: object) -> dict[str, object]:  # noqa: N802 - httpx's name
        return kwargs

    def HTTPTransport(self, verify: object, limits: object) -> Recorder:  # noqa: N802
        assert verify == "context"
        self.transports.append(verify)
        return Recorder()


def test_the_tls_context_is_made_once_in_a_thread_of_its_own_and_the_pools_on_first_use() -> None:
    httpx = FakeHttpx()
    transport = ShardedTransport(httpx, pools=3)
    assert len(transport) == 3 and transport._pools is None  # nothing made yet but the context
    threads = [
        threading.Thread(target=transport.handle_request, args=(object(),)) for _ in range(6)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert httpx.contexts == ["synth-tls-context"]  # once, and not in a caller's thread
    assert len(httpx.transports) == 3  # one set of pools, however many threads asked at once
    transport.close()


def test_a_tls_context_that_cannot_be_made_fails_the_request_not_the_transport() -> None:
    transport = ShardedTransport(FakeHttpx(fail=True), pools=2)
    with pytest.raises(OSError, match="^no certificates$"):
        transport.handle_request(object())
    transport.close()  # nothing was opened: closing is quiet
