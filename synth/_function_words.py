"""Frequent function words of the languages :mod:`synth._language` checks: real text of a language
always holds some of them; made-up words and bare lists of nouns do not."""

from __future__ import annotations

#: frequent function words of the Latin-script COMMON languages: real text of a language always
#: holds some of them, made-up words and bare lists of nouns do not
FUNCTION_WORDS: dict[str, frozenset[str]] = {
    code: frozenset(words.split())
    for code, words in {
        "en": "the of and to a in is it that for on with as are be this by or not which was from at an has",
        "de": "der die das und ist nicht zu den von mit sich des auf für ein eine im dem oder als auch wird was wie",
        "fr": "le la les de des et est un une du en que qui dans pour pas au sur il ne ou par",
        "es": "el la los las de y que en un una es por con para del al se no lo",
        "it": "il la di che e un una per non in del della è sono con si le al",
        "pt": "o a os as de que e do da em um uma para com não é no na se",
        "nl": "de het een en van is dat niet op te in voor met zijn er aan ook",
        "pl": "i w nie na się z do że to jest jak o po co od za przez",
        "sv": "och i att det som en på är av för med till den inte har om ett",
    }.items()
}


#: frequent function words of rare languages often written in plain ASCII letters: a plain-ASCII
#: text is weighed among all 75 languages only when it uses some of one of these lists
ASCII_FUNCTION_WORDS: dict[str, frozenset[str]] = {
    code: frozenset(words.split())
    for code, words in {
        "id": "yang dan di ini itu dengan untuk dari dalam tidak ada akan pada ke adalah oleh",
        "ms": "yang dan di ini itu dengan untuk dari dalam tidak ada akan pada ialah oleh",
        "sw": "na ya wa kwa za la katika ni kama hii cha vya kuwa hadi",
        "tl": "ang ng sa mga na at ay si ni hindi ito para",
        "la": "et in est non ad cum quod ut sed qui quae ab ex sunt inter atque",
        "so": "iyo waa ka ku oo in u ay uu aan",
        "eu": "eta da ez bat du dira ere baina zen",
        "cy": "y yr a ac yn i o ar mae gan ei",
        "af": "die en van is nie in te dat met vir op",
        "ro": "si de la in cu pe care nu un o este sa din mai",
    }.items()
}


__all__ = ["ASCII_FUNCTION_WORDS", "FUNCTION_WORDS"]
