"""Dataset: goldens with dataset-level metadata, saved, loaded and exported losslessly.

The suffix picks the file format (docs/dataset.md, "Save and load"): ``.json``, ``.jsonl`` and
``.csv`` (their metadata in the sidecar ``<file name>.meta.json``), ``.parquet`` (needs pyarrow),
or a Hugging Face ``hf`` folder (``synth/dataset/_hf_folder.py``); :meth:`Dataset.to_hf` and
:meth:`Dataset.from_hf` convert to and from a ``datasets.Dataset`` (``synth/dataset/_hf.py``).

Every field survives every format: null, the empty string and the empty list stay distinct.
``Dataset.load`` also reads the files :meth:`Dataset.export` writes for other tools
(``synth/dataset/_export.py``) and those deepeval's own ``EvaluationDataset.save_as`` writes
(``synth/dataset/_deepeval_saved.py``). A malformed file raises
:class:`~synth.errors.DatasetError` naming the file, where in it (``line`` for .jsonl, ``row`` for
.csv with the header as row 1, ``index`` for .json and .parquet) and the field.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

from synth.data import Golden
from synth.dataset import _journal
from synth.dataset._csv import read_csv, write_csv
from synth.dataset._export import export_goldens
from synth.dataset._io import check_metadata
from synth.dataset._json import read_json, read_jsonl, write_json, write_jsonl
from synth.dataset._pandas import ATTRS_KEY, goldens_from_frame, to_frame
from synth.dataset._parquet import read_parquet, write_parquet
from synth.dataset._platform_files import YAML_SUFFIXES, phoenix_frame, read_yaml
from synth.dataset._platforms import PHOENIX_KEYS
from synth.dataset._records import golden_from_record, kind
from synth.errors import ConfigError, DatasetError

if TYPE_CHECKING:
    import datasets
    import pandas as pd

ExportFormatName = Literal[
    "deepeval",
    "deepeval-csv",
    "ragas",
    "judgeval",
    "judgeval-legacy",
    "messages",
    "promptfoo",
    "langsmith",
    "langfuse",
    "phoenix",
]

_Reader = Callable[[Path], tuple[list[Golden], dict[str, Any]]]
_Writer = Callable[[Path, Sequence[Golden], Mapping[str, Any]], None]
_FORMATS: dict[str, tuple[_Reader, _Writer]] = {
    ".json": (read_json, write_json),
    ".jsonl": (read_jsonl, write_jsonl),
    ".csv": (read_csv, write_csv),
    ".parquet": (read_parquet, write_parquet),
}
SUFFIXES: tuple[str, ...] = tuple(_FORMATS)


def _format(path: Path) -> tuple[_Reader, _Writer]:
    try:
        return _FORMATS[path.suffix.lower()]
    except KeyError:
        raise ConfigError(
            f"{path}: unsupported dataset suffix {path.suffix or '(none)'!r}; "
            f"use one of {', '.join(SUFFIXES)}"
        ) from None


@dataclass(frozen=True)
class Shortfall:
    """Why a generate call delivered fewer goldens than asked.

    ``reasons`` lead with the cause that stopped the run first (:attr:`reason`), then what was
    dropped where, most first. Kept in the dataset's metadata (``num_goldens``, ``delivered``,
    ``shortfall``), so it survives save and load.
    """

    asked: int | None  # None: no number was asked (max_goldens_per_context from each context)
    delivered: int
    reasons: tuple[str, ...] = ()

    @property
    def reason(self) -> str:
        """The cause that stopped the run first."""
        return self.reasons[0] if self.reasons else "no reason was recorded"

    def __str__(self) -> str:
        if self.asked is None:
            return f"delivered no goldens: {self.reason}"
        return f"delivered {self.delivered} of {self.asked} goldens: {self.reason}"


class Dataset:
    """An ordered list of goldens plus dataset-level metadata (generation settings, seed...).

    Iterable, sized and indexable (a slice is a new Dataset with the same metadata); two datasets
    are equal when their goldens and metadata are.
    """

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __init__(
        self,
        goldens: Iterable[Golden | Mapping[str, Any]] = (),
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        if metadata is not None and not isinstance(metadata, Mapping):
            raise ConfigError(f"Dataset metadata must be a dict, got {kind(metadata)}")
        self.goldens: list[Golden] = []
        self.metadata: dict[str, Any] = dict(metadata or {})
        self.extend(goldens)

    # ---- the list of goldens ---------------------------------------------------------------------
    def append(self, golden: Golden | Mapping[str, Any]) -> None:
        """Add one golden (a dict is validated into one)."""
        self.goldens.append(_as_golden(golden, f"index {len(self.goldens)}"))

    def extend(self, goldens: Iterable[Golden | Mapping[str, Any]]) -> None:
        """Add goldens in order (dicts are validated into goldens)."""
        if isinstance(goldens, str | bytes | Mapping | Golden):
            raise ConfigError(f"expected an iterable of goldens, got {kind(goldens)}")
        for golden in goldens:
            self.append(golden)

    def __len__(self) -> int:
        return len(self.goldens)

    def __iter__(self) -> Iterator[Golden]:
        return iter(self.goldens)

    @overload
    def __getitem__(self, index: int) -> Golden: ...

    @overload
    def __getitem__(self, index: slice) -> Dataset: ...

    def __getitem__(self, index: int | slice) -> Golden | Dataset:
        if isinstance(index, slice):
            return Dataset(self.goldens[index], self.metadata)
        try:
            return self.goldens[index]
        except IndexError:
            short = self.shortfall
            if short is None:
                raise
            raise IndexError(f"no golden {index}: the run {short}") from None

    @property
    def shortfall(self) -> Shortfall | None:
        """Why the run that made this dataset delivered fewer goldens than asked, or none at all
        when no number was asked (None when it delivered them all, or some of none asked)."""
        asked, delivered = self.metadata.get("num_goldens"), self.metadata.get("delivered")
        reasons = tuple(str(r) for r in self.metadata.get("shortfall") or [])
        if not isinstance(delivered, int):
            return None
        if not isinstance(asked, int):
            # no number asked: a run that delivered nothing still says why, never silently
            return Shortfall(None, 0, reasons) if delivered == 0 and reasons else None
        return Shortfall(asked, delivered, reasons) if delivered < asked else None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Dataset):
            return NotImplemented
        return self.goldens == other.goldens and self.metadata == other.metadata

    def __repr__(self) -> str:
        keys = ", ".join(sorted(self.metadata)[:5])
        return f"Dataset({len(self.goldens)} goldens, metadata keys: [{keys}])"

    # ---- files -----------------------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the dataset to ``path`` in the format its suffix names; return the path.

        ``.jsonl`` and ``.csv`` also write the metadata sidecar ``<file name>.meta.json``. The
        write is atomic: a failed save leaves any previous file untouched. A review journal of
        the file replaced (``<file name>.review-journal``) is removed: these goldens supersede it.
        """
        target = Path(path)
        _, write = _format(target)
        check_metadata(self.metadata, target)
        write(target, self.goldens, self.metadata)
        _journal.discard(target)  # the goldens saved supersede any review journal of the file
        return target

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Dataset:
        """Read a dataset saved by :meth:`save` or exported by :meth:`export` (format by suffix),
        or a Hugging Face folder (``synth export --format hf``, or ``save_to_disk`` output).

        The decisions of a review still in its journal (``synth review`` folds them into the file
        shortly after each one) are applied, so they are read the moment they are saved."""
        source = Path(path)
        if source.is_dir():
            from synth.dataset._hf_folder import is_hf_folder, read_hf_folder

            # a folder named like a file (data.jsonl/) is answered as a file of that format is
            if is_hf_folder(source) or source.suffix.lower() not in _FORMATS:
                return cls(*read_hf_folder(source))
        if source.suffix.lower() in YAML_SUFFIXES:  # promptfoo's tests (read, never saved)
            return cls(read_yaml(source))
        read, _ = _format(source)
        goldens, metadata = read(source)
        return cls(_journal.apply(source, goldens), metadata)

    def export(self, path: str | os.PathLike[str], format: ExportFormatName) -> Path:
        """Write the goldens for another tool: ``"deepeval"``, ``"deepeval-csv"``, ``"ragas"``,
        ``"judgeval"`` (1.x), ``"judgeval-legacy"`` (0.0.x), ``"messages"`` (chat format), or an
        evaluation platform's: ``"promptfoo"``, ``"langsmith"``, ``"langfuse"``, ``"phoenix"``.

        deepeval takes ``.json`` or ``.jsonl``, deepeval-csv ``.csv``, ragas ``.jsonl`` or
        ``.json``, both judgevals ``.json``, messages ``.jsonl``, promptfoo ``.yaml`` or ``.json``,
        langsmith and langfuse ``.jsonl``, phoenix ``.csv``. Conversations export as deepeval
        (its ``ConversationalGolden``) and messages only. Synth-only fields ride along where the tool keeps
        them; the dataset's metadata is not exported. Return the path written.
        """
        return export_goldens(self.goldens, Path(path), format)

    # ---- pandas ----------------------------------------------------------------------------------
    def to_pandas(self) -> pd.DataFrame:
        """One row per golden, one ``object`` column per field; metadata in ``df.attrs``."""
        return to_frame(self.goldens, self.metadata)

    @classmethod
    def from_pandas(cls, frame: pd.DataFrame, metadata: Mapping[str, Any] | None = None) -> Dataset:
        """The dataset a DataFrame holds (from :meth:`to_pandas`, a file, or another tool).

        ``metadata`` defaults to ``frame.attrs["synth_metadata"]`` when present.
        """
        if metadata is None:
            metadata = frame.attrs.get(ATTRS_KEY) or {}
        return cls(goldens_from_frame(frame), metadata)

    def to_phoenix(self) -> pd.DataFrame:
        """The goldens as the table Phoenix's ``create_dataset(dataframe=..., **PHOENIX_KEYS)``
        uploads: the ``phoenix`` export's columns and cells, of the goldens' shareable form (no
        model server, no local path; single-turn goldens only)."""
        return phoenix_frame(self.goldens)

    # ---- Hugging Face datasets -------------------------------------------------------------------
    def to_hf(self) -> datasets.Dataset:
        """A ``datasets.Dataset`` with typed features, one row per golden (needs ``synth[hf]``).

        Golden metadata is a JSON string column (any shape survives); the dataset's metadata is
        synth's JSON header in ``info.description``, which ``save_to_disk`` keeps.
        """
        from synth.dataset._hf import to_hf

        return to_hf(self.goldens, self.metadata)

    @classmethod
    def from_hf(
        cls,
        table: datasets.Dataset | str | os.PathLike[str],
        metadata: Mapping[str, Any] | None = None,
    ) -> Dataset:
        """The dataset a ``datasets.Dataset`` holds (from :meth:`to_hf`, the Hub or another tool),
        or the one in an hf folder or a Hub dataset repository (``"user/name"``) a push made.

        ``metadata`` defaults to what :meth:`to_hf` put in ``table.info.description``, else empty
        (``load_dataset`` keeps no description); for a folder or a repository, to its
        ``synth_run.json``, the run's metadata as the Hub keeps it.
        """
        if isinstance(table, str | os.PathLike):
            from synth.dataset._hub import read_hf_source

            goldens, found = read_hf_source(table)
            return cls(goldens, found if metadata is None else metadata)
        from synth.dataset._hf import from_hf

        return cls(*from_hf(table, metadata))

    # ---- for functions that take "a dataset" -----------------------------------------------------
    @classmethod
    def coerce(
        cls, obj: Dataset | Iterable[Golden | Mapping[str, Any]] | str | os.PathLike[str]
    ) -> Dataset:
        """A Dataset from a Dataset (returned as is), a list of goldens or dicts, or a file path."""
        if isinstance(obj, Dataset):
            return obj
        if isinstance(obj, str | os.PathLike):
            return cls.load(obj)
        if isinstance(obj, Golden):
            raise ConfigError("expected a Dataset, a list of goldens or a path; got one Golden")
        if isinstance(obj, Iterable) and not isinstance(obj, bytes | Mapping):
            return cls(obj)
        raise ConfigError(f"expected a Dataset, a list of goldens or a path; got {kind(obj)}")


def _as_golden(value: object, where: str) -> Golden:
    if isinstance(value, Golden):
        return value
    if isinstance(value, Mapping):
        return golden_from_record(value, where)
    raise DatasetError(f"{where}: expected a Golden or a dict, got {kind(value)}")


__all__ = ["PHOENIX_KEYS", "SUFFIXES", "Dataset", "ExportFormatName", "Shortfall"]
