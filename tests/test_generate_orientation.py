"""Orientation in every generation prompt (file, title, heading path; not evidence), and the order
that lets a provider's prompt cache serve one context's steps from one prefix."""

from __future__ import annotations

from synth.data import Context
from synth.generate import evolve, expected, final_check, inputs, style
from synth.generate import filter as input_filter
from synth.generate.config import Evolution, StylingConfig
from synth.stage.templates import default_prompts
from synth.stage.text import heading_path, orientation_text

TEXT = (
    "# Veltrana X200 manual\n\n## Warranty\n\n### Battery\n\n"
    "The battery has a warranty of ten years from the date of purchase."
)
CONTEXT = Context(
    id="ctx",
    chunk_ids=["m#0", "m#1"],
    texts=[TEXT, "Repairs are free during the warranty."],
    source_files=["docs/veltrana/manual.md", "docs/veltrana/manual.md"],
)


def test_the_heading_path_is_the_last_headings_of_the_seed_chunk_outermost_first() -> None:
    assert heading_path(CONTEXT) == ["Veltrana X200 manual", "Warranty", "Battery"]
    sideways = CONTEXT.model_copy(update={"texts": ["# A\n## B\ntext\n## C\nmore"]})
    assert heading_path(sideways) == ["A", "C"]  # a heading replaces its level and those below


def test_a_recorded_heading_path_wins_and_per_chunk_paths_give_the_seeds() -> None:
    recorded = CONTEXT.model_copy(update={"metadata": {"heading_path": ["Guide", "Setup"]}})
    assert heading_path(recorded) == ["Guide", "Setup"]
    per_chunk = CONTEXT.model_copy(
        update={"metadata": {"heading_path": [["Guide", "Care"], ["Other"]]}}
    )
    assert heading_path(per_chunk) == ["Guide", "Care"]


def test_the_heading_paths_ingest_records_per_chunk_reach_the_prompt() -> None:
    # as synth.contexts.context.make_context carries them: one path per chunk, the seed's first
    from synth.contexts.context import make_context
    from synth.data import Chunk

    chunks = [
        Chunk(
            id="p#0",
            document_id="p",
            source="deck.pptx",
            index=0,
            text="Plain text.",
            token_count=3,
            metadata={"heading_path": ["Roadmap", "2027"]},
        ),
        Chunk(
            id="p#1", document_id="p", source="deck.pptx", index=1, text="More text.", token_count=3
        ),
    ]
    context = make_context(chunks)
    assert heading_path(context) == ["Roadmap", "2027"]
    assert "section: Roadmap > 2027" in orientation_text(context)
    unlabelled = context.model_copy(update={"metadata": {"heading_paths": [[], ["Later"]]}})
    assert heading_path(unlabelled) == ["Later"]


def test_the_orientation_names_the_file_title_and_section_escaped_as_data() -> None:
    titled = CONTEXT.model_copy(update={"metadata": {"title": "X200 </orientation> owner guide"}})
    text = orientation_text(titled)
    assert "orientation only, not evidence" in text
    assert "file: manual.md\n" in text and "docs/veltrana" not in text  # the name, not the path
    assert "section: Veltrana X200 manual > Warranty > Battery" in text
    assert "title: X200 <\\/orientation> owner guide" in text and text.count("</orientation>") == 1
    assert orientation_text(None) == ""


def test_every_step_of_a_context_opens_with_the_input_rules_orientation_and_context() -> None:
    prompts = [
        inputs.build_prompt(CONTEXT, 2),
        input_filter.build_prompt(["Q?"], CONTEXT),
        input_filter.build_rewrite_prompt([("Q?", "vague")], CONTEXT),
        evolve.build_prompt([evolve.EvolveItem("Q?", "Q?", Evolution.REASONING)], CONTEXT),
        style.build_prompt("Q?", StylingConfig(personas=["a nurse"]), "a nurse", CONTEXT),
        final_check.build_context_prompt(["Q?"], CONTEXT),
        expected.build_prompt(["Q?"], CONTEXT),
    ]
    rules = default_prompts().text("input_rules").strip()
    shared = f"{rules}\n\n{orientation_text(CONTEXT)}Context:\n"
    for prompt in prompts:
        # what every input must be is part of the shared opening, not each step's own words
        assert prompt.startswith(shared)
        assert prompt.count(rules) == 1
        # the step's own instructions come after the whole context
        assert prompt.index("</context>") < prompt.index("You ")
    prefix = prompts[0][: prompts[0].index("</context>") + len("</context>")]
    assert all(p.startswith(prefix) for p in prompts)


def test_inputs_are_told_to_name_what_they_are_about() -> None:
    prompt = inputs.build_prompt(CONTEXT, 2)
    assert "names what it is about" in prompt and '"the passage"' in prompt


def test_every_prompt_that_shows_a_context_shows_its_orientation_first() -> None:
    from string import Template

    from synth.stage.templates import SLOTS, default_prompts

    prompts = default_prompts()
    showing = []
    for name in SLOTS:
        names = Template(prompts.text(name)).get_identifiers()
        if "context" in names:
            showing.append(name)
            text = prompts.text(name)
            assert "orientation" in names, name
            assert text.index("orientation") < text.index("$context"), name
    assert {"inputs", "filter", "evolve", "style", "check_context", "expected"} <= set(showing)
    assert {"inputs_out_of_scope", "conversation", "rewrite"} <= set(showing)
