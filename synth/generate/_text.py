"""Rendering helpers shared by the stage prompts: numbered lists, contexts, styling blocks."""

from __future__ import annotations

from collections.abc import Sequence

from synth.data import Context


def numbered(items: Sequence[str], label: str = "") -> str:
    """``[1] first\\n\\n[2] second`` (``label`` prefixes each number, e.g. ``Passage 1``)."""
    prefix = f"{label} " if label else ""
    return "\n\n".join(f"[{prefix}{i}]\n{text.strip()}" for i, text in enumerate(items, start=1))


def context_text(context: Context | None) -> str:
    """A context's chunks as numbered passages (a one-chunk context is shown as is)."""
    if context is None or not context.texts:
        return "(no context given)"
    if len(context.texts) == 1:
        return context.texts[0].strip()
    return numbered(context.texts, "Passage")


def styling_block(
    scenario: str | None = None,
    task: str | None = None,
    input_format: str | None = None,
    persona: str | None = None,
) -> str:
    """Styling lines for a prompt, or an empty string when nothing is set."""
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
