"""The offline model: ``offline`` (``offline:extractive``), rule-based replies that need no key,
no server and no network, for a first run and for smoke tests.

It is no language model. It answers synth's generation steps only, each recognised by the name of
the reply schema the step asks for, and writes every reply from the documents the prompt quotes
(the text inside ``<context>``, ``<passage>`` and ``<input>`` tags, see ``synth._untrusted``):

- the context critic labels each passage from its prose (:func:`~synth.llm._extractive.prose_scores`,
  as grades 0 to 3);
- inputs are questions made from the context's most informative sentences, one sentence each;
- the filter scores an input by how it reads (a question, of sensible length, that names no "the
  passage"), and a rewrite removes what it faulted;
- evolutions and restyling keep the input as it is, but for an evolution over several passages,
  which adds a second passage's subject to it;
- an expected output is the sentence (or two) of the context that answers the input best, quoted
  word for word, so its citations are found and its grounding is full;
- the checks (out of scope, follow-ups, the final check of an input) decide by word overlap, by how
  a message opens and by whether it names "the passage"; an input told it copies its context is
  rewritten to ask about the sentence's keyphrase.

Replies are deterministic: the same prompt gets the same reply in every process. A step it does
not know (an evaluation judge, a prompt with no schema) is refused with a ConfigError, and a step
that would need text from nowhere (inputs from a scenario alone, answers with no context) too:
the offline model only ever extracts. It is never chosen unless named; a run records it as
``{"provider": "offline", "model": "extractive"}`` and it costs nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from synth.errors import ConfigError
from synth.llm import _extractive as ex
from synth.llm.base import LLM, Completion

#: the provider name, and its one model
PROVIDER = "offline"
MODEL = "extractive"
#: what a run says of goldens written by it
NOTE = "extractive and rule-based: questions and answers are the documents' own sentences"

_LANGUAGE_LINE = re.compile(r"Language: write [^\n]*? in ([A-Z][a-z]+)\.")
_QUESTION_MARKS = ("?", "\uff1f")
_MULTI_PASSAGE = re.compile(r"\bpassages\b")
# a reference a question should not lean on ("the passage", "the context above")
_LEANS = re.compile(
    r"\b(?:the|this|that) (?:context|passage|excerpt|text|document)\b|\babove\b", re.IGNORECASE
)
# feedback saying an input copies its context (synth.generate.input_checks)
_COPIED = re.compile(r"word for word|copies", re.IGNORECASE)
_FOLLOW_UP = re.compile(
    r"^(?:and|but|so|then|also|what about|how about|and what|why)\b|\b(?:it|that one|this one|"
    r"the second|the first|those|them)\b",
    re.IGNORECASE,
)


def _blocks(text: str, name: str) -> list[str]:
    """The texts inside every ``<name>`` (or ``<name index="i">``) tag of ``text``, unescaped."""
    pattern = re.compile(rf'<{name}(?: index="\d+")?>\n(.*?)\n</{name}>', re.DOTALL)
    return [found.replace("<\\", "<") for found in pattern.findall(text)]


def _raw_blocks(text: str, name: str) -> list[str]:
    """Like :func:`_blocks`, still escaped: for tags that hold other tags."""
    pattern = re.compile(rf'<{name}(?: index="\d+")?>\n(.*?)\n</{name}>', re.DOTALL)
    return list(pattern.findall(text))


@dataclass(frozen=True)
class Prompt:
    """What the offline model reads from a prompt: the context's passages, the items it quotes,
    and whether to write in English."""

    text: str

    @property
    def passages(self) -> list[str]:
        """The passages of the prompt's ``<context>`` (none when there is no context)."""
        found = _raw_blocks(self.text, "context")
        if not found:
            return []
        inner = _blocks(found[0], "passage")
        return inner or [found[0].replace("<\\", "<")]

    def items(self, name: str) -> list[str]:
        """The texts of the ``<name index="i">`` items (``input``, ``passage``, ``message``)."""
        return _blocks(self.text, name)

    @property
    def english(self) -> bool:
        """Whether the prompt asks for English (or names no language)."""
        found = _LANGUAGE_LINE.search(self.text)
        return found is None or found.group(1) == "English"


def _count(schema: type[BaseModel], field: str, default: int) -> int:
    """How many entries ``schema`` asks for in ``field`` (its JSON schema's ``maxItems``)."""
    prop = schema.model_json_schema().get("properties", {}).get(field, {})
    found = prop.get("maxItems")
    return int(found) if isinstance(found, int) and found > 0 else default


def _sentences(prompt: Prompt, what: str) -> list[ex.Sentence]:
    passages = prompt.passages
    if not passages:
        raise ConfigError(
            f"the offline model writes {what} only from documents' text, and this prompt has no "
            "context: name a language model for generation from a scenario or from nothing"
        )
    return ex.context_sentences(passages)


