"""A dataset and manifest made to exercise the dataset report: many goldens (more than a page),
every difficulty, cited spans (one after an emoji), and hostile text in every field a document or
a model fills."""

from __future__ import annotations

from typing import Any

from synth.data import Golden
from synth.dataset import Dataset

XSS_INPUT = "<script>alert(1)</script> what is the <b>reserve</b>?"
XSS_CONTEXT = "Before <img src=x onerror=alert(1)> and </table> after </script><!-- the end"
XSS_ANSWER = "</td></tr></table><script>alert(3)</script>"
EMOJI_CHUNK = "Heat 🔥 warning: the battery 🔋 derates above 45 °C. Keep it shaded."
EMOJI_QUOTE = "derates above 45 °C"
FILES = ("manual.pdf", "faq.md", "specs.docx")
LABELS = ("easy", "medium", "hard")


def _cite(chunk_id: str, text: str, quote: str, page: int | None = 1) -> dict[str, Any]:
    start = text.index(quote)
    return {
        "quote": quote,
        "chunk_id": chunk_id,
        "start": start,
        "end": start + len(quote),
        "page": page,
        "ratio": 1.0,
    }


def golden(index: int) -> Golden:
    """The index-th ordinary golden: its own chunk, one cited sentence, a grounding score."""
    chunk = (
        f"Chunk {index}. The battery keeps {index % 7 + 1} kWh in reserve. Other text follows here."
    )
    quote = f"keeps {index % 7 + 1} kWh in reserve"
    chunk_id = f"c{index:04d}"
    return Golden(
        input=f"Question {index}: how much does the battery keep in reserve (variant {index % 11})?",
        expected_output=f"It keeps {index % 7 + 1} kWh.",
        context=[chunk],
        context_ids=[chunk_id],
        source_files=[FILES[index % len(FILES)]],
        metadata={
            "evolutions": [("reasoning", "hypothetical", "concretizing")[index % 3]],
            "persona": ("installer", None)[index % 2],
            "context_quality": 0.5 + (index % 5) / 10,
            "input_quality": 0.6 + (index % 4) / 10,
            "citations": [_cite(chunk_id, chunk, quote, page=index % 4 + 1)],
            "grounding": {"score": round((index * 37 % 100) / 100, 2)},
            "difficulty": {"label": LABELS[index % 3], "overlap": 0.3},
            "run_id": "feedc0ffee000001",
        },
    )


def hostile() -> Golden:
    """A golden whose every text field carries markup a browser would run if it were not escaped."""
    return Golden(
        input=XSS_INPUT,
        expected_output=XSS_ANSWER,
        context=[XSS_CONTEXT],
        context_ids=["xss"],
        source_files=["<img src=x onerror=alert(4)>.md"],
        metadata={
            "evolutions": ["</table>"],
            "difficulty": {"label": "<i>hard</i>"},
            "citations": [_cite("xss", XSS_CONTEXT, "</table>")],
            "grounding": {"score": 0.5},
        },
    )


def emoji() -> Golden:
    """A golden citing a span that comes after characters outside the BMP (two UTF-16 units)."""
    return Golden(
        input="When does the battery derate?",
        expected_output="Above 45 °C.",
        context=["A first chunk with nothing cited.", EMOJI_CHUNK],
        context_ids=["plain", "emoji"],
        source_files=["manual.pdf"],
        metadata={
            "citations": [
                _cite("emoji", EMOJI_CHUNK, EMOJI_QUOTE),
                _cite("emoji", EMOJI_CHUNK, "Keep it shaded"),
            ],
            "grounding": {"score": 1.0},
            "difficulty": {"label": "medium"},
        },
    )


def dataset(count: int = 120) -> Dataset:
    """``count`` ordinary goldens, then the emoji golden, then the hostile one."""
    goldens = [golden(i) for i in range(count)] + [emoji(), hostile()]
    return Dataset(goldens, {"run_id": "feedc0ffee000001", "seed": 7, "num_goldens": count + 2})


def manifest() -> dict[str, Any]:
    """A run manifest with stage counts, drops by reason, coverage, and hostile names."""
    return {
        "run_id": "feedc0ffee000001",
        "status": "complete",
        "created_at": "2026-01-02T03:04:05+00:00",
        "seed": 7,
        "models": {"generator": {"provider": "openai", "model": "<img src=x onerror=alert(5)>"}},
        "totals": {"requests": 321, "cost_usd": 0.1234},
        "stages": [
            {
                "stage": "prose",
                "items_in": 46,
                "items_out": 40,
                "dropped": {"dotted_leaders": 4, "page_number_lines": 2},
            },
            {
                "stage": "critic",
                "items_in": 40,
                "items_out": 30,
                "dropped": {"low quality": 10},
                "requests": 10,
            },
            {
                "stage": "filter",
                "items_in": 130,
                "items_out": 122,
                "dropped": {"</table><script>alert(6)</script>": 8},
            },
            {
                "stage": "check",
                "items_in": 122,
                "items_out": 118,
                "dropped": {"meta_reference": 2, "not_standalone": 1, "unanswerable": 1},
                "requests": 26,
            },
            {
                "stage": "expected",
                "items_in": 118,
                "items_out": 116,
                "dropped": {"unanswerable": 1, "answer_leaked": 1},
                "requests": 12,
            },
        ],
        "coverage": {
            "rule": "proportional",
            "files_covered": 3,
            "files_ingested": 4,
            "files": [
                {"source": f, "target": 40, "delivered": 40 + (f == "manual.pdf")} for f in FILES
            ]
            + [{"source": "empty.txt", "target": 0, "delivered": 0}],
        },
    }
