"""One helper process of the ``synth`` command, spoken to over a socket pair (``WorkerProcess``).

``synth generate`` starts its helpers first thing (the file reader, :mod:`synth.store._worker_reads`;
the Chroma writer, :mod:`synth.store._worker_writes`), so their imports run on the other core while
the command imports the rest. Each is ``python -m MODULE FD``, FD its end of the pair, over which
:class:`multiprocessing.connection.Connection` sends pickles. A helper that cannot start, or is
turned off by its environment variable (``"0"``), is simply not :attr:`~WorkerProcess.available`:
the work is then done in the command's own process.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from multiprocessing.connection import Connection


class WorkerProcess:
    """The client end of one helper process: :meth:`start` it early (it does not wait), use
    :attr:`connection` while :attr:`available`; :meth:`close` ends it."""

    def __init__(self, module: str, env: str, command: list[str] | None = None) -> None:
        self.command = command or [sys.executable, "-m", module]
        self.env = env
        self._process: subprocess.Popen[bytes] | None = None
        self._connection: Connection | None = None
        self._failed = False
        self._lock = threading.Lock()

    @property
    def available(self) -> bool:
        """Whether the helper is running (started and not failed)."""
        return self._connection is not None and not self._failed

    def start(self) -> None:
        """Start the helper unless it ran already, failed, or is turned off; does not wait."""
        with self._lock:
            if self._process is not None or self._failed:
                return
            if os.environ.get(self.env, "1") == "0" or os.name != "posix":
                self._failed = True
                return
            from multiprocessing.connection import Connection

            ours, theirs = socket.socketpair()
            try:
                self._process = subprocess.Popen(
                    [*self.command, str(theirs.fileno())],
                    pass_fds=(theirs.fileno(),),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    # not the command's stderr: a helper outlives a killed command by as long as
                    # its imports take, and holding that pipe it would hold the command's reader
                    # (a failed helper's work is done here instead)
                    stderr=subprocess.DEVNULL,
                )
            except OSError:
                self._failed = True
                ours.close()
                return
            finally:
                theirs.close()
            self._connection = Connection(ours.detach())

    def _stop(self) -> None:
        """End the helper: it is not used again (the work is done here from now on)."""
        self._failed = True
        connection, self._connection = self._connection, None
        process, self._process = self._process, None
        if connection is not None:
            connection.close()  # the helper ends at its connection's end
        if process is not None:
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def close(self) -> None:
        """Stop the helper (it is not started again)."""
        self._stop()

    def forget(self) -> None:
        """In a forked child: the parent's helper is the parent's."""
        self._process = None
        self._connection = None
        self._failed = False
        self._lock = threading.Lock()


__all__ = ["WorkerProcess"]