def _picked(prompt: Prompt, n: int) -> list[ex.Sentence]:
    """The ``n`` sentences a context's questions are made from: its best, starting at a place
    fixed by the whole context (two contexts sharing a seed passage pick differently), one per
    subject."""
    ranked = ex.ranked(_sentences(prompt, "questions"))
    if not ranked:
        ranked = [s for s in _sentences(prompt, "questions") if len(ex.words(s.plain)) >= 4]
    pool = ranked[: max(n * 2, 4)]
    if not pool:
        return []
    start = ex.hashed("\n".join(prompt.passages)) % len(pool)
    out: list[ex.Sentence] = []
    topics: set[str] = set()
    for k in range(len(pool)):
        sentence = pool[(start + k) % len(pool)]
        topic = ex.topic(sentence).casefold()
        if topic in topics:
            continue
        topics.add(topic)
        out.append(sentence)
        if len(out) == n:
            break
    return out


# ---- one writer per reply schema ---------------------------------------------------------------


def _critic(prompt: Prompt, schema: type[BaseModel]) -> dict[str, Any]:
    scores = []
    for i, text in enumerate(prompt.items("passage"), start=1):
        found = ex.prose_scores(text)
        prose = found.structure >= 0.5 and found.relevance >= 0.5
        scores.append(
            {
                "index": i,
                "reason": found.reason,
                "prose": prose,
                "disqualifier": "none" if prose else "boilerplate",
                "self_contained": _grade(found.clarity),
                "informative": _grade(found.depth),
                "coherent": _grade(found.structure),
            }
        )
    return {"scores": scores}


def _grade(score: float) -> int:
    """A 0..1 prose score as a critic's grade, 0..3."""
    return max(0, min(3, round(3 * score)))


def _inputs(prompt: Prompt, schema: type[BaseModel]) -> dict[str, Any]:
    n = _count(schema, "inputs", 2)
    picked = _picked(prompt, n)
    return {"inputs": [ex.question(s, prompt.english, turn=k) for k, s in enumerate(picked)]}


def _near_misses(prompt: Prompt, schema: type[BaseModel]) -> dict[str, Any]:
    """Out-of-scope questions, each from a sentence of the context (its fact) about what
    documents like it do not say: who first thought of a thing, and what it was called before."""
    asks = (
        "Who first came up with {}, and in which year?",
        "What was {} called before its current name?",
    )
    picked = _picked(prompt, _count(schema, "inputs", 2))
    return {
        "inputs": [
            {"fact": s.plain, "input": asks[k % len(asks)].format(ex.keyphrase(s))}
            for k, s in enumerate(picked)
        ]
    }


def _filter(prompt: Prompt, schema: type[BaseModel]) -> dict[str, Any]:
    scores = []
    for i, text in enumerate(prompt.items("input"), start=1):
        score, feedback = _input_score(text)
        entry: dict[str, Any] = {"index": i, "score": score, "feedback": feedback}
        if feedback:
            entry["rewrite"] = _rewritten(text)
        scores.append(entry)
    return {"scores": scores}


def _input_score(text: str) -> tuple[float, str]:
    """An input's score from how it reads, and what to change ("" when nothing)."""
    problems = []
    if _LEANS.search(text):
        problems.append("name the subject instead of referring to the text")
    if not text.rstrip().endswith(_QUESTION_MARKS):
        problems.append("ask it as a question")
    n_words = len(ex.words(text))  # words, or character pairs where words have no spaces
    if n_words < 4:
        problems.append("say more about what is asked")
    elif n_words > 50:
        problems.append("ask one thing, in fewer words")
    score = round(max(0.1, 0.95 - 0.3 * len(problems) - max(0, n_words - 25) * 0.004), 2)
    return score, "; ".join(problems)


def _rewritten(text: str) -> str:
    """``text`` with what the filter faults removed: no reference to "the passage", a question."""
    fixed = _LEANS.sub("the documentation", text).strip()
    return fixed if fixed.endswith(_QUESTION_MARKS) else fixed.rstrip(".!") + "?"


def _rewrite(prompt: Prompt, schema: type[BaseModel]) -> dict[str, Any]:
    out = []
    sentences = ex.context_sentences(prompt.passages) if prompt.passages else []
    for i, block in enumerate(_raw_blocks(prompt.text, "item"), start=1):
        found = _blocks(block, "input")
        text = found[0] if found else block
        feedback = " ".join(_blocks(block, "feedback"))
        if sentences and _COPIED.search(feedback):
            # told it copies its context: ask about the sentence's keyphrase instead
            answering = ex.answering_sentences(text, sentences, most=1)
            if answering:
                phrase = ex.keyphrase(answering[0])
                text = (
                    f"What does the documentation say about {phrase}?"
                    if prompt.english
                    else f"{phrase}?"
                )
        out.append({"index": i, "input": _rewritten(text)})
    return {"inputs": out}


