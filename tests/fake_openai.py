"""A fake OpenAI-compatible HTTP server on 127.0.0.1, for tests and benches.

The real ``openai`` SDK talks to it over HTTP. It serves ``POST /v1/chat/completions`` (with and
without ``response_format``), ``POST /v1/embeddings`` (deterministic unit vectors, float or base64)
and ``GET /v1/models``, and it can be scripted per test::

    with FakeOpenAI(latency=0.01, faults={"server_error": 0.05}, seed=1) as server:
        client = openai.OpenAI(base_url=server.url, api_key="sk-test", max_retries=0)
        ...
        assert server.request_count("chat") == 3
        assert not server.duplicates()

What a chat request is answered with (first match wins):

1. a fault taken from ``sequence`` (one entry per chat request, ``None`` = no fault), else a fault
   drawn at random from ``faults`` (``{kind: probability}``), else a 429 when more than ``rpm``
   requests arrived within ``rpm_window`` seconds, or more than ``tpm`` tokens within it (a
   request's prompt tokens, words plus 4 a message, counted when it arrives, and its completion
   tokens once answered, as a provider counts both); before all of these, a 429 at once (no
   latency) when ``max_in_flight`` requests are being served already, as a provider's concurrency
   limit answers. ``workers=N`` serves at most N requests at a time and queues the others, as a
   small local server does: the latency grows with the queue;
2. in the smart mode (the default), ``reply``: a string (the content), a dict (sent as its JSON), a
   :class:`Reply` (full control), or a callable ``(request_json) -> str | dict | Reply``; the default
   is :func:`smart_reply`, which answers a JSON-schema request (``response_format`` or a schema in
   the prompt) with a plausible object that matches it, reading the prompt's numbered items, and
   anything else with a sentence (tests/synth_replies.py answers synth's own prompts);
3. in the generic mode (``mode="generic"``), a reply made from the JSON schema alone, as any
   OpenAI-compatible server with structured outputs gives, knowing nothing of the prompt: see
   :func:`generic_reply` for the fill rules, and ``sloppy={"missing": 0.2}`` (kinds
   :data:`SLOPPY`, seeded by ``seed``) for batch replies that miss, repeat or misnumber an entry
   (:attr:`FakeOpenAI.slips` counts them); each reply is drawn from the schema, the tagged data of
   the prompt and how often that was asked, never the instructions' wording, so rewording a
   prompt does not redraw the replies a test depends on.

Fault kinds (:data:`FAULTS`): ``rate_limit`` (429 with ``retry-after-ms`` and ``Retry-After``),
``server_error`` (500), ``overloaded`` (503), ``bad_request`` (400), ``auth`` (401), ``hang`` (never
answers until the server closes), ``disconnect`` (drops the connection), ``cutoff`` (half the reply,
``finish_reason`` ``"length"``), ``content_filter`` (``finish_reason`` ``"content_filter"``),
``invalid_json`` (a broken JSON object), ``prose`` (the reply wrapped in prose), ``not_found``
(404). On embeddings (with ``"embeddings"`` in ``fault_endpoints``) the HTTP faults apply as on
chat, and :data:`EMBEDDING_FAULTS` adds ``cutoff`` (the JSON body cut in half), ``invalid_json`` (a
vector holding a string), ``wrong_count`` (one vector fewer than texts) and ``wrong_dimension``
(one vector one value short); those two mean nothing to chat. ``echo_key=True`` makes every error
reply quote the request's ``Authorization`` header, as careless gateways do.

The Batch API (``/v1/files``, ``/v1/batches``) is served by :attr:`FakeOpenAI.batches`
(tests/fake_batches.py), its lines answered by the same reply function as chat requests.

To behave like a hosted model: ``latency=(0.9, 2.1)`` (1.5 s with 40% jitter),
``token_latency=0.01`` (10 ms a completion token, waited after the reply is written) and
``prompt_cache=True`` (:class:`PromptCache`: usage counted with tiktoken, and a repeated prompt
prefix of 1,024 tokens or more reported as ``prompt_tokens_details.cached_tokens``).

``rate_headers=True`` sends OpenAI's ``x-ratelimit-limit/remaining/reset-requests`` (and
``-tokens`` with ``tpm``) with every chat reply and every ``rpm_limit`` 429, the limits stated
per ``rpm_window`` (per minute at its default), the reset as the time until the oldest counted
request leaves the window. ``refuse_at_once=True`` answers those 429s (of ``rpm`` and ``tpm``)
without the latency, as a hosted provider does: it refuses before the model does any work.

Every request is logged (:attr:`FakeOpenAI.requests`): its body, headers, outcome and status, with
the peak number of requests in flight. ``log_path=`` also appends one JSON line per request to a
file (without the ``Authorization`` header or any other credential header).

Standalone, for subprocess tests and benches (prints the base URL on its first line of stdout)::

    python tests/fake_openai.py --port 0 --latency 0.05 --fault server_error=0.05 --rpm 600 \\
        --log requests.jsonl --replies mypackage.replies:reply
    python tests/fake_openai.py --port 0 --mode generic --sloppy missing=0.2 --seed 1
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import hashlib
import importlib
import itertools
import json
import math
import random
import re
import signal
import socket
import struct
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from fake_batches import FakeBatches

FAULTS = (
    "rate_limit",
    "server_error",
    "overloaded",
    "bad_request",
    "auth",
    "hang",
    "disconnect",
    "cutoff",
    "content_filter",
    "invalid_json",
    "prose",
    "not_found",
    "wrong_count",
    "wrong_dimension",
)
#: faults that are about the HTTP exchange and so also apply to embeddings
HTTP_FAULTS = (
    "rate_limit",
    "server_error",
    "overloaded",
    "bad_request",
    "auth",
    "hang",
    "disconnect",
    "not_found",
)
#: faults an embeddings request can get: the HTTP ones, and replies that are cut off or malformed
EMBEDDING_FAULTS = (*HTTP_FAULTS, "cutoff", "invalid_json", "wrong_count", "wrong_dimension")

#: headers that carry keys (OpenAI, Azure, Anthropic, Google), never written to the log file
_CREDENTIAL_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "api-key", "x-api-key", "x-goog-api-key"}
)

ReplyFn = Callable[[dict[str, Any]], "str | dict[str, Any] | Reply"]


@dataclass
class Reply:
    """A scripted answer: content and finish reason, or a whole status/body/headers."""

    content: str | None = None
    finish_reason: str = "stop"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] | None = None  # sent as is instead of a chat completion
    usage: dict[str, int] | None = None


@dataclass
class LoggedRequest:
    """One request as the server saw it."""

    index: int
    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    started: float
    finished: float | None = None
    status: int | None = None
    outcome: str = "pending"  # "ok", a fault kind, "rpm_limit", "closed"
    usage: dict[str, Any] | None = None  # the usage the reply carried (chat and embeddings)

    @property
    def kind(self) -> str:
        return "embeddings" if self.path.endswith("/embeddings") else "chat"

    @property
    def prompt(self) -> str:
        """All message contents of a chat request, joined by newlines."""
        return "\n".join(_message_texts(self.body))

    def fingerprint(self) -> str:
        return hashlib.sha256(json.dumps(self.body, sort_keys=True).encode()).hexdigest()


# ---- the smart default reply ---------------------------------------------------------------------


def _message_texts(body: dict[str, Any]) -> list[str]:
    texts = []
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts.extend(p.get("text", "") for p in content if isinstance(p, dict))
    return texts


#: a tagged block of data in a prompt (``<context>...</context>``, ``<input index="1">...</input>``)
_TAGGED_DATA = re.compile(r"<([a-z_]+)(?: [^<>]*)?>(.*?)</\1>", re.DOTALL)

_FENCED_JSON = re.compile(r"```(?:json)?\s*\n(\{.*?\})\s*\n```", re.DOTALL)


def schema_in_prompt(body: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON schema a request asks for: ``response_format`` first, else the last one in a prompt."""
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return (fmt.get("json_schema") or {}).get("schema") or {}
    found = None
    for text in _message_texts(body):
        for match in _FENCED_JSON.finditer(text):
            try:
                obj = json.loads(match.group(1))
            except ValueError:
                continue
            if isinstance(obj, dict) and ("properties" in obj or obj.get("type") == "object"):
                found = obj
    return found


