"""The pretrained pieces an archive carries, so a model runs from its archive alone (offline, the folders gone).

Every config value typed :class:`~distrain.pretrained.PretrainedName` (a model's ``model_name`` or
``tokenizer_name``, a reader's, a tokenizer's) names a folder, a hub id or a ``package://`` path that
was read at training time. The archive keeps, per distinct name, a slot ``pretrained/<n>/`` with what
reading it needs besides weights: the tokenizer (``save_pretrained``) and the model's ``config.json``
(as the folder has it, so ``config`` overrides in the archived config apply to it as they did in
training). No weights: ``weights.safetensors`` holds them all. ``pretrained/index.json`` maps each
config key path to its slot. Found by the schema, not by model: any component with a pretrained name
is carried, with no code of its own.

Loading points those keys at the extracted slots (each in a folder named as the name it replaces) and builds the model inside
:func:`~distrain.pretrained.weights_elsewhere` (architecture from the slot's config, weights left
uninitialised until the archive's own are loaded). An archive without ``pretrained/`` loads as before:
from the names it was trained with.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import tempfile
import typing
from pathlib import Path
from typing import Any, Iterator

from distrain.config.schema import Build, DictOf, ListOf, Node, Value, parameters_of

FOLDER = "pretrained"
INDEX = "index.json"

KeyPath = tuple[str | int, ...]


def _names_pretrained(annotation: Any) -> bool:
    from distrain.pretrained import PretrainedName

    if annotation is PretrainedName:
        return True
    return any(_names_pretrained(argument) for argument in typing.get_args(annotation))


def pretrained_references(node: Node, path: KeyPath = ()) -> Iterator[tuple[KeyPath, str]]:
    """``(key path, name)`` for every pretrained name a validated config plan holds."""
    if isinstance(node, Build):
        annotations = {param.name: param.annotation for param in parameters_of(node.cls)[0]}
        for key, child in node.arguments.items():
            if isinstance(child, Value) and isinstance(child.value, str) and _names_pretrained(annotations.get(key)):
                yield (*path, key), child.value
            else:
                yield from pretrained_references(child, (*path, key))
    elif isinstance(node, ListOf):
        for index, child in enumerate(node.items):
            yield from pretrained_references(child, (*path, index))
    elif isinstance(node, DictOf):
        for key, child in node.items.items():
            yield from pretrained_references(child, (*path, key))


def save_pretrained_files(references: list[tuple[KeyPath, str]], archive_root: Path) -> bool:
    """Write ``pretrained/`` under ``archive_root`` for ``references``; False when there is nothing to carry."""
    names = sorted({name for _, name in references})
    if not names:
        return False
    folder = archive_root / FOLDER
    slots: dict[str, dict[str, Any]] = {}
    for number, name in enumerate(names):
        slot = folder / str(number)
        slot.mkdir(parents=True)
        held = {"name": name, "tokenizer": False, "config": False}
        settings = _raw_config(name)
        if settings is not None:
            (slot / "config.json").write_text(json.dumps(settings, indent=2))
            held["config"] = True
        tokenizer = tokenizer_or_none(name)
        if tokenizer is not None:
            tokenizer.save_pretrained(str(slot))
            held["tokenizer"] = True
        slots[str(number)] = held
    index = {"slots": slots, "references": [{"path": list(path), "slot": str(names.index(name))}
                                            for path, name in references]}
    (folder / INDEX).write_text(json.dumps(index, indent=2))
    return True


def _raw_config(name: str) -> dict[str, Any] | None:
    """The name's config.json as written (not built: building could run remote code), or None (a tokenizer alone)."""
    from transformers import PretrainedConfig

    from distrain.pretrained import locate

    try:
        settings, _ = PretrainedConfig.get_config_dict(locate(name))
    except (OSError, ValueError):
        return None
    return settings if settings.get("model_type") else None


def tokenizer_or_none(name: str) -> Any:
    from distrain.config.errors import ConfigError
    from distrain.pretrained import load_tokenizer

    try:
        return load_tokenizer(name)
    except (ConfigError, OSError, ValueError, TypeError):  # a model folder without a tokenizer
        return None