def _check_alone(prompt: Prompt, schema: type[BaseModel]) -> dict[str, Any]:
    """A question stands alone unless it leans on "the passage" or "above"."""
    verdicts = []
    for i, text in enumerate(prompt.items("input"), start=1):
        leans = _LEANS.search(text) is not None
        reason = "it refers to a text the reader does not have" if leans else "names its subject"
        verdicts.append({"index": i, "reason": reason, "standalone": not leans})
    return {"verdicts": verdicts}


def _check_context(prompt: Prompt, schema: type[BaseModel]) -> dict[str, Any]:
    """A question is answered fully when a sentence of the context answers it."""
    sentences = _sentences(prompt, "checks")
    verdicts = []
    for i, text in enumerate(_blocks(_first(prompt.text, "inputs"), "input"), start=1):
        found = ex.answering_sentences(text, sentences)
        quotes = [s.quote for s in found]
        verdicts.append({"index": i, "quotes": quotes, "answerable": "fully" if found else "no"})
    return {"verdicts": verdicts}


def _evolve(prompt: Prompt, schema: type[BaseModel]) -> dict[str, Any]:
    """Each ``<item>``'s input as it is, but for an evolution over several passages (its numbered
    instruction line names passages), which adds a second passage's subject to it."""
    items = _raw_blocks(_first(prompt.text, "items"), "item")
    if not items:
        raise ConfigError("the offline model found no <item> to rewrite in the prompt")
    rest = re.sub(r"<(\w+)[^>]*>\n.*?\n</\1>", "", prompt.text, flags=re.DOTALL)
    numbered = dict(re.findall(r"^(\d+)\. (.+)$", rest, re.MULTILINE))
    out = []
    for i, block in enumerate(items, start=1):
        found = _blocks(block, "input")
        text = (found[-1] if found else block).strip()
        instruction = numbered.get(str(i), rest)
        out.append({"index": i, "input": _evolved(prompt, text, instruction)})
    return {"evolved": out}


def _evolved(prompt: Prompt, text: str, instruction: str) -> str:
    passages = prompt.passages
    if len(passages) >= 2 and prompt.english and _MULTI_PASSAGE.search(instruction):
        # over several passages: add the subject of a sentence of another passage than the one
        # the input is answered from, so that answering it takes both
        sentences = ex.context_sentences(passages)
        answered = ex.answering_sentences(text, sentences, most=1)
        home = answered[0].passage if answered else 0
        others = ex.ranked([s for s in sentences if s.passage != home], False)
        if others:
            other = others[ex.hashed(text) % min(len(others), 3)]
            return f"{text.rstrip(' ?')}, and what about {ex.topic(other)}?"
    return text


def _keep(prompt: Prompt, schema: type[BaseModel]) -> dict[str, Any]:
    """Restyling: the input as it is (the offline model writes in no other style)."""
    return {"input": _one_input(prompt)}


def _language(prompt: Prompt, schema: type[BaseModel]) -> dict[str, Any]:
    """An input in the wrong language: the sentence it asks about, as a question (every word of
    it in the documents' language)."""
    text = _one_input(prompt)
    sentences = ex.context_sentences(prompt.passages)
    found = ex.answering_sentences(text, sentences, most=1)
    return {"input": ex.question(found[0], english=False) if found else text}


def _one_input(prompt: Prompt) -> str:
    found = prompt.items("input")
    if not found:
        raise ConfigError("the offline model found no <input> to rewrite in the prompt")
    return found[0].strip()


def _expected(prompt: Prompt, schema: type[BaseModel]) -> dict[str, Any]:
    sentences = _sentences(prompt, "answers")
    outputs = []
    for i, text in enumerate(_blocks(_first(prompt.text, "inputs"), "input"), start=1):
        found = ex.answering_sentences(text, sentences)
        outputs.append(
            {
                "index": i,
                "quotes": [s.quote for s in found],
                "answerable": "fully" if found else "no",
                "expected_output": " ".join(s.plain for s in found),
            }
        )
    return {"outputs": outputs}


def _first(text: str, name: str) -> str:
    found = _raw_blocks(text, name)
    return found[0] if found else ""


def _scope(prompt: Prompt, schema: type[BaseModel]) -> dict[str, Any]:
    verdicts = []
    for i, block in enumerate(_raw_blocks(prompt.text, "item"), start=1):
        question = (_blocks(block, "input") or [""])[0]
        best = max((ex.coverage(question, p) for p in _blocks(block, "passage")), default=0.0)
        answered = best >= 0.75
        reason = (
            f"a passage holds {best:.0%} of the question's words"
            if answered
            else f"no passage holds more than {best:.0%} of the question's words"
        )
        verdicts.append({"index": i, "reason": reason, "answered": answered})
    return {"verdicts": verdicts}


