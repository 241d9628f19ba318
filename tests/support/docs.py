"""Reading the documentation's code blocks, and running a tutorial's commands as a user would.

Conventions the pages follow (see docs/about-docs.md):

- A block with ``title="PATH"`` is a file the reader saves: the tutorial runner writes it to PATH before the
  commands that follow it.
- ```` ```bash ```` blocks are commands: each block runs in one ``bash -euo pipefail`` from the tutorial's folder
  and must exit 0.
- ```` ```console ```` blocks show ``$ command`` lines and their output: each command runs, and every output
  line shown must appear in what it printed (a command shown failing may exit non-zero).
- ``<!-- docs-test: ... -->`` on the line before a block says how the tests treat it:
  ``not run: WHY`` (a command block that is not run, e.g. it needs several machines), ``checked: WHY`` (each
  ``distrain train`` in the block is run as ``distrain check`` with the same config and overrides; the block's
  other commands are not run), ``fragment of PATH``
  (a config fragment, checked merged into the config at PATH), ``validate only: WHY`` (a config whose data does not
  ship: validated against the schema, its data not read), ``not a config: WHY`` (jsonnet or JSON that is not a
  training config).
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # not support.paths: this file also runs as a script
DOCS = ROOT / "docs"
MARKER = re.compile(r"^\s*<!--\s*docs-test:\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)```(\w*)\s*(.*)$")
CONFIG_LANGUAGES = ("jsonnet", "json")


@dataclasses.dataclass
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    language: str
    title: str | None
    text: str
    marker: str | None  # the docs-test marker before it, if any

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(DOCS)}:{self.line}"


def pages() -> list[Path]:
    return sorted(path for path in DOCS.rglob("*.md") if "hooks" not in path.parts)


def code_blocks(page: Path) -> list[Block]:
    lines = page.read_text().split("\n")
    found, index = [], 0
    while index < len(lines):
        match = FENCE.match(lines[index])
        if not match:
            index += 1
            continue
        indent, language, info = match.groups()
        title = re.search(r'title="([^"]+)"', info)
        previous = next((line for line in reversed(lines[:index]) if line.strip()), "")
        marker = MARKER.match(previous)
        start, body, index = index + 1, [], index + 1
        while index < len(lines) and not lines[index].strip().startswith("```"):
            body.append(lines[index][len(indent):] if lines[index].startswith(indent) else lines[index])
            index += 1
        found.append(Block(page, start, language,
                           title.group(1) if title else None, "\n".join(body) + "\n",
                           marker.group(1) if marker else None))
        index += 1
    return found


def config_blocks() -> list[Block]:
    return [block for page in pages() for block in code_blocks(page) if block.language in CONFIG_LANGUAGES]


def tutorial_pages() -> list[Path]:
    return sorted(path for path in (DOCS / "tutorials").glob("*.md") if path.name != "index.md")


def console_commands(text: str) -> list[tuple[str, list[str]]]:
    """``(command, expected output lines)`` of a console block; a command may continue over ``\\`` lines."""
    found: list[tuple[str, list[str]]] = []
    lines = text.rstrip("\n").split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("$ "):
            command = line[2:]
            while command.endswith("\\") and index + 1 < len(lines):
                index += 1
                command = command[:-1] + " " + lines[index].strip()
            found.append((command, []))
        elif found and line.strip():
            found[-1][1].append(line.strip())
        index += 1
    return found


def tutorial_environment(root: Path) -> dict:
    """A user's shell inside a distrain checkout at ``root``: offline, the test session's caches, the ``.venv/bin``
    wrappers (see :func:`make_checkout`) first on PATH, and this test process's share of the cores."""
    environment = dict(os.environ)
    environment["PATH"] = f"{root / '.venv' / 'bin'}{os.pathsep}{environment['PATH']}"
    environment["HF_HUB_OFFLINE"] = "1"
    environment["PYTHONPATH"] = str(ROOT / "src")
    # this test process's share of the cores, as support.cli.threads_per_test_process (not imported: see ROOT)
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    environment.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // workers)))
    return environment