_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{2,}")
_STOP = set(
    "the and for with that this from are was were you your have has not but all any can its into "
    "json schema reply object field fields answer question return only must one text given".split()
)


_MARKER = re.compile(r"^\s*\[(?:[A-Za-z]+ )?(\d+)\]", re.MULTILINE)
_COUNT = re.compile(r"\b(\d+) (?:in all|distinct|items|inputs|questions|statements|claims)\b")


class _Writer:
    """Makes plausible values from a prompt: its sentences, its words, its numbered items."""

    def __init__(self, prompt: str, rng: random.Random) -> None:
        self.prompt, self.rng = prompt, rng
        tail = prompt[-6000:]
        self.sentences = [
            s.strip().rstrip(".!?") + "."
            for s in re.split(r"(?<=[.!?])\s+|\n+", tail)
            if 6 <= len(s.split()) <= 40
            and "{" not in s
            and "`" not in s
            and not s.strip().startswith("[")
        ]
        # topic words come from the longest paragraph: usually the document, not the instructions
        paragraphs = [p for p in re.split(r"\n\s*\n", tail) if "{" not in p] or [tail]
        body = max(paragraphs, key=len)
        self.words = [w for w in _WORD.findall(body) if w.lower() not in _STOP]
        self.markers = sorted({int(m) for m in _MARKER.findall(prompt)})
        counted = _COUNT.search(prompt)
        self.count = int(counted.group(1)) if counted else len(self.markers) or 2
        self._unused = list(self.sentences)
        rng.shuffle(self._unused)

    def topic(self, n: int = 3) -> str:
        if not self.words:
            return "the document"
        start = self.rng.randrange(len(self.words))
        return " ".join(self.words[start : start + n])

    def sentence(self) -> str:
        if not self._unused:
            self._unused = list(self.sentences)
            self.rng.shuffle(self._unused)
        if self._unused:
            return self._unused.pop()
        return f"The document discusses {self.topic()}."

    def text_for(self, name: str) -> str:
        lowered = name.lower()
        if "question" in lowered or "query" in lowered or "input" in lowered:
            return f"What does the document say about {self.topic()}?"
        if (
            "reason" in lowered
            or "explanation" in lowered
            or "rationale" in lowered
            or "feedback" in lowered
        ):
            return f"The context states this directly: {self.sentence()}"
        if "title" in lowered or "topic" in lowered or "name" in lowered:
            return self.topic().title()
        return self.sentence()


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        name = schema["$ref"].split("/")[-1]
        schema = (root.get("$defs") or root.get("definitions") or {}).get(name, {})
    return schema


def example_for_schema(
    schema: dict[str, Any], prompt: str = "", *, rng: random.Random | None = None
) -> Any:
    """A plausible value matching ``schema`` (the JSON-schema subset pydantic emits).

    Strings come from the prompt (its sentences; questions about its words), arrays have as many
    items as the prompt numbers (``[1]``, ``[2]``, ... or "3 in all"), and an integer field called
    ``index`` in the n-th item is the n-th number the prompt uses.
    """
    rng = rng or random.Random(hashlib.sha256(prompt.encode()).hexdigest())
    return _example(schema, schema, _Writer(prompt, rng), name="", position=None)


