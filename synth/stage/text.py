"""Rendering helpers shared by the stage prompts: tagged contexts and items, styling blocks.

Documents and model output are untrusted: they reach a prompt only through these helpers, inside
tags and escaped (see ``synth._untrusted``), never pasted as they are. What each template variable
holds:

- ``$context``: ``<context>`` around the text of a one-chunk context, or around one
  ``<passage index="i">`` per chunk; ``(no context given)`` when there is none.
- ``$orientation``: where the context comes from (its file, title and heading path) inside
  ``<orientation>``, introduced as orientation and not evidence; empty without a context. It and
  the context open every prompt of a context's steps, so those prompts share their first tokens
  (the provider's prompt cache serves them once).
- ``$chunks`` (critic): ``<passages>`` around one ``<passage index="i">`` per chunk.
- ``$inputs`` (filter, expected): ``<inputs>`` around one ``<input index="i">`` per input.
- ``$examples``: ``<examples>`` around one ``<example index="i">`` per example.
- ``$items`` (rewrite): ``<items>`` around one ``<item index="i">`` holding an ``<input>`` and its
  ``<feedback>``.
- ``$items`` (evolve): ``<items>`` around one ``<item index="i">`` holding the ``<input>`` to
  rewrite and, when it has changed since it was first written, the ``<original>``;
  ``$instructions`` says how to rewrite each, one numbered line per item (synth's own text,
  outside the tags).
- ``$input`` (style): the one input inside ``<input>``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePath

from synth._untrusted import tag, tag_list, wrap
from synth.data import Context

NO_CONTEXT = "(no context given)"
#: the context's metadata key of its heading path (a list of headings, outermost first; or one
#: such list per chunk, the seed's first)
HEADING_PATH_KEY = "heading_path"
#: a context's key for its chunks' heading paths, one list per chunk
HEADING_PATHS_KEY = "heading_paths"
#: the line that introduces the orientation: what it is for, and what it is not
ORIENTATION_NOTE = (
    "Where the context comes from (orientation only, not evidence: use it to name what a text is "
    "about, never as a source of facts or quotes):"
)
_MARKDOWN_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.MULTILINE)


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


def heading_path(context: Context) -> list[str]:
    """The headings the context's seed chunk sits under, outermost first: the path ingest
    recorded (``metadata["heading_path"]``) when there is one, else the markdown headings found in
    the seed chunk's text, each deeper one replacing those at its level and below (the last
    heading's path); [] when neither is there."""
    # what ingest recorded per chunk, as the context carries it (synth.contexts.context): the
    # seed chunk's path, else the first chunk's that has one
    per_chunk = context.metadata.get(HEADING_PATHS_KEY)
    if isinstance(per_chunk, list):
        for path in per_chunk:
            if isinstance(path, list) and any(str(h).strip() for h in path):
                return [str(h).strip() for h in path if str(h).strip()]
    recorded = context.metadata.get(HEADING_PATH_KEY)
    if isinstance(recorded, list) and recorded:
        first = recorded[0]
        path = first if isinstance(first, list) else recorded
        return [str(h).strip() for h in path if str(h).strip()]
    if not context.texts:
        return []
    levels: dict[int, str] = {}
    for match in _MARKDOWN_HEADING.finditer(context.texts[0]):
        level = len(match.group(1))
        levels = {k: v for k, v in levels.items() if k < level}
        levels[level] = match.group(2).strip()
    return [levels[k] for k in sorted(levels)]


def orientation_text(context: Context | None) -> str:
    """Where ``context`` comes from, for a prompt: its file, title (when known) and heading path,
    tagged, after :data:`ORIENTATION_NOTE` and followed by a blank line; "" without a context."""
    if context is None or not context.texts:
        return ""
    lines = []
    if context.source_files:
        lines.append(f"file: {PurePath(context.source_files[0]).name}")
    title = context.metadata.get("title")
    if title:
        lines.append(f"title: {str(title).strip()}")
    path = heading_path(context)
    if path:
        lines.append(f"section: {' > '.join(path)}")
    if not lines:
        return ""
    return f"{ORIENTATION_NOTE}\n{tag('orientation', chr(10).join(lines))}\n\n"


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


def evolve_items(items: Sequence[tuple[str, str]]) -> str:
    """``(original, input)`` pairs as ``<item index="i">`` blocks inside ``<items>``: each holds
    the ``<input>`` to rewrite, after its ``<original>`` when the two differ (an unchanged input
    is not shown twice)."""
    blocks = []
    for i, (original, text) in enumerate(items, start=1):
        first = f"{tagged('original', original)}\n" if original.strip() != text.strip() else ""
        blocks.append(wrap("item", f"{first}{tagged('input', text)}", index=i))
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