def make_checkout(root: Path, data: Path) -> Path:
    """A folder laid out as the user's distrain checkout after the set-up commands: ``configs/``,
    ``scripts/``, ``data/`` (prepared) and ``.venv/bin/{python,distrain,torchrun}`` running this interpreter on this
    checkout's sources (``distrain`` through :mod:`support.warm_client`: from the test session's warm parent where
    one is offered, else ``python -m distrain``)."""
    (root / ".venv" / "bin").mkdir(parents=True, exist_ok=True)
    for name, target in (("configs", ROOT / "configs"), ("scripts", ROOT / "scripts")):
        if not (root / name).exists():
            (root / name).symlink_to(target)
    (root / "data").mkdir(exist_ok=True)  # the prepared splits linked in; what a tutorial writes stays here
    for split in data.iterdir():
        if not (root / "data" / split.name).exists():
            (root / "data" / split.name).symlink_to(split)
    client = shlex.quote(str(Path(__file__).with_name("warm_client.py")))
    for name, tail in (("python", '"$@"'), ("distrain", f'-S {client} "$@"'), ("torchrun", '-m torch.distributed.run "$@"')):
        wrapper = root / ".venv" / "bin" / name
        wrapper.write_text(f"#!/bin/sh\nexport PYTHONPATH={shlex.quote(str(ROOT / 'src'))}${{PYTHONPATH:+:$PYTHONPATH}}\n"
                           f"exec {shlex.quote(sys.executable)} {tail}\n")
        wrapper.chmod(0o755)
    return root


@dataclasses.dataclass
class Step:
    block: Block
    command: str
    returncode: int
    output: str
    missing: list[str]  # expected output lines (console blocks) that did not appear


def logical_lines(text: str) -> list[str]:
    """Shell lines with their ``\\`` continuations joined."""
    return [line.strip() for line in re.sub(r"\\\n\s*", " ", text).split("\n") if line.strip()]


def as_check(command: str) -> str:
    """``distrain train CONFIG -s DIR --force -o X`` as ``distrain check CONFIG -o X``."""
    command = command.replace("distrain train ", "distrain check ", 1)
    command = re.sub(r"\s(?:-s|--serialization-dir)\s+\S+", "", command)
    return re.sub(r"\s(?:-f|--force|-r|--recover)(?=\s|$)", "", command)


def run_tutorial(page: Path, root: Path, timeout: float = 300,
                 warm: dict | None = None) -> tuple[list[Step], list[Block], list[Block]]:
    """Every file block written and every command block run in order, in ``root``; returns the steps run,
    the blocks left out by a ``not run`` marker and the blocks ``checked`` rather than run. ``warm``: the
    variables that offer the ``distrain`` commands a warm parent (:mod:`support.warm_client`)."""
    environment = {**tutorial_environment(root), **(warm or {})}
    steps, not_run, checked = [], [], []
    for block in code_blocks(page):
        if block.title:
            target = root / block.title
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.text)
            continue
        if block.language not in ("bash", "console"):
            continue
        if block.marker and block.marker.startswith("not run"):
            not_run.append(block)
            continue
        if block.marker and block.marker.startswith("checked"):
            commands = [(as_check(line), []) for line in logical_lines(block.text) if "distrain train " in line]
            checked.append(block)
        else:
            commands = [(block.text, [])] if block.language == "bash" else console_commands(block.text)
        for command, expected in commands:
            result = subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=root, env=environment,
                                    stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
            output = result.stdout + result.stderr
            flat = " ".join(output.split())
            missing = [line for line in expected if " ".join(line.split()) not in flat]
            steps.append(Step(block, command, result.returncode, output, missing))
            if block.language == "bash" and result.returncode != 0 or block.marker and result.returncode != 0:
                return steps, not_run, checked
    return steps, not_run, checked


if __name__ == "__main__":  # python tests/support/docs.py docs/tutorials/X.md FOLDER DATA: run it, print each step
    import time

    page, folder, data = Path(sys.argv[1]).resolve(), Path(sys.argv[2]), Path(sys.argv[3])
    start = time.perf_counter()
    ran, skipped, checked = run_tutorial(page, make_checkout(folder, data))
    for step in ran:
        print(f"$ {step.command.strip()}\n{step.output}[exit {step.returncode}; missing {step.missing}]\n")
    print(f"{len(ran)} steps, {len(skipped)} blocks not run, {len(checked)} checked, {time.perf_counter() - start:.1f} s")
