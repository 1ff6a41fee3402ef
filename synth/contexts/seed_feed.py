"""Stages 2 to 4 as a feed: seed chunks drawn, critic-scored and grouped into contexts, in order.

:class:`DocsFeed` draws seed chunks (``SeedSelector``), has the critic score them a batch per
request (the batches are sent on demand and concurrently), and groups the accepted seeds with their
neighbours strictly in seed order. Neighbours are found among the run's own chunks, exactly, in
memory (:class:`~synth.contexts.index.ChunkIndex`, its vectors read from the store in one go).
While the critic scores a batch, a worker thread finds the seeds' neighbours, and grouping, when
the verdicts come, only claims them. The first critic requests can go out while the ingest is still
storing the last chunks: the vectors are read from ``store``, which may be the ingest under way
(it gives them as soon as they are embedded), and ``store_check()``, called at every grouping,
ends the run once a store write has failed. Given a warm (:meth:`DocsFeed.warm_with`), that thread
also guesses the contexts each batch makes if the critic accepts every seed, and the run asks
their inputs ahead, beside the critic's request.
New batches are drawn only at fixed points of that order (the batch ``lookahead`` places after the
one just grouped), which is what keeps the draws, and so the contexts, independent of timing.
"""

from __future__ import annotations

import asyncio
import math
import random
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor

from synth._journal import Journal, reject_row
from synth.contexts.config import ContextConstructionConfig
from synth.contexts.critic import (
    ContextScore,
    ScoredSeed,
    dump_score,
    is_failed_score,
    load_score,
    score_contexts,
)
from synth.contexts.feed import AUTH_FAILURE, Candidate, Corpus, refused_key, seed_drop_stage
from synth.contexts.group import Prefetched, group_contexts, prefetch_neighbours, ready_prefetch
from synth.contexts.guess import Guesses, Warm
from synth.contexts.index import ChunkIndex, VectorStore
from synth.contexts.prose import ProseVerdict, check_prose
from synth.contexts.seed_batch import SeedBatch, lookahead_batches
from synth.contexts.select import SeedSelector
from synth.data import Chunk
from synth.errors import AuthenticationError, ModelError, raw_reply
from synth.llm.base import LLM
from synth.stage.stats import StageStats, model_error_reason
from synth.stage.templates import PromptSet

#: the prose filter's stage name: its row in the manifest and the table, its rejects
PROSE = "prose"


