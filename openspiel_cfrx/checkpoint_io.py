"""Atomic, space-aware file writes shared by every checkpoint writer.

`atomic_write(path, write)` writes through a temporary file next to `path` and
renames it into place, so a crash mid-write never leaves a half file at `path`.
Temporary files left by killed writers (`<path>.tmp<pid>`, regular files of a
process that no longer runs; no other file) are removed before writing. A
full disk gives one `CheckpointWriteError` naming the directory and the free
space, and the partial temporary file is removed.
"""

from __future__ import annotations

import contextlib
import errno
import glob
import hashlib
import json
import os
import shutil
import signal
import stat
import threading
import zipfile
from collections.abc import Callable

import numpy as np


class CheckpointWriteError(OSError):
    """A checkpoint could not be written (disk full, unwritable directory)."""


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_temporaries(path: str) -> list[str]:
    """Deletes the temporaries `atomic_write` left at `path` when its process
    was killed; returns them.

    Only files it can tell are its own go: named exactly `<path>.tmp<pid>`
    (the name `atomic_write` gives them, the pid all digits), of a process
    that no longer runs, a regular file (not a link, folder or pipe) owned by
    this user. Anything else, e.g. a user's `<path>.tmp_notes`, is left alone."""
    removed = []
    for tmp in glob.glob(glob.escape(path) + ".tmp*"):
        suffix = tmp[len(path) + 4 :]
        if not (suffix.isascii() and suffix.isdigit()) or suffix != str(int(suffix)) or int(suffix) > 2**22:
            continue  # not a pid as atomic_write writes it (Linux pids are <= 2**22)
        pid = int(suffix)
        if pid == os.getpid() or _pid_alive(pid):
            continue
        try:
            info = os.lstat(tmp)
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
                continue
            os.remove(tmp)
            removed.append(tmp)
        except OSError:
            pass
    return removed


def _disk_full(error: BaseException) -> bool:
    if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    # torch's zip writer reports a short write as RuntimeError("... unexpected pos ...").
    return isinstance(error, RuntimeError) and "unexpected pos" in str(error)


@contextlib.contextmanager
def _sigint_deferred():
    """Holds Ctrl-C (SIGINT) back until the block ends, then raises it: an
    interrupt that lands inside torch's zip writer would otherwise surface as
    a short-write RuntimeError (misread as a full disk) and lose the file."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) in (
        signal.SIG_IGN, None):  # fmt: skip
        yield
        return
    received = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if received:
        raise KeyboardInterrupt


def atomic_write(path: str, write: Callable[[object], None]) -> None:
    """Calls `write(file_object)` on a temporary file and renames it to `path`."""
    path = os.fspath(path)
    if not path:
        raise CheckpointWriteError(errno.ENOENT, "cannot write a checkpoint to an empty path; give a file name")
    if os.path.isdir(path):
        raise CheckpointWriteError(
            errno.EISDIR, f"cannot write checkpoint {path}: it is a directory; give a file path inside it, "
            f"e.g. {os.path.join(path, 'checkpoint')}"
        )  # fmt: skip
    directory = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as e:
        raise CheckpointWriteError(
            e.errno, f"cannot create checkpoint directory {directory} ({e.strerror}); choose another path"
        ) from None
    remove_stale_temporaries(path)
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with _sigint_deferred():
            with open(tmp, "wb") as f:
                write(f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
    except BaseException as e:
        try:
            os.remove(tmp)
        except OSError:
            pass
        if _disk_full(e):
            free = shutil.disk_usage(directory).free
            raise CheckpointWriteError(
                errno.ENOSPC,
                f"cannot write checkpoint {path}: the disk holding {directory} is full "
                f"({free / 2**20:.1f} MiB free); free some space or write checkpoints elsewhere",
            ) from None
        if isinstance(e, PermissionError):
            raise CheckpointWriteError(
                errno.EACCES, f"cannot write checkpoint {path}: {directory} is not writable; choose another path"
            ) from None
        raise


def array_digest(arrays: dict) -> str:
    """SHA-256 over numpy arrays' names, dtypes, shapes and bytes (sorted by name):
    the checksum stored inside `.npz` checkpoints."""
    h = hashlib.sha256()
    for name in sorted(arrays):
        value = np.ascontiguousarray(arrays[name])
        h.update(f"{name}|{value.dtype.str}|{value.shape}|".encode())
        h.update(value.tobytes())
    return h.hexdigest()


def read_checked_npz(path, what: str) -> tuple[dict, dict]:
    """(arrays, meta) of an `.npz` whose "sha256" entry is `array_digest` of the
    others and whose "meta" entry is a JSON string; ValueError with one line for
    an empty, unreadable or damaged file (`what`: e.g. "vector CFR checkpoint")."""
    if os.path.isfile(path) and os.path.getsize(path) == 0:
        raise ValueError(f"checkpoint {path} is empty (0 bytes): the run that wrote it was cut off")
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {key: data[key] for key in data.files}
        stored = str(arrays.pop("sha256", ""))
        meta = json.loads(str(arrays["meta"]))
    except FileNotFoundError:
        raise
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, json.JSONDecodeError) as e:
        raise ValueError(f"{path} is not a readable {what} ({type(e).__name__}: {str(e)[:200]})") from None
    if stored != array_digest(arrays):
        raise ValueError(f"checkpoint {path} is damaged: its contents do not match its checksum")
    return arrays, meta
