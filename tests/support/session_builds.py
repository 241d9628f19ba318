"""Things built once per test run and shared by every test process (the session fixtures' builds)."""

from __future__ import annotations

import os


def built_once(tmp_path_factory, name: str, build):
    """``build(folder)`` once for the whole test run, even when pytest-xdist runs it in several processes:
    the first process to ask builds under a lock in the run's shared temporary folder, the others wait and
    read what it returned (pickled). A build that fails leaves nothing, so the next one asking tries again."""
    import fcntl
    import pickle

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the folder every worker's own temporary folder is in
    folder, result = root / f"shared-{name}", root / f"shared-{name}.pickle"
    with open(root / f"shared-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if result.exists():
            return pickle.loads(result.read_bytes())
        if folder.exists():
            import shutil

            shutil.rmtree(folder)
        folder.mkdir()
        value = build(folder)
        result.write_bytes(pickle.dumps(value))
        return value
