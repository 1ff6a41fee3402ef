"""Fake-server replies for ``bench/compare.py``: synth's prompts get synth's scripted answers, all
others (DeepEval's) the server's schema-following default.

Use as ``python tests/fake_openai.py --replies bench.compare_replies:reply`` from the repository root
(the server puts ``tests/`` on the import path, the root comes from the working folder).
"""

from __future__ import annotations

from typing import Any

import synth_replies  # tests/synth_replies.py
from fake_openai import smart_reply  # tests/fake_openai.py


def reply(request: dict[str, Any]) -> str:
    """synth_replies' answer when the request is one of synth's stages, else ``smart_reply``."""
    fmt = request.get("response_format") or {}
    name = (fmt.get("json_schema") or {}).get("name") if fmt.get("type") == "json_schema" else None
    messages = request.get("messages") or []
    prompt = "\n".join(
        m.get("content", "")
        for m in messages
        if m.get("role") != "system" and isinstance(m.get("content"), str)
    )
    if synth_replies.stage_of(prompt) != "other" or name in synth_replies._BY_SCHEMA:
        return synth_replies.reply(request)
    return smart_reply(request)