class DocsFeed:
    """Contexts from stored chunks: select, critic-score, group (see the module docstring).

    ``critic`` None switches the critic off (every seed is accepted unscored). ``wanted`` is the
    number of contexts the run expects to need: the first wave of batches covers it, and the seeds
    sent to the critic are capped at ``wanted * (1 + max_retries)`` (the top-up limit).
    ``journal`` (finished batches by key) lets a resumed run skip critic requests it made;
    seeds that make no context are written to ``rejects`` with their stage and reason.
    ``avoid``: chunk ids taken as used, so no context has them before the reuse pass (a refill's).
    ``notify`` is called when a batch's verdicts arrive (the stream waits on it; a plan needs none).
    ``expected_keep`` is the share of its contexts the run expects to keep: the first wave draws
    ``wanted / expected_keep`` contexts' batches, so the usual drops need no second critic round;
    requests for more contexts are sent at the seeds' observed acceptance (:meth:`acceptance`).
    """

    def __init__(
        self,
        chunks: Sequence[Chunk],
        store: VectorStore,
        config: ContextConstructionConfig,
        rng: random.Random,
        *,
        critic: LLM | None,
        prompts: PromptSet | None,
        wanted: int | None = None,
        avoid: Iterable[str] = (),
        journal: Journal | None = None,
        rejects: Journal | None = None,
        bad_replies: Journal | None = None,
        notify: Callable[[], None] | None = None,
        store_check: Callable[[], object] | None = None,
        expected_keep: float = 1.0,
    ) -> None:
        self.config = config
        self.store = store
        self.chunks = chunks
        #: raises (from any thread) once a write of the chunks to the store has failed
        self.store_check = store_check or (lambda: None)
        self.selector = SeedSelector(chunks, config, rng, used=set(avoid))
        self.critic = critic
        self.prompts = prompts
        #: contexts the run expects to need (default: the selector's per-file quotas)
        self.wanted = self.selector.default_count if wanted is None else wanted
        per_call = config.contexts_per_critic_call
        self.lookahead = lookahead_batches(math.ceil(self.wanted / expected_keep), per_call)
        self._first_wave = math.ceil(round(self.wanted / expected_keep, 6))
        #: each wanted context may be tried 1 + max_retries times (the top-up limit)
        self.budget = self.wanted * (1 + config.max_retries) + per_call
        self.journal = journal
        self.rejects = rejects
        self.bad_replies = bad_replies
        self.notify = notify
        self.batches: list[SeedBatch] = []
        self.candidates: list[Candidate] = []
        #: seeds the prose filter dropped: (the draw position of the next seed kept, chunk, verdict)
        self.not_prose: list[tuple[int, Chunk, ProseVerdict]] = []
        #: seeds drawn (and kept by the prose filter), and seeds sent to the critic (or accepted
        #: unscored)
        self.drawn = 0
        self.sent_seeds = 0
        # kept as batches are sent and grouped, so the controller's questions (asked at every
        # round of a run) do not walk every batch: a run of thousands of goldens draws hundreds
        self._unsent = 0  # batches before it are all sent (they are sent in order)
        self._pending = 0
        self._outcomes: Counter[str] = Counter()  # of the grouped seeds
        self._drawn_all = False
        self._next_group = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self._reads: set[asyncio.Future[Prefetched]] = set()
        #: one thread finds neighbours ahead, batch after batch (the first waits for the store)
        self._reader: ThreadPoolExecutor | None = None
        self._index: ChunkIndex | None = None
        self._index_lock = threading.Lock()
        #: why no more candidates can come, once none can
        self.exhausted_reason = "the corpus has no more chunks to start a context from"
        self.error: BaseException | None = None
        self.guesses: Guesses | None = None  # contexts guessed before the verdicts (warm_with)
        for _ in range(self.lookahead):
            if self._drawn_all:  # the corpus gave every seed it has: the rest would be empty
                break
            self._create_batch()

    # ---- what the controller asks ----------------------------------------------------------------
    @property
    def pending(self) -> int:
        """Seeds sent to the critic and not yet grouped: contexts that may still come."""
        return self._pending

    @property
    def exhausted(self) -> bool:
        """No further candidate can come: every drawn batch is grouped and no more can be sent."""
        return not self.can_send and self.pending == 0

    @property
    def can_send(self) -> bool:
        return self._unsent < len(self.batches) and self.sent_seeds < self.budget

    @property
    def budget_reached(self) -> bool:
        return self.sent_seeds >= self.budget and self._unsent < len(self.batches)

    def acceptance(self) -> float:
        """The share of seeds that made a context so far, pulled towards 1 by a batch's worth."""
        outcomes = self._outcomes
        prior = self.config.contexts_per_critic_call
        return (outcomes.get("ok", 0) + prior) / (sum(outcomes.values()) + prior)

    @property
    def scored_seeds(self) -> int:
        """Seeds whose verdicts have come (of the ``sent_seeds``)."""
        return sum(len(b.seeds) for b in self.batches if b.sent and b.scores is not None)

    def request(self, contexts: int) -> None:
        """Send critic batches until ``contexts`` more contexts may come from them (plus one spare
        batch, so a rejected seed's replacement is usually scored already)."""
        want = math.ceil(round(contexts / self.acceptance(), 6))
        want += self.config.contexts_per_critic_call
        while self._unsent < len(self.batches):
            if self.pending >= want or self.sent_seeds >= self.budget:
                break
            self._send(self.batches[self._unsent])

    def advance(self) -> list[Candidate]:
        """Group every batch that is scored and next in order; return the new candidates."""
        new: list[Candidate] = []
        while self._next_group < len(self.batches):
            batch = self.batches[self._next_group]
            if batch.scores is None:
                break
            new.extend(self._group(batch))
            self._next_group += 1
            self._create_batch()
        return new

    def warm_with(self, warm: Warm | None) -> None:
        """Guess, beside the store reads ahead, the contexts each batch makes if the critic accepts
        every seed, and hand those of the first wave to ``warm`` (:mod:`synth.contexts.guess`);
        only where grouping reads ahead (``max_context_length`` above 1). None: no guesses."""
        self.guesses = Guesses(warm, self._first_wave) if warm is not None else None

    async def aclose(self) -> None:
        """Cancel the critic requests under way and wait for the store reads to end."""
        if self.guesses is not None:
            await self.guesses.aclose()
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._reads:  # store reads in threads cannot be cancelled: let them end first
            await asyncio.gather(*self._reads, return_exceptions=True)
        if self._reader is not None:
            self._reader.shutdown(wait=True)  # its reads are all done: this is at once
            self._reader = None

    # ---- inside ----------------------------------------------------------------------------------
    def _create_batch(self) -> None:
        if self._drawn_all:
            return
        seeds = self._draw_prose(self.config.contexts_per_critic_call)
        if len(seeds) < self.config.contexts_per_critic_call:
            self._drawn_all = True
        if not seeds:
            return
        batch = SeedBatch(len(self.batches), seeds, self.drawn)
        self.drawn += len(seeds)
        self.batches.append(batch)

    def _draw_prose(self, n: int) -> list[Chunk]:
        """Up to ``n`` further seeds that read as prose; the others are dropped here, at no request
        cost, and stay claimed, so they join no context as a neighbour either (until the reuse
        pass, where they are drawn, and dropped, again)."""
        seeds: list[Chunk] = []
        while len(seeds) < n:
            chunk = self.selector.next()
            if chunk is None:
                break
            verdict = check_prose(chunk.text) if self.config.prose_filter else None
            if verdict is None:
                seeds.append(chunk)
                continue
            at = self.drawn + len(seeds)
            self.not_prose.append((at, chunk, verdict))
            if self.rejects is not None:
                record = {
                    "stage": PROSE,
                    "reason": verdict.reason,
                    "chunk_id": chunk.id,
                    "source": chunk.source,
                }
                key = f"prose{len(self.not_prose)}:{chunk.id}"
                self.rejects.append(key, reject_row(record, verdict.detail, None, None))
        return seeds

    def _send(self, batch: SeedBatch) -> None:
        batch.sent = True
        self.sent_seeds += len(batch.seeds)
        self._pending += len(batch.seeds)
        while self._unsent < len(self.batches) and self.batches[self._unsent].sent:
            self._unsent += 1
        recorded = self.journal.get(batch.key) if self.journal is not None else None
        if recorded is not None and not any(is_failed_score(s) for s in recorded["scores"]):
            batch.scores = [load_score(s) for s in recorded["scores"]]
            return
        if self.critic is None:
            batch.scores = ["" for _ in batch.seeds]
            return
        loop = asyncio.get_running_loop()
        task = loop.create_task(self._score(batch))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        if self.config.max_context_length > 1:
            if self._reader is None:
                self._reader = ThreadPoolExecutor(1, thread_name_prefix="synth-read-ahead")
            guess = None
            if self.guesses is not None:  # claims as grouping would make them, all seeds accepted
                guess = (set(self.selector.used), self.selector.exhausted, loop)
            read = loop.run_in_executor(self._reader, self._read_ahead, batch.seeds, guess)
            batch.ahead = read
            self._reads.add(read)
            read.add_done_callback(self._read_done)

    def _read_ahead(
        self,
        seeds: list[Chunk],
        guess: tuple[set[str], bool, asyncio.AbstractEventLoop] | None = None,
    ) -> Prefetched:
        ahead = prefetch_neighbours(seeds, self.neighbours(), self.config)
        if guess is not None and self.guesses is not None:
            self.guesses.guess(seeds, self.neighbours(), self.config, ahead, *guess)
        return ahead

    def neighbours(self) -> ChunkIndex:
        """The run's chunks to find neighbours among (made once, from any thread, with the vectors
        ``store`` gives for them; a failed store write raises here)."""
        self.store_check()
        with self._index_lock:
            if self._index is None:
                self._index = ChunkIndex.from_store(self.chunks, self.store)
            return self._index

    def _read_done(self, read: asyncio.Future[Prefetched]) -> None:
        self._reads.discard(read)
        if not read.cancelled():
            read.exception()  # a failed read is not an error: grouping reads the store itself

    async def _score(self, batch: SeedBatch) -> None:
        assert self.critic is not None
        try:
            results = await score_contexts(
                batch.seeds, self.critic, self.config, prompts=self.prompts
            )
            scores: list[ContextScore | str] = [
                model_error_reason(r) if isinstance(r, ModelError) else r for r in results
            ]
            batch.failed = {
                c.id: r
                for c, r in zip(batch.seeds, results, strict=True)
                if isinstance(r, ModelError)
            }
            if AUTH_FAILURE in scores:
                raise AuthenticationError(refused_key(self.critic))
            # a failed request is not journaled: a rerun asks again (what did answer is cached)
            if self.journal is not None and not any(is_failed_score(s) for s in scores):
                self.journal.append(
                    batch.key,
                    {
                        "seeds": [c.id for c in batch.seeds],
                        "scores": [dump_score(s) for s in scores],
                    },
                )
            if batch.ahead is not None:  # grouped with the reads at hand, not by reading again
                await asyncio.wait({batch.ahead})
            batch.scores = scores
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # reported to the controller, which ends the run with it
            self.error = exc
        finally:
            if self.notify is not None:
                self.notify()

    def _group(self, batch: SeedBatch) -> list[Candidate]:
        assert batch.scores is not None
        accepted: list[ScoredSeed | Chunk] = []
        for chunk, score in zip(batch.seeds, batch.scores, strict=True):
            dropped = score.outcome(self.config) if isinstance(score, ContextScore) else None
            if dropped is not None:  # labelled not prose, or scored at or under the threshold
                batch.outcome[chunk.id] = dropped
                self.selector.release(chunk.id)
            elif isinstance(score, str) and score:
                batch.outcome[chunk.id] = score
                self.selector.release(chunk.id)
            else:  # the context carries the critic's verdict, when there is one
                accepted.append(
                    ScoredSeed(chunk, score) if isinstance(score, ContextScore) else chunk
                )
        batch.grouped = True
        # the store's answers are read once: kept with the batch they were the vectors of every
        # seed and neighbour, 9 KB a golden held until the run ended
        ahead, batch.ahead = batch.ahead, None
        self._pending -= len(batch.seeds)
        if not accepted:
            self._grouped(batch)
            self._write_rejects(batch)
            return []
        result = group_contexts(
            accepted,
            self.neighbours(),  # a failed store write ends the run here
            self.config,
            used=self.selector.used,
            allow_reuse=self.selector.exhausted,
            prefetched=ready_prefetch(ahead),
        )
        for chunk_id, reason in result.dropped:
            batch.outcome[chunk_id] = reason
        positions = {c.id: batch.start + i for i, c in enumerate(batch.seeds)}
        new: list[Candidate] = []
        for context in result.contexts:
            if self.guesses is not None:
                self.guesses.grouped(context)
            seed_id = context.chunk_ids[0]
            batch.outcome[seed_id] = "ok"
            seq = len(self.candidates)
            candidate = Candidate(seq, f"{context.id}#{seq}", context, position=positions[seed_id])
            self.candidates.append(candidate)
            new.append(candidate)
        self._grouped(batch)
        self._write_rejects(batch)
        return new

    def _grouped(self, batch: SeedBatch) -> None:
        """Count the outcomes of ``batch``'s seeds, grouped."""
        self._outcomes.update(batch.outcome.get(chunk.id, "ok") for chunk in batch.seeds)

    def _write_rejects(self, batch: SeedBatch) -> None:
        if self.rejects is None:
            return
        for chunk in batch.seeds:
            reason = batch.outcome.get(chunk.id, "ok")
            if reason == "ok":
                continue
            record = {
                "stage": seed_drop_stage(reason),
                "reason": reason,
                "chunk_id": chunk.id,
                "source": chunk.source,
            }
            error = batch.failed.get(chunk.id)
            detail = str(error) if error is not None else None
            self.rejects.append(
                f"{batch.key}:{chunk.id}",
                reject_row(record, detail, raw_reply(error), self.bad_replies),
            )

    # ---- accounting ------------------------------------------------------------------------------
    def seed_outcomes(self, up_to: int | None) -> Counter[str]:
        """Outcome counts of the grouped seeds drawn at positions ``<= up_to`` (None: all)."""
        if up_to is None:  # counted as each batch is grouped: the manifest asks every second
            return Counter(self._outcomes)
        counts: Counter[str] = Counter()
        for batch in self.batches:
            if not batch.grouped:
                continue
            for i, chunk in enumerate(batch.seeds):
                if up_to is not None and batch.start + i > up_to:
                    continue
                counts[batch.outcome.get(chunk.id, "ok")] += 1
        return counts

    def progress(self) -> list[tuple[str, int, int]]:
        """The critic's line (seeds scored of those sent), when it scores."""
        return (
            [] if self.critic is None else [("critic (seeds)", self.scored_seeds, self.sent_seeds)]
        )

    def seed_counts(self) -> dict[str, int] | None:
        return {
            "seeds_drawn": self.drawn + len(self.not_prose),
            "seeds_not_prose": len(self.not_prose),
            "seeds_scored": self.sent_seeds,
        }

    def corpus(self) -> Corpus:
        """The run's chunks, with the vectors grouping searches (:meth:`neighbours`)."""
        ids, texts = [c.id for c in self.chunks], [c.text for c in self.chunks]
        return Corpus(ids, texts, lambda: self.neighbours().get_embeddings(ids))

    def stage_stats(self, up_to: int | None) -> list[StageStats]:
        """The prose filter's record (when it is on), the critic's (when it scores) and grouping's,
        over the grouped seeds drawn at positions ``<= up_to`` (None: all) and the seeds the
        prose filter dropped before them."""
        outcomes = self.seed_outcomes(up_to)
        prose = StageStats(stage=PROSE, items_out=sum(outcomes.values()))
        for at, _, verdict in self.not_prose:
            if up_to is None or at <= up_to:
                prose.drop(verdict.reason)
        prose.items_in = prose.items_out + prose.dropped_total
        critic = StageStats(stage="critic", items_in=sum(outcomes.values()))
        group = StageStats(stage="group", items_out=outcomes.get("ok", 0))
        for reason, n in sorted(outcomes.items()):
            if reason != "ok":
                (critic if seed_drop_stage(reason) == "critic" else group).drop(reason, n)
        critic.items_out = group.items_in = critic.items_in - critic.dropped_total
        if self.guesses is not None:  # every context's, as the requests are
            group.notes.update(self.guesses.counts)
        records = [prose] if self.config.prose_filter else []
        return [*records, critic, group] if self.critic is not None else [*records, group]


__all__ = ["PROSE", "DocsFeed", "SeedBatch", "lookahead_batches"]
