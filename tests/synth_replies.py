"""Plausible answers to synth's generation prompts, for the fake OpenAI server and FunctionModel.

``reply(request_json)`` is the fake server's pluggable reply function
(``python tests/fake_openai.py --replies synth_replies:reply``); ``answer(prompt, system)`` is the
same for a :class:`~synth.FunctionModel`. Each stage is recognised by its reply schema's name when
the request carries one, else by its prompt; answers are built from the prompt's own text
(questions from the context's sentences, answers quoting it), deterministic for a given prompt.

Knobs, read from the environment on every call (so a server subprocess can be set up too):

- ``SYNTH_REPLIES_REJECT``: a fraction of passages (chosen by their text's hash) that the context
  critic scores low, so runs must draw replacement contexts.
- ``SYNTH_REPLIES_VAGUE``: a fraction of inputs the filter scores low the first time (their
  rewrite, which ends in "(clarified)", passes).
- ``SYNTH_REPLIES_POINTING``: a fraction of evolved inputs (chosen by their text's hash) that end
  "according to the passage", which the final check finds; its rewrite drops the phrase.
- ``SYNTH_REPLIES_STANDALONE``: a fraction of conversations (chosen by their first question's
  hash) whose follow-up is a question that stands alone, which the follow-up check drops.
- ``SYNTH_REPLIES_IGNORE_LANGUAGE`` and ``SYNTH_REPLIES_WRONG_LANGUAGE``: the language of the
  replies (tests/language_replies.py; by default they are in the language the prompt names).
- ``SYNTH_REPLIES_GATE`` and ``SYNTH_REPLIES_RELEASE``: after GATE requests have been answered,
  further requests wait until the file RELEASE exists (tests use it to stop a run at a known point).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
from typing import Any

import language_replies as lang

_lock = threading.Lock()
_answered = 0

_NUMBERED = re.compile(
    r'<(passage|input|example|item|message|persona) index="\d+">\n(.*?)\n</\1>', re.DOTALL
)
_TAGGED = re.compile(r"<(\w+)>\n(.*?)\n</\1>", re.DOTALL)
_SENTENCE = re.compile(r"[^.!?\n]{20,}[.!?]|[^.!?。！？\n]{8,}[。！？]")
_WORDS = re.compile(r"[A-Za-z][A-Za-z0-9'-]+")


def _fraction(name: str) -> float:
    try:
        return float(os.environ.get(name, "0") or 0)
    except ValueError:
        return 0.0


def _hashed(text: str) -> float:
    """A number in [0, 1) fixed by ``text``."""
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:8], 16) / 2**32


def _section(prompt: str, start: str, ends: tuple[str, ...]) -> str:
    """The text after the line starting with ``start`` up to the first of ``ends``."""
    at = prompt.find(start)
    if at < 0:
        return ""
    body = prompt[prompt.index("\n", at) + 1 :]
    stop = len(body)
    for end in ends:
        found = body.find(end)
        if 0 <= found < stop:
            stop = found
    return body[:stop].strip()


def _items(block: str) -> list[str]:
    found = [text.strip() for _, text in _NUMBERED.findall(block)]
    return found or ([_untag(block)] if block.strip() else [])


def _untag(block: str, name: str | None = None) -> str:
    """The text inside the first ``<name>`` tag of ``block`` (any tag when None), or ``block``."""
    for found_name, text in _TAGGED.findall(block):
        if name is None or found_name == name:
            return text.strip()
    return block.strip()


def _sentences(text: str) -> list[str]:
    lines = [s.strip() for s in _SENTENCE.findall(text)]
    # too short for a sentence: its first words, from inside the tags (a quote must be its text)
    fallback = " ".join(_untag(text).split()[:25])
    kept = [s for s in lines if len(_WORDS.findall(s)) >= 5 or lang.is_cjk(s)]
    return kept or [fallback or "the topic"]


def _question(sentence: str, n: int) -> str:
    words = _WORDS.findall(sentence)
    subject = " ".join(words[: min(len(words), 4)])  # not a copied span, nor the whole answer
    forms = ("What is known about", "How does", "Why is", "Which detail explains")
    return f"{forms[n % len(forms)]} {subject.lower()}?"


def _language_of(prompt: str, key: str) -> str | None:
    """The language to write the reply to ``key`` in (None: the fakes' English)."""
    asked = lang.asked(prompt)
    return lang.wrong_for(asked) if lang.wrong(key) else asked


def _ask(prompt: str, sentence: str, n: int, key: str) -> str:
    """A question about ``sentence``, in the language the prompt asks for (or the wrong one)."""
    language = _language_of(prompt, key)
    if language is None:
        return _question(sentence, n)
    return lang.question(language, sentence, n, key)


# ---- one function per stage ------------------------------------------------------------------------


def _critic(prompt: str) -> dict[str, Any]:
    passages = _items(_section(prompt, "Passages", ("\n\nReply with",)))
    reject = _fraction("SYNTH_REPLIES_REJECT")
    scores = []
    for i, text in enumerate(passages, start=1):
        low = _hashed("critic:" + text) < reject
        grade = 1 if low else 3
        scores.append(
            {
                "index": i,
                "reason": "thin and fragmentary" if low else "clear, substantive passage",
                "prose": True,
                "disqualifier": "none",
                "self_contained": grade,
                "informative": grade,
                "coherent": 2,
            }
        )
    return {"scores": scores}


def _context(prompt: str) -> str:
    ends = ("\n\nInputs", "\n\nInput:", "\n\nWrite ", "\nWrite ", "\n\nLanguage:", "\n\nYou ")
    return _section(prompt, "Context", ends)


def _count(prompt: str, default: int = 2) -> int:
    found = re.search(r"Write (\d+)", prompt)
    return int(found.group(1)) if found else default


def _inputs(prompt: str) -> dict[str, Any]:
    if "whether an AI system admits what its documents do not say" in prompt:
        return _inputs_out_of_scope(prompt)
    n = _count(prompt)
    context = _context(prompt).split("<aside>")[0]
    if not context or context.startswith("(none"):
        examples = _items(_section(prompt, "You write inputs", ("\n\nContext", "\n\nScenario")))
        seed = prompt[-600:] + "".join(examples)
        topics = ["battery storage", "solar yield", "grid outages", "warranty claims", "app alerts"]
        start = int(_hashed(seed) * len(topics))
        return {
            "inputs": [
                f"As a customer, how do I handle {topics[(start + k) % len(topics)]} "
                f"(case {int(_hashed(seed + str(k)) * 1000)})?"
                for k in range(n)
            ]
        }
    sentences = _sentences(context)
    offset = int(_hashed(prompt) * len(sentences))
    picked = [sentences[(offset + k) % len(sentences)] for k in range(n)]
    questions = [_ask(prompt, s, k, f"{prompt}#{k}") for k, s in enumerate(picked)]
    aside = _untag(prompt[prompt.find("<aside>") :], "aside") if "<aside>" in prompt else ""
    if aside:  # a distracting question: a detail of the aside passage, mentioned in passing
        own = {w.lower() for w in _WORDS.findall(context)}
        details = [w for w in _WORDS.findall(aside) if w.lower() not in own] or ["it"]
        questions = [
            f"I read about the {details[k % len(details)].lower()} elsewhere; {q[0].lower()}{q[1:]}"
            for k, q in enumerate(questions)
        ]
    return {"inputs": questions}


def _inputs_out_of_scope(prompt: str) -> dict[str, Any]:
    """Questions on the context's subject about what it does not say (a place and a year it never
    names), each with the sentence it starts from as its fact."""
    n = _count(prompt)
    context = _context(prompt)
    words = [w for w in _WORDS.findall(context) if len(w) > 4] or ["device"]
    sentences = _sentences(context)
    start = int(_hashed(prompt) * len(words))
    asks = ("What did the {} cost in Reykjavik in 2031", "Who invented the {} in Mongolia")
    return {
        "inputs": [
            {
                "fact": sentences[k % len(sentences)],
                "input": f"{asks[k % len(asks)].format(words[(start + 7 * k) % len(words)].lower())}?",
            }
            for k in range(n)
        ]
    }


def _check_alone(prompt: str) -> dict[str, Any]:
    """A question stands alone unless it names "the passage" or "the context"."""
    questions = _items(_section(prompt, "Questions (", ("\n\nFor each",)))
    verdicts = []
    for i, text in enumerate(questions, start=1):
        leans = re.search(r"\bthe (?:passage|context)\b", text, re.IGNORECASE) is not None
        reason = "refers to a text the reader lacks" if leans else "names its subject"
        verdicts.append({"index": i, "reason": reason, "standalone": not leans})
    return {"verdicts": verdicts}


def _check_context(prompt: str) -> dict[str, Any]:
    """Every question is answered fully by the context's first sentence."""
    questions = _items(_section(prompt, "Questions (", ("\n\nFor each",)))
    first = _sentences(_context(prompt))[0]
    return {
        "verdicts": [
            {"index": i, "quotes": [first], "answerable": "fully"}
            for i in range(1, len(questions) + 1)
        ]
    }


def _scope(prompt: str) -> dict[str, Any]:
    """A critic that calls a question answered when a passage holds most of its words."""
    verdicts = []
    for i, block in enumerate(_items(_section(prompt, "Each item below", ("\n\nFor each item",)))):
        question = {w.lower() for w in _WORDS.findall(_untag(block, "input")) if len(w) > 3}
        best = 0.0
        for passage in re.findall(r'<passage index="\d+">\n(.*?)\n</passage>', block, re.DOTALL):
            held = {w.lower() for w in _WORDS.findall(passage)}
            best = max(best, len(question & held) / max(1, len(question)))
        answered = best >= 0.6
        reason = "a passage gives it" if answered else "no passage gives the fact asked for"
        verdicts.append({"index": i + 1, "reason": reason, "answered": answered})
    return {"verdicts": verdicts}


def _language(prompt: str) -> dict[str, Any]:
    """The re-ask of an input in the wrong language: a new question in the one asked for."""
    sentences = _sentences(_context(prompt))
    return {"input": _ask(prompt, sentences[int(_hashed(prompt) * len(sentences))], 0, prompt)}


def _filter(prompt: str) -> dict[str, Any]:
    inputs = _items(_section(prompt, "Inputs (", ("\n\nScore each",)))
    vague = _fraction("SYNTH_REPLIES_VAGUE")
    scores = []
    for i, text in enumerate(inputs, start=1):
        low = not text.endswith("(clarified)") and _hashed("filter:" + text) < vague
        entry: dict[str, Any] = {
            "index": i,
            "feedback": "name the component it asks about" if low else "",
            "score": 0.3 if low else 0.9,
        }
        if low:
            entry["rewrite"] = f"{text.rstrip('?')} (clarified)"
        scores.append(entry)
    return {"scores": scores}


def _rewrite(prompt: str) -> dict[str, Any]:
    blocks = _items(_section(prompt, "Inputs with feedback", ("\n\nRewrite each",)))
    out = []
    for i, block in enumerate(blocks, start=1):
        text = _untag(block, "input").replace(_POINTING, "")
        out.append({"index": i, "input": f"{text.rstrip('?')} (clarified)"})
    return {"inputs": out}


#: what an evolution that points at the passage (SYNTH_REPLIES_POINTING) adds
_POINTING = ", according to the passage"

_EVOLVED = {
    "multi-step": "and what follows from that",
    "two of the passages": "drawing on both passages",
    "specific entities": "for the specific model named",
    "constraint": "if the battery is below 20 percent",
    "comparison": "compared with the alternative described",
    "hypothetical": "in a hypothetical week-long outage",
    "related but different": "and the related setting that affects it",
}


def _evolve(prompt: str) -> dict[str, Any]:
    """Each item's input with a tail that says which evolution its numbered line asked for."""
    blocks = _items(_section(prompt, "Inputs to rewrite", ("\n\nHow to rewrite",)))
    lines = _section(prompt, "How to rewrite each", ("\n\nRules",))
    asked = dict(re.findall(r"^(\d+)\. (.+)$", lines, re.MULTILINE))
    out = []
    for i, block in enumerate(blocks, start=1):
        text = _untag(block, "input")
        instruction = asked.get(str(i), "")
        out.append({"index": i, "input": _evolved(prompt, text, instruction)})
    return {"evolved": out}


def _evolved(prompt: str, text: str, instruction: str) -> str:
    tail = next((t for k, t in _EVOLVED.items() if k in instruction), "in more detail")
    key = prompt + text
    language = _language_of(prompt, key)
    if language is not None:
        if language != lang.asked(prompt):  # the wrong language: the whole input in it
            text = lang.question(language, text, 0, key)
        tail = lang.phrase(language, "tail")
    elif _hashed("pointing:" + text) < _fraction("SYNTH_REPLIES_POINTING"):
        tail += _POINTING
    return f"{text.rstrip('?？')}, {tail}?"


def _style(prompt: str) -> dict[str, Any]:
    text = _untag(_section(prompt, "Input:", ("\n\nKeep its meaning",)), "input")
    persona = re.search(r"Write as this user: (.*)", prompt)
    who = f" ({persona.group(1).strip()[:40]})" if persona else ""
    language = _language_of(prompt, prompt)
    if language is not None:
        if language != lang.asked(prompt):
            text = lang.question(language, text, 1, prompt)
        return {"input": f"{lang.phrase(language, 'hello')} {text}"}
    return {"input": f"Hi{who}, quick question: {text}"}


_PASSAGE = re.compile(r'<passage index="\d+">\n(.*?)\n</passage>', re.DOTALL)


def _expected(prompt: str) -> dict[str, Any]:
    inputs = _items(_section(prompt, "Inputs (", ("\n\nAnswer each",)))
    context = _context(prompt)
    passages = _PASSAGE.findall(context)
    if "quote each passage the answer needs" in prompt and len(passages) >= 2:
        return {"outputs": [_two_passages(i, q, passages) for i, q in enumerate(inputs, start=1)]}
    sentences = _sentences(context)
    outputs = []
    for i, question in enumerate(inputs, start=1):
        sentence = sentences[int(_hashed(question) * len(sentences))]
        # the sentence is the answer and its one quote: fully grounded (in another language
        # than the context's, a stock answer of that language, the sentence its quote)
        language = _language_of(prompt, prompt + question)
        text = sentence.strip() if language is None else lang.answer(language, sentence.strip())
        outputs.append(
            {"index": i, "quotes": [sentence], "answerable": "fully", "expected_output": text}
        )
    return {"outputs": outputs}


def _two_passages(index: int, question: str, passages: list[str]) -> dict[str, Any]:
    """A multi-hop answer: a sentence of each of two passages, both quoted."""
    first = int(_hashed(question) * len(passages))
    picked = [passages[first], passages[(first + 1) % len(passages)]]
    quotes = [_sentences(p)[0] for p in picked]
    return {
        "index": index,
        "quotes": quotes,
        "answerable": "fully",
        "expected_output": " ".join(quotes),
    }


def _conversation(prompt: str) -> dict[str, Any]:
    """Conversations of two exchanges, each assistant turn a sentence of the context quoted whole;
    the follow-up starts with "And what about" (it depends on the first turn), or, for the
    SYNTH_REPLIES_STANDALONE share, is a question of its own."""
    sentences = _sentences(_context(prompt))
    personas = _items(_section(prompt, "The user of each conversation", ("\n\nWrite",)))
    standalone = _fraction("SYNTH_REPLIES_STANDALONE")
    out = []
    for i in range(_count(prompt)):
        start = int(_hashed(f"conversation:{i}:{prompt[-400:]}") * len(sentences))
        first, second = sentences[start], sentences[(start + 1) % len(sentences)]
        question = _question(first, i)
        words = _WORDS.findall(second)
        topic = " ".join(words[: min(len(words), 6)]).lower()
        follow_up = f"And what about {topic}?"
        if _hashed("standalone:" + question) < standalone:
            follow_up = f"Which detail explains {topic}?"
        out.append(
            {
                "index": i + 1,
                "scenario": f"A user wants to know about {' '.join(_WORDS.findall(first)[:6])}.",
                "expected_outcome": f"The user learns that {first.strip()}",
                "user_description": personas[i] if i < len(personas) else "a curious reader",
                "exchanges": [
                    {"user": question, "assistant": first.strip(), "quotes": [first]},
                    {"user": follow_up, "assistant": second.strip(), "quotes": [second]},
                ],
            }
        )
    return {"conversations": out}


def _follow_ups(prompt: str) -> dict[str, Any]:
    """A message depends on the conversation when it starts with "And" or "What about"."""
    messages = _items(_section(prompt, "Messages (", ("\n\nFor each",)))
    verdicts = []
    for i, text in enumerate(messages, start=1):
        alone = not re.match(r"(and|what about)\b", text.strip(), re.IGNORECASE)
        reason = "a question of its own" if alone else "refers to the earlier turn"
        verdicts.append({"index": i, "reason": reason, "standalone": alone})
    return {"verdicts": verdicts}


_BY_SCHEMA = {
    "ConversationReply": _conversation,
    "FollowUpReply": _follow_ups,
    "CriticReply": _critic,
    "InputsReply": _inputs,
    "NearMissReply": _inputs_out_of_scope,
    "AloneReply": _check_alone,
    "ContextReply": _check_context,
    "FilterReply": _filter,
    "RewriteReply": _rewrite,
    "EvolveReply": _evolve,
    "StyleReply": _style,
    "ExpectedReply": _expected,
    "ScopeReply": _scope,
    "LanguageReply": _language,
}
_BY_PROMPT = (
    ("You are judging passages", _critic),
    ("whether an AI system admits what its documents do not say", _inputs_out_of_scope),
    ("You check whether documents answer questions", _scope),
    ("You see each question alone", _check_alone),
    ("You check questions written for evaluating an AI system, against", _check_context),
    ("You write questions", _inputs),
    ("You write inputs", _inputs),
    ("You review synthetic inputs", _filter),
    ("You improve synthetic inputs", _rewrite),
    ("You rewrite inputs used to evaluate", _evolve),
    ("so that it reads as a real user", _style),
    ("You write the ideal answers", _expected),
    ("You write conversations", _conversation),
    ("You check follow-up messages", _follow_ups),
    ("because it is written in the wrong language", _language),
)


def answer(prompt: str, system: str | None = None, schema_name: str | None = None) -> str:
    """The reply text for one prompt (a JSON object for every synth stage)."""
    stage = _BY_SCHEMA.get(schema_name or "")
    if stage is None:
        stage = next((fn for marker, fn in _BY_PROMPT if marker in prompt), None)
    if stage is None:
        return "I can help with that."
    return json.dumps(stage(prompt))


def stage_of(prompt: str) -> str:
    """Which synth stage a prompt belongs to (its answering function's name, without ``_``)."""
    fn = next((fn for marker, fn in _BY_PROMPT if marker in prompt), None)
    return fn.__name__.lstrip("_") if fn is not None else "other"


class Replies:
    """A scripted model for :class:`~synth.FunctionModel`: answers like :func:`answer`, counts
    prompts by stage, and can fail or stall chosen prompts.

    ``fail(prompt) -> str | None``: a reply to send instead (e.g. invalid JSON), or None;
    ``delay(prompt) -> float``: seconds to wait first (to shuffle completion order).
    """

    def __init__(self, fail: Any = None, delay: Any = None) -> None:
        self.fail = fail
        self.delay = delay
        self.prompts: list[str] = []
        self._lock = threading.Lock()

    async def __call__(self, prompt: str, system: str | None = None) -> str:
        import asyncio

        with self._lock:
            self.prompts.append(prompt)
        if self.delay is not None:
            await asyncio.sleep(self.delay(prompt))
        if self.fail is not None:
            instead = self.fail(prompt)
            if instead is not None:
                return instead
        return answer(prompt, system)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for prompt in self.prompts:
            stage = stage_of(prompt)
            out[stage] = out.get(stage, 0) + 1
        return out


def _gate() -> None:
    global _answered
    with _lock:
        _answered += 1
        number = _answered
    limit = os.environ.get("SYNTH_REPLIES_GATE")
    release = os.environ.get("SYNTH_REPLIES_RELEASE")
    if not limit or not release or number <= int(limit):
        return
    while not os.path.exists(release):  # held until the test opens the gate
        time.sleep(0.01)


def reply(request: dict[str, Any]) -> str:
    """The fake server's reply function: answers a chat request to a synth stage."""
    _gate()
    messages = request.get("messages") or []
    prompt = "\n".join(m.get("content", "") for m in messages if m.get("role") != "system")
    fmt = request.get("response_format") or {}
    name = (fmt.get("json_schema") or {}).get("name") if fmt.get("type") == "json_schema" else None
    return answer(prompt, None, name)


__all__ = ["Replies", "answer", "reply", "stage_of"]
