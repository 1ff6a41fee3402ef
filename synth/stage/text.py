"""Rendering helpers shared by the stage prompts: tagged contexts and items, styling blocks.

Documents and model output are untrusted: they reach a prompt only through these helpers, inside
tags and escaped (see ``synth._untrusted``), never pasted as they are. What each template variable
holds:

- ``$context``: ``<context>`` around the text of a one-chunk context, or around one
  ``<passage index="i">`` per chunk; ``(no context given)`` when there is none.
- ``$chunks`` (critic): ``<passages>`` around one ``<passage index="i">`` per chunk.
- ``$inputs`` (filter, expected): ``<inputs>`` around one ``<input index="i">`` per input.
- ``$examples``: ``<examples>`` around one ``<example index="i">`` per example.
- ``$items`` (rewrite): ``<items>`` around one ``<item index="i">`` holding an ``<input>`` and its
  ``<feedback>``.
- ``$input`` (evolve, style): the one input inside ``<input>``.
"""

from __future__ import annotations

from collections.abc import Sequence

from synth._untrusted import tag, tag_list, wrap
from synth.data import Context

NO_CONTEXT = "(no context given)"


def tagged_list(outer: str, inner: str, texts: Sequence[str]) -> str:
    """``texts`` stripped, each in ``<inner index="i">`` (from 1), all inside ``<outer>``."""
    return tag_list(outer, inner, [text.strip() for text in texts])


def tagged(name: str, text: str) -> str:
    """One untrusted ``text``, stripped, inside ``<name>``."""
    return tag(name, text.strip())


def context_text(context: Context | None) -> str:
    """A context inside ``<context>``: its one chunk, or one ``<passage index="i">`` per chunk."""
    if context is None or not context.texts:
        return NO_CONTEXT
    if len(context.texts) == 1:
        return tagged("context", context.texts[0])
    passages = "\n".join(
        tag("passage", text.strip(), index=i) for i, text in enumerate(context.texts, start=1)
    )
    return wrap("context", passages)


def feedback_items(items: Sequence[tuple[str, str]]) -> str:
    """``(input, feedback)`` pairs as ``<item index="i">`` blocks, each inside ``<items>``."""
    blocks = [
        wrap(
            "item",
            f"{tagged('input', text)}\n{tagged('feedback', feedback.strip() or '(none)')}",
            index=i,
        )
        for i, (text, feedback) in enumerate(items, start=1)
    ]
    return wrap("items", "\n".join(blocks))


def styling_block(
    scenario: str | None = None,
    task: str | None = None,
    input_format: str | None = None,
    persona: str | None = None,
) -> str:
    """Styling lines for a prompt, or an empty string when nothing is set (the user's own text)."""
    lines = []
    if scenario:
        lines.append(f"Scenario: {scenario}")
    if task:
        lines.append(f"Task of the system under test: {task}")
    if input_format:
        lines.append(f"Input format: {input_format}")
    if persona:
        lines.append(f"Write as this user: {persona}")
    if not lines:
        return ""
    return "\n" + "\n".join(lines) + "\n"