_OWNED: list[tuple[int, str]] = []


def _remove_owned() -> None:
    for pid, folder in _OWNED:
        if pid == os.getpid():  # a forked child leaves its parent's folders alone
            shutil.rmtree(folder, ignore_errors=True)


class DamagedPretrainedFiles(ValueError):
    """What is wrong with an archive's ``pretrained/`` (the archive reader names the archive)."""


def restore_pretrained_files(root: Path, config: dict[str, Any]) -> dict[str, Any]:
    """``config`` with every carried key pointing at its slot, the slots moved out of the extraction folder
    ``root`` to one that lives as long as this process (readers and workers load tokenizers lazily);
    unchanged for an archive without ``pretrained/``. A slot that cannot be read: :class:`DamagedPretrainedFiles`."""
    index_file = root / FOLDER / INDEX
    if not index_file.is_file():
        return config
    try:
        index = json.loads(index_file.read_text(encoding="utf-8"))
        slots, references = index["slots"], index["references"]
        paths = [(tuple(reference["path"]), str(reference["slot"])) for reference in references]
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as error:
        raise DamagedPretrainedFiles(f"{FOLDER}/{INDEX} is unreadable ({error.__class__.__name__}: {error})") from None
    if not _OWNED:
        atexit.register(_remove_owned)
    kept = Path(tempfile.mkdtemp(prefix="distrain-archive-pretrained-"))
    _OWNED.append((os.getpid(), str(kept)))
    shutil.move(str(root / FOLDER), kept / FOLDER)
    for number, held in slots.items():
        _check_slot(kept / FOLDER / number, f"{FOLDER}/{number}", held)
    named = {number: _under_its_name(kept, number, held.get("name")) for number, held in slots.items()}
    restored = json.loads(json.dumps(config))
    for path, number in paths:
        if number not in slots:
            raise DamagedPretrainedFiles(f"{FOLDER}/{INDEX} names slot {number!r}, which it does not list")
        _set(restored, path, str(named[number]))
    return restored


def _under_its_name(kept: Path, number: str, name: Any) -> Path:
    """The extracted slot moved to a folder whose name is the one it was saved from (``/`` and other
    characters a folder name cannot hold made ``--``), so code that reads a trait off the name reads it off the
    path as it did in training: AllenNLP's srl reader lower-cases the words for a BERT whose name holds
    ``uncased``, and the bare slot number made an archived uncased model read cased words."""
    if not isinstance(name, str) or not name.strip():
        return kept / FOLDER / number
    tail = re.sub(r"[^A-Za-z0-9._-]+", "--", name).strip("-.")[-200:] or number
    target = kept / "named" / number / tail
    target.parent.mkdir(parents=True)
    shutil.move(str(kept / FOLDER / number), target)
    return target


def _check_slot(slot: Path, member: str, held: dict[str, Any]) -> None:
    """Load what the slot says it holds now, so a damaged one is named before a model is built
    rather than when a reader first reads)."""

    what = f"{member} (for {held.get('name')})"
    if held.get("config"):
        try:
            settings = json.loads((slot / "config.json").read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as error:
            raise DamagedPretrainedFiles(f"{what}: config.json is unreadable ({error.__class__.__name__}: "
                               f"{str(error).splitlines()[0]})") from None
        if not isinstance(settings, dict) or not settings.get("model_type"):
            raise DamagedPretrainedFiles(f"{what}: config.json names no model_type")
    if held.get("tokenizer"):
        from transformers import AutoTokenizer

        if not (slot / "tokenizer_config.json").is_file():
            raise DamagedPretrainedFiles(f"{what}: the tokenizer cannot be loaded (no tokenizer_config.json)")
        try:
            AutoTokenizer.from_pretrained(str(slot))
        except Exception as error:  # noqa: BLE001 - tokenizers' parse errors share no base class
            reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise DamagedPretrainedFiles(f"{what}: the tokenizer cannot be loaded ({reason})") from None


def _set(config: Any, path: KeyPath, value: str) -> None:
    for key in path[:-1]:
        config = config[key]
    config[path[-1]] = value
