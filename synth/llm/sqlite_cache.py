"""A response cache in one SQLite file, safe across threads and processes."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from pathlib import Path

from synth.errors import CacheError

_SCHEMA = "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL)"


class SQLiteCache(MutableMapping[str, str]):
    """A ``str -> str`` mapping stored in one SQLite file (WAL mode).

    Each thread of each process gets its own connection, so the cache can be shared by the threads
    of a run and by several runs at once; writers wait for each other up to ``timeout`` seconds.
    Every failure raises :class:`~synth.errors.CacheError`.
    """

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 30.0) -> None:
        self.path = Path(path)
        self.timeout = timeout
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[sqlite3.Connection] = []
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CacheError(f"cannot create the cache folder {self.path.parent}: {exc}") from exc
        with self._guard("open"):
            self._create()

    def _create(self) -> None:
        """Switch the file to WAL and create the table, waiting out another process doing the
        same: two runs creating one new cache at once can get "database is locked" at once, as
        the switch to WAL does not always wait for the busy timeout."""
        deadline = time.monotonic() + self.timeout
        pause = 0.01
        while True:
            try:
                conn = self._conn()
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute(_SCHEMA)
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() + pause > deadline:
                    raise
            time.sleep(pause)
            pause = min(pause * 2, 0.5)

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None or self._local.pid != os.getpid():
            conn = sqlite3.connect(
                self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False
            )
            conn.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
            conn.execute("PRAGMA synchronous = NORMAL")
            self._local.conn, self._local.pid = conn, os.getpid()
            with self._lock:
                self._connections.append(conn)
        return conn

    @contextmanager
    def _guard(self, what: str) -> Iterator[None]:
        try:
            yield
        except (sqlite3.Error, OSError) as exc:
            raise CacheError(f"cache {what} failed ({self.path}): {exc}") from exc

    def __getitem__(self, key: str) -> str:
        with self._guard("read"):
            row = (
                self._conn().execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
            )
        if row is None:
            raise KeyError(key)
        value: str = row[0]
        return value

    def __setitem__(self, key: str, value: str) -> None:
        if not isinstance(key, str) or not isinstance(value, str):
            raise CacheError("SQLiteCache stores str keys and str values")
        with self._guard("write"):
            self._conn().execute(
                "INSERT OR REPLACE INTO responses (key, value) VALUES (?, ?)", (key, value)
            )

    def __delitem__(self, key: str) -> None:
        with self._guard("delete"):
            deleted = self._conn().execute("DELETE FROM responses WHERE key = ?", (key,)).rowcount
        if not deleted:
            raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        with self._guard("read"):
            row = self._conn().execute("SELECT 1 FROM responses WHERE key = ?", (key,)).fetchone()
        return row is not None

    def __iter__(self) -> Iterator[str]:
        with self._guard("read"):
            keys = [r[0] for r in self._conn().execute("SELECT key FROM responses ORDER BY key")]
        return iter(keys)

    def __len__(self) -> int:
        with self._guard("read"):
            return int(self._conn().execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        """Close every connection this object opened (it reopens on next use)."""
        with self._lock:
            connections, self._connections = self._connections, []
        for conn in connections:
            conn.close()
        self._local = threading.local()

    def __enter__(self) -> SQLiteCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SQLiteCache({str(self.path)!r})"


__all__ = ["SQLiteCache"]
