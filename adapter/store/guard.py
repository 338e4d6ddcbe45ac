"""What the store checks about its files, outside SQLite (docs/reliability.md, "A damaged
database stops the start" and "Deleting the database while serving"): one sidecar per
database (:class:`DatabaseLock`, an advisory ``flock`` on ``<db>.lock`` that the kernel drops
when the process ends), a database it can write at start (:func:`why_unwritable`), and the
same files while serving (:class:`FileIdentity`).
"""

from __future__ import annotations

import errno
import fcntl
import os
import tempfile
from pathlib import Path

from ..errors import StoreInUse, StoreReadOnly, StoreUnusable


def read_only(path: Path, why: str) -> str:
    """The message for a database the sidecar cannot write: what is read-only, what to do."""
    return (
        f"the database {path} is read-only: {why}. It is not damaged; the sidecar stores "
        "every message before acking it, so it does not start on a database it cannot write. "
        f"Make {path} and its folder writable for this user (or remount the filesystem "
        "read-write), or start with --db on a writable path."
    )


class DatabaseLock:
    """An exclusive lock on ``<db>.lock``, held until :meth:`release`."""

    def __init__(self, db: Path) -> None:
        self.path = db.with_name(db.name + ".lock")
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as error:
            raise StoreReadOnly(read_only(db, f"its lock file {self.path} cannot be made ({_reason(error)})")) from error
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise StoreInUse(
                f"the database {db} is in use by another initiative-sidecar (pid {holder}, "
                f"lock file {self.path}). Two sidecars on one database would both ack the same "
                "world's messages, and one would lose them. Stop the other one, or start this one "
                "with another --db."
            ) from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self.fd: int | None = fd

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing the descriptor drops the lock
            self.fd = None


def why_unwritable(db: Path) -> str | None:
    """Why the sidecar could not write ``db`` and its ``-wal``/``-shm`` files, or None
    (:class:`StoreUnusable` if its folder does not even exist). It opens them for writing and
    creates a file in the folder, without writing the database: a permission check misses a
    read-only filesystem or an immutable file when the sidecar runs as root."""
    folder = db.parent
    if not folder.is_dir():
        raise StoreUnusable(f"the folder {folder} of the database {db.name} does not exist: create it, "
                            "or start with another --db")
    for path in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        if not path.exists():
            continue
        try:
            os.close(os.open(path, os.O_RDWR))
        except OSError as error:
            return f"{path.name} cannot be opened for writing ({_reason(error)})"
    try:
        fd, name = tempfile.mkstemp(prefix=f".{db.name}.", suffix=".probe", dir=folder)
        os.close(fd)
        os.unlink(name)
    except OSError as error:
        return (f"no file can be created in its folder {folder}, where SQLite keeps its -wal and -shm "
                f"files ({_reason(error)})")
    return None


def _reason(error: OSError) -> str:
    said = error.strerror or str(error)
    if error.errno == errno.EROFS:
        return f"{said}: the filesystem is mounted read-only"
    if error.errno == errno.EPERM:
        return f"{said}: the file or folder is marked immutable (lsattr shows 'i'; chattr -i clears it)"
    if error.errno == errno.EACCES:
        return f"{said}: the permissions do not let user id {os.geteuid()} write it"
    return said


def identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino)


class FileIdentity:
    """The database's and its ``-wal``'s identity as the store opened them."""

    def __init__(self, db: Path) -> None:
        self.expected = {path: identity(path) for path in (db, db.with_name(db.name + "-wal"))}

    def changed(self) -> str | None:
        """What happened to a file since it was opened ("deleted", "replaced"), or None."""
        for path, was in self.expected.items():
            now = identity(path)
            if was is None:  # not there at open (the -wal of a fresh store): watch it from now
                self.expected[path] = now
            elif now is None:
                return f"{path} was deleted"
            elif now != was:
                return f"{path} was replaced by another file"
        return None
