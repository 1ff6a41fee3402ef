"""The fake models' languages: answer in the language a synth prompt names, or (knobs) do not.

A synth prompt names the language to write in on a ``Language: write ... in German.`` line. The
fakes (tests/synth_replies.py) write their questions, rewrites and answers in that language: from
the context's own sentence when the context is in it, else from a stock phrase of that language
(a fake cannot translate). English, or no line at all, is the fakes' old English behaviour.

Knobs, read from the environment on every call:

- ``SYNTH_REPLIES_IGNORE_LANGUAGE``: when set, the line is ignored (every text in English, as a
  model that does not follow the instruction writes it);
- ``SYNTH_REPLIES_WRONG_LANGUAGE``: a fraction of the texts (chosen by a hash of what they answer)
  written in the wrong language: English when another is asked for, else German.
"""

from __future__ import annotations

import hashlib
import os
import re

_ASKED = re.compile(r"^Language: write .*? in ([A-Z][a-z]+)\.$", re.MULTILINE)
_NEEDED = re.compile(r"but it must be written in ([A-Z][a-z]+)")
_WORD = re.compile(r"\w+")
_CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")

#: per language: question openings, the evolve tail, the style opening, a stock answer, a stock
#: question subject (when the context is in another language)
PHRASES: dict[str, dict[str, tuple[str, ...] | str]] = {
    "German": {
        "forms": (
            "Was sagt der Text über",
            "Wie funktioniert",
            "Warum ist",
            "Welches Detail erklärt",
        ),
        "tail": "und was folgt daraus für den Betrieb",
        "hello": "Hallo, eine kurze Frage:",
        "answer": "Der Abschnitt beschreibt genau, wie das System funktioniert und worauf man "
        "bei der täglichen Nutzung achten sollte.",
        "subject": "die Wartung und die sichere Nutzung der Anlage im Alltag",
    },
    "French": {
        "forms": ("Que dit le texte sur", "Comment fonctionne", "Pourquoi", "Quel détail explique"),
        "tail": "et quelles en sont les conséquences pour le fonctionnement",
        "hello": "Bonjour, une petite question :",
        "answer": "Le passage explique précisément comment le système fonctionne et ce qu'il "
        "faut surveiller lors de son utilisation quotidienne.",
        "subject": "l'entretien et l'utilisation sûre de l'installation au quotidien",
    },
    "Japanese": {
        "forms": ("について何が書かれていますか", "はどのように機能しますか", "はなぜ重要ですか"),
        "tail": "、そこから運用について何が言えますか",
        "hello": "こんにちは、質問です：",
        "answer": "この部分では、システムの仕組みと日常の使い方で注意すべき点が説明されています。",
        "subject": "設備の保守と日常の安全な使い方",
    },
    "English": {
        "forms": ("What does the manual say about", "How does", "Why is"),
        "tail": "and what follows from that for daily operation",
        "hello": "Hi, quick question:",
        "answer": "The section explains how the system works and what to watch for when "
        "using it every day.",
        "subject": "keeping the whole installation running safely over the years",
    },
}


def _hashed(text: str) -> float:
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:8], 16) / 2**32


def asked(prompt: str) -> str | None:
    """The language the prompt asks for by name; None for English, none, or when ignored."""
    if os.environ.get("SYNTH_REPLIES_IGNORE_LANGUAGE"):
        return None
    found = _ASKED.search(prompt) or _NEEDED.search(prompt)
    if found is None or found.group(1) == "English" or found.group(1) not in PHRASES:
        return None
    return found.group(1)


def wrong(key: str) -> bool:
    """Whether the text answering ``key`` is to be written in the wrong language."""
    try:
        share = float(os.environ.get("SYNTH_REPLIES_WRONG_LANGUAGE", "0") or 0)
    except ValueError:
        share = 0.0
    return _hashed("wrong-language:" + key) < share


def wrong_for(language: str | None) -> str:
    """The language a wrong reply is written in."""
    return "English" if language not in (None, "English") else "German"


def written_in(language: str, text: str) -> bool:
    """Whether ``text`` (a sentence of the context) looks written in ``language``."""
    from synth._language import detect_language, language_name

    code = detect_language(text)
    return code is not None and language_name(code) == language


def phrase(language: str, name: str) -> str:
    value = PHRASES[language][name]
    assert isinstance(value, str)
    return value


def question(language: str, sentence: str, n: int, key: str) -> str:
    """A question in ``language`` about ``sentence`` (a stock subject when it is in another)."""
    forms = PHRASES[language]["forms"]
    form = forms[n % len(forms)]
    case = int(_hashed(key + sentence) * 1000)
    if language == "Japanese":
        subject = sentence if written_in(language, sentence) else phrase(language, "subject")
        subject = re.sub(r"[。！？、\s]", "", subject)[:12]  # under a copied span (16 pairs)
        return f"{subject}{form}（{case}）？"
    if written_in(language, sentence):
        subject = " ".join(_WORD.findall(sentence)[:6]).lower()  # under a copied span (8)
    else:
        subject = phrase(language, "subject")
    return f"{form} {subject} ({case})?"


def answer(language: str, sentence: str) -> str:
    """An answer in ``language``: the context's sentence when it is in it, else a stock one."""
    return sentence if written_in(language, sentence) else phrase(language, "answer")


def is_cjk(text: str) -> bool:
    return len(_CJK.findall(text)) >= 8


__all__ = ["PHRASES", "answer", "asked", "is_cjk", "phrase", "question", "wrong", "wrong_for"]
