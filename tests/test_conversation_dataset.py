"""Conversational goldens in every dataset format, and in the deepeval and messages exports."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from synth import ConversationalGolden, Dataset, Golden, Turn
from synth.errors import ConfigError, DatasetError


def conversations() -> list[Golden]:
    """Two conversations (one with citations, quotes and unicode) beside a single-turn golden."""
    return [
        ConversationalGolden(
            scenario="A technician checks the night schedule of the pumps.",
            expected_outcome="The technician knows P-4 runs at night, 22:00\u201306:00.",
            user_description='a night-shift technician, "new" to the plant',
            turns=[
                Turn(role="user", content="Which pump runs at night?"),
                Turn(
                    role="assistant",
                    content="P-4 runs nightly.",
                    metadata={"citations": [{"chunk_id": "m:3", "quote": "P-4 runs nightly"}]},
                ),
                Turn(role="user", content="And from when to when does it run?"),
                Turn(role="assistant", content="From 22:00 to 06:00 | daily."),
            ],
            context=["Pump P-4 runs nightly, 22:00\u201306:00 | see table 3."],
            context_ids=["m:3"],
            source_files=["manuals/manual.pdf"],
            metadata={"persona": "technician", "seed": 7},
        ),
        Golden(input="Bare question?", expected_output="Yes.", context=[]),
        ConversationalGolden(
            turns=[
                Turn(role="user", content="Où est la passerelle ?"),
                Turn(role="assistant", content="Au sous-sol."),
                Turn(role="user", content="Et à quel étage au-dessus ?"),
            ],
        ),
    ]


def test_input_and_expected_output_are_the_last_exchange() -> None:
    first, _, last = conversations()
    assert first.input == "And from when to when does it run?"
    assert first.expected_output == "From 22:00 to 06:00 | daily."
    assert [t.content for t in first.history] == ["Which pump runs at night?", "P-4 runs nightly."]
    assert last.input == "Et à quel étage au-dessus ?" and last.expected_output is None


@pytest.mark.parametrize(
    ("turns", "message"),
    [
        ([("assistant", "hi"), ("user", "q")], "start with a user turn"),
        ([("user", "q"), ("user", "q2")], "alternate"),
    ],
)
def test_turns_that_do_not_make_a_conversation_are_refused(
    turns: list[tuple[str, str]], message: str, tmp_path: Path
) -> None:
    path = tmp_path / "bad.jsonl"
    row = {"turns": [{"role": r, "content": c} for r, c in turns]}
    path.write_text(json.dumps(row) + "\n")
    with pytest.raises(DatasetError, match=message):
        Dataset.load(path)


def test_an_input_that_disagrees_with_the_turns_is_refused() -> None:
    with pytest.raises(ValueError, match="input must be the last user turn"):
        ConversationalGolden(input="other", turns=[Turn(role="user", content="q")])


@pytest.mark.parametrize("name", ["d.json", "d.jsonl", "d.csv", "d.parquet"])
def test_conversations_round_trip_through_every_file_format(name: str, tmp_path: Path) -> None:
    dataset = Dataset(conversations(), {"mode": "docs", "seed": 3})
    loaded = Dataset.load(dataset.save(tmp_path / name))
    assert loaded == dataset
    assert [type(g) for g in loaded] == [ConversationalGolden, Golden, ConversationalGolden]


def test_a_table_of_single_turn_goldens_has_no_conversation_columns(tmp_path: Path) -> None:
    path = Dataset([conversations()[1]]).save(tmp_path / "d.csv")
    assert "turns" not in path.read_text().splitlines()[0]


def test_conversations_round_trip_through_pandas_and_hf(tmp_path: Path) -> None:
    dataset = Dataset(conversations(), {"seed": 3})
    assert Dataset.from_pandas(dataset.to_pandas()) == dataset
    pytest.importorskip("datasets")
    assert Dataset.from_hf(dataset.to_hf()) == dataset
    from synth.dataset._hf_folder import write_hf_folder

    folder = write_hf_folder(tmp_path / "hf", dataset.goldens, dataset.metadata, "card")
    assert Dataset.load(folder) == dataset


def test_the_deepeval_export_reads_back_unchanged(tmp_path: Path) -> None:
    items = [g for g in conversations() if isinstance(g, ConversationalGolden) and g.scenario]
    path = Dataset(items).export(tmp_path / "conv.json", format="deepeval")
    (record,) = json.loads(path.read_text())
    assert record["scenario"].startswith("A technician")
    assert record["turns"][1]["metadata"]["citations"][0]["chunk_id"] == "m:3"
    assert list(Dataset.load(path)) == items


def test_the_deepeval_export_refuses_a_conversation_without_scenario(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="needs a scenario"):
        Dataset(conversations()[2:]).export(tmp_path / "c.json", format="deepeval")


def test_the_messages_export_is_chat_format(tmp_path: Path) -> None:
    path = Dataset(conversations()).export(tmp_path / "chat.jsonl", format="messages")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert rows[0] == {
        "messages": [
            {"role": "user", "content": "Which pump runs at night?"},
            {"role": "assistant", "content": "P-4 runs nightly."},
            {"role": "user", "content": "And from when to when does it run?"},
            {"role": "assistant", "content": "From 22:00 to 06:00 | daily."},
        ]
    }
    assert rows[1]["messages"][0] == {"role": "user", "content": "Bare question?"}
    back = Dataset.load(path)
    assert [t.content for t in back[0].turns] == [m["content"] for m in rows[0]["messages"]]  # type: ignore[attr-defined]


@pytest.mark.parametrize(("fmt", "name"), [("ragas", "r.jsonl"), ("judgeval", "j.json")])
def test_single_turn_exports_refuse_conversations(fmt: str, name: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="export conversations as deepeval or messages"):
        Dataset(conversations()).export(tmp_path / name, format=fmt)  # type: ignore[arg-type]


#: a Python with deepeval installed (tests/test_interop.py builds its own; this one is quicker)
DEEPEVAL_PYTHON = Path(os.environ.get("SYNTH_DEEPEVAL_PYTHON", "/tmp/deepeval-venv/bin/python"))


@pytest.mark.skipif(not DEEPEVAL_PYTHON.is_file(), reason=f"no deepeval at {DEEPEVAL_PYTHON}")
def test_deepeval_reads_the_export_as_conversational_goldens(tmp_path: Path) -> None:
    from synth.dataset._conversations import to_deepeval_any

    items = [g for g in conversations() if isinstance(g, ConversationalGolden) and g.scenario]
    path = Dataset(items).export(tmp_path / "talks.json", format="deepeval")
    out = tmp_path / "read.json"
    loader = Path(__file__).parent / "interop_load.py"
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)}
    env |= {"DEEPEVAL_TELEMETRY_OPT_OUT": "1", "OPENAI_API_KEY": "sk-not-used"}
    done = subprocess.run(
        [str(DEEPEVAL_PYTHON), str(loader), "deepeval-conversations", str(path), str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(out.read_text()) == [to_deepeval_any(g, "") for g in items]


# the record functions of synth/dataset/_conversations.py called directly (the export formats wrap
# them when synth.dataset._export is imported, before mutmut switches a mutant on)


def test_a_deepeval_conversation_record_holds_every_field_and_synths_own_under_its_key() -> None:
    from synth.dataset._conversations import to_deepeval_any

    first = conversations()[0]
    assert isinstance(first, ConversationalGolden)
    record = to_deepeval_any(first, "golden 1")
    assert record == {
        "scenario": "A technician checks the night schedule of the pumps.",
        "expected_outcome": "The technician knows P-4 runs at night, 22:00\u201306:00.",
        "user_description": 'a night-shift technician, "new" to the plant',
        "context": ["Pump P-4 runs nightly, 22:00\u201306:00 | see table 3."],
        "turns": [t.model_dump() for t in first.turns],
        "additional_metadata": {
            "persona": "technician",
            "seed": 7,
            "_synth": {"context_ids": ["m:3"], "source_files": ["manuals/manual.pdf"]},
        },
    }
    assert record["turns"][1]["metadata"]["citations"][0]["quote"] == "P-4 runs nightly"
    assert first.metadata == {"persona": "technician", "seed": 7}  # the golden's own is unchanged


def test_a_single_turn_golden_is_a_deepeval_golden_in_the_same_export() -> None:
    from synth.dataset._conversations import to_deepeval_any
    from synth.dataset._records import to_deepeval

    single = conversations()[1]
    assert to_deepeval_any(single, "golden 2") == to_deepeval(single, "golden 2")
    assert "turns" not in to_deepeval_any(single, "golden 2")


def test_a_deepeval_conversation_without_scenario_or_with_synths_key_is_refused_by_name() -> None:
    from synth.dataset._conversations import to_deepeval_any

    with pytest.raises(DatasetError) as caught:
        to_deepeval_any(conversations()[2], "golden 3")
    assert str(caught.value) == (
        "golden 3: a conversation needs a scenario for deepeval (it reads one without as a "
        "single-turn golden)"
    )
    first = conversations()[0]
    first.metadata["_synth"] = {"mine": 1}
    with pytest.raises(DatasetError) as caught:
        to_deepeval_any(first, "golden 1")
    assert str(caught.value) == (
        "golden 1: metadata key '_synth' is reserved for synth's own fields in exports"
    )


def test_a_single_turn_chat_is_its_input_and_an_answer_only_when_it_has_one() -> None:
    from synth.dataset._conversations import to_messages

    assert to_messages(Golden(input="Q?"), "golden 1") == {
        "messages": [{"role": "user", "content": "Q?"}]
    }
    assert to_messages(Golden(input="Q?", expected_output=""), "golden 1") == {
        "messages": [{"role": "user", "content": "Q?"}, {"role": "assistant", "content": ""}]
    }
    last = conversations()[2]
    assert to_messages(last, "golden 3")["messages"][-1] == {
        "role": "user",
        "content": "Et à quel étage au-dessus ?",
    }


def test_a_single_turn_format_passes_goldens_on_and_refuses_a_conversation_by_name() -> None:
    from synth.dataset._conversations import single_turn_only

    seen: list[tuple[Golden, str]] = []

    def record(golden: Golden, where: str) -> dict:
        seen.append((golden, where))
        return {"q": golden.input}

    convert = single_turn_only(record, "ragas")
    single = conversations()[1]
    assert convert(single, "golden 2") == {"q": "Bare question?"}
    assert seen == [(single, "golden 2")]
    with pytest.raises(ConfigError) as caught:
        convert(conversations()[0], "golden 1")
    assert str(caught.value) == (
        "golden 1: a ragas export holds single-turn goldens; export conversations as deepeval "
        "or messages"
    )
    assert len(seen) == 1
