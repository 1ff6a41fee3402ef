"""The text rules of the offline model: sentences of a passage, questions made from them, the
sentences that answer a question, and prose scores. Pure functions, no model, no randomness.

A passage is read as blocks (paragraphs, list items, headings); a block is cut into sentences at
``.``, ``!`` or ``?`` followed by a space and a capital or a digit. Each :class:`Sentence` keeps
its text as the passage has it (``quote``: markup included, so a quote of it is found in the
chunk) and as it reads (``plain``: markdown emphasis and links removed). An *informative*
sentence is a declarative one of 6 to 50 words that does not lean on an earlier one ("It ...",
"This ..."); numbers and names make it more so.

A question about a sentence names its subject (the words before its verb) or, without one, its
most specific phrase, and so shares the sentence's own words: :func:`answering_sentences` finds it
again from the question alone, weighing each word by how few sentences of the context hold it.
English question frames are used for English text; for another language the question is the
sentence itself turned into a question, so every word of it is in the document's language.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from synth._words import STOPWORDS, content_words, words

_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(?P<text>.+?)\s*#*\s*$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+\u2022]|\d{1,3}[.)])\s+")
_TABLE = re.compile(r"^\s*\|")
# a sentence ends at . ! or ? (after any closing emphasis, quote or bracket), then whitespace,
# then a capital, a digit or opening markup
_SENTENCE_END = re.compile(
    r"(?<=[.!?])(?:\*\*|__|[\"'\u201d)\]])*\s+(?=[\"'\u201c(*_]*[A-Z0-9])|(?<=[\u3002\uff01\uff1f])\s*"
)
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_EMPHASIS = re.compile(r"(\*\*|__|`)")
_BOILERPLATE = re.compile(
    r"copyright|all rights reserved|table of contents|page \d+ of \d+|\btrademarks?\b|"
    r"cookie policy|terms of use",
    re.IGNORECASE,
)
#: words that make a sentence lean on an earlier one when it starts with them
_LEANING = frozenset("it this that these those they such he she its their there here".split())
#: auxiliaries and modals: the first of them after a sentence's opening words is its verb
_AUX = frozenset(
    "is are was were can cannot can't must should will would may might does do did has have "
    "had".split()
)
_BEFORE_NOUN = frozenset(
    "a an the each every any some no this that these those its their your our his her "
    "of in on at to for from by with into over under per as and or".split()
)
#: words that open a phrase before the subject ("For every kWh ...", "If support ..."), or an
#: imperative: a sentence starting with one has no plain subject to name
_NO_SUBJECT = frozenset(
    "for if in on at during when whenever since once every to without with after before only "
    "never always use take check press open enter set make see read keep do don't as by from "
    "while until unless because although though so then also however".split()
)
#: verbs that say little without what follows them: a question names only their subject
_BARE = frozenset("has have had does do did was were lets allows helps makes enables means".split())
_MODALS = frozenset("can cannot must should will would may might".split())
#: adverbs that may stand between a subject and its verb
_ADVERBS = frozenset("now also always never often then still usually normally only".split())
#: prepositions: a verb followed by one has no object to ask for ("sits between ...")
_PREPOSITIONS = frozenset(
    "between at in on to from with for under towards toward through into by after "
    "before when once if within during until since below above over as like".split()
)
#: words that end in s without being a verb in the third person
_NOT_VERBS = frozenset(
    "this its was has does is his us yes less unless always perhaps towards afterwards "
    "backwards besides whereas sometimes".split()
)
#: past participles that do not end in -ed: "is sold", "are kept" (a passive, not a definition)
_PARTICIPLES = frozenset(
    "made sold kept given shown paid built sent held known set run done found taken written "
    "bought brought".split()
)
#: the frames of English questions, chosen by the sentence's hash
_FRAMES = (
    "What does {source} say about {topic}?",
    "What should a user know about {topic}, according to {source}?",
    "How does {source} describe {topic}?",
)
_DEFAULT_SOURCE = "the documentation"


@dataclass(frozen=True)
class Sentence:
    """A sentence of a passage: as the passage has it, as it reads, and what it stands under."""

    quote: str
    plain: str
    heading: str | None
    passage: int
    position: int


def unmarked(text: str) -> str:
    """``text`` without markdown emphasis, code ticks and link targets, its whitespace collapsed."""
    return " ".join(_EMPHASIS.sub("", _LINK.sub(r"\1", text)).split())


def _heading_of(line: str) -> str | None:
    """The heading a line is (``# Title``, or a short line in capitals), else None."""
    found = _HEADING.match(line)
    if found:
        return unmarked(found.group("text"))
    text = line.strip()
    letters = [c for c in text if c.isalpha()]
    capitals = any(c.isupper() for c in letters)  # a script with no case has no capitals line
    if capitals and text.upper() == text and len(text.split()) <= 10 and text[-1] not in ".!?:":
        return text.title()
    return None


def _title_line(line: str) -> str | None:
    """A short line that opens a block and ends with no punctuation: a heading of extracted
    text (a PDF's or a Word file's), which has no markup to say so."""
    if len(line) < 60 and len(line.split()) <= 8 and line[0].isupper() and line[-1].isalnum():
        return unmarked(line)
    return None


def _blocks(text: str) -> list[tuple[str | None, str]]:
    """The passage as (heading above, block text) pairs: paragraphs and list items, lines joined."""
    out: list[tuple[str | None, str]] = []
    heading: str | None = None
    lines: list[str] = []

    def close() -> None:
        if lines:
            out.append((heading, " ".join(lines)))
            lines.clear()

    for raw in text.splitlines():
        line = raw.strip()
        if not line or _TABLE.match(raw):
            close()
            continue
        found = _heading_of(raw)
        item = _LIST_ITEM.match(raw)
        text = raw[item.end() :].strip() if item else line
        if found is None and (not lines or lines[-1][-1] in ".!?:"):
            found = _title_line(text)  # "2. Operating modes" too
        if found is not None:
            close()
            heading = found
            continue
        if item:
            close()
        lines.append(text)
    close()
    return out


def sentences(text: str, passage: int = 0) -> list[Sentence]:
    """Every sentence of a passage, in order (see the module docstring)."""
    out: list[Sentence] = []
    for heading, block in _blocks(text):
        for piece in _SENTENCE_END.split(block):
            quote = piece.strip()
            plain = unmarked(quote)
            if len(words(plain)) >= 2:
                out.append(Sentence(quote, plain, heading, passage, len(out)))
    return out


def context_sentences(passages: Sequence[str]) -> list[Sentence]:
    """The sentences of every passage of a context, passage by passage."""
    return [s for i, text in enumerate(passages) for s in sentences(text, i)]


def informative_score(sentence: Sentence) -> float | None:
    """How much a sentence is worth asking about (higher is better); None when it is not
    informative: not declarative, too short or long, or leaning on an earlier sentence."""
    tokens = sentence.plain.split()
    # words, not spaces: Chinese and Japanese put none between words (their pairs count)
    if not 6 <= len(words(sentence.plain)) <= 50 or sentence.plain[-1] not in ".!\u3002\uff01":
        return None
    first = tokens[0].strip("\"'(").lower()
    if first in _LEANING:
        return None
    score = 0.0
    if any(c.isdigit() for c in sentence.plain):
        score += 2
    names = sum(1 for t in tokens[1:] if t[:1].isupper())
    score += min(2, names)
    if 10 <= len(tokens) <= 30:
        score += 1
    if ":" in sentence.plain or ";" in sentence.plain:
        score -= 1
    return score


def ranked(candidates: Sequence[Sentence], first_passage_first: bool = True) -> list[Sentence]:
    """The informative sentences, best first (the seed passage's before the others), ties in
    reading order."""
    scored = [(informative_score(s), s) for s in candidates]
    kept = [(score, s) for score, s in scored if score is not None]
    order = sorted(
        range(len(kept)),
        key=lambda i: (
            first_passage_first and kept[i][1].passage != 0,
            -(kept[i][0] or 0.0),
            i,
        ),
    )
    return [kept[i][1] for i in order]


def _maybe_verb(tokens: Sequence[str], i: int) -> bool:
    """Whether ``tokens[i]`` may be a verb in the third person singular (``stores``)."""
    token = tokens[i]
    word = token.lower()
    previous = tokens[i - 1].lower()
    return (
        word.isalpha()
        and token.islower()
        and len(word) >= 4
        and word.endswith("s")
        and not word.endswith(("ss", "us", "is"))
        and word not in _NOT_VERBS
        and previous not in _BEFORE_NOUN
        and not previous.endswith("'s")
    )


def _verb_at(tokens: Sequence[str]) -> int | None:
    """Where a sentence's verb is, when its opening words are a plain subject; else None."""
    for i in range(1, min(len(tokens) - 1, 9)):
        token = tokens[i]
        if token.endswith(",") or tokens[i - 1].endswith(","):
            return None  # an opening phrase set off by commas: no plain subject to name
        if token.lower() in _AUX:
            return i
        if _maybe_verb(tokens, i):
            following = tokens[i + 1].lower()
            if following in _AUX or _maybe_verb(tokens, i + 1):
                continue  # a plural noun before the verb: "grid events counts", "tariffs are"
            return i
    return None


def subject(sentence: Sentence) -> tuple[str, str] | None:
    """The sentence's subject and verb when it opens with a plain one (``"Each module"``,
    ``"stores"``), else None."""
    tokens = sentence.plain.split()
    at = _verb_at(tokens)
    if at is None:
        return None
    head = tokens[:at]
    while len(head) > 1 and (head[-1].lower().endswith("ly") or head[-1].lower() in _ADVERBS):
        head = head[:-1]  # "Storm Watch now starts": the adverb is not the subject's
    opening = head[0].lower().strip("\"'(")
    if opening in _LEANING or opening in _NO_SUBJECT or opening in ("you", "we", "i"):
        return None
    common = head[0].lower() in _BEFORE_NOUN or head[0].lower().endswith("ing")
    if common or (len(head) > 1 and head[1][:1].islower() and not head[0].isupper()):
        head = [head[0].lower(), *head[1:]]  # "Installing an update": not a name
    return " ".join(head), tokens[at].lower()


def keyphrase(sentence: Sentence) -> str:
    """The sentence's most specific run of content words (names and numbers first), up to four."""
    tokens = [t.strip(".,;:!?()\"'") for t in sentence.plain.split()]
    runs: list[list[str]] = [[]]
    for token in tokens:
        if token and token.lower() not in STOPWORDS and any(c.isalnum() for c in token):
            runs[-1].append(token)
        elif runs[-1]:
            runs.append([])
    # a run opening the sentence starts after its opening word when that word is no name
    if runs[0] and runs[0][0].lower() in _NO_SUBJECT:
        runs[0] = runs[0][1:]
    candidates = [run[:4] for run in runs if run]
    if not candidates:
        return " ".join(tokens[:4])

    def weight(i: int) -> tuple[int, int]:
        run = candidates[i]
        # a capital opening the sentence says nothing; one inside it marks a name
        opens = i == 0 and tokens[0] == run[0]
        specific = sum(
            1
            for k, t in enumerate(run)
            if (t[:1].isupper() and not (opens and k == 0)) or any(c.isdigit() for c in t)
        )
        return specific * 2 + min(len(run), 3), -i

    return " ".join(candidates[max(range(len(candidates)), key=weight)])


def topic(sentence: Sentence) -> str:
    """What a question about ``sentence`` asks about: its subject, else its keyphrase."""
    found = subject(sentence)
    if found is not None and 1 <= len(found[0].split()) <= 8:
        return found[0]
    return keyphrase(sentence)


def _source(heading: str | None) -> str:
    """How a question names where its answer stands: the heading above its sentence."""
    if not heading or len(heading.split()) > 8 or heading.endswith("?"):
        return _DEFAULT_SOURCE
    return f"the section '{heading}'"


def base_form(verb: str) -> str:
    """The plain form of a verb in the third person singular (``supplies`` -> ``supply``)."""
    if verb.endswith("ies") and len(verb) > 4:
        return verb[:-3] + "y"
    if verb.endswith(("ches", "shes", "sses", "xes", "zes", "oes")):
        return verb[:-2]
    return verb[:-1] if verb.endswith("s") else verb


def hashed(text: str) -> int:
    """A number fixed by ``text`` (the same in every process)."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=4).digest(), "big")


def question(sentence: Sentence, english: bool = True, turn: int = 0) -> str:
    """A question that ``sentence`` answers (see the module docstring)."""
    if not english:
        mark = "\uff1f" if sentence.plain.endswith(("\u3002", "\uff01")) else "?"
        return sentence.plain.rstrip(".!\u3002\uff01").rstrip() + mark
    found = subject(sentence)
    if found is not None and len(found[0].split()) <= 6:
        name, verb = found
        tokens = sentence.plain.split()
        after = tokens[tokens.index(verb) + 1].lower() if verb in tokens[:-1] else ""
        passive = after.endswith("ed") or after in _PARTICIPLES
        if verb in ("is", "are") and not passive:
            return f"What {verb} {name}?"
        if verb in _BARE:
            return _FRAMES[(hashed(sentence.plain) + turn) % len(_FRAMES)].format(
                source=_source(sentence.heading), topic=name
            )
        if verb not in _AUX and after not in _PREPOSITIONS:
            # "Each module stores ..." -> "What does each module store?"
            return f"What does {name} {base_form(verb)}?"
        # a passive, a modal or a verb with no object: ask how, in the sentence's own words
        about = f"how {name} {_verb_group(tokens, tokens.index(verb) if verb in tokens else -1)}"
    else:
        about = topic(sentence)
    frame = _FRAMES[(hashed(sentence.plain) + turn) % len(_FRAMES)]
    return frame.format(source=_source(sentence.heading), topic=about.rstrip(",;:"))


def _verb_group(tokens: Sequence[str], at: int) -> str:
    """The verb at ``at`` with the auxiliaries and participle after it ("can be bought")."""
    if at < 0:
        return ""
    group = [tokens[at].lower()]
    following = tokens[at + 1].lower().strip(",;:.") if at + 1 < len(tokens) else ""
    if group[0] in _MODALS and following.isalpha() and following not in ("be", "not", "only"):
        return f"{group[0]} {following}"  # "can upgrade"
    for token in tokens[at + 1 : at + 4]:
        word = token.lower().strip(",;:.")
        if (
            word in ("be", "been", "not", "only", "also")
            or word.endswith("ed")
            or word in _PARTICIPLES
        ):
            group.append(word)
            if word.endswith("ed") or word in _PARTICIPLES:
                break
        else:
            break
    return " ".join(group)


def _stem(word: str) -> str:
    """``word`` without a plural or verb ending, so "weigh" meets "weighs" and "charged"."""
    for ending in ("ing", "ies", "es", "ed", "s"):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)]
    return word


def _stems(text: str) -> set[str]:
    return {_stem(w) for w in content_words(text)}


# a section a question names ("the section 'What you earn'"): where to look, not what to match
_NAMED_SECTION = re.compile(r"'[^']*'")
#: the words of a sentence's opening that weigh double: where its subject stands
_OPENING = 8


def answering_sentences(text: str, candidates: Sequence[Sentence], most: int = 2) -> list[Sentence]:
    """The sentences of ``candidates`` that answer ``text`` best: the one sharing most of its
    rarer words (those in its opening words, where a subject stands, count double), then, when
    the question asks about more, the one that best covers the rest."""
    # whole sentences first: a line with no stop is a label or a table cell more often than not
    pool = [
        s for s in candidates if len(words(s.plain)) >= 4 and s.plain[-1] in ".!?\u3002\uff01\uff1f"
    ] or list(candidates)
    named = {name.strip("'").casefold() for name in _NAMED_SECTION.findall(text)}
    under = [s for s in pool if s.heading is not None and s.heading.casefold() in named]
    pool = under or pool
    if not pool:
        return []
    stems = [_stems(s.plain) for s in pool]
    openings = [_stems(" ".join(s.plain.split()[:_OPENING])) for s in pool]
    counts: dict[str, int] = {}
    for held in stems:
        for stem in held:
            counts[stem] = counts.get(stem, 0) + 1
    wanted = {w for w in _stems(_NAMED_SECTION.sub(" ", text)) if w in counts}
    picked: list[int] = []
    while len(picked) < most:
        rest = wanted - {w for i in picked for w in stems[i]}
        if picked and len(rest) < 2:
            break
        scores = {
            i: sum((1 + (w in openings[i])) / counts[w] for w in rest & stems[i])
            for i in range(len(pool))
            if i not in picked
        }
        best = max(scores, key=lambda i: (scores[i], -i), default=None)
        if best is None or (picked and len(rest & stems[best]) < 2):
            break
        picked.append(best)
    return sorted((pool[i] for i in picked), key=lambda s: (s.passage, s.position))


def coverage(text: str, passage: str) -> float:
    """The share of ``text``'s content words found in ``passage`` (0 when it has none)."""
    wanted = set(content_words(text))
    if not wanted:
        return 0.0
    return len(wanted & set(words(passage))) / len(wanted)


@dataclass(frozen=True)
class ProseScores:
    """A passage's scores on the critic's four criteria, each 0..1, and the reason in a line."""

    clarity: float
    depth: float
    structure: float
    relevance: float
    reason: str


def _clamp(value: float) -> float:
    return round(min(1.0, max(0.0, value)), 2)


def prose_scores(text: str) -> ProseScores:
    """Scores from the prose itself: the share of its text in informative sentences (clarity),
    its length and facts (depth), how little of it is short fragment lines (structure) and how
    little boilerplate it holds (relevance)."""
    found = sentences(text)
    informative = [s for s in found if informative_score(s) is not None]
    total = max(1, len(" ".join(text.split())))
    prose = sum(len(s.plain) for s in informative) / total
    n_words = len(words(text))
    raw = [line.strip() for line in text.splitlines()]
    lines = [line for line in raw if line]
    # a short line is a fragment unless it is a heading: marked, in capitals, or a title line
    # standing on its own above a block (extracted text, an HTML page's or a slide's, has no "#")
    fragments = sum(
        1
        for i, line in enumerate(raw)
        if line
        and len(line.split()) <= 3
        and _heading_of(line) is None
        and not (_title_line(line) and (i + 1 == len(raw) or not raw[i + 1]))
    )
    fragment_share = fragments / max(1, len(lines))
    boilerplate = len(_BOILERPLATE.findall(text))
    scores = {
        "clarity": _clamp(0.3 + 0.7 * prose),
        "depth": _clamp(
            0.25 + min(0.45, n_words / 400) + (0.2 if any(c.isdigit() for c in text) else 0.0)
        ),
        "structure": _clamp(0.95 - fragment_share - (0.3 if "...." in text else 0.0)),
        "relevance": _clamp(max(0.3, 0.9 - 0.15 * boilerplate)),
    }
    weakest = min(scores, key=lambda k: scores[k])
    reason = (
        f"{len(informative)} informative sentence{'s' if len(informative) != 1 else ''} "
        f"in {n_words} words; weakest on {weakest}"
    )
    return ProseScores(**scores, reason=reason)


__all__ = [
    "ProseScores",
    "Sentence",
    "answering_sentences",
    "context_sentences",
    "coverage",
    "hashed",
    "informative_score",
    "keyphrase",
    "prose_scores",
    "question",
    "ranked",
    "sentences",
    "subject",
    "topic",
    "unmarked",
    "words",
]
