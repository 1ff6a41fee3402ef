"""An example RAG system over sample_docs, the same system with a broken retriever, and a noisy
judge: what the gate's acceptance tests run.

The system reads sample_docs with synth's own loader, cuts every document into small chunks,
ranks them by the question's content words (a BM25-like score) and answers with the sentence of
its top chunks that shares the most words with the question. ``broken`` returns a wrong chunk
first for about half the questions (which ones is fixed by ``BROKEN_SEED`` and the question).

The judge is a callable judge ``fn(prompt, system)``: it finds the answer and the reference in the
prompt's tagged material (the system prompt says material comes in tags) and rates their word
overlap 1 to 5; then, as judges do, it is noisy: a quarter of its ratings are one point off, one
in twenty is any rating at all. The noise is fixed by its seed and the prompt, so a run is
reproducible and two seeds are two independent judges.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
from collections import Counter
from functools import cache
from pathlib import Path

from synth import chunk_documents, load_documents

SAMPLE_DOCS = Path(__file__).resolve().parent.parent / "sample_docs"
_WORD = re.compile(r"[a-z0-9]+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_STOP = frozenset(
    "a an the of to in on for and or is are was be by with what which how does do it its this "
    "that as at from when why who can".split()
)


def words(text: str) -> list[str]:
    """The content words of ``text``, lower case, a plural's or verb's "s" cut off."""
    found = (w for w in _WORD.findall(text.lower()) if w not in _STOP)
    return [w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in found]


@cache
def chunks() -> tuple[str, ...]:
    """The chunks of sample_docs, small enough that a question has one right place."""
    documents = load_documents(str(SAMPLE_DOCS)).documents
    return tuple(c.text for c in chunk_documents(documents, chunk_size=120, chunk_overlap=0))


@cache
def _index() -> tuple[list[Counter[str]], dict[str, float], float]:
    bags = [Counter(words(text)) for text in chunks()]
    df: Counter[str] = Counter(w for bag in bags for w in bag)
    n = len(bags)
    idf = {w: math.log(1 + (n - d + 0.5) / (d + 0.5)) for w, d in df.items()}
    return bags, idf, sum(sum(b.values()) for b in bags) / n


def retrieve(question: str, k: int = 3) -> list[str]:
    """The ``k`` chunks that best match the question's words, best first (BM25)."""
    return [chunks()[i] for i in _ranked(question)[:k]]


@cache
def _ranked(question: str) -> tuple[int, ...]:
    bags, idf, mean_length = _index()
    terms = set(words(question))

    def score(bag: Counter[str]) -> float:
        length = sum(bag.values())
        return sum(
            idf.get(t, 0.0) * bag[t] * 2.2 / (bag[t] + 1.2 * (0.25 + 0.75 * length / mean_length))
            for t in terms
        )

    return tuple(sorted(range(len(bags)), key=lambda i: -score(bags[i])))


def answer_from(question: str, contexts: list[str]) -> dict[str, object]:
    """The sentence of the top chunk sharing the most words with the question, with the chunks."""
    terms = set(words(question))
    sentences = [s for s in _SENTENCE.split(contexts[0]) if s.strip()]
    best = max(sentences, key=lambda s: len(terms & set(words(s))))
    return {"answer": best.strip(), "contexts": contexts}


def rag(question: str) -> dict[str, object]:
    """The working system: retrieve, then answer from the top chunks."""
    return answer_from(question, retrieve(question))


#: which questions the broken retriever gets wrong (about half of them)
BROKEN_SEED = int(os.environ.get("GATE_RAG_BROKEN_SEED", "0"))


def broken_retrieve(question: str, seed: int = BROKEN_SEED, k: int = 3) -> list[str]:
    """The retriever with a bug: for about half the questions its first chunk is a wrong one."""
    found = retrieve(question, k)
    rng = random.Random(f"{seed}\x1f{question}")
    if rng.random() < 0.5:
        right = set(retrieve(question, 8))
        wrong = [c for c in chunks() if c not in right]
        return [rng.choice(wrong), *found[1:]]
    return found


def broken(question: str) -> dict[str, object]:
    """The system on the broken retriever."""
    return answer_from(question, broken_retrieve(question))


def broken_with(seed: int):
    """The broken system whose wrong questions are chosen by ``seed``."""
    return lambda question: answer_from(question, broken_retrieve(question, seed))


_TAGGED = re.compile(r"<(answer|reference)>\n(.*?)\n</\1>", re.DOTALL)


class NoisyJudge:
    """A judge rating the answer's overlap with the reference 1 to 5, with a judge's noise."""

    def __init__(self, seed: int = 0, off_by_one: float = 0.25, any_rating: float = 0.05) -> None:
        self.seed = seed
        self.off_by_one = off_by_one
        self.any_rating = any_rating

    def __call__(self, prompt: str, system: str | None = None) -> str:
        material = dict(_TAGGED.findall(prompt))
        answer = set(words(material.get("answer", "")))
        reference = set(words(material.get("reference", "")))
        overlap = len(answer & reference) / max(1, len(reference))
        rating = 5 if overlap >= 0.6 else 4 if overlap >= 0.4 else 2 if overlap >= 0.2 else 1
        rng = random.Random(f"{self.seed}\x1f{prompt}")
        draw = rng.random()
        if draw < self.any_rating:
            rating = rng.randint(1, 5)
        elif draw < self.any_rating + self.off_by_one:
            rating = min(5, max(1, rating + rng.choice((-1, 1))))
        return json.dumps({"reason": f"{overlap:.0%} of the reference's words", "score": rating})


#: the judge the command line names (``--judge gate_rag:noisy_judge``), seeded from the environment
noisy_judge = NoisyJudge(int(os.environ.get("GATE_RAG_JUDGE_SEED", "0")))

#: the rubric of the judged metric
RUBRIC = "The answer states what the reference answer states."
