"""The Anthropic adapter over HTTP with the real ``anthropic`` SDK: every reply's rate-limit
headers reach the limiter, not only a 429's."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

pytest.importorskip("anthropic")

from synth.llm._rate_headers import RATE_LIMITS  # noqa: E402
from synth.llm.anthropic import AnthropicModel  # noqa: E402
from synth.llm.limiter import LimitedModel, RateLimiter  # noqa: E402

#: the budgets the fake states with every reply: 50 requests a minute, 7 left; 40,000 input
#: tokens a minute, 12,000 left
HEADERS = {
    "anthropic-ratelimit-requests-limit": "50",
    "anthropic-ratelimit-requests-remaining": "7",
    "anthropic-ratelimit-requests-reset": "2030-01-01T00:00:30Z",
    "anthropic-ratelimit-input-tokens-limit": "40000",
    "anthropic-ratelimit-input-tokens-remaining": "12000",
    "anthropic-ratelimit-input-tokens-reset": "2030-01-01T00:00:30Z",
}


class _Messages(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 (the handler's name)
        length = int(self.headers.get("content-length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        reply = {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude"),
            "content": [{"type": "text", "text": "fine"}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 11, "output_tokens": 2},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in HEADERS.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Messages)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _model(url: str) -> AnthropicModel:
    return AnthropicModel("claude-3-5-haiku", base_url=url, api_key="sk-ant-test-not-a-key")


def test_a_successful_reply_carries_the_budgets_its_headers_state(server: str) -> None:
    completion = asyncio.run(_model(server).send_request("hello", None, None))
    assert completion.text == "fine" and completion.input_tokens == 11
    limits = completion.extra[RATE_LIMITS]
    assert limits.requests is not None and limits.tokens is not None
    assert (limits.requests.limit, limits.requests.remaining) == (50, 7)
    assert (limits.tokens.limit, limits.tokens.remaining) == (40000, 12000)


def test_the_limiter_paces_to_an_anthropic_replys_budgets(server: str) -> None:
    limiter = RateLimiter(8, adaptive=True)
    llm = LimitedModel(_model(server), limiter)
    assert not limiter.paced_by_provider
    assert llm.complete("hello") == "fine"
    assert limiter.paced_by_provider and limiter.concurrency()["paced_by_provider"]
