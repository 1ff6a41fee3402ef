"""The response cache: keys, the SQLite file across threads and processes, and its failures."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import multiprocessing
import sqlite3
import threading
from collections.abc import Iterator, MutableMapping
from pathlib import Path

import pytest
from pydantic import BaseModel

from synth import (
    LLM,
    CacheError,
    Completion,
    ConfigError,
    FunctionModel,
    IncompleteCompletionError,
    OutputParseError,
    SQLiteCache,
    make_llm,
    wrap_llm,
)
from synth.llm.cache import CacheModel, cache_key


class Verdict(BaseModel):
    supported: bool


def _counting_model(reply: str = '{"supported": true}'):
    calls: list[tuple[str, str | None]] = []

    def fn(prompt: str, system: str | None) -> str:
        calls.append((prompt, system))
        return reply

    return fn, calls


def test_an_identical_request_is_answered_from_the_cache() -> None:
    fn, calls = _counting_model()
    llm = make_llm(fn, cache={})
    assert llm.complete("p", system="s", schema=Verdict).supported
    assert llm.complete("p", system="s", schema=Verdict).supported
    assert len(calls) == 1
    assert llm.usage.total.cached_responses == 1 and llm.usage.total.requests == 1
    llm.complete("p", system="other")
    llm.complete("p", system="s")  # without the schema it is another request
    assert len(calls) == 3


def test_the_key_covers_everything_that_changes_the_reply() -> None:
    base = {"provider": "openai", "model": "m", "options": {}, "base_url": "http://a/v1"}
    key = cache_key(base, "p", "s", Verdict)
    assert len(key) == 64
    assert cache_key(dict(base), "p", "s", Verdict) == key
    variants = [
        cache_key({**base, "model": "m2"}, "p", "s", Verdict),
        cache_key({**base, "options": {"temperature": 0}}, "p", "s", Verdict),
        cache_key({**base, "base_url": "http://b/v1"}, "p", "s", Verdict),
        cache_key({**base, "provider": "gemini"}, "p", "s", Verdict),
        cache_key(base, "p2", "s", Verdict),
        cache_key(base, "p", None, Verdict),
        cache_key(base, "p", "s", None),
    ]
    assert len(set(variants)) == len(variants) and key not in variants


def test_only_usable_replies_are_stored() -> None:
    fn, calls = _counting_model("not json")
    cache: dict[str, str] = {}
    llm = make_llm(fn, cache=cache, max_reasks=0)
    with pytest.raises(OutputParseError):
        llm.complete("p", schema=Verdict)
    assert cache == {} and len(calls) == 1

    class CutOff(LLM):
        provider, model = "scripted", "cut"

        async def arequest(self, prompt, *, system=None, schema=None, label=None) -> Completion:
            return Completion(text="Paris is", finish_reason="length")

    cut = wrap_llm(CutOff(), cache=cache)
    with pytest.raises(IncompleteCompletionError):
        cut.complete("p")
    assert cache == {}


def test_identical_requests_in_flight_are_sent_once() -> None:
    seen = []

    async def slow(prompt: str, system: str | None) -> str:
        seen.append(prompt)
        await asyncio.sleep(0.02)
        return "answer"

    llm = make_llm(slow, cache={})

    async def main() -> list[str]:
        return await asyncio.gather(*[llm.acomplete("same") for _ in range(5)])

    assert asyncio.run(main()) == ["answer"] * 5
    assert seen == ["same"]
    assert llm.usage.total.cached_responses == 4


def test_sqlite_cache_is_a_mapping(tmp_path: Path) -> None:
    with SQLiteCache(tmp_path / "sub" / "cache.sqlite") as cache:
        cache["a"] = "1"
        cache["b"] = "2"
        cache["a"] = "3"
        assert cache["a"] == "3" and len(cache) == 2 and sorted(cache) == ["a", "b"]
        assert "b" in cache and "z" not in cache
        del cache["b"]
        with pytest.raises(KeyError):
            cache["b"]
        with pytest.raises(KeyError):
            del cache["b"]
        with pytest.raises(CacheError):
            cache["x"] = 1  # type: ignore[assignment]
    mode = (
        sqlite3.connect(tmp_path / "sub" / "cache.sqlite")
        .execute("PRAGMA journal_mode")
        .fetchone()[0]
    )
    assert mode == "wal"
    assert SQLiteCache(tmp_path / "sub" / "cache.sqlite")["a"] == "3"  # persisted


def test_sqlite_cache_failures_are_cache_errors(tmp_path: Path) -> None:
    (tmp_path / "not-a-folder").write_text("x")
    with pytest.raises(CacheError):
        SQLiteCache(tmp_path / "not-a-folder" / "cache.sqlite")
    (tmp_path / "garbage.sqlite").write_bytes(b"this is not a database" * 100)
    with pytest.raises(CacheError):
        SQLiteCache(tmp_path / "garbage.sqlite")


class _LockedAtFirst:
    """A connection whose first switch to WAL finds the file locked, as a second process
    creating the same new cache can (SQLite answers it at once, without the busy timeout)."""

    locked = 2

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def execute(self, sql: str, *args: object) -> sqlite3.Cursor:
        if sql == "PRAGMA journal_mode=WAL" and _LockedAtFirst.locked > 0:
            _LockedAtFirst.locked -= 1
            raise sqlite3.OperationalError("database is locked")
        return self._conn.execute(sql, *args)

    def __getattr__(self, name: str) -> object:
        return getattr(self._conn, name)


def test_a_cache_another_process_is_creating_is_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    connect = sqlite3.connect
    monkeypatch.setattr(sqlite3, "connect", lambda *a, **k: _LockedAtFirst(connect(*a, **k)))
    cache = SQLiteCache(tmp_path / "cache.sqlite", timeout=5)
    cache["a"] = "1"
    assert cache["a"] == "1" and _LockedAtFirst.locked == 0
    _LockedAtFirst.locked = 1_000  # locked for good: the timeout ends it, as one clear error
    with pytest.raises(CacheError, match="database is locked"):
        SQLiteCache(tmp_path / "other.sqlite", timeout=0.05)


def test_sqlite_cache_is_shared_by_threads(tmp_path: Path) -> None:
    cache = SQLiteCache(tmp_path / "cache.sqlite")
    fn, calls = _counting_model("reply")
    llm = make_llm(fn, cache=cache)
    threads = [threading.Thread(target=llm.complete, args=(f"p{i % 4}",)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(cache) == 4
    assert llm.usage.total.responses == 16
    cache.close()


PROCESS_KEY = "sk-process-test-key-5a4b3c"


def _use_from_a_process(path: str, worker: int, url: str) -> None:
    cache = SQLiteCache(path)
    for i in range(50):
        cache[f"raw-{worker}-{i}"] = "x" * 100
    llm = make_llm("openai:gpt-4o-mini", base_url=url, api_key=PROCESS_KEY, cache=cache)
    for i in range(worker * 10, worker * 10 + 20):  # worker 0 asks 0-19, worker 1 asks 10-29
        llm.complete(f"question {i}", system="Answer briefly.")
    llm.close()
    cache.close()


@pytest.mark.slow  # two spawned interpreters each import synth
def test_sqlite_cache_is_shared_by_processes(tmp_path: Path, fake_openai) -> None:
    path = str(tmp_path / "cache.sqlite")
    SQLiteCache(path).close()
    context = multiprocessing.get_context("spawn")
    workers = [
        context.Process(target=_use_from_a_process, args=(path, w, fake_openai.url))
        for w in range(2)
    ]
    for p in workers:
        p.start()
    for p in workers:
        p.join(timeout=120)
    assert [p.exitcode for p in workers] == [0, 0]
    cache = SQLiteCache(path)
    assert sum(key.startswith("raw-") for key in cache) == 100  # no write lost to the other
    sent = fake_openai.request_count()
    assert 30 <= sent <= 40 and len(cache) == 100 + 30  # the overlap may have been asked twice

    # a third process (this one) reruns everything from the file: zero requests
    llm = make_llm("openai:gpt-4o-mini", base_url=fake_openai.url, api_key="sk-x", cache=cache)
    answers = [llm.complete(f"question {i}", system="Answer briefly.") for i in range(30)]
    assert all(answers) and fake_openai.request_count() == sent
    assert llm.usage.total.cached_responses == 30 and llm.usage.total.requests == 0
    llm.close()
    cache.close()
    for written in tmp_path.iterdir():
        assert PROCESS_KEY.encode() not in written.read_bytes(), written


class ThreadBoundMapping(MutableMapping[str, str]):
    """A mapping over a SQLite connection that, like shelve on Python 3.13, works only in its thread."""

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path)
        self.conn.execute("CREATE TABLE IF NOT EXISTS kv (k TEXT PRIMARY KEY, v TEXT)")

    def __getitem__(self, key: str) -> str:
        row = self.conn.execute("SELECT v FROM kv WHERE k = ?", (key,)).fetchone()
        if row is None:
            raise KeyError(key)
        return row[0]

    def __setitem__(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO kv VALUES (?, ?)", (key, value))

    def __delitem__(self, key: str) -> None:
        self.conn.execute("DELETE FROM kv WHERE k = ?", (key,))

    def __iter__(self) -> Iterator[str]:
        return iter([r[0] for r in self.conn.execute("SELECT k FROM kv")])

    def __len__(self) -> int:
        return len(list(self))


class DbmStyleMapping(ThreadBoundMapping):
    """Like ``dbm.sqlite3`` (behind ``shelve`` on Python 3.13+): sqlite errors re-raised as OSError."""

    class error(OSError):
        pass

    def __getitem__(self, key: str) -> str:
        try:
            return super().__getitem__(key)
        except sqlite3.Error as exc:
            raise self.error(str(exc)) from None


@pytest.mark.parametrize("kind", [ThreadBoundMapping, DbmStyleMapping])
def test_a_mapping_bound_to_its_thread_is_refused_from_another(tmp_path: Path, kind) -> None:
    fn, calls = _counting_model("reply")
    mapping = kind(tmp_path / "kv.sqlite")
    llm = make_llm(fn, cache=mapping)
    errors: list[BaseException] = []

    def other_thread() -> None:
        try:
            llm.complete("p")
        except CacheError as exc:
            errors.append(exc)

    thread = threading.Thread(target=other_thread)
    thread.start()
    thread.join()
    assert len(errors) == 1 and "only in the thread" in str(errors[0])
    assert "SQLiteCache" in str(errors[0]) and calls == []
    assert llm.usage.total.failures == {"cache": 1}
    assert llm.complete("p") == "reply"  # in its own thread it works
    mapping.conn.close()


class BrokenMapping(dict):
    def __getitem__(self, key: str) -> str:
        raise OSError("disk gone")


def test_a_failing_cache_is_a_cache_error_not_a_model_error() -> None:
    fn, calls = _counting_model("reply")
    llm = wrap_llm(FunctionModel(fn), cache=BrokenMapping())
    with pytest.raises(CacheError, match="disk gone"):
        llm.complete("p")
    assert calls == []  # the model was never called
    assert llm.usage.total.failures == {"cache": 1}


def test_a_path_makes_a_sqlite_cache(tmp_path: Path) -> None:
    fn, calls = _counting_model("reply")
    llm = make_llm(fn, cache=tmp_path / ".synth" / "cache.sqlite")
    llm.complete("p")
    assert len(SQLiteCache(tmp_path / ".synth" / "cache.sqlite")) == 1


def test_a_key_is_the_same_in_every_version_until_the_cache_format_changes() -> None:
    """A cache file written by one version answers the next: the key of a request is pinned here,
    and changing it takes a deliberate CACHE_FORMAT bump (which updates these values)."""
    from synth.llm.cache import CACHE_FORMAT

    identity = {"provider": "openai", "model": "m", "options": {}, "base_url": "http://a/v1"}
    assert CACHE_FORMAT == 1
    assert cache_key(identity, "p é", "s", Verdict) == (
        "1a6926944640950d71f2c100249072eea8700c5c55680d2938ddd0715bc7690a"
    )
    assert cache_key({"provider": "openai", "model": "m"}, "p", None, None) == (
        "cb178927c8e46c3ec4fd9f4439acf27312f7021bfc44bbca15e3db1dcd17bbe7"
    )
    # an option JSON has no type for (a path) is keyed by its text, not refused
    with_path = {"provider": "local", "model": "m", "options": {"weights": Path("w.bin")}}
    as_text = {"provider": "local", "model": "m", "options": {"weights": "w.bin"}}
    assert cache_key(with_path, "p", None, None) == cache_key(as_text, "p", None, None)


class BytesMapping(dict):
    """Holds values as bytes, as a ``dbm`` file does."""

    def __setitem__(self, key: str, value: str) -> None:
        super().__setitem__(key, value.encode("utf-8"))


def test_a_stored_reply_comes_back_whole_and_marked_cached_also_from_bytes() -> None:
    reply = Completion(
        text="Paris",
        model="m1",
        input_tokens=3,
        output_tokens=1,
        finish_reason="stop",
        extra={"id": "r1"},
    )

    class Once(LLM):
        provider, model = "scripted", "once"

        async def arequest(self, prompt, *, system=None, schema=None, label=None) -> Completion:
            return reply

    for mapping in ({}, BytesMapping()):
        model = CacheModel(Once(), mapping)
        assert asyncio.run(model.arequest("q")) == reply  # the first answer is not cached
        again = model.lookup(model.key("q"))
        assert again == dataclasses.replace(reply, cached=True) and not reply.cached
        assert '"cached":' not in str(mapping[model.key("q")])  # never stored as cached
    assert model.forget("q") is True and model.forget("q") is False
    assert model.lookup(model.key("q")) is None


def test_a_cache_that_is_not_a_mapping_is_refused_and_every_failure_names_its_step() -> None:
    fn, _ = _counting_model("reply")
    # a tuple can be read but not written
    with pytest.raises(ConfigError, match="cache must be a mutable mapping, got tuple"):
        CacheModel(FunctionModel(fn), ("a",))  # type: ignore[arg-type]

    class Failing(dict):
        def __getitem__(self, key: str) -> str:
            raise KeyError(key)

        def __setitem__(self, key: str, value: str) -> None:
            raise OSError("disk full")

        def __delitem__(self, key: str) -> None:
            raise OSError("locked")

    model = CacheModel(FunctionModel(fn), Failing())
    assert repr(model) == f"CacheModel({model.inner!r}, cache=Failing)"
    with pytest.raises(CacheError, match=r"^cache write failed: OSError: disk full$"):
        model.complete("p")
    with pytest.raises(CacheError, match=r"^cache delete failed: OSError: locked$"):
        model.forget("p")
    broken = CacheModel(FunctionModel(fn), BrokenMapping())
    with pytest.raises(CacheError, match=r"^cache read failed: OSError: disk gone$"):
        broken.complete("p")


@pytest.mark.parametrize("damage", ["{not json", "[1, 2]", '{"text": "hi", "unknown": 1}'])
def test_a_damaged_cache_row_is_a_miss_said_with_the_cache_file_and_is_replaced(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: str
) -> None:
    fn, calls = _counting_model()
    path = tmp_path / "cache.sqlite"
    with SQLiteCache(path) as cache:
        model = CacheModel(FunctionModel(fn), cache)
        first = asyncio.run(model.arequest("p"))
        key = model.key("p")
        cache[key] = damage  # one row damaged from outside synth
        with caplog.at_level("WARNING", logger="synth"):
            again = asyncio.run(model.arequest("p"))
        assert again.text == first.text and not again.cached
        assert len(calls) == 2  # asked again
        (said,) = [r.getMessage() for r in caplog.records]
        assert said.startswith(f"synth: warning: cache entry {key[:12]}... in {path} ")
        assert "not a stored reply" in said
        assert asyncio.run(model.arequest("p")).cached  # the row was replaced by the new reply
    assert len(calls) == 2


def test_a_thread_bound_mapping_is_told_by_its_error_and_message() -> None:
    from synth.llm.cache import _thread_bound

    sqlite_says = (
        "SQLite objects created in a thread can only be used in that same thread. "
        "The object was created in thread id 1 and this is thread id 2."
    )
    for text in (sqlite_says, "used outside the same thread", "created in a thread elsewhere"):
        assert _thread_bound(sqlite3.ProgrammingError(text)), text
        assert _thread_bound(OSError(text)), text  # dbm.sqlite3 re-raises it as its own error
    assert not _thread_bound(ValueError(sqlite_says))  # another kind of error says nothing
    assert not _thread_bound(OSError("disk full"))
    assert not _thread_bound(OSError("the thread pool is full"))  # "thread" alone is not enough
    assert not _thread_bound(OSError("SAME THREAD, CREATED IN A THREAD"))


def test_forget_reply_removes_a_stored_reply_from_the_chain_that_has_a_cache() -> None:
    from synth.llm.cache import forget_reply

    fn, calls = _counting_model('{"supported": true}')
    cache: dict[str, str] = {}
    llm = make_llm(fn, cache=cache)
    llm.complete("p", system="s", schema=Verdict)
    assert forget_reply(llm, "p", system="s") is False  # another request: nothing stored
    assert forget_reply(llm, "p", system="s", schema=Verdict) is True and cache == {}
    assert forget_reply(llm, "p", system="s", schema=Verdict) is False
    llm.complete("p", system="s", schema=Verdict)
    assert len(calls) == 2  # asked again, not replayed
    assert forget_reply(make_llm(fn), "p") is False  # no cache in the chain
    assert forget_reply(FunctionModel(fn), "p") is False  # a bare model


def test_the_cache_layer_itself_stores_only_replies_that_are_complete_and_fit_the_schema() -> None:
    """Straight over the provider (no re-ask layer in between): a reply the caller will refuse
    is passed on but never stored, so a rerun asks again."""

    class Replies(LLM):
        provider, model = "scripted", "r"

        def __init__(self, text: str, finish_reason: str = "stop") -> None:
            self.text, self.finish_reason = text, finish_reason

        async def arequest(self, prompt, *, system=None, schema=None, label=None) -> Completion:
            return Completion(text=self.text, finish_reason=self.finish_reason)

    def stored(text: str, finish_reason: str = "stop") -> bool:
        model = CacheModel(Replies(text, finish_reason), {})
        assert asyncio.run(model.arequest("p", schema=Verdict)).text == text  # passed on
        return bool(model.cache)

    assert stored('{"supported": true}')
    assert not stored('{"supported": true}', "length")  # cut off at the token limit
    assert not stored('{"supp')  # not JSON
    assert not stored('{"verdict": "yes"}')  # JSON, but not the schema's
    odd = Completion(text="t", finish_reason="stop", extra={"created": datetime.date(2026, 1, 2)})
    model = CacheModel(Replies("t"), {})
    model.store("k", odd)  # a value JSON has no type for is kept as its text
    assert model.lookup("k").extra == {"created": "2026-01-02"}


def test_the_same_request_from_two_threads_is_answered_in_both_whichever_finishes_first() -> None:
    """Each thread's loop sends its own request (a future cannot be awaited across loops); the
    one sent second may finish first, and the first must still finish cleanly."""
    first_in, release_first = threading.Event(), threading.Event()
    calls: list[str] = []

    def fn(prompt: str, system: str | None) -> str:
        calls.append(prompt)
        if len(calls) == 1:
            first_in.set()
            release_first.wait(5)
        return "answer"

    model = CacheModel(FunctionModel(fn), {})
    results: dict[str, str] = {}
    first = threading.Thread(target=lambda: results.update(first=model.complete("q")))
    first.start()
    assert first_in.wait(5)
    results["second"] = model.complete("q")  # on this thread's loop, done before the first
    release_first.set()
    first.join(5)
    assert results == {"first": "answer", "second": "answer"} and calls == ["q", "q"]
    assert model._pending == {}
