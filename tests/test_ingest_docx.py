"""Word files: paragraphs and tables in document order; broken files become one-line errors."""

from __future__ import annotations

import struct
import zipfile
from pathlib import Path

import docx
import pytest
from ingest_files import make_docx

from synth import IngestError, load_documents
from synth.ingest.docx import read_docx


def test_paragraphs_and_tables_in_document_order(tmp_path):
    path = make_docx(
        tmp_path / "order.docx",
        [
            ("h", "Before the table"),
            ("p", "The first paragraph."),
            ("table", [["Model", "Capacity"], ["HB-10", "10.2 kWh"]]),
            ("p", "Between the tables."),
            ("table", [["Code", "Meaning"], ["E101", "Too hot"], ["E102", "Too cold"]]),
            ("p", "After the tables."),
        ],
    )
    document = read_docx(path)
    assert document.text == (
        "Before the table\n\nThe first paragraph.\n\n"
        "Model | Capacity\nHB-10 | 10.2 kWh\n\n"
        "Between the tables.\n\n"
        "Code | Meaning\nE101 | Too hot\nE102 | Too cold\n\n"
        "After the tables."
    )
    assert document.metadata["tables"] == 2
    assert document.pages == []


def test_merged_cells_are_written_once_and_nested_tables_are_read(tmp_path):
    word = docx.Document()
    table = word.add_table(rows=2, cols=3)
    merged = table.cell(0, 0).merge(table.cell(0, 2))
    merged.text = "Spanning header"
    for column, value in enumerate(["a", "b", "c"]):
        table.cell(1, column).text = value
    inner = table.cell(1, 2).add_table(rows=1, cols=2)
    inner.cell(0, 0).text = "inner-1"
    inner.cell(0, 1).text = "inner-2"
    path = tmp_path / "merged.docx"
    word.save(str(path))

    lines = read_docx(path).text.splitlines()

    assert lines[0] == "Spanning header"
    assert lines[1] == "a | b | c inner-1 | inner-2"


def test_empty_paragraphs_are_dropped(tmp_path):
    path = make_docx(tmp_path / "gaps.docx", [("p", ""), ("p", "Only line"), ("p", "   ")])
    assert read_docx(path).text == "Only line"


def test_a_file_that_is_not_a_zip_is_an_error(tmp_path):
    path = tmp_path / "fake.docx"
    path.write_text("I am plain text pretending to be Word.")
    with pytest.raises(IngestError, match="not a Word .docx file"):
        read_docx(path)


def test_a_zip_that_is_not_a_word_document_is_an_error(tmp_path):
    path = tmp_path / "archive.docx"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("hello.txt", "not a word document")
    with pytest.raises(IngestError, match="damaged .docx"):
        read_docx(path)


def _rezip(source: Path, target: Path, replace: dict[str, bytes]) -> Path:
    """A copy of the zip ``source`` with some parts' contents replaced."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as new:
        for name in old.namelist():
            new.writestr(name, replace.get(name, old.read(name)))
    return target


def _headers(data: bytes, name: str) -> tuple[int, int]:
    """Offsets of the local header and the central directory entry of the part ``name``."""
    encoded = name.encode()
    local = data.index(b"PK\x03\x04")
    while data[local + 30 : local + 30 + len(encoded)] != encoded:
        local = data.index(b"PK\x03\x04", local + 4)
    central = data.index(b"PK\x01\x02")
    while data[central + 46 : central + 46 + len(encoded)] != encoded:
        central = data.index(b"PK\x01\x02", central + 4)
    return local, central


def test_a_zip_whose_compressed_data_is_damaged_is_an_error(tmp_path):
    path = make_docx(tmp_path / "inflate.docx", [("p", "Readable text.")])
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo("word/document.xml")
    data = bytearray(path.read_bytes())
    local, _ = _headers(data, info.filename)
    name_length, extra_length = struct.unpack("<HH", data[local + 26 : local + 30])
    start = local + 30 + name_length + extra_length
    # 0xff starts a deflate block of the reserved type 3: zlib refuses to inflate it
    data[start : start + info.compress_size] = b"\xff" * info.compress_size
    path.write_bytes(bytes(data))
    with pytest.raises(IngestError, match=r"^damaged \.docx: .*invalid block type"):
        read_docx(path)


def _unknown_method_docx(path: Path) -> Path:
    """A .docx whose document part claims a compression method zipfile does not know."""
    make_docx(path, [("p", "Readable text.")])
    data = bytearray(path.read_bytes())
    local, central = _headers(data, "word/document.xml")
    data[local + 8 : local + 10] = struct.pack("<H", 99)  # the method is in both headers
    data[central + 10 : central + 12] = struct.pack("<H", 99)
    path.write_bytes(bytes(data))
    return path


def test_a_zip_with_an_unknown_compression_method_is_an_error(tmp_path):
    path = _unknown_method_docx(tmp_path / "method.docx")
    with pytest.raises(IngestError, match=r"^damaged \.docx: .*compression method"):
        read_docx(path)


def test_well_formed_xml_that_is_not_word_xml_is_an_error(tmp_path):
    good = make_docx(tmp_path / "good.docx", [("p", "Readable text.")])
    odd_types = b'<?xml version="1.0"?><Types xmlns="urn:not-the-opc-namespace"/>'
    path = _rezip(good, tmp_path / "types.docx", {"[Content_Types].xml": odd_types})
    with pytest.raises(IngestError, match=r"^damaged \.docx: "):
        read_docx(path)


def test_empty_and_textless_documents_are_errors(tmp_path):
    empty = tmp_path / "empty.docx"
    empty.write_bytes(b"")
    with pytest.raises(IngestError, match="empty file"):
        read_docx(empty)
    blank = make_docx(tmp_path / "blank.docx", [("table", [["", ""], ["", ""]])])
    with pytest.raises(IngestError, match=r"no text \(1 empty tables, 0 images\)"):
        read_docx(blank)


def test_load_lists_broken_word_files_and_keeps_the_good_one(tmp_path):
    root = tmp_path / "word"
    make_docx(root / "good.docx", [("p", "Readable.")])
    (root / "fake.docx").write_text("nope")
    (root / "empty.docx").write_bytes(b"")
    _unknown_method_docx(root / "method.docx")  # fails deep inside zipfile, not python-docx

    report = load_documents(root)

    assert [(f.path, f.status) for f in report.files] == [
        ("word/empty.docx", "error"),
        ("word/fake.docx", "error"),
        ("word/good.docx", "ok"),
        ("word/method.docx", "error"),
    ]
    assert report.files[-1].reason.startswith("damaged .docx: ")
    assert [d.text for d in report.documents] == ["Readable."]
    assert report.counts() == {"ok": 1, "error": 3, "skipped": 0}
