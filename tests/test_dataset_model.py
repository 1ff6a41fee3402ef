"""Dataset as a container, Dataset.coerce, and the Golden validators."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from synth import ConfigError, Dataset, DatasetError, Golden


def _three() -> list[Golden]:
    return [Golden(input=f"q{i}", context_ids=[f"c{i}"]) for i in range(3)]


def test_list_behaviour() -> None:
    dataset = Dataset(_three(), {"seed": 1})
    assert len(dataset) == 3
    assert [golden.input for golden in dataset] == ["q0", "q1", "q2"]
    assert dataset[1].input == "q1" and dataset[-1].input == "q2"
    head = dataset[:2]
    assert isinstance(head, Dataset) and len(head) == 2 and head.metadata == {"seed": 1}
    dataset.append({"input": "q3", "context": ["x"]})
    dataset.append(Golden(input="q4"))
    dataset.extend([{"input": "q5"}, Golden(input="q6")])
    assert [golden.input for golden in dataset][3:] == ["q3", "q4", "q5", "q6"]
    assert dataset[3] == Golden(input="q3", context=["x"])
    assert "3 goldens" in repr(Dataset(_three())) and "seed" in repr(Dataset([], {"seed": 1}))


def test_equality() -> None:
    assert Dataset(_three(), {"a": 1}) == Dataset(_three(), {"a": 1})
    assert Dataset(_three(), {"a": 1}) != Dataset(_three(), {"a": 2})
    assert Dataset(_three()) != Dataset(_three()[:2])
    assert Dataset(_three()) != _three()
    with pytest.raises(TypeError):
        hash(Dataset())


def test_constructor_copies_its_inputs() -> None:
    goldens, metadata = _three(), {"seed": 1}
    dataset = Dataset(goldens, metadata)
    goldens.append(Golden(input="later"))
    metadata["seed"] = 2
    assert len(dataset) == 3 and dataset.metadata == {"seed": 1}


def test_dict_goldens_may_use_other_tools_field_names() -> None:
    dataset = Dataset([{"user_input": "q", "reference": "a"}])
    assert dataset[0] == Golden(input="q", expected_output="a")


def test_coerce() -> None:
    dataset = Dataset(_three(), {"seed": 1})
    assert Dataset.coerce(dataset) is dataset
    assert Dataset.coerce(_three()) == Dataset(_three())
    assert Dataset.coerce(tuple(_three())) == Dataset(_three())
    assert Dataset.coerce([{"input": "q"}]) == Dataset([Golden(input="q")])
    assert Dataset.coerce(g for g in _three()) == Dataset(_three())
    dataset.save("d.jsonl")
    assert Dataset.coerce("d.jsonl") == dataset
    assert Dataset.coerce(Path("d.jsonl")) == dataset
    with pytest.raises(ConfigError, match="got one Golden"):
        Dataset.coerce(Golden(input="q"))  # type: ignore[arg-type]
    with pytest.raises(
        ConfigError, match="expected a Dataset, a list of goldens or a path; got an integer"
    ):
        Dataset.coerce(3)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="got an object"):
        Dataset.coerce({"input": "q"})  # type: ignore[arg-type]
    with pytest.raises(DatasetError, match="missing.json: no such file"):
        Dataset.coerce("missing.json")


def test_golden_validation() -> None:
    with pytest.raises(ValidationError, match="input must not be empty or blank"):
        Golden(input=" \n")
    with pytest.raises(ValidationError):
        Golden(input="q", context="not a list")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        Golden(input="q", unknown=1)  # type: ignore[call-arg]
    golden = Golden(input="q")
    assert golden.context is None and golden.context_ids == [] and golden.metadata == {}