def _conversation(prompt: Prompt, schema: type[BaseModel]) -> dict[str, Any]:
    n = _count(schema, "conversations", 1)
    sentences = ex.ranked(_sentences(prompt, "conversations"), False)
    personas = prompt.items("persona")
    out = []
    for k in range(min(n, max(1, len(sentences) - 1))):
        first, second = sentences[k % len(sentences)], sentences[(k + 1) % len(sentences)]
        out.append(
            {
                "index": k + 1,
                "scenario": f"A user wants to know about {ex.topic(first)}.",
                "expected_outcome": f"The user learns that {first.plain[0].lower()}"
                f"{first.plain[1:]}",
                "user_description": personas[k] if k < len(personas) else "a curious reader",
                "exchanges": [
                    {
                        "user": ex.question(first, prompt.english),
                        "assistant": first.plain,
                        "quotes": [first.quote],
                    },
                    {
                        "user": f"And what about {ex.topic(second)}?",
                        "assistant": second.plain,
                        "quotes": [second.quote],
                    },
                ],
            }
        )
    return {"conversations": out}


def _follow_ups(prompt: Prompt, schema: type[BaseModel]) -> dict[str, Any]:
    verdicts = []
    for i, text in enumerate(prompt.items("message"), start=1):
        leans = _FOLLOW_UP.search(text.strip()) is not None
        reason = "refers to something said earlier" if leans else "a question of its own"
        verdicts.append({"index": i, "reason": reason, "standalone": not leans})
    return {"verdicts": verdicts}


Writer = Callable[[Prompt, type[BaseModel]], dict[str, Any]]

#: the reply schema a step asks for (by its class name) -> the function writing that reply
WRITERS: Mapping[str, Writer] = {
    "CriticReply": _critic,
    "InputsReply": _inputs,
    "NearMissReply": _near_misses,
    "AloneReply": _check_alone,
    "ContextReply": _check_context,
    "FilterReply": _filter,
    "RewriteReply": _rewrite,
    "EvolveReply": _evolve,
    "StyleReply": _keep,
    "LanguageReply": _language,
    "ExpectedReply": _expected,
    "ScopeReply": _scope,
    "ConversationReply": _conversation,
    "FollowUpReply": _follow_ups,
}


def reply(prompt: str, schema: type[BaseModel] | None) -> str:
    """The offline model's reply to ``prompt`` for ``schema``, as JSON text; ConfigError for a
    step it cannot answer."""
    writer = WRITERS.get(schema.__name__) if schema is not None else None
    if writer is None:
        what = f"the {schema.__name__} reply" if schema is not None else "free text"
        raise ConfigError(
            f"the offline model writes synth's generation replies only, not {what}: "
            "name a language model for this step (e.g. openai:gpt-4.1-mini)"
        )
    assert schema is not None
    return json.dumps(writer(Prompt(prompt), schema), ensure_ascii=False)


class OfflineModel(LLM):
    """``offline:extractive``: rule-based replies from the prompt's own documents (see the
    module). Takes the arguments every adapter takes; a client or options mean nothing here."""

    provider = PROVIDER

    def __init__(
        self,
        model: str = MODEL,
        *,
        client: Any = None,
        options: Mapping[str, Any] | None = None,
        **settings: Any,
    ) -> None:
        if model != MODEL:
            raise ConfigError(f"the offline provider has one model, '{MODEL}'; got {model!r}")
        if client is not None or options:
            raise ConfigError("the offline model takes no client and no options")
        # base_url, api_key, timeout, max_tokens, ...: it sends no request for them to shape
        self.model = model

    def identity(self) -> dict[str, Any]:
        return {"provider": self.provider, "model": self.model, "note": NOTE}

    async def arequest(
        self,
        prompt: str,
        *,
        system: str | None = None,
        schema: type[BaseModel] | None = None,
        label: str | None = None,
    ) -> Completion:
        text = reply(prompt, schema)
        return Completion(text=text, model=self.model, input_tokens=0, output_tokens=0)


def is_offline(model: object) -> bool:
    """Whether ``model`` (a spec, an LLM, anything a Synthesizer takes) is the offline model."""
    if isinstance(model, str):
        return model.strip().partition(":")[0].strip().lower() == PROVIDER
    return isinstance(model, LLM) and model.provider == PROVIDER


__all__ = ["MODEL", "NOTE", "PROVIDER", "WRITERS", "OfflineModel", "Prompt", "is_offline", "reply"]