def _example(
    schema: dict[str, Any], root: dict[str, Any], writer: _Writer, name: str, position: int | None
) -> Any:
    schema = _resolve(schema, root)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [o for o in schema[key] if _resolve(o, root).get("type") != "null"]
            return _example((options or schema[key])[0], root, writer, name, position)
    if "allOf" in schema:
        return _example(schema["allOf"][0], root, writer, name, position)
    kind = schema.get("type", "object" if "properties" in schema else "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props = schema.get("properties") or {}
        return {key: _example(sub, root, writer, key, position) for key, sub in props.items()}
    if kind == "array":
        low = schema.get("minItems", 0)
        high = schema.get("maxItems", max(low, writer.count))
        count = max(low, min(high, writer.count))
        item = schema.get("items") or {"type": "string"}
        return [_example(item, root, writer, name, i) for i in range(count)]
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        high = schema.get("maximum", schema.get("exclusiveMaximum", max(low, 5)))
        if kind == "integer" and name.lower() in ("index", "id", "number") and position is not None:
            value = writer.markers[position] if position < len(writer.markers) else position + 1
            return int(min(max(value, low), high))
        value = low + (high - low) * 0.75
        return int(math.floor(value)) if kind == "integer" else round(float(value), 2)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    text = writer.text_for(name)
    if "maxLength" in schema:
        text = text[: schema["maxLength"]]
    if len(text) < schema.get("minLength", 0):
        text = text.ljust(schema["minLength"], ".")
    return text


def smart_reply(request: dict[str, Any]) -> str:
    """The default reply: a schema-shaped JSON object when one is asked for, else a sentence."""
    prompt = "\n".join(_message_texts(request))
    rng = random.Random(hashlib.sha256(prompt.encode()).hexdigest())
    schema = schema_in_prompt(request)
    if schema is not None:
        return json.dumps(example_for_schema(schema, prompt, rng=rng))
    if (request.get("response_format") or {}).get("type") == "json_object":
        return json.dumps({"answer": _Writer(prompt, rng).sentence()})
    return _Writer(prompt, rng).sentence()


# ---- the generic mode: answers from the schema alone ----------------------------------------------

#: ways a sloppy batch reply can go wrong (see :func:`generic_reply`)
SLOPPY = ("missing", "duplicated", "renumbered", "unnumbered")

_ADJECTIVES = (
    "annual quarterly remote local shared optional primary secondary detailed brief careful "
    "manual automatic wireless portable standard advanced internal external seasonal daily"
).split()
_NOUNS = (
    "report schedule device account policy budget sensor network invoice archive contract "
    "warranty battery printer module license backup workflow dashboard supplier garden recipe "
    "library museum harbour vehicle ticket engine lesson meeting"
).split()
_VERBS = (
    "describes requires updates limits explains covers lists replaces extends protects "
    "measures records tracks schedules reviews"
).split()
_PLACES = "office warehouse clinic school station kitchen factory studio branch depot".split()


def _sentence(rng: random.Random) -> str:
    a, b = rng.sample(_ADJECTIVES, 2)
    n1, n2 = rng.sample(_NOUNS, 2)
    return (
        f"The {a} {n1} {rng.choice(_VERBS)} the {b} {n2} at the {rng.choice(_PLACES)} "
        f"{rng.randint(2, 999)}."
    )


def _index_like(item: dict[str, Any], root: dict[str, Any]) -> str | None:
    """The name of an object's numbering property: ``index``, else an integer with a minimum."""
    props = _resolve(item, root).get("properties") or {}
    named = [k for k, v in props.items() if _resolve(v, root).get("type") == "integer"]
    if "index" in named:
        return "index"
    bounded = [k for k in named if "minimum" in _resolve(props[k], root)]
    return bounded[0] if bounded else None


def _chosen(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """The schema a value is written from: ``schema`` resolved, a union's first non-null option."""
    schema = _resolve(schema, root)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [o for o in schema[key] if _resolve(o, root).get("type") != "null"]
            return _chosen((options or schema[key])[0], root)
    return schema


class _Generic:
    """Fills a JSON schema like a careful model with structured outputs, knowing no prompt."""

    def __init__(self, root: dict[str, Any], rng: random.Random, sloppy: dict[str, float]) -> None:
        self.root, self.rng, self.sloppy = root, rng, sloppy
        self.slips: list[str] = []

    def value(self, schema: dict[str, Any]) -> Any:
        schema = _resolve(schema, self.root)
        if "const" in schema:
            return schema["const"]
        if schema.get("enum"):
            # the first member, as a model that cannot read the prompt writes the first value it
            # is offered (a verdict schema lists its passing value first)
            return schema["enum"][0]
        for key in ("anyOf", "oneOf"):
            if key in schema:
                options = [o for o in schema[key] if _resolve(o, self.root).get("type") != "null"]
                return self.value((options or schema[key])[0])
        if "allOf" in schema:
            return self.value(schema["allOf"][0])
        kind = schema.get("type", "object" if "properties" in schema else "string")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        if kind == "object":
            props = schema.get("properties") or {}
            return {key: self.value(sub) for key, sub in props.items()}
        if kind == "array":
            return self.array(schema)
        if kind in ("integer", "number"):
            low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
            high = schema.get("maximum", schema.get("exclusiveMaximum", low + 1))
            value = low + (high - low) * 0.75
            return int(math.floor(value)) if kind == "integer" else round(float(value), 2)
        if kind == "boolean":
            return True
        if kind == "null":
            return None
        text = _sentence(self.rng)
        if "maxLength" in schema:
            text = text[: schema["maxLength"]]
        return text.ljust(schema.get("minLength", 0), ".")

    def array(self, schema: dict[str, Any]) -> list[Any]:
        low = schema.get("minItems", 0)
        high = schema.get("maxItems", max(low, 3))
        count = min(max(low, 3), high)
        item = schema.get("items") or {"type": "string"}
        shape = _chosen(item, self.root)  # the object written: a union's first option
        number = _index_like(shape, self.root) if shape.get("properties") else None
        entries = [self.value(item) for _ in range(count)]
        if number is None or not entries:
            return entries
        bounds = _resolve(shape["properties"][number], self.root)
        for position, entry in enumerate(entries):  # a careful model numbers in order
            entry[number] = int(
                min(bounds.get("minimum", 1) + position, bounds.get("maximum", math.inf))
            )
        return self.slip(entries, number)

    def slip(self, entries: list[dict[str, Any]], number: str) -> list[dict[str, Any]]:
        draw = self.rng.random()
        slip = None
        for kind, rate in self.sloppy.items():
            if draw < rate:
                slip = kind
                break
            draw -= rate
        if slip is None:
            return entries
        self.slips.append(slip)
        at = self.rng.randrange(len(entries))
        if slip == "missing":
            return entries[:at] + entries[at + 1 :]
        if slip == "duplicated":
            return entries[: at + 1] + [dict(entries[at])] + entries[at + 1 :]
        if slip == "renumbered":
            shift = self.rng.choice((-1, 1))
            return [{**e, number: e[number] + shift} for e in entries]
        return [{**e, number: 1} for e in entries]  # unnumbered: all the same number


def generic_reply(
    request: dict[str, Any], rng: random.Random, sloppy: dict[str, float] | None = None
) -> str:
    """A reply made from the request's JSON schema alone, as a model with structured outputs gives.

    Fill rules: every property present (so every required one); strings are generic sentences
    (nothing taken from the prompt); numbers three quarters of the way from ``minimum`` to
    ``maximum`` (0 and 1 when unbounded); an enum gives its first member; arrays have ``minItems`` entries
    but at least 3, never more than ``maxItems``; in an array of objects, the numbering property
    (``index``, else the first integer with a ``minimum``) is ``minimum + position``, capped at
    ``maximum`` (a careful model numbers in order). ``sloppy`` (``{kind: probability}``, kinds
    :data:`SLOPPY`) spoils arrays of numbered objects: ``missing`` drops one entry,
    ``duplicated`` repeats one, ``renumbered`` shifts every number by one (0-based or from 2),
    ``unnumbered`` gives all the number 1. A request without a schema gets a sentence.
    """
    schema = schema_in_prompt(request)
    if schema is None:
        return _sentence(rng)
    return json.dumps(_Generic(schema, rng, dict(sloppy or {})).value(schema))


def _word_count(text: str) -> int:
    return len(text.split())


def _embedding(text: str, dim: int) -> list[float]:
    values: list[float] = []
    counter = 0
    while len(values) < dim:
        digest = hashlib.sha256(f"{counter}:{text}".encode()).digest()
        values.extend((b - 127.5) / 127.5 for b in digest)
        counter += 1
    values = values[:dim]
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / norm for v in values]


# ---- the provider's prompt cache -------------------------------------------------------------------


class PromptCache:
    """The provider's automatic prompt cache, as OpenAI documents it for its chat models.

    A prompt of at least :attr:`MIN` tokens whose beginning repeats an earlier request's is served
    partly from the cache: ``usage.prompt_tokens_details.cached_tokens`` is the longest repeated
    prefix, counted in steps of :attr:`STEP` tokens from :attr:`MIN`. The messages are read in
    order (role, then content), so a system message and a context put first are what repeats. A
    prefix is cached once its request has been answered: requests sent together all miss, as with
    the real cache. Tokens are counted with tiktoken's ``cl100k_base`` (its offline copy).
    """

    MIN, STEP = 1024, 128

    def __init__(self) -> None:
        from synth._tokens import get_encoding

        self._encoding = get_encoding("cl100k_base")
        self._seen: set[bytes] = set()
        self._lock = threading.Lock()

    def tokens(self, body: dict[str, Any]) -> list[int]:
        """The request's prompt as tokens: each message's role and content, in order."""
        out: list[int] = []
        for message in body.get("messages") or []:
            text = "\n".join(_message_texts({"messages": [message]}))
            out += self._encoding.encode(f"<|{message.get('role', 'user')}|>\n{text}\n")
        return out

    def prefixes(self, tokens: list[int]) -> list[bytes]:
        """The digests of ``tokens``' cacheable prefixes, shortest first."""
        digests, hasher, done = [], hashlib.sha256(), 0
        for end in range(self.MIN, len(tokens) + 1, self.STEP):
            hasher.update(struct.pack(f"<{end - done}I", *tokens[done:end]))
            digests.append(hasher.copy().digest())
            done = end
        return digests

    def usage(self, body: dict[str, Any], content: str) -> tuple[dict[str, Any], list[bytes]]:
        """The reply's usage, with the cached tokens, and the prefixes to remember once answered."""
        tokens = self.tokens(body)
        digests = self.prefixes(tokens)
        with self._lock:
            hits = sum(1 for _ in itertools.takewhile(lambda d: d in self._seen, digests))
        cached = self.MIN + (hits - 1) * self.STEP if hits else 0
        completion = max(1, len(self._encoding.encode(content)))
        usage = {
            "prompt_tokens": len(tokens),
            "completion_tokens": completion,
            "total_tokens": len(tokens) + completion,
            "prompt_tokens_details": {"cached_tokens": cached},
        }
        return usage, digests

    def remember(self, digests: list[bytes]) -> None:
        with self._lock:
            self._seen.update(digests)


# ---- the server ----------------------------------------------------------------------------------


class FakeOpenAI:
    """A scriptable OpenAI-compatible server on 127.0.0.1; a context manager.

    Parameters may be changed between requests (``server.reply = ...``, ``server.faults = {...}``).
    """

    def __init__(
        self,
        *,
        reply: str | dict[str, Any] | Reply | ReplyFn | None = None,
        mode: str = "smart",
        sloppy: dict[str, float] | None = None,
        latency: float | tuple[float, float] = 0.0,
        embedding_latency: float | None = None,
        token_latency: float = 0.0,
        prompt_cache: bool = False,
        faults: dict[str, float] | None = None,
        sequence: Iterable[str | None] = (),
        fault_endpoints: Iterable[str] = ("chat",),
        rpm: int | None = None,
        rpm_window: float = 60.0,
        tpm: int | None = None,
        rate_headers: bool = False,
        refuse_at_once: bool = False,
        max_in_flight: int | None = None,
        workers: int | None = None,
        retry_after: float | None = 0.01,
        embedding_dim: int = 64,
        echo_key: bool = False,
        seed: int = 0,
        host: str = "127.0.0.1",
        port: int = 0,
        log_path: str | None = None,
    ) -> None:
        if mode not in ("smart", "generic"):
            raise ValueError(f"mode is 'smart' or 'generic', got {mode!r}")
        if mode == "generic" and reply is not None:
            raise ValueError("the generic mode makes its own replies: give no reply=")
        unknown = set(sloppy or {}) - set(SLOPPY)
        if unknown:
            raise ValueError(f"unknown sloppy kinds {sorted(unknown)}; known: {', '.join(SLOPPY)}")
        self.reply = reply
        self.mode = mode
        self.sloppy = dict(sloppy or {})
        #: how many batch replies the generic mode spoiled, by sloppy kind
        self.slips: Counter[str] = Counter()
        self._seen: dict[str, int] = {}
        self.seed = seed
        self.latency = latency
        #: seconds before each embeddings answer (None: ``latency``, as chat's)
        self.embedding_latency = embedding_latency
        #: seconds per completion token, after ``latency`` (a hosted model writes its reply)
        self.token_latency = token_latency
        #: the provider's automatic prompt cache (None: every prompt token is billed in full)
        self.prompt_cache = PromptCache() if prompt_cache else None
        self.faults = dict(faults or {})
        self.sequence: deque[str | None] = deque(sequence)
        #: faults for the next embeddings requests, taken before ``sequence`` (see queue_faults)
        self.embedding_sequence: deque[str | None] = deque()
        self.fault_endpoints = set(fault_endpoints)
        self.rpm = rpm
        self.rpm_window = rpm_window
        self.tpm = tpm
        self.rate_headers = rate_headers
        self.refuse_at_once = refuse_at_once
        self._spent: deque[list[float]] = deque()  # [accepted at, tokens] for tpm
        self.max_in_flight = max_in_flight
        self._serving = 0  # admitted under max_in_flight, not yet answered
        self.workers = workers
        self._busy = 0  # requests being served by the workers
        self._queued: deque[threading.Event] = deque()  # waiting for a worker, first come first
        self.retry_after = retry_after
        self.embedding_dim = embedding_dim
        #: answer embeddings as lists of numbers even when base64 is asked for (as some
        #: OpenAI-compatible servers do)
        self.lists_only = False
        self.echo_key = echo_key
        self.log_path = log_path
        self._check_faults()
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._log: list[LoggedRequest] = []
        self._accepted: deque[float] = deque()
        self._in_flight = 0
        self.peak_in_flight = 0
        self._host, self._port = host, port
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        #: the Batch API's files and jobs (tests/fake_batches.py)
        self.batches = FakeBatches(self, seed=seed)

    # -- lifecycle
    def start(self) -> FakeOpenAI:
        handler = type("Handler", (_Handler,), {"fake": self})
        server_class = type(
            "Server",
            (ThreadingHTTPServer,),
            {"request_queue_size": 256, "handle_error": _quiet_handle_error},
        )
        self._server = server_class((self._host, self._port), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-openai",
            daemon=True,
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving; hung requests are released (their connections are dropped)."""
        self._closing.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def port(self) -> int:
        assert self._server is not None, "the server is not started"
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        """The base URL to give a client, ending in ``/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def base_url(self) -> str:
        """Same as :attr:`url` (the name ``OPENAI_BASE_URL`` uses)."""
        return self.url

    def client(self, *, api_key: str = "sk-fake-test-key", **kwargs: Any) -> Any:
        """An ``openai.OpenAI`` client pointed here (SDK retries off unless asked)."""
        import openai

        kwargs.setdefault("max_retries", 0)
        return openai.OpenAI(base_url=self.url, api_key=api_key, **kwargs)

    def async_client(self, *, api_key: str = "sk-fake-test-key", **kwargs: Any) -> Any:
        import openai

        kwargs.setdefault("max_retries", 0)
        return openai.AsyncOpenAI(base_url=self.url, api_key=api_key, **kwargs)

    # -- scripting
    def queue_faults(self, *kinds: str | None, endpoint: str | None = None) -> None:
        """Answer the next requests with these faults, in order (``None`` = answer normally).

        ``endpoint="embeddings"`` queues them for embeddings requests only (whatever
        ``fault_endpoints`` says), so chat requests in between do not take them."""
        known = EMBEDDING_FAULTS if endpoint == "embeddings" else FAULTS
        for kind in kinds:
            if kind is not None and kind not in known:
                raise ValueError(f"unknown fault {kind!r}; known: {', '.join(known)}")
        (self.embedding_sequence if endpoint == "embeddings" else self.sequence).extend(kinds)

    def _check_faults(self) -> None:
        for kind, rate in self.faults.items():
            if kind not in FAULTS:
                raise ValueError(f"unknown fault {kind!r}; known: {', '.join(FAULTS)}")
            if not 0 <= rate <= 1:
                raise ValueError(f"fault rate for {kind!r} must be in [0, 1], got {rate}")
        if sum(self.faults.values()) > 1:
            raise ValueError("fault rates add up to more than 1")

    # -- the log
    @property
    def requests(self) -> list[LoggedRequest]:
        with self._lock:
            return list(self._log)

    def requests_to(self, kind: str) -> list[LoggedRequest]:
        """Logged requests to ``"chat"`` or ``"embeddings"``."""
        return [r for r in self.requests if r.kind == kind]

    def request_count(self, kind: str | None = None) -> int:
        return len(self.requests if kind is None else self.requests_to(kind))

    def outcomes(self) -> dict[str, int]:
        """How many requests ended each way: ``{"ok": 480, "server_error": 25, ...}``."""
        counts: dict[str, int] = {}
        for r in self.requests:
            counts[r.outcome] = counts.get(r.outcome, 0) + 1
        return counts

    def duplicates(self, *, outcome: str | None = "ok") -> list[dict[str, Any]]:
        """Request bodies answered (``outcome``) more than once: a cache or resume should make none."""
        seen: dict[str, int] = {}
        bodies: dict[str, dict[str, Any]] = {}
        for r in self.requests:
            if outcome is not None and r.outcome != outcome:
                continue
            key = r.fingerprint()
            seen[key] = seen.get(key, 0) + 1
            bodies[key] = r.body
        return [bodies[k] for k, n in seen.items() if n > 1]

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def reset(self) -> None:
        """Forget the log, the peak and the rpm window (the script stays)."""
        with self._lock:
            self._log.clear()
            self._accepted.clear()
            self._spent.clear()
            self.peak_in_flight = self._in_flight

    # -- decisions (called by the handler)
    def _begin(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> LoggedRequest:
        with self._lock:
            entry = LoggedRequest(len(self._log), path, body, headers, time.monotonic())
            self._log.append(entry)
            self._in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self._in_flight)
            return entry

    def _end(self, entry: LoggedRequest, status: int | None, outcome: str) -> None:
        with self._lock:
            entry.finished = time.monotonic()
            entry.status = status
            entry.outcome = outcome
            self._in_flight -= 1
            if self.log_path:
                row = asdict(entry)
                row["headers"] = {
                    k: v for k, v in entry.headers.items() if k not in _CREDENTIAL_HEADERS
                }
                with open(self.log_path, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps(row) + "\n")

    def limit_headers(self) -> dict[str, str]:
        """OpenAI's rate-limit headers for the windows as they are now (``rate_headers``)."""
        if not self.rate_headers:
            return {}
        now, out = time.monotonic(), {}
        with self._lock:
            for kind, limit, used, first in (
                ("requests", self.rpm, len(self._accepted), self._accepted[0] if self._accepted else None),
                ("tokens", self.tpm, sum(n for _, n in self._spent), self._spent[0][0] if self._spent else None),
            ):  # fmt: skip
                if limit is None:
                    continue
                reset = 0.0 if first is None else max(0.0, first + self.rpm_window - now)
                out[f"x-ratelimit-limit-{kind}"] = str(limit)
                out[f"x-ratelimit-remaining-{kind}"] = str(max(0, limit - used))
                out[f"x-ratelimit-reset-{kind}"] = f"{reset:.3f}s"
        return out

    def _choose_fault(
        self, kind: str, tokens: int = 0, spent: list[list[float]] | None = None
    ) -> tuple[str | None, float | None]:
        """The fault for the next request, or ``("rpm_limit", wait)``, or ``(None, None)``."""
        with self._lock:
            fault: str | None = None
            if kind == "embeddings" and self.embedding_sequence:
                fault = self.embedding_sequence.popleft()
            elif kind in self.fault_endpoints:
                if self.sequence:
                    fault = self.sequence.popleft()
                elif self.faults:
                    draw = self._rng.random()
                    for name, rate in self.faults.items():
                        if draw < rate:
                            fault = name
                            break
                        draw -= rate
            if kind == "embeddings" and fault not in EMBEDDING_FAULTS:
                fault = None
            if fault is not None:
                return fault, None
            now = time.monotonic()
            if self.tpm is not None and kind == "chat":
                while self._spent and now - self._spent[0][0] >= self.rpm_window:
                    self._spent.popleft()
                used = sum(n for _, n in self._spent)
                if used + tokens > self.tpm and self._spent:
                    return "rpm_limit", self._spent[0][0] + self.rpm_window - now
            if self.rpm is not None:
                while self._accepted and now - self._accepted[0] >= self.rpm_window:
                    self._accepted.popleft()
                if len(self._accepted) >= self.rpm:
                    return "rpm_limit", self._accepted[0] + self.rpm_window - now
                self._accepted.append(now)
            if self.tpm is not None and kind == "chat":
                self._spent.append([now, tokens])
                if spent is not None:  # the caller adds the completion tokens to it
                    spent.append(self._spent[-1])
            return None, None

    def _spend(self, entry: list[float], tokens: int) -> None:
        """Add a reply's completion tokens to the tpm window entry of its request."""
        with self._lock:
            entry[1] += tokens

    def _admit(self) -> bool:
        """Whether a request is served under ``max_in_flight`` (then it counts until _leave)."""
        with self._lock:
            if self.max_in_flight is not None and self._serving >= self.max_in_flight:
                return False
            self._serving += 1
            return True

    def _leave(self) -> None:
        with self._lock:
            self._serving -= 1

    @contextlib.contextmanager
    def _worker(self) -> Iterator[None]:
        """One of the ``workers`` for the request's time, if limited: waiting in turn (first come,
        first served, as a server's queue does)."""
        if self.workers is None:
            yield
            return
        with self._lock:
            turn = None
            if self._busy < self.workers:
                self._busy += 1
            else:
                turn = threading.Event()
                self._queued.append(turn)
        while turn is not None and not turn.wait(0.05) and not self._closing.is_set():
            pass
        try:
            yield
        finally:
            with self._lock:
                if self._queued:
                    self._queued.popleft().set()  # the worker passes to the next in line
                else:
                    self._busy -= 1

    def _latency(self) -> float:
        if isinstance(self.latency, tuple):
            with self._lock:
                return self._rng.uniform(*self.latency)
        return float(self.latency)

    def _answer(self, body: dict[str, Any]) -> Reply:
        if self.mode == "generic":
            return Reply(content=self._generic(body))
        script = self.reply if self.reply is not None else smart_reply
        value = script(body) if callable(script) else script
        if isinstance(value, Reply):
            return value
        if isinstance(value, dict):
            return Reply(content=json.dumps(value))
        return Reply(content=str(value))

    def _generic(self, body: dict[str, Any]) -> str:
        # drawn from the request and how many times it was seen, so which replies are spoiled does
        # not depend on the order concurrent requests arrive in, and a re-ask is answered afresh;
        # the request is what it asks for (the schema) and the tagged data it gives, not the
        # wording of its instructions, so a better prompt draws the same replies
        said = [m for m in body.get("messages") or [] if m.get("role") != "system"]
        data = _TAGGED_DATA.findall("\n".join(_message_texts({"messages": said})))
        asked = [body.get("response_format"), body.get("tools"), data] if data else body
        key = hashlib.sha256(json.dumps(asked, sort_keys=True).encode()).hexdigest()
        with self._lock:
            nth = self._seen[key] = self._seen.get(key, 0) + 1
        rng = random.Random(f"{self.seed}:{key}:{nth}")
        schema = schema_in_prompt(body)
        if schema is None:
            return _sentence(rng)
        generic = _Generic(schema, rng, self.sloppy)
        content = json.dumps(generic.value(schema))
        with self._lock:
            self.slips.update(generic.slips)
        return content


def completion_payload(
    body: dict[str, Any], content: str, finish: str, usage: dict[str, int] | None
) -> dict[str, Any]:
    """The chat completion the server answers ``body`` with (also a batch line's body)."""
    prompt_tokens = sum(_word_count(t) + 4 for t in _message_texts(body))
    completion_tokens = max(1, _word_count(content))
    return {
        "id": f"chatcmpl-{hashlib.sha256(content.encode()).hexdigest()[:12]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake-model"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None},
                "logprobs": None,
                "finish_reason": finish,
            }
        ],
        "usage": usage
        or {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _quiet_handle_error(server: ThreadingHTTPServer, request: Any, client_address: Any) -> None:
    """A client that went away (killed, timed out) is not worth a traceback on stderr."""
    if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
        return
    ThreadingHTTPServer.handle_error(server, request, client_address)


#: fault -> (status, message, error type) of the HTTP error it answers with
_HTTP_ERRORS = {
    "rpm_limit": (429, "requests per minute exceeded", "rate_limit_exceeded"),
    "concurrency_limit": (429, "too many requests in flight", "rate_limit_exceeded"),
    "rate_limit": (429, "rate limit reached", "rate_limit_exceeded"),
    "server_error": (500, "the server had an error", "server_error"),
    "overloaded": (503, "the engine is overloaded", "server_error"),
    "bad_request": (400, "invalid request", "invalid_request_error"),
    "auth": (401, "incorrect API key provided", "invalid_api_key"),
    "not_found": (404, "the model or route does not exist", "not_found"),
}


def _error_body(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": kind}}


def _retry_headers(seconds: float | None) -> dict[str, str]:
    if seconds is None:
        return {}
    seconds = max(seconds, 0.0)
    return {"retry-after-ms": str(int(math.ceil(seconds * 1000))), "retry-after": f"{seconds:.3f}"}


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOpenAI
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out at once, no delayed-ACK stalls
    wbufsize = -1

    def log_message(self, format: str, *args: Any) -> None:  # silence the default stderr log
        pass

    # -- plumbing
    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _error(self, status: int, message: str, kind: str) -> None:
        self._send_json(status, _error_body(message, kind))

    def _batches(self, method: str) -> bool:
        """Serve a Batch API route (tests/fake_batches.py); whether the path was one."""
        if not self.fake.batches.handles(self.path):
            return False
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        status, payload = self.fake.batches.serve(method, self.path, self.headers, raw)
        self._send_json(status, payload)
        return True

    def do_GET(self) -> None:
        if self._batches("GET"):
            return
        if self.path.rstrip("/").endswith("/models"):
            self._send_json(
                200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]}
            )
        else:
            self._error(404, f"no route {self.path}", "not_found")

    def do_POST(self) -> None:
        if self._batches("POST"):
            return
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._error(400, "request body is not JSON", "invalid_request_error")
            return
        path = self.path.split("?", 1)[0].rstrip("/")
        if not (path.endswith("/chat/completions") or path.endswith("/embeddings")):
            self._error(404, f"no route {self.path}", "not_found")
            return
        fake = self.fake
        entry = fake._begin(path, body, {k.lower(): v for k, v in self.headers.items()})
        try:
            status, outcome, payload, headers = self._serve(entry, body)
        except Exception as exc:  # a test's reply function failed: answer 500 and say why
            status, outcome = 500, "reply_error"
            payload, headers = _error_body(f"reply function raised {exc!r}", "server_error"), {}
        fake._end(entry, status, outcome)  # logged before the client can see the reply
        if payload is None:
            return
        try:
            self._send_json(status or 500, payload, headers)
        except (BrokenPipeError, ConnectionResetError):
            entry.outcome = "client_gone"

    def _serve(
        self, entry: LoggedRequest, body: dict[str, Any]
    ) -> tuple[int | None, str, Any, dict[str, str]]:
        """``(status, outcome, payload, headers)``; no payload means no reply at all."""
        fake = self.fake
        if not fake._admit():
            status, message, kind = _HTTP_ERRORS["concurrency_limit"]
            return (
                status,
                "concurrency_limit",
                _error_body(message, kind),
                _retry_headers(fake.retry_after),
            )
        try:
            with fake._worker():
                return self._serve_admitted(entry, body)
        finally:
            fake._leave()

    def _serve_admitted(
        self, entry: LoggedRequest, body: dict[str, Any]
    ) -> tuple[int | None, str, Any, dict[str, str]]:
        fake = self.fake
        tokens = 0
        if fake.tpm is not None and entry.kind == "chat":
            tokens = sum(_word_count(t) + 4 for t in _message_texts(body))
        spent: list[list[float]] = []
        fault, wait = fake._choose_fault(entry.kind, tokens, spent)
        if fault == "hang":
            fake._closing.wait()
            self.close_connection = True
            return None, "hang", None, {}
        if fault == "disconnect":
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return None, "disconnect", None, {}
        delay = fake._latency()
        if entry.kind == "embeddings" and fake.embedding_latency is not None:
            delay = fake.embedding_latency
        if fault == "rpm_limit" and fake.refuse_at_once:
            delay = 0.0
        if delay > 0 and fake._closing.wait(delay):
            self.close_connection = True
            return None, "closed", None, {}
        if fault in _HTTP_ERRORS:
            status, message, kind = _HTTP_ERRORS[fault]
            headers = {}
            if fault == "rpm_limit":
                headers = {**_retry_headers(wait), **fake.limit_headers()}
            elif fault == "rate_limit":
                headers = _retry_headers(fake.retry_after)
            if fake.echo_key:
                message += f" (you sent {entry.headers.get('authorization')})"
            return status, fault, _error_body(message, kind), headers
        if entry.kind == "embeddings":
            answer = self._embeddings(body, fault)
            if isinstance(answer, dict):
                entry.usage = answer.get("usage")
            return 200, fault or "ok", answer, {}
        reply = fake._answer(body)
        if reply.body is not None or reply.status != 200:
            payload = reply.body if reply.body is not None else _error_body("scripted", "scripted")
            outcome = "ok" if reply.status == 200 else f"status_{reply.status}"
            return reply.status, outcome, payload, reply.headers
        content, finish = reply.content or "", reply.finish_reason
        if fault == "cutoff":
            content, finish = content[: max(1, len(content) // 2)], "length"
        elif fault == "content_filter":
            content, finish = "", "content_filter"
        elif fault == "invalid_json":
            if content.lstrip().startswith("{"):
                content = content.rstrip().rstrip("}") + ', "broken": }'
            else:
                content = '{"answer": "' + content
        elif fault == "prose":
            content = (
                f"Sure! Here is the JSON you asked for:\n{content}\nLet me know if you need more."
            )
        payload = self._completion(body, content, finish, reply.usage)
        remember: list[bytes] = []
        if fake.prompt_cache is not None and reply.usage is None:
            payload["usage"], remember = fake.prompt_cache.usage(body, content)
        writing = fake.token_latency * payload["usage"]["completion_tokens"]
        if writing > 0 and fake._closing.wait(writing):
            self.close_connection = True
            return None, "closed", None, {}
        if fake.prompt_cache is not None:
            fake.prompt_cache.remember(remember)
        entry.usage = payload["usage"]
        if spent:
            fake._spend(spent[0], int(payload["usage"]["completion_tokens"]))
        return 200, fault or "ok", payload, {**fake.limit_headers(), **reply.headers}

    def _completion(
        self, body: dict[str, Any], content: str, finish: str, usage: dict[str, int] | None
    ) -> dict[str, Any]:
        return completion_payload(body, content, finish, usage)

    def _embeddings(self, body: dict[str, Any], fault: str | None = None) -> Any:
        """The embeddings reply (a dict), spoilt by ``fault`` (bytes when cut off)."""
        payload = self._embedding_vectors(body)
        data = payload["data"]
        if fault == "wrong_count" and data:
            data.pop()
        elif fault == "wrong_dimension" and data:
            first = data[0]["embedding"]
            if isinstance(first, list):
                data[0]["embedding"] = first[:-1]
            else:  # base64: one float32 fewer
                data[0]["embedding"] = base64.b64encode(base64.b64decode(first)[:-4]).decode()
        elif fault == "invalid_json" and data:
            if isinstance(data[0]["embedding"], list):
                data[0]["embedding"][0] = "NaN-ish"
            else:
                data[0]["embedding"] = "NaN-ish"
        elif fault == "cutoff":
            raw = json.dumps(payload).encode()
            return raw[: len(raw) // 2]
        return payload

    def _embedding_vectors(self, body: dict[str, Any]) -> dict[str, Any]:
        inputs = body.get("input", "")
        if isinstance(inputs, str) or (inputs and isinstance(inputs[0], int)):
            inputs = [inputs]
        dim = int(body.get("dimensions") or self.fake.embedding_dim)
        data = []
        for i, item in enumerate(inputs):
            text = item if isinstance(item, str) else json.dumps(item)
            vector: Any = _embedding(text, dim)
            if body.get("encoding_format") == "base64" and not self.fake.lists_only:
                vector = base64.b64encode(struct.pack(f"<{dim}f", *vector)).decode()
            data.append({"object": "embedding", "index": i, "embedding": vector})
        tokens = sum(_word_count(t) if isinstance(t, str) else len(t) for t in inputs)
        return {
            "object": "list",
            "data": data,
            "model": body.get("model", "fake-embedding"),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }


# ---- standalone ----------------------------------------------------------------------------------


def load_reply(spec: str) -> ReplyFn:
    """Import ``module:function`` (the current folder is importable)."""
    module_name, _, attr = spec.partition(":")
    if not attr:
        raise SystemExit(f"--replies takes module:function, got {spec!r}")
    if "" not in sys.path:
        sys.path.insert(0, "")
    return getattr(importlib.import_module(module_name), attr)


def _parse_fault(text: str) -> tuple[str, float]:
    kind, _, rate = text.partition("=")
    return kind, float(rate or 1.0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="A fake OpenAI-compatible server on 127.0.0.1.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each answer")
    parser.add_argument("--latency-max", type=float, help="with --latency: a uniform range")
    parser.add_argument(
        "--embedding-latency", type=float, help="seconds before each embeddings answer"
    )
    parser.add_argument(
        "--token-latency", type=float, default=0.0, help="seconds per completion token"
    )
    parser.add_argument(
        "--prompt-cache",
        action="store_true",
        help="the provider's automatic prompt cache (cached_tokens in usage, tiktoken counts)",
    )
    parser.add_argument(
        "--fault", action="append", default=[], metavar="KIND=RATE", help=", ".join(FAULTS)
    )
    parser.add_argument(
        "--sequence", default="", help="comma-separated faults for the first requests ('-' = none)"
    )
    parser.add_argument("--rpm", type=int, help="requests per window above which 429 is returned")
    parser.add_argument("--rpm-window", type=float, default=60.0)
    parser.add_argument("--tpm", type=int, help="prompt tokens per window above which 429")
    parser.add_argument("--rate-headers", action="store_true", help="send x-ratelimit-* headers")
    parser.add_argument(
        "--refuse-at-once", action="store_true", help="answer rpm/tpm 429s without the latency"
    )
    parser.add_argument(
        "--max-in-flight", type=int, help="requests served at once above which 429 is returned"
    )
    parser.add_argument("--workers", type=int, help="requests served at once; the rest queue")
    parser.add_argument("--retry-after", type=float, default=0.01)
    parser.add_argument("--replies", help="module:function taking the request JSON")
    parser.add_argument(
        "--mode",
        choices=("smart", "generic"),
        default="smart",
        help="generic: answer from the JSON schema alone, knowing no prompt",
    )
    parser.add_argument(
        "--sloppy",
        action="append",
        default=[],
        metavar="KIND=RATE",
        help="with --mode generic, spoil batch replies: " + ", ".join(SLOPPY),
    )
    parser.add_argument("--reply-text", help="a fixed reply content")
    parser.add_argument("--embedding-dim", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--log", help="append one JSON line per request to this file")
    args = parser.parse_args(argv)

    reply: Any = load_reply(args.replies) if args.replies else args.reply_text
    latency: float | tuple[float, float] = args.latency
    if args.latency_max is not None:
        latency = (args.latency, args.latency_max)
    sequence = (
        [None if s in ("-", "") else s for s in args.sequence.split(",")] if args.sequence else []
    )
    server = FakeOpenAI(
        reply=reply,
        mode=args.mode,
        sloppy=dict(_parse_fault(f) for f in args.sloppy),
        latency=latency,
        embedding_latency=args.embedding_latency,
        token_latency=args.token_latency,
        prompt_cache=args.prompt_cache,
        faults=dict(_parse_fault(f) for f in args.fault),
        sequence=sequence,
        rpm=args.rpm,
        rpm_window=args.rpm_window,
        tpm=args.tpm,
        rate_headers=args.rate_headers,
        refuse_at_once=args.refuse_at_once,
        max_in_flight=args.max_in_flight,
        workers=args.workers,
        retry_after=args.retry_after,
        embedding_dim=args.embedding_dim,
        seed=args.seed,
        host=args.host,
        port=args.port,
        log_path=args.log,
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    with server:
        print(server.url, flush=True)
        stop.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
