"""Per-file quotas: each file gives the run exactly its coverage target, drops and all.

When a run's files can each give their target (:func:`synth.contexts.coverage.file_quotas`), a
golden dropped on the way is replaced from the *same* file, not from whichever file the next seat
of the draw order belongs to. The stream still commits candidates strictly in candidate order (so
the goldens never depend on which request came back first); what the quotas add is a rule that
reads only what was committed before: a candidate, or a draft, whose file already has its quota of
kept goldens when the commit reaches it is *held* instead of offered. Only when nothing else can
come (the corpus or the top-up budget is spent) are the quotas lifted and the held drafts offered,
in their order, so a run still delivers N whenever it did before.

Which candidates run ahead of the commit is a guess and may depend on timing: a candidate of a file
whose expected goldens already fill its quota is *parked* (not started) and started only when its
file falls short, or when the commit reaches it and its file is still open. Guesses cost requests,
never goldens: the commit alone decides.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from synth.contexts.feed import Candidate
from synth.generate.draft import Draft
from synth.run.slots import Slot

#: what a held draft's drop says when the run ended without needing it
HELD_DETAIL = "its file had its share of the goldens (coverage) and the run needed no more"


def file_of(context_owner: Candidate | Draft) -> str:
    """The file a candidate's (or a draft's) context starts from: its seed's file."""
    context = context_owner.context
    return context.source_files[0] if context is not None and context.source_files else ""


@dataclass
class FileQuotas:
    """The goldens each file may give while the quotas hold, and the slots held past them."""

    quotas: dict[str, int]
    lifted: bool = False
    #: slots (with the index of their first offer not made) held in candidate order
    held: list[tuple[Slot, int]] = field(default_factory=list)

    #: the file of every draft offered (by identity), from its candidate
    sources: dict[int, str] = field(default_factory=dict)

    def offered(self, draft: Draft, candidate: Candidate) -> None:
        """Note the file of ``draft``, offered from ``candidate``."""
        self.sources[id(draft)] = file_of(candidate)

    def kept(self, goldens: Iterable[Draft]) -> Counter[str]:
        """Goldens kept so far, per file."""
        return Counter(self.sources.get(id(d), file_of(d)) for d in goldens)

    def open(self, source: str, kept: Mapping[str, int]) -> bool:
        """Whether the commit may still offer a draft of ``source``."""
        return self.lifted or kept.get(source, 0) < self.quotas.get(source, 0)

    def full(self, candidate: Candidate, goldens: Iterable[Draft]) -> bool:
        """Whether ``candidate``'s file has its quota of ``goldens`` (never, once lifted)."""
        return not self.open(file_of(candidate), self.kept(goldens))

    def missing(self, goldens: Iterable[Draft], running: Iterable[Slot]) -> dict[str, float]:
        """Per file, the goldens its quota still lacks beyond those kept and those its started,
        uncommitted ``running`` slots still hold alive (a file at its quota: none)."""
        lack = {f: float(q) for f, q in self.quotas.items()}
        for source, n in self.kept(goldens).items():
            lack[source] = lack.get(source, 0.0) - n
        for slot in running:
            if slot.started:
                source = file_of(slot.candidate)
                lack[source] = lack.get(source, 0.0) - slot.expected
        return {f: n for f, n in lack.items() if n > 1e-6}

    def wants(self, candidate: Candidate, missing: Mapping[str, float]) -> bool:
        """Whether to start ``candidate`` now (its file is short of what it expects)."""
        return missing.get(file_of(candidate), 0) > 0

    def hold(self, slot: Slot, first: int = 0) -> None:
        """Keep ``slot``'s drafts from ``first`` on for when the quotas are lifted."""
        self.held.append((slot, first))

    def held_expected(self) -> int:
        """Goldens the held slots may still give once the quotas are lifted."""
        total = 0
        for slot, first in self.held:
            if slot.drafts is not None:
                total += len(slot.offers) - first
            elif slot.started:
                total += slot.expected
        return total

    def release(self) -> list[Draft]:
        """The drafts still held when the run ends: the caller drops them as not needed (a held
        slot never started has none: its context is counted not needed at grouping)."""
        left = [d for slot, first in self.held for d, _ in slot.offers[first:]]
        self.held.clear()
        return left


def needed(
    slots: Sequence[Slot], goldens: Sequence[Draft], num_goldens: int, quotas: FileQuotas | None
) -> dict[int, bool]:
    """Whether each of the uncommitted ``slots`` (in order) is needed, by candidate seq: the
    goldens kept and the live drafts of the slots ahead of it fall short of ``num_goldens`` or,
    while the ``quotas`` hold, of its own file's quota."""
    have = quotas.kept(goldens) if quotas is not None else Counter({"": len(goldens)})
    flags = {}
    for slot in slots:
        source = file_of(slot.candidate) if quotas is not None else ""
        goal = quotas.quotas.get(source, 0) if quotas is not None else num_goldens
        flags[slot.candidate.seq] = have[source] < goal
        have[source] += slot.expected
    return flags


__all__ = ["HELD_DETAIL", "FileQuotas", "file_of", "needed"]
