"""Provider Batch APIs: every request of a wave goes out in one job, at half the price.

:class:`BatchModel` takes the place of the provider adapter in a model's chain (``make_llm(...,
batch=BatchConfig())``)::

    UsageModel(CacheModel(RetryModel(MeterModel(BatchModel(adapter)))))

Its ``arequest`` hands the request to a :class:`~synth.llm._batcher.Batcher` and waits. The
batcher sends what arrived as one job once nothing new has come for ``settle`` seconds (every
item of a wave is then waiting on it), journals the job id before it polls, and answers each
request from the job's output by ``custom_id``. A line of the error file, and what an expired or
failed job did not finish, go out again in the next job. No limiter or timeout sits in the chain:
a job holds no connection, and takes up to 24 hours.

The ``custom_id`` of a request is a hash of its body and how many times this process asked it
(a re-ask of a malformed reply is another request): a resumed run asks the same requests in the
same order, finds their ids in the journal and polls those jobs instead of submitting again.

Each provider's API is a :class:`BatchAPI` (``synth.llm._openai_batch``,
``synth.llm._anthropic_batch``), made from the adapter, whose SDK client it uses.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from pydantic import BaseModel

from synth._ids import canonical_json, text_hash
from synth.errors import ConfigError
from synth.llm._adapter import SDKModel
from synth.llm._batch_types import JOURNAL, BatchAPI, BatchConfig, JobLog, JobResults, JobStatus
from synth.llm._batcher import Batcher
from synth.llm.base import LLM, Completion
from synth.llm.pricing import BATCH_SUFFIX
from synth.llm.wrapper import WrapperModel


def batch_api(adapter: LLM) -> BatchAPI:
    """The Batch API of ``adapter``'s provider; ConfigError for a provider that has none."""
    from synth.llm.anthropic import AnthropicModel
    from synth.llm.openai import OpenAIModel

    if isinstance(adapter, OpenAIModel):
        from synth.llm._openai_batch import OpenAIBatchAPI

        return OpenAIBatchAPI(adapter)
    if isinstance(adapter, AnthropicModel):
        from synth.llm._anthropic_batch import AnthropicBatchAPI

        return AnthropicBatchAPI(adapter)
    raise ConfigError(
        f"batch requests need an openai: or anthropic: model, not {adapter.provider or adapter!r}"
    )


class BatchModel(WrapperModel):
    """The adapter's requests, sent through its provider's Batch API (see the module)."""

    def __init__(self, inner: LLM, config: BatchConfig | None = None, api: BatchAPI | None = None):
        super().__init__(inner)
        self.config = config or BatchConfig()
        self.api = api if api is not None else batch_api(inner)
        self.batcher = Batcher(self.api, self.config, f"{inner.provider}:{inner.model}")
        self._asked: Counter[str] = Counter()

    @property
    def model(self) -> str:  # type: ignore[override]
        # usage and prices are kept under "provider:model@batch": priced at the batch rate
        return f"{self.inner.model}{BATCH_SUFFIX}"

    def custom_id(self, body: dict[str, Any]) -> str:
        """The id of the next request of ``body``: its hash and how many times it was asked."""
        digest = text_hash(canonical_json(body), 40)
        self._asked[digest] += 1
        return f"{digest}-{self._asked[digest]}"

    async def arequest(
        self,
        prompt: str,
        *,
        system: str | None = None,
        schema: type[BaseModel] | None = None,
        label: str | None = None,
    ) -> Completion:
        body = self.api.body(prompt, system, schema)
        custom_id = self.custom_id(body)
        if isinstance(self.inner, SDKModel):
            # a server where nothing listens, or that never answers, stops the run at once, as
            # without --batch (else each request's refused or timed-out upload is retried as its
            # own: a minute, or the timeout times the retries)
            return await self.inner.guarded(
                lambda: self.batcher.request(custom_id, body, label), timeouts=True
            )
        return await self.batcher.request(custom_id, body, label)

    def bind(
        self,
        log: Callable[[], JobLog],
        note: Callable[[str], None],
        report: dict[str, Any],
    ) -> None:
        """Journal this run's jobs in ``log()`` and resume the jobs it holds (see Batcher.bind)."""
        self._asked.clear()  # a run asks its requests afresh, in the same order as before
        self.batcher.bind(log, note, report)

    def __repr__(self) -> str:
        return f"BatchModel({self.inner!r})"


def batch_models(models: Iterable[LLM]) -> list[BatchModel]:
    """The distinct batch layers in the chains of ``models``."""
    found: list[BatchModel] = []
    for model in models:
        layer = model.layer(BatchModel) if isinstance(model, WrapperModel) else None
        if layer is not None and all(layer is not f for f in found):
            found.append(layer)
    return found


__all__ = [
    "JOURNAL",
    "BatchAPI",
    "BatchConfig",
    "BatchModel",
    "JobLog",
    "JobResults",
    "JobStatus",
    "batch_api",
    "batch_models",
]
