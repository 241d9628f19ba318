"""One temporary folder per distrain process, so that a job killed with ``kill -9`` leaves nothing behind.

Python's multiprocessing (the fork server's socket folder), torch's process starter (its error files) and
distrain itself (the watchdog's reports, extracted archives) put temporary files in ``$TMPDIR`` and remove them
when they exit normally; a process killed outright cannot. So each command works in
``$TMPDIR/distrain-job-PID-XXXX``: its children inherit it (``TMPDIR`` is set for them), it is removed when the
process exits, and the folders of processes that died without removing theirs are removed by the next
distrain command that starts on the machine.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from multiprocessing.util import Finalize
from pathlib import Path

PREFIX = "distrain-job-"
_OWNER = re.compile(rf"{PREFIX}(\d+)-")
#: a Unix socket's path holds 107 bytes, and the fork server's is ``TMPDIR/pymp-XXXXXXXX/listener-XXXXXXXX``
SOCKET_PATH_LIMIT = 107
SOCKET_NAME = len("/pymp-xxxxxxxx/listener-xxxxxxxx")


def use_job_scratch() -> Path | None:
    """Send this process's (and its children's) temporary files to a folder of its own; None where the
    temporary folder cannot take one, or is so deep already that one more level would leave the fork server's
    socket path too long (then nothing changes)."""
    base = Path(tempfile.gettempdir())
    remove_dead_jobs_folders(base)
    folder_name = len(f"/{PREFIX}{os.getpid()}-xxxxxxxx")
    if len(str(base)) + folder_name + SOCKET_NAME > SOCKET_PATH_LIMIT:
        return None
    try:
        folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=base))
    except OSError:
        return None
    owner = os.getpid()
    tempfile.tempdir = str(folder)
    os.environ["TMPDIR"] = str(folder)
    # Removed after multiprocessing's own exit finalizers (the fork server's folder inside this one goes first),
    # whichever of the two was imported first; in this process only (a forked child never removes it).
    Finalize(None, lambda: os.getpid() == owner and shutil.rmtree(folder, ignore_errors=True), exitpriority=-200)
    return folder


def remove_dead_jobs_folders(base: Path) -> None:
    """Remove the scratch folders whose process is gone (killed before it could remove its own)."""
    try:
        candidates = list(base.glob(f"{PREFIX}*"))
    except OSError:
        return
    for folder in candidates:
        match = _OWNER.match(folder.name)
        if match and not _alive(int(match.group(1))):
            shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True
