"""Question types: which part of a RAG system each golden tests, asked for and checked.

``GenerationConfig.question_types`` weighs the types; a run that mixes them makes each type's
exact share (largest remainder, :func:`type_counts`) in a run of its own
(:mod:`synth.pipeline.question_types`), so every type is exact in count with the top-up that a run
already has. Within one type's run the inputs step is told what to write
(:func:`inputs_instruction`), the expected-output step what the answer must do
(:func:`expected_note`), and the goldens record their type and the component it tests
(``metadata["question_type"]``, ``metadata["tests"]``). What can be checked is:

- ``simple``: today's questions (tests the generator), evolved as configured;
- ``multi_hop``: needs two or more chunks of the context together (tests the retriever): its
  citations must fall in at least two chunks, else it is dropped as ``single_hop``; the golden
  records the chunks it needs (``metadata["hops"]``);
- ``situational``: the user describes their situation before asking (tests the generator's use of
  user context);
- ``double``: two related questions in one input; the expected output answers both;
- ``distracting``: the input carries a plausible but irrelevant detail from another chunk of the
  corpus (tests the retriever's robustness); an input with no word of that chunk that its context
  lacks is dropped as ``no_distraction``, and the expected output ignores the detail
  (:mod:`synth.generate.distracting`);
- ``out_of_scope``: a question on the corpus' subject that the corpus does not answer (tests the
  refusal); the question's best chunks in the run's index go to the critic, which must confirm they
  do not answer it, else it is dropped as ``answerable``; the expected output is the configured
  refusal (:mod:`synth.generate.out_of_scope`).

Types other than ``simple`` are not evolved (an evolution would rewrite what makes the type).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from synth.data import Golden
from synth.generate.base import Source
from synth.generate.draft import Draft

#: each type and the part of the system it tests
QUESTION_TYPES = {
    "simple": "generator",
    "multi_hop": "retriever",
    "situational": "generator",
    "double": "generator",
    "distracting": "retriever",
    "out_of_scope": "refusal",
}
SIMPLE = "simple"
DISTRACTING = "distracting"
OUT_OF_SCOPE = "out_of_scope"
#: the drop reason of a multi-hop golden whose answer rests on one chunk
SINGLE_HOP = "single_hop"
LABEL = "hops"

_INPUTS = {
    "multi_hop": "Each input must need facts from at least two different passages of the context "
    "together: no single passage answers it alone.",
    "situational": "Each input starts with the user describing their own situation in one or two "
    "sentences (who they are, what they are doing or planning), then asks; the situation must "
    "matter to the answer.",
    "double": "Each input asks two related questions in one message; both must be answerable from "
    "the context.",
    "distracting": "Each input also mentions, in passing, one concrete detail taken from the "
    "<aside> passage below (a name, number or term from it), as a user might; the question itself "
    "must still be answered by the context alone, and the aside's detail must not be needed.",
}
_EXPECTED = {
    "multi_hop": "combine what the passages say, and quote each passage the answer needs",
    "situational": "answer for the user's situation as they describe it",
    "double": "answer both questions the input asks, in order",
    "distracting": "answer from the context alone: each input mentions a detail from elsewhere "
    "that does not bear on the answer; do not use or repeat it",
}


def check_types(value: Mapping[str, float]) -> None:
    """Raise ValueError unless ``value`` weighs known types, finite and >= 0, one above 0."""
    unknown = sorted(set(value) - set(QUESTION_TYPES))
    if unknown:
        raise ValueError(
            f"unknown question type {unknown[0]!r}; use one of {', '.join(QUESTION_TYPES)}"
        )
    for name, weight in value.items():
        if not isinstance(weight, int | float) or not math.isfinite(weight) or weight < 0:
            raise ValueError(f"question type {name!r} needs a share >= 0, got {weight!r}")
    if not any(w > 0 for w in value.values()):
        raise ValueError("at least one question type needs a share above 0")


def type_counts(
    types: Mapping[str, float], n: int, order: Iterable[str] = QUESTION_TYPES
) -> dict[str, int]:
    """Goldens of each type for ``n`` goldens: each its share rounded down, the goldens left over
    to the largest remainders (ties to the type listed first in ``order``, QUESTION_TYPES unless
    given); every type with a share above 0 is listed, with 0 where it gets none."""
    weighed = [(t, types[t]) for t in order if types.get(t, 0) > 0]
    total = sum(w for _, w in weighed)
    exact = [(t, n * w / total) for t, w in weighed]
    counts = {t: math.floor(q) for t, q in exact}
    left = n - sum(counts.values())
    by_remainder = sorted(
        range(len(exact)), key=lambda i: (-(exact[i][1] - counts[exact[i][0]]), i)
    )
    for i in by_remainder[:left]:
        counts[exact[i][0]] += 1
    return counts


def single_type(types: Mapping[str, float]) -> str | None:
    """The one type ``types`` asks for, or None when it mixes several."""
    given = [t for t, w in types.items() if w > 0]
    return given[0] if len(given) == 1 else None


def inputs_instruction(question_type: str | None) -> str:
    """What the inputs prompt adds for ``question_type`` ('' for simple questions)."""
    return _INPUTS.get(question_type or SIMPLE, "")


def expected_note(question_type: str | None) -> str | None:
    """What the expected-output prompt adds for ``question_type`` (None for simple questions)."""
    return _EXPECTED.get(question_type or SIMPLE)


def cited_chunks(draft: Draft) -> list[str]:
    """The distinct chunks the draft's citations fall in, in order of first citation."""
    return list(dict.fromkeys(c["chunk_id"] for c in draft.metadata.get("citations") or []))


@dataclass(frozen=True)
class HopsStep:
    """The step after the expected output in a multi-hop run: records the chunks each live
    draft's answer cites (``metadata["hops"]``) and drops one whose citations lie in fewer than
    two chunks (``single_hop``)."""

    name: ClassVar[str] = LABEL

    async def run(self, drafts: list[Draft], source: Source) -> list[Draft]:
        for draft in drafts:
            if not draft.kept or draft.expected_output is None:
                continue
            hops = cited_chunks(draft)
            draft.metadata["hops"] = hops
            if len(hops) < 2:
                detail = f"its answer cites {len(hops)} chunk(s); a multi-hop question needs two"
                draft.drop(LABEL, SINGLE_HOP, detail)
        return drafts


def tag_type(goldens: Sequence[Golden], kind: str | None, asked: bool = True) -> None:
    """Record on each golden its question type and the component it tests (``asked`` False, or
    no single ``kind``: a run that asked for no type, and nothing is recorded)."""
    if not asked or kind is None:
        return
    for golden in goldens:
        golden.metadata["question_type"] = kind
        golden.metadata["tests"] = QUESTION_TYPES[kind]


__all__ = [
    "DISTRACTING",
    "OUT_OF_SCOPE",
    "QUESTION_TYPES",
    "SIMPLE",
    "SINGLE_HOP",
    "HopsStep",
    "check_types",
    "cited_chunks",
    "expected_note",
    "inputs_instruction",
    "single_type",
    "tag_type",
    "type_counts",
]
