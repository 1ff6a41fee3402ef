"""The dataset card: the ``README.md`` of an ``hf`` folder, in the Hub's card format.

YAML front matter first (a license placeholder, task categories, size category, tags, the parquet
shards as the ``default`` config, the features and the split's size), then the body: what the set
is, the source corpus, models, seed and settings, counts per stage with drops by reason, the
evolution mix, difficulty and grounding, cost, the fields and how to load it.

Numbers come from two places: :func:`~synth.dataset.inspect.inspect_dataset` of the goldens being
written (counts, mix, difficulty, grounding), and the run's manifest when one is found (corpus,
models, settings, stages, cost). A dataset from no synth run gets a card without the run's part.
File names and every other value from the corpus or the run are escaped for the Markdown (and so
the HTML) the Hub renders; the front matter is written by a YAML dumper, never by hand.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from synth.data import Golden
from synth.dataset import Dataset
from synth.dataset._card_body import body_lines
from synth.dataset._hf_folder import SHARD_PATTERN
from synth.dataset._records import LIST_FIELDS
from synth.dataset.inspect import DatasetInspection, inspect_dataset

#: the Hub's task ids that fit a question-and-answer evaluation set
TASK_CATEGORIES = ("question-answering", "text-generation")
TAGS = ("synthetic", "evaluation", "rag", "synth")
#: the Hub's size categories: (upper bound, exclusive; label)
_SIZES = (
    (1_000, "n<1K"),
    (10_000, "1K<n<10K"),
    (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
)
#: what a card says until the owner names the corpus's license (the Hub's word for "not stated")
LICENSE_PLACEHOLDER = "unknown"
#: inspect_dataset's default, for a dataset whose run's threshold is not known
DEFAULT_GROUNDING_THRESHOLD = 0.5


def size_category(count: int) -> str:
    """The Hub's size category of a dataset of ``count`` rows (``n<1K`` ...)."""
    for bound, label in _SIZES:
        if count < bound:
            return label
    return "n>10M"


def dataset_card(
    dataset: Dataset,
    manifest: Mapping[str, Any] | None = None,
    *,
    repo: str | None = None,
    title: str | None = None,
) -> str:
    """The card's text: YAML front matter, then Markdown.

    ``manifest`` is the run's (``find_manifest``); ``repo`` the Hub repository it is pushed to,
    named in the loading example; ``title`` defaults to one naming the run.
    """
    run = dict(manifest or {})
    inspection = inspect_dataset(dataset, grounding_threshold=_grounding_threshold(dataset, run))
    name = title or _default_title(dataset, run)
    front = front_matter(dataset, run, inspection, name)
    lines = body_lines(dataset, run, inspection, name=name, repo=repo)
    yaml_text = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{yaml_text}---\n\n" + "\n".join(lines).rstrip() + "\n"


def _grounding_threshold(dataset: Dataset, run: Mapping[str, Any]) -> float:
    """The threshold the run kept answers by (its config), so the card counts as the run did."""
    for config in (run.get("config"), dataset.metadata.get("config")):
        generation = config.get("generation") if isinstance(config, Mapping) else None
        value = generation.get("grounding_threshold") if isinstance(generation, Mapping) else None
        if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1:
            return float(value)
    return DEFAULT_GROUNDING_THRESHOLD


def _default_title(dataset: Dataset, run: Mapping[str, Any]) -> str:
    run_id = run.get("run_id") or dataset.metadata.get("run_id")
    return f"synth test set (run {run_id})" if run_id else "synth test set"


def front_matter(
    dataset: Dataset, run: Mapping[str, Any], inspection: DatasetInspection, name: str
) -> dict[str, Any]:
    """The card's metadata as the Hub reads it (``DatasetCardData``'s fields)."""
    front: dict[str, Any] = {
        "license": LICENSE_PLACEHOLDER,
        "pretty_name": name,
        "task_categories": list(TASK_CATEGORIES),
    }
    languages = card_languages(dataset, run)
    if languages:
        front["language"] = languages
    front["size_categories"] = [size_category(len(dataset))]
    front["tags"] = list(TAGS)
    front["configs"] = [
        {"config_name": "default", "data_files": [{"split": "train", "path": SHARD_PATTERN}]}
    ]
    front["dataset_info"] = {
        "features": feature_list(dataset.goldens),
        "splits": [{"name": "train", "num_examples": inspection.goldens}],
    }
    return front


def feature_list(goldens: Sequence[Golden] = ()) -> list[dict[str, str]]:
    """The columns in the card's ``dataset_info.features`` form (what ``datasets`` writes)."""
    from synth.dataset._records import columns_of

    return [
        {"name": name, "list": "string"}
        if name in LIST_FIELDS
        else {"name": name, "dtype": "string"}
        for name in columns_of(goldens)
    ]


def card_languages(dataset: Dataset, run: Mapping[str, Any]) -> list[str]:
    """The corpus's languages when recorded (the run's ``inputs.languages``, or goldens'
    ``metadata.language``), as the Hub's list of codes; empty when none is."""
    inputs = run.get("inputs")
    recorded = inputs.get("languages") if isinstance(inputs, Mapping) else None
    found: list[str] = []
    if isinstance(recorded, Mapping):
        found = [str(code) for code in recorded]
    elif isinstance(recorded, Sequence) and not isinstance(recorded, str):
        found = [str(code) for code in recorded]
    for golden in dataset:
        language = golden.metadata.get("language")
        if isinstance(language, str) and language:
            found.append(language)
    return sorted(dict.fromkeys(code for code in found if code.strip()))


__all__ = [
    "LICENSE_PLACEHOLDER",
    "TAGS",
    "TASK_CATEGORIES",
    "card_languages",
    "dataset_card",
    "feature_list",
    "front_matter",
    "size_category",
]
