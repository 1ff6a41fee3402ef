"""The plain-code checks of a finished input and its answer: what no model request is needed for.

Each check is a pure function of texts that returns a :class:`Problem` (a drop reason, what was
found, and the feedback a rewrite is asked with) or None. :mod:`synth.generate.final_check` runs
the input's checks after evolution and styling, before the expected output; the expected-output
step runs the answer's (:func:`answer_leak`, :func:`hedged`).

- :func:`meta_reference`: the input points at "the passage", "the context", "this section", ...
  in any of the languages synth writes most (the ``COMMON`` languages of :mod:`synth._language`):
  a user of a RAG system has no passage in front of them.
- :func:`copied_span`: the input repeats :data:`SPAN_WORDS` or more words of its context in a row
  (:data:`CJK_SPAN_WORDS` character pairs for Chinese and Japanese): it tests string matching,
  not understanding.
- :func:`double_question`: two questions in one input (outside the ``double`` question type).
- :func:`too_long`: an input over :data:`MAX_INPUT_WORDS` words.
- :func:`answer_leak`: the question states its answer: it holds :data:`STATED_SHARE` of the
  answer's facts (the answer's words its context holds), or, rewritten by evolution or styling
  alone (which is where leaks appear), it gained :data:`LEAK_MIN_WORDS` or more of them, at least
  :data:`LEAK_SHARE` of those its first version lacked. It needs the answer, so the
  expected-output step runs it.
- :func:`hedged`: an answer that hedges ("the context does not say exactly; it only mentions ...")
  answers only part of its input, whatever its ``answerable`` says.

Words are :func:`synth._words.words` (CJK runs as character pairs); a word of the answer and one of
the question are the same when they are equal after a plural ``s`` is taken off.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from synth._words import STOPWORDS, words

META_REFERENCE = "meta_reference"
COPIED_SPAN = "copied_span"
DOUBLE_QUESTION = "double_question"
TOO_LONG = "too_long"
ANSWER_LEAKED = "answer_leaked"
#: the drop reason of an input its context answers only in part (or not): by the final check's
#: verdict, the expected step's reply, or a hedge in its answer
UNANSWERABLE = "unanswerable"
#: how fully a context answers an input, as a reply says ("fully" first: a confident reply)
Answerable = Literal["fully", "partly", "no"]

#: words in a row that make a copied span (spaced languages)
SPAN_WORDS = 8
#: character pairs in a row that make a copied span in Chinese or Japanese (about 16 characters)
CJK_SPAN_WORDS = 16
#: the length budget of a finished input, in words
MAX_INPUT_WORDS = 80
#: answer words the question gained, at least, to count as a leak
LEAK_MIN_WORDS = 2
#: the share of the answer's facts the gained words must reach to count as a leak
LEAK_SHARE = 0.5
#: the share of the answer's facts (and how many, at least) a question that states it holds
STATED_SHARE = 0.8
STATED_MIN_WORDS = 5

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")

# Phrases that point at a text the user does not have. Nouns that users also ask about in their
# own right ("text", "document", "section") count only with a word that points ("this", "above",
# "according to the"); "passage", "context" and "excerpt" count with any article.
_STRONG = r"passages?|context|excerpts?|extracts?|snippets?"
_WEAK = r"texts?|documents?|sections?|paragraphs?|articles?"
# words after "context" or "passage" that make a term of its own ("the context window")
_TERMS = r"windows?|switch\w*|menus?|length|size|managers?|objects?|variables?|keys?|of\s+time"
# a text named by its title ("the section 'Battery care'") is a subject, not a pointer
_NAMED = r"(?!\s*['\"‘“«])"
_META_PATTERNS = {
    "en": [
        rf"\b(?:the|this|that|these|those|above|given|provided|following|preceding)\s+(?:{_STRONG})\b"
        rf"(?!\s+(?:{_TERMS}))",
        rf"\b(?:this|these|above|given|provided|following|preceding|aforementioned)\s+(?:{_WEAK})\b"
        rf"{_NAMED}",
        rf"\b(?:in|from|according\s+to|based\s+on|per|within|throughout)\s+the\s+(?:{_WEAK})\b"
        rf"{_NAMED}",
        rf"\bthe\s+(?:{_WEAK})\s+(?:above|below|provided|given|says?|states?|mentions?|describes?|"
        r"explains?|discusses?|notes?)\b",
        r"\b(?:mentioned|described|stated|listed|given|shown|discussed)\s+above\b",
        # "this" alone as what speaks ("what does this say about ...", "this states"): a text the
        # user does not have; "it" is left out, as it usually stands for the question's subject
        r"\b(?:does|do|did)\s+this\s+(?:say|state|mention|tell|describe|explain|suggest|claim)\b",
        r"\bthis\s+(?:says|states|mentions|describes|explains|claims)\b",
    ],
    "de": [
        r"\b(?:im|dem|diese[mnrs]?|obige[mnrs]?|vorliegende[mnrs]?|genannte[mnrs]?)\s+"
        r"(?:Text|Textes|Kontext|Kontexts|Dokument|Dokuments|Abschnitt|Abschnitts|Auszug|Passage|"
        r"Textstelle|Textauszug)\b",
        r"\b(?:laut|gemäß|in)\s+(?:dem|der|diesem|dieser)\s+(?:Text|Kontext|Dokument|Abschnitt|"
        r"Auszug|Passage|Textstelle)\b",
    ],
    "fr": [
        r"\b(?:le|ce|du|au|dans\s+le|selon\s+le|d'après\s+le)\s+(?:passage|contexte|texte|"
        r"document|extrait)\b",
        r"\b(?:cette|la)\s+(?:section|partie|citation)\s+(?:ci-dessus|précédente)\b",
        r"\bcette\s+section\b",
        r"\bci-dessus\b",
    ],
    "es": [
        r"\b(?:el|este|del|al|en\s+el|según\s+el)\s+(?:pasaje|contexto|texto|documento|fragmento|"
        r"extracto)\b",
        r"\besta\s+sección\b",
        r"\b(?:mencionad[oa]s?|descrit[oa]s?)\s+(?:arriba|anteriormente)\b",
    ],
    "it": [
        r"\b(?:il|questo|nel|del|secondo\s+il)\s+(?:passaggio|contesto|testo|documento|brano|"
        r"estratto)\b",
        r"\bquesta\s+sezione\b",
    ],
    "pt": [
        r"\b(?:o|este|no|do|segundo\s+o|de\s+acordo\s+com\s+o)\s+(?:trecho|contexto|texto|"
        r"documento|excerto)\b",
        r"\b(?:a|esta|na|da)\s+passagem\b",
        r"\besta\s+se(?:ç|cç)ão\b",
    ],
    "nl": [
        r"\b(?:de|deze|het|dit|in\s+de|in\s+het|volgens\s+de|volgens\s+het)\s+(?:passage|context|"
        r"tekst|document|fragment|sectie)\b",
    ],
    "pl": [
        r"\b(?:w\s+)?(?:tym|powyższym|danym|podanym)\s+(?:tekście|fragmencie|dokumencie|"
        r"kontekście|akapicie|urywku)\b",
        r"\bwedług\s+(?:tekstu|fragmentu|dokumentu|kontekstu)\b",
    ],
    "sv": [
        r"\b(?:i|enligt)\s+(?:texten|passagen|dokumentet|avsnittet|utdraget|sammanhanget|"
        r"kontexten)\b",
        r"\b(?:detta|denna|ovanstående)\s+(?:text|passage|dokument|avsnitt|utdrag)\b",
    ],
    "ru": [
        r"(?:в\s+)?(?:этом|данном|приведённом|приведенном|этом\s+же)\s+(?:тексте|отрывке|"
        r"фрагменте|документе|разделе|контексте)",
        r"(?:согласно|по)\s+(?:тексту|отрывку|фрагменту|документу|контексту)",
        r"\bв\s+(?:тексте|отрывке|контексте)\b",
    ],
    "ja": [
        r"本文|この文章|この文書|上記の|上の文|この一節|文脈|この節|このセクション|抜粋|この段落"
    ],
    "zh": [r"本文|这段文字|这段话|该段落|上述|上文|这篇文章|此文档|该文档|文中|段落中|这一节"],
    "ko": [r"이 글|본문|위의 글|이 문서|지문|이 단락|이 구절|문맥|위 내용"],
}
_META = [
    (code, re.compile(pattern, re.IGNORECASE))
    for code, patterns in _META_PATTERNS.items()
    for pattern in patterns
]

# Hedges an answer that does not answer all of its input writes, in the languages above.
_HEDGES = re.compile(
    "|".join(
        [
            r"\b(?:the\s+)?(?:context|passage|text|document|excerpt|source)s?\s+(?:does|do|did)\s+not\s+"
            r"(?:say|state|specify|mention|give|provide|explain|describe|cover|indicate)",
            r"\b(?:context|passage|text|document|excerpt)s?\s+(?:doesn't|don't)\s+"
            r"(?:say|state|specify|mention|give|provide|explain|describe|cover|indicate)",
            r"\bit\s+only\s+(?:mentions|says|states|notes)\b",
            r"\bis\s+not\s+(?:specified|stated|mentioned|given|provided|described)\b",
            r"\b(?:no|not\s+enough)\s+information\s+(?:is\s+)?(?:given|provided|available)\b",
            r"\bit\s+is\s+(?:not|un)clear\b",
            r"\b(?:cannot|can't|can\s+not)\s+be\s+(?:determined|answered|inferred)\b",
            r"\bnicht\s+(?:angegeben|erwähnt|genannt|beschrieben)\b",
            r"\bgeht\s+(?:aus\s+dem\s+\w+\s+)?nicht\s+hervor\b",
            r"\bn'(?:est|indique|précise|mentionne)\s+pas\b",
            r"\bno\s+(?:se\s+)?(?:especifica|menciona|indica|dice)\b",
            r"\bnon\s+(?:è|viene)\s+(?:specificat|indicat|menzionat)[oaie]\b",
            r"\bnão\s+(?:é\s+)?(?:especifica|menciona|indica|mencionado|especificado)\b",
            r"\bwordt\s+niet\s+(?:vermeld|genoemd|gespecificeerd)\b",
            r"\bnie\s+(?:jest\s+)?(?:podan[oya]|określon[oya]|wspomnian[oya])\b",
            r"\b(?:anges|nämns)\s+inte\b",
            r"не\s+(?:указан[оа]?|уточняется|упоминается|сказано)",
            r"記載されていません|明記されていません|言及されていません|不明です",
            r"没有(?:提到|说明|具体说明|明确)|未(?:提及|说明)|不清楚",
            r"언급되지 않|명시되지 않|나와 있지 않",
        ]
    ),
    re.IGNORECASE,
)
_QUESTION_END = re.compile(r"[?？]")


@dataclass(frozen=True)
class Problem:
    """What a check found: the drop ``reason``, the ``detail`` recorded with a drop, and the
    ``feedback`` a rewrite is asked with."""

    reason: str
    detail: str
    feedback: str


def _is_cjk(text: str) -> bool:
    return len(_CJK.findall(text)) * 2 > len(text.replace(" ", ""))


def meta_reference(text: str) -> Problem | None:
    """A phrase of ``text`` that points at "the passage", "the context", "this section", ..."""
    for code, pattern in _META:
        found = pattern.search(text)
        if found:
            said = found.group(0).strip()
            return Problem(
                META_REFERENCE,
                f"it refers to {said!r} ({code}), which its user never sees",
                f"it refers to {said!r}, which a user never sees: name the subject itself instead",
            )
    return None


def copied_span(text: str, sources: Sequence[str]) -> Problem | None:
    """The first run of :data:`SPAN_WORDS` words (or :data:`CJK_SPAN_WORDS` character pairs) that
    ``text`` shares, in a row, with one of ``sources``."""
    size = CJK_SPAN_WORDS if _is_cjk(text) else SPAN_WORDS
    mine = words(text)
    if len(mine) < size:
        return None
    wanted = {tuple(mine[i : i + size]): i for i in range(len(mine) - size + 1)}
    for source in sources:
        theirs = words(source)
        for i in range(len(theirs) - size + 1):
            at = wanted.get(tuple(theirs[i : i + size]))
            if at is not None:
                span = " ".join(mine[at : at + size])
                return Problem(
                    COPIED_SPAN,
                    f"it copies {size} words of its context in a row: {span!r}",
                    f"it copies the context word for word ({span!r}): ask in your own words",
                )
    return None


def double_question(text: str) -> Problem | None:
    """Two questions in ``text``: two or more question marks, each after a clause of its own."""
    parts = _QUESTION_END.split(text)
    asked = [p for p in parts[:-1] if len(words(p)) >= 2]
    if len(asked) < 2:
        return None
    return Problem(
        DOUBLE_QUESTION,
        f"it asks {len(asked)} questions in one",
        f"it asks {len(asked)} questions: ask exactly one",
    )


def too_long(text: str, budget: int = MAX_INPUT_WORDS) -> Problem | None:
    """``text`` over ``budget`` words."""
    count = len(words(text))
    if count <= budget:
        return None
    return Problem(
        TOO_LONG,
        f"{count} words, over the budget of {budget}",
        f"it is {count} words long: keep it under {budget}",
    )


def input_problems(
    text: str, sources: Sequence[str], *, allow_double: bool = False
) -> list[Problem]:
    """Every problem the plain checks find in the input ``text`` written from ``sources`` (its
    context's texts), in the order the checks run."""
    found = [
        meta_reference(text),
        copied_span(text, sources),
        None if allow_double else double_question(text),
        too_long(text),
    ]
    return [p for p in found if p is not None]


def _facts(text: str) -> set[str]:
    return {_stem(w) for w in words(text) if len(w) > 1 and w not in STOPWORDS}


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def answer_leak(
    question: str, answer: str, first_written: str | None, sources: Iterable[str]
) -> Problem | None:
    """The answer's facts (its words that its context holds) that ``question`` states, when they
    are a leak: :data:`STATED_SHARE` of them or more (at least :data:`STATED_MIN_WORDS`), or,
    when the question was rewritten by evolution or styling alone since it was ``first_written``,
    :data:`LEAK_MIN_WORDS` or more that it gained in those rewrites, :data:`LEAK_SHARE` of the
    facts the first version lacked. ``first_written`` None: the first rule alone."""
    held: set[str] = set()
    for source in sources:
        held |= _facts(source)
    facts = _facts(answer) & held
    stated = facts & _facts(question)
    if len(stated) >= STATED_MIN_WORDS and len(stated) >= STATED_SHARE * len(facts):
        shown = ", ".join(sorted(stated)[:8])
        return Problem(
            ANSWER_LEAKED,
            f"the question states {len(stated)} of the {len(facts)} words of its answer: {shown}",
            f"it gives away its answer ({shown}): ask without stating it",
        )
    if first_written is None:
        return None
    new = facts - _facts(first_written)
    gained = new & stated
    if not new or len(gained) < LEAK_MIN_WORDS or len(gained) < LEAK_SHARE * len(new):
        return None
    shown = ", ".join(sorted(gained)[:8])
    return Problem(
        ANSWER_LEAKED,
        f"the question gained {len(gained)} of the {len(new)} words its answer adds: {shown}",
        f"it gives away its answer ({shown}): ask without stating it",
    )


def hedged(answer: str) -> str | None:
    """The hedging phrase ``answer`` uses ("the context does not specify", "it only mentions"),
    or None."""
    found = _HEDGES.search(answer)
    return found.group(0) if found else None


__all__ = [
    "ANSWER_LEAKED",
    "COPIED_SPAN",
    "DOUBLE_QUESTION",
    "MAX_INPUT_WORDS",
    "META_REFERENCE",
    "SPAN_WORDS",
    "TOO_LONG",
    "Problem",
    "answer_leak",
    "copied_span",
    "double_question",
    "hedged",
    "input_problems",
    "meta_reference",
    "too_long",
]
