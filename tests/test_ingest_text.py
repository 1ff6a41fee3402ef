"""Text and Markdown files: UTF-8 first, then BOMs and detection; bytes never crash the load."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synth import IngestError, load_documents
from synth.ingest.text import decode_bytes, read_text

FRENCH = (
    "Le système de batterie fonctionne à des températures comprises entre -10 °C et 50 °C. "
    "Une température élevée réduit la durée de vie des cellules. Ça marche très bien, même "
    "l'hiver, grâce au réchauffeur intégré.\n"
)


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_utf8_markdown_is_read_as_is(tmp_path):
    text = "# Titre\n\nUnicode: 日本語, emoji 🙂, quotes “x”.\n"
    document = read_text(write(tmp_path / "a.md", text.encode("utf-8")))
    assert document.text == text
    assert document.metadata["encoding"] == "utf-8"


@pytest.mark.parametrize(
    ("encoding", "expected"),
    [
        ("utf-8-sig", "utf-8-sig"),
        ("utf-16", "utf-16"),  # with a BOM, little- or big-endian per platform
        ("utf-32", "utf-32"),
    ],
)
def test_a_byte_order_mark_decides_the_encoding(tmp_path, encoding, expected):
    document = read_text(write(tmp_path / "bom.txt", FRENCH.encode(encoding)))
    assert document.text == FRENCH
    assert document.metadata["encoding"] == expected


def test_utf16_big_endian_with_bom(tmp_path):
    data = b"\xfe\xff" + FRENCH.encode("utf-16-be")
    assert read_text(write(tmp_path / "be.txt", data)).text == FRENCH


@pytest.mark.parametrize("encoding", ["latin-1", "cp1252"])
def test_legacy_western_text_is_detected(tmp_path, encoding):
    document = read_text(write(tmp_path / "legacy.txt", (FRENCH * 3).encode(encoding)))
    assert document.text == FRENCH * 3
    assert document.metadata["encoding"] == "cp1252"


def test_random_bytes_are_an_error_not_a_crash(tmp_path):
    data = random.Random(7).randbytes(4000)
    with pytest.raises(IngestError, match="not a text file"):
        read_text(write(tmp_path / "noise.txt", data))


def test_binary_with_nul_bytes_is_not_text(tmp_path):
    with pytest.raises(IngestError, match="not a text file"):
        read_text(write(tmp_path / "blob.txt", bytes(range(32)) * 200))


def test_empty_file_is_an_error(tmp_path):
    with pytest.raises(IngestError, match="empty file"):
        read_text(write(tmp_path / "empty.txt", b""))


@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=200).filter(lambda t: not t.startswith("\ufeff")))
def test_decode_bytes_never_raises_on_arbitrary_input(text: str) -> None:
    """Any bytes give text or the one IngestError, nothing else; and text is never refused: any
    string's UTF-8 bytes decode back to it, so a decoder rejecting everything fails here."""
    assert decode_bytes(text.encode("utf-8")) == (text, "utf-8")
    rng = random.Random(len(text))
    outcomes = set()
    for size in (1, 2, 3, 17, 256):
        data = rng.randbytes(size)
        try:
            decoded, encoding = decode_bytes(data)
        except IngestError as exc:
            assert "not a text file" in str(exc)
            outcomes.add("refused")
            continue
        assert isinstance(decoded, str) and encoding
        outcomes.add("decoded")
    assert "decoded" in outcomes  # a single random byte is always some 8-bit text


@settings(max_examples=100, deadline=None)
@given(data=st.binary(max_size=600))
def test_arbitrary_bytes_decode_or_raise_ingest_error(data: bytes) -> None:
    try:
        decoded, encoding = decode_bytes(data)
    except IngestError as exc:
        assert "not a text file" in str(exc)
    else:
        assert isinstance(decoded, str) and encoding


def test_load_reports_each_text_problem_and_goes_on(tmp_path):
    root = tmp_path / "docs"
    write(root / "good.txt", FRENCH.encode("utf-8"))
    write(root / "latin.txt", (FRENCH * 3).encode("latin-1"))
    write(root / "empty.md", b"")
    write(root / "blank.md", b"  \n\t\n")
    write(root / "noise.txt", random.Random(3).randbytes(2048) + b"\x00" * 200)

    report = load_documents(root)

    by_name = {Path(f.path).name: f for f in report.files}
    assert {name: f.status for name, f in by_name.items()} == {
        "blank.md": "error",
        "empty.md": "error",
        "good.txt": "ok",
        "latin.txt": "ok",
        "noise.txt": "error",
    }
    assert by_name["empty.md"].reason == "empty file"
    assert by_name["blank.md"].reason == "no text"
    assert by_name["noise.txt"].reason.startswith("not a text file")
    assert all("\n" not in f.reason for f in report.files)
    assert [d.path for d in report.documents] == ["docs/good.txt", "docs/latin.txt"]
