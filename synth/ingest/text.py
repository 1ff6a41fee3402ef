"""Read plain-text and Markdown files: UTF-8 first, then a detected encoding; never crash on bytes."""

from __future__ import annotations

import codecs
import re
from pathlib import Path

import charset_normalizer

from synth.data import Document
from synth.errors import IngestError

# A byte-order mark settles the encoding before any guessing (longest marks first: UTF-32 LE
# starts with the UTF-16 LE mark).
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
# When the detector ties, prefer the commonest legacy encoding of Western text.
_PREFERRED_ON_TIE = "cp1252"
# Control characters that do not occur in text (tab, newline, carriage return, form feed do).
_CONTROL = re.compile("[\x00-\x08\x0b\x0e-\x1f]")


def read_text(path: Path) -> Document:
    """The file's text, decoded; IngestError when it is empty or not text at all."""
    data = Path(path).read_bytes()
    if not data:
        raise IngestError("empty file")
    text, encoding = decode_bytes(data)
    if _looks_binary(text):
        raise IngestError(f"not a text file: binary content (decoded as {encoding})")
    return Document(id="", path="", text=text, metadata={"encoding": encoding})


def decode_bytes(data: bytes) -> tuple[str, str]:
    """``(text, encoding)`` for raw bytes: a BOM, else UTF-8, else the detected encoding."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(encoding), encoding
            except UnicodeDecodeError:
                break  # a stray mark: fall through to detection
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    matches = charset_normalizer.from_bytes(data)
    best = matches.best()
    if best is None:
        raise IngestError("not a text file: no text encoding fits its bytes")
    chosen = best
    for match in matches:
        tied = match.chaos == best.chaos and match.coherence == best.coherence
        if tied and _PREFERRED_ON_TIE in match.could_be_from_charset:
            chosen = match
            break
    encoding = _PREFERRED_ON_TIE if chosen is not best else chosen.encoding
    return data.decode(encoding, errors="replace"), encoding


def _looks_binary(text: str) -> bool:
    """More than 5% control characters (other than tab, newline, carriage return, form feed)."""
    sample = text[:20_000]
    controls = len(_CONTROL.findall(sample))  # a C-speed scan: a text file has none
    return controls > 0.05 * max(len(sample), 1)


__all__ = ["decode_bytes", "read_text"]
