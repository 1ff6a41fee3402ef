"""Several small connection pools: each thread keeps to one, and the SDK's client takes them."""

from __future__ import annotations

import threading
import types

import httpx2
import openai

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
