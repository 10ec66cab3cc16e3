"""One run at a time per output folder: ``memrisk run --out DIR`` holds ``DIR/.memrisk.lock``.

The lock file holds the pid of the run that holds it.  It is taken with an exclusive,
non-blocking ``flock``, which the kernel drops when the process ends, so a lock left by
a crashed or killed run (a pid that is no longer alive) is simply taken over.  A
second run into a held folder is refused with a :class:`MemriskError` naming the
folder and the pid.  The holder removes the file on exit.
"""

from __future__ import annotations

import errno
import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from lm_eval_memrisk.episodes.errors import MemriskError

__all__ = ["LOCK_NAME", "hold_folder"]

#: The lock file inside the output folder.
LOCK_NAME = ".memrisk.lock"


def _holder(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip() or "unknown"
    except OSError:
        return "unknown"


def _acquire(folder: Path) -> int:
    """An open descriptor of the held lock file (retried if the file was replaced meanwhile)."""
    path = folder / LOCK_NAME
    for _ in range(100):
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise
            raise MemriskError(
                f"{folder} is in use by another memrisk run (pid {_holder(path)}, lock file {path}); "
                f"wait for it to finish or choose another --out"
            ) from None
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:  # not removed by its previous holder between our open and flock
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode("ascii"))
            os.fsync(fd)
            return fd
        os.close(fd)
    raise MemriskError(f"{folder}: could not take the lock file {path}; try again")


@contextmanager
def hold_folder(folder: Path) -> Iterator[Path]:
    """Hold ``folder`` (created if missing) for the ``with`` block; yield the lock file's path."""
    folder.mkdir(parents=True, exist_ok=True)
    fd = _acquire(folder)
    path = folder / LOCK_NAME
    try:
        yield path
    finally:
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        os.close(fd)  # closing drops the flock
