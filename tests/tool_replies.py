"""Replies of a model that knows no synth prompt and gets tool calls wrong as real models do.

:func:`spoiling` answers every request from its JSON schema alone (the fake server's generic
mode); in a share of the replies that hold tool calls (``call_1``...), it spoils one call: names a
tool that does not exist, leaves out a required argument, or gives an argument of the wrong type.
The spoiling is drawn from the request, so a rerun of the same prompt is spoiled the same way.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from collections.abc import Callable
from typing import Any

import fake_openai

SPOILS = ("unknown_tool", "missing_required_argument", "invalid_arguments")


def spoiling(
    rate: float, required: dict[str, list[str]], seen: Counter[str] | None = None
) -> Callable[[dict[str, Any]], str]:
    """A reply function for :class:`fake_openai.FakeOpenAI` spoiling ``rate`` of the tool-call
    replies (``required``: each tool's required arguments, as the user's tool list says);
    ``seen`` counts the spoils made, by the drop reason each should cause."""

    def reply(request: dict[str, Any]) -> str:
        key = hashlib.sha256(json.dumps(request, sort_keys=True).encode()).hexdigest()
        rng = random.Random(key)
        text = fake_openai.generic_reply(request, rng)
        value = json.loads(text)
        calls = sorted(k for k in value if isinstance(k, str) and k.startswith("call_"))
        if not calls or rng.random() >= rate:
            return text
        call = value[rng.choice(calls)]
        spoil = rng.choice(SPOILS)
        arguments = call["arguments"]
        if spoil == "unknown_tool":
            call["name"] = call["name"] + "_v2"
        elif spoil == "missing_required_argument":
            given = [name for name in required.get(call["name"], []) if name in arguments]
            if not given:
                spoil = "unknown_tool"
                call["name"] = call["name"] + "_v2"
            else:
                del arguments[rng.choice(given)]
        else:
            name = rng.choice(sorted(arguments)) if arguments else None
            if name is None:
                spoil = "unknown_tool"
                call["name"] = call["name"] + "_v2"
            else:  # a list where a scalar (or an object) is due
                arguments[name] = [arguments[name]] if not isinstance(arguments[name], list) else 7
        if seen is not None:
            seen[spoil] += 1
        return json.dumps(value)

    return reply
