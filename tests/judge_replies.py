"""Faithfulness replies for scripted judges: claims first, then one verdict each, a supported
claim's evidence copied from the prompt's first context (as a careful judge quotes)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

_CONTEXT = re.compile(r'<context index="1">\n(.*?)\n</context>', re.DOTALL)


def first_context(prompt: str) -> str:
    """The first context the prompt holds (empty when it holds none)."""
    found = _CONTEXT.search(prompt)
    return found.group(1) if found else ""


def faithfulness_reply(
    prompt: str, supported: Sequence[bool], claims: Sequence[str] = ()
) -> dict[str, Any]:
    """A two-step faithfulness verdict: ``claims`` (default ``c0, c1, ...``), then one verdict per
    claim, supported ones quoting the first context's first words, unsupported ones with a reason."""
    names = list(claims) or [f"c{i}" for i in range(len(supported))]
    quote = " ".join(first_context(prompt).split()[:4])
    verdicts = [
        {"index": i, "evidence": quote, "supported": True}
        if ok
        else {"index": i, "evidence": "", "reason": "scripted", "supported": False}
        for i, ok in enumerate(supported, start=1)
    ]
    return {"claims": names, "verdicts": verdicts}
