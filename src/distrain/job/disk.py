"""Writing a run's outputs: a full, read-only or over-quota disk becomes one line naming the path.

Every file a run writes (checkpoints, best weights, metrics, the archive) goes through
:func:`writing`, which turns a failed write into :class:`OutputNotWritable` (exit 1): ``cannot write
PATH: No space left on device``. Writers put files under temporary names and rename them, so a failed
write leaves the previous checkpoint and metrics whole, and ``--recover`` continues once space is freed.
"""

from __future__ import annotations

import errno
import os
import re
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

from distrain.errors import RunFailed

#: errors that mean "this disk or folder cannot take the file", not a bug
DISK_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG, errno.EACCES, errno.EPERM}
# torch's zip writer and safetensors' Rust writer report the OS error only in their message
_MESSAGES = {
    "no space left on device": errno.ENOSPC, "disk quota exceeded": errno.EDQUOT,
    "read-only file system": errno.EROFS, "file too large": errno.EFBIG, "filetoolarge": errno.EFBIG,
    "storagefull": errno.ENOSPC, "readonlyfilesystem": errno.EROFS, "permission denied": errno.EACCES,
}


class OutputNotWritable(RunFailed):
    """A run's output could not be written (disk full, read-only folder, quota); ``cause`` says why."""

    def __init__(self, message: str, cause: str | None = None) -> None:
        super().__init__(message)
        self.cause = cause


def not_writable(path: Path | str, cause: str) -> OutputNotWritable:
    return OutputNotWritable(f"cannot write {path}: {cause}; free space, then resume with --recover", cause)


def disk_cause(error: BaseException) -> str | None:
    """Why ``error`` says the disk refused a write (``strerror``), or None if it is about something else."""
    if isinstance(error, OSError) and error.errno in DISK_ERRNOS:
        return os.strerror(error.errno)
    text = str(error).lower()
    for number in re.findall(r"(?:os error|code:?)\s*(\d+)", text):
        if int(number) in DISK_ERRNOS:
            return os.strerror(int(number))
    for phrase, number in _MESSAGES.items():
        if phrase in text:
            return os.strerror(number)
    if "file write failed" in text or "failed writing" in text:  # torch's writer drops the errno
        return "write failed (disk full or quota?)"
    return None


@contextmanager
def writing(path: Path | str, names_what_failed: bool = False) -> Iterator[None]:
    """Report a write into ``path`` that the disk refused as :class:`OutputNotWritable`. An inner ``writing``
    names its own path, unless this one ``names_what_failed``: a checkpoint is named by its folder, not by a
    file in the temporary folder it was being written to (which is gone by the time the user reads the line)."""
    try:
        yield
    except OutputNotWritable as inner:
        if names_what_failed and inner.cause is not None:
            raise not_writable(path, inner.cause) from inner.__cause__
        raise
    except BaseException as error:  # noqa: BLE001 - re-raised unless it is a disk problem (torch's sharded
        cause = disk_cause(error)    # checkpoint writer raises a BaseException holding every rank's OSError)
        if cause is None:
            raise
        raise not_writable(path, cause) from error


class CheckedFile:
    """A binary file for writers that hide the OS error (``torch.save`` reports a short or failed
    write as "unexpected pos"): writes every byte or raises, and keeps the error in :attr:`error`."""

    def __init__(self, path: Path) -> None:
        self.raw = open(path, "wb", buffering=0)
        self.error: OSError | None = None

    def write(self, data) -> int:
        view = memoryview(data).cast("B")
        done = 0
        try:
            while done < len(view):
                done += self.raw.write(view[done:])
        except OSError as error:
            self.error = error
            raise
        return done

    def flush(self) -> None:
        self.raw.flush()

    def fileno(self) -> int:
        return self.raw.fileno()

    def close(self) -> None:
        self.raw.close()


def torch_save(state, path: Path) -> None:
    """``torch.save`` whose disk errors keep their cause (see :class:`CheckedFile`); fsynced."""
    import torch

    handle = CheckedFile(path)
    try:
        torch.save(state, handle)
        os.fsync(handle.fileno())
    except Exception as error:  # noqa: BLE001 - the OS error behind torch's message, if there was one
        if handle.error is not None and handle.error is not error:
            raise handle.error from None
        raise
    finally:
        handle.close()


@contextmanager
def replacing(path: Path | str) -> Iterator[Path]:
    """A temporary name beside ``path`` to write the new file to: when the block ends without an error
    it is flushed to disk and renamed over ``path`` (readers see the old file or the new one, never
    part of one); otherwise it is removed. A refused write is :class:`OutputNotWritable`.
    The one way distrain writes a file atomically."""
    path = Path(path)
    with writing(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".tmp-{path.name}-")
        os.close(handle)
        temporary = Path(name)
        try:
            yield temporary
            fsync(temporary)
            os.replace(temporary, path)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise


def write_text_atomically(path: Path | str, text: str) -> None:
    """Write ``path`` whole or not at all (a full disk leaves the previous version in place)."""
    with replacing(path) as temporary:
        temporary.write_text(text)


def write_lines_atomically(path: Path | str, lines: Iterable[str]) -> None:
    """Write ``lines`` (as they are produced) to ``path``, whole or not at all."""
    with replacing(path) as temporary, open(temporary, "w", encoding="utf-8") as out:
        out.writelines(lines)


def remove_leftovers(directory: Path | str) -> None:
    """Delete the ``.tmp-*`` files and folders that writers killed mid-write left in ``directory`` (call it
    where no writer of that folder can be running: before a run or a resumed run writes anything)."""
    import shutil

    directory = Path(directory)
    if not directory.is_dir():
        return
    for stale in directory.glob(".tmp-*"):
        if stale.is_dir() and not stale.is_symlink():
            shutil.rmtree(stale, ignore_errors=True)
        else:
            stale.unlink(missing_ok=True)


def fsync(path: Path) -> None:
    """Flush a file (or a folder's entries) to disk, so a rename never exposes unwritten data."""
    flags = os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if path.is_dir() else 0)
    try:
        descriptor = os.open(path, flags)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)
