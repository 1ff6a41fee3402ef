"""The output file of ``synth generate``, claimed before the first request and held to the end.

Before a run makes any request, :func:`claim_output` creates a hidden lock file next to the output (``.<name>.lock``) and locks it. Creating that file
proves that the folder can be written: a read-only folder, a read-only file system or a special
one such as ``/proc`` is reported as one line at once, not after every request was paid for. The
lock is held until the dataset is written: a second run that would write the same file is refused
at once, naming the process that holds it, instead of both succeeding and the last silently
replacing the first's file.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from synth.errors import ConfigError


def lock_path(output: Path) -> Path:
    """The lock file of ``output``: hidden, next to it."""
    return output.with_name(f".{output.name}.lock")


class OutputClaim:
    """This process's claim on an output file (see the module); :meth:`release` ends it."""

    def __init__(self, output: Path, lock: Path, fd: int | None) -> None:
        self.output = output
        self.lock = lock
        self._fd = fd

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Remove the lock file and unlock (in that order: a run that opened the file just before
        it went sees that it is gone once it gets the lock, and opens it again)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            if os.stat(self.lock).st_ino == os.fstat(fd).st_ino:
                self.lock.unlink()
        os.close(fd)

    def __enter__(self) -> OutputClaim:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def claim_output(output: Path) -> OutputClaim:
    """Check that files can be created in ``output``'s folder and claim ``output`` for this
    process.

    Raises one ConfigError line when the folder cannot be written, or when another synth run
    holds the claim (naming its process id and start time).
    """
    folder = output.parent
    lock = lock_path(output)
    try:
        import fcntl
    except ImportError:  # pragma: no cover (not on this platform: only the writable check)
        fcntl = None  # type: ignore[assignment]
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise ConfigError(
                f"cannot write {output}: files cannot be created in {folder} "
                f"({exc.strerror or exc}); choose another -o"
            ) from None
        if fcntl is None:  # pragma: no cover
            return OutputClaim(output, lock, fd)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = _holder(fd)
            os.close(fd)
            raise ConfigError(
                f"cannot write {output}: another synth run{holder} is writing it; wait for it "
                "to finish or choose another -o"
            ) from None
        try:
            same = os.stat(lock).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if not same:  # the previous holder removed it between our open and our lock: again
            os.close(fd)
            continue
        os.ftruncate(fd, 0)
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        os.write(fd, f"{os.getpid()} {stamp}\n".encode())
        return OutputClaim(output, lock, fd)


def _holder(fd: int) -> str:
    """`` (process 123, started 2025-01-02 03:04:05)`` from the lock file, or nothing."""
    try:
        text = os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
    except OSError:
        return ""
    pid, _, stamp = text.partition(" ")
    if not pid.isdigit():
        return ""
    return f" (process {pid}, started {stamp})" if stamp else f" (process {pid})"


__all__ = ["OutputClaim", "claim_output", "lock_path"]
