"""A fake model that answers from the JSON schema alone and writes the faults real models write,
at known rates: the fake OpenAI server's ``reply=`` function for quality tests.

It knows nothing of synth's prompts. It reads the request's schema (``response_format``) and
fills it by the names of its fields, with text taken from the tagged data of the prompt (the
``<context>`` and its ``<passage>``s, the ``<input>``s, as any model reads what it is given):

- a list of strings named ``inputs``: questions about a few words of a context sentence, each
  naming the document it comes from; a list of objects with an ``input``: each ``<item>``'s input
  rewritten (a new question on the same sentence); a list of objects named ``evolved``: each
  ``<item>``'s ``<input>`` evolved (a question a little longer); one string named ``input``: the
  ``<input>`` evolved so;
- objects with an ``expected_output``: the context sentence that shares most words with the
  input, as the answer and its one quote, ``answerable`` its first value;
- anything else as the generic server fills it (:func:`fake_openai.generic_reply`): a verdict
  schema's booleans true, its numbers three quarters of their range, its enums their first value.

Faults, each drawn afresh per item with a generator fixed by the request (the schema asked for
and the tagged data given, not the instructions' wording) and how often it was seen (a re-ask is
answered anew), and each recorded in :attr:`FaultyModel.planted`:

- ``passage`` (``rates["passage"]``): a question that points at "the passage";
- ``copied``: a question that is ten words of a context sentence in a row;
- ``hedged``: an answer that hedges ("The context does not say exactly; it only mentions ...");
- ``leaked``: a rewritten single input that gains its answer's words (the sentence it will be
  answered from, its content words after the question).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading
from collections import Counter
from typing import Any

import fake_openai

#: the faults and the rates of the acceptance test
RATES = {"passage": 0.15, "copied": 0.10, "hedged": 0.15, "leaked": 0.10}
#: how a hedged answer opens
HEDGE = "The context does not say exactly; it only mentions that "
FRAMES = (
    "What should an owner know about the {topic} in the {subject}?",
    "How does the {subject} explain the {topic}?",
    "Why does the {subject} bring up the {topic}?",
    "When does the {topic} matter for a {subject} reader?",
    "Which steps involve the {topic}, as the {subject} describes them?",
    "What role does the {topic} play in the {subject}?",
)
TAILS = (", in everyday use", " for a new owner", " during the first year", " in a small home")
POINTERS = (
    "According to the passage, what matters about the {topic}?",
    "What does the passage say about the {topic}?",
)
_TAGGED = re.compile(r"<(context|input|item|original)(?: index=\"\d+\")?>\n(.*?)\n</\1>", re.DOTALL)
_PASSAGE = re.compile(r'<passage index="\d+">\n(.*?)\n</passage>', re.DOTALL)
_FILE = re.compile(r"^file: (.+)$", re.MULTILINE)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'-]+")
_SMALL = set(
    "the and for with that this from are was were have has not but all any can its into their "
    "which when what will would should been being there than then them they these those such "
    "each also more most only other some very about after before over under between".split()
)


def _unescape(text: str) -> str:
    return text.replace("<\\", "<")


def _content(text: str) -> list[str]:
    return [w for w in _WORD.findall(text) if len(w) >= 4 and w.lower() not in _SMALL]


class FaultyModel:
    """The reply function (see the module); ``rates`` maps each fault to its share."""

    def __init__(self, rates: dict[str, float] | None = None, seed: int = 0) -> None:
        self.rates = dict(RATES if rates is None else rates)
        self.seed = seed
        self.planted: Counter[str] = Counter()
        self._seen: Counter[str] = Counter()
        self._lock = threading.Lock()

    # -- reading the prompt
    @staticmethod
    def _prompt(request: dict[str, Any]) -> str:
        return "\n".join(
            m.get("content", "") for m in request.get("messages") or [] if m.get("role") == "user"
        )

    @staticmethod
    def _sentences(prompt: str) -> list[str]:
        found = [t for name, t in _TAGGED.findall(prompt) if name == "context"]
        if not found:
            return []
        passages = _PASSAGE.findall(found[0]) or [found[0]]
        out = []
        for passage in passages:
            for piece in re.split(r"(?<=[.!?])\s+|\n+", _unescape(passage)):
                piece = piece.strip().lstrip("#").strip()
                if len(_WORD.findall(piece)) >= 6:
                    out.append(piece)
        return out

    @staticmethod
    def _subject(prompt: str) -> str:
        found = _FILE.search(prompt)
        name = found.group(1) if found else "the manual"
        return re.sub(r"[_-]+", " ", name.rsplit(".", 1)[0]).strip()

    def _rng(self, request: dict[str, Any]) -> random.Random:
        # keyed by what the model is asked for (the schema) and the tagged data it is given, not
        # by the wording of the instructions: a better prompt draws the same faults
        data = [request.get("response_format"), _TAGGED.findall(self._prompt(request))]
        key = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()
        with self._lock:
            self._seen[key] += 1
            nth = self._seen[key]
        return random.Random(f"{self.seed}:{key}:{nth}")

    def _plant(self, kind: str, rng: random.Random) -> bool:
        if rng.random() < self.rates.get(kind, 0.0):
            with self._lock:
                self.planted[kind] += 1
            return True
        return False

    # -- writing
    def _best(self, text: str, sentences: list[str]) -> str:
        wanted = {w.lower() for w in _content(text)}
        return max(sentences, key=lambda s: len(wanted & {w.lower() for w in _content(s)}))

    def _question(self, sentence: str, subject: str, rng: random.Random) -> str:
        words = _content(sentence) or ["topic"]
        start = rng.randrange(max(1, len(words) - 2))
        topic = " ".join(words[start : start + 3]).lower()
        draw = rng.random()
        if draw < self.rates.get("passage", 0.0):
            with self._lock:
                self.planted["passage"] += 1
            return rng.choice(POINTERS).format(topic=topic)
        if draw < self.rates.get("passage", 0.0) + self.rates.get("copied", 0.0):
            tokens = sentence.rstrip(".!?").split()
            if len(tokens) >= 10:
                with self._lock:
                    self.planted["copied"] += 1
                at = rng.randrange(len(tokens) - 9)
                return f"Is it true that {' '.join(tokens[at : at + 10])}?"
        return rng.choice(FRAMES).format(topic=topic, subject=subject)

    def _rewritten(self, text: str, prompt: str, rng: random.Random) -> str:
        sentences = self._sentences(prompt)
        if not sentences:
            return text
        return self._question(self._best(text, sentences), self._subject(prompt), rng)

    def _evolved(self, text: str, prompt: str, rng: random.Random) -> str:
        sentences = self._sentences(prompt)
        base = text.rstrip(" ?")
        if sentences and self._plant("leaked", rng):
            answer = self._best(text, sentences)
            return f"{base}, given that {' '.join(_content(answer)).lower()}?"
        return f"{base}{rng.choice(TAILS)}?"

    def _answer(self, text: str, sentences: list[str], rng: random.Random) -> dict[str, Any]:
        sentence = self._best(text, sentences) if sentences else "It depends on the model."
        answer = sentence
        if self._plant("hedged", rng):
            answer = HEDGE + sentence[0].lower() + sentence[1:]
        return {"quotes": [sentence], "expected_output": answer}

    def __call__(self, request: dict[str, Any]) -> str:
        rng = self._rng(request)
        schema = fake_openai.schema_in_prompt(request)
        if schema is None:
            return fake_openai.generic_reply(request, rng)
        reply = json.loads(fake_openai.generic_reply(request, rng))
        prompt = self._prompt(request)
        props = schema.get("properties") or {}
        items = [_unescape(t) for name, t in _TAGGED.findall(prompt) if name == "input"]
        if "inputs" in props and isinstance(reply.get("inputs"), list):
            entries = reply["inputs"]
            if entries and isinstance(entries[0], str):
                sentences = self._sentences(prompt) or ["Owners should read the manual first."]
                subject = self._subject(prompt)
                reply["inputs"] = [
                    self._question(sentences[rng.randrange(len(sentences))], subject, rng)
                    for _ in entries
                ]
            elif entries and "input" in entries[0] and "fact" not in entries[0]:
                blocks = [t for name, t in _TAGGED.findall(prompt) if name == "item"]
                for entry, block in zip(entries, blocks, strict=False):
                    inner = _TAGGED.findall(block)
                    old = _unescape(inner[0][1]) if inner else _unescape(block)
                    entry["input"] = self._rewritten(old, prompt, rng)
        elif "evolved" in props and isinstance(reply.get("evolved"), list):
            blocks = [t for name, t in _TAGGED.findall(prompt) if name == "item"]
            for entry, block in zip(reply["evolved"], blocks, strict=False):
                inner = [_unescape(t) for name, t in _TAGGED.findall(block) if name == "input"]
                entry["input"] = self._evolved(
                    inner[-1] if inner else _unescape(block), prompt, rng
                )
        elif set(props) == {"input"} and items:
            reply["input"] = self._evolved(items[-1], prompt, rng)
        elif "outputs" in props:
            sentences = self._sentences(prompt)
            asked = [t for name, t in _TAGGED.findall(prompt) if name == "input"]
            for entry, question in zip(reply["outputs"], asked, strict=False):
                entry.update(self._answer(_unescape(question), sentences, rng))
        elif "verdicts" in props:
            sentences = self._sentences(prompt)
            for entry, question in zip(reply["verdicts"], items, strict=False):
                if "quotes" in entry and sentences:
                    entry["quotes"] = [self._best(question, sentences)]
        return json.dumps(reply)


__all__ = ["HEDGE", "POINTERS", "RATES", "FaultyModel"]
