"""``model.tar.gz``: config.json, vocabulary/, weights.safetensors and meta.json. No pickles.

Reading refuses members that would land outside the extraction folder and weights that are not a
safetensors file, so an archive from elsewhere cannot run code or write where it should not.
"""

from __future__ import annotations

import json
import os
import platform
import tarfile
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ARCHIVE_NAME = "model.tar.gz"
WEIGHTS_NAME = "weights.safetensors"


class ArchiveError(Exception):
    """An archive that is missing, truncated, corrupt or unsafe."""


def write_archive(serialization_dir: Path, model: Any, vocab: Any, config: dict[str, Any]) -> Path:
    """Write ``serialization_dir/model.tar.gz`` atomically from the model's current weights."""
    from safetensors.torch import save_model

    from distrain import __version__

    serialization_dir = Path(serialization_dir)
    target = serialization_dir / ARCHIVE_NAME
    with tempfile.TemporaryDirectory(dir=serialization_dir, prefix=".tmp-archive-") as staging:
        staging = Path(staging)
        (staging / "config.json").write_text(json.dumps(config, indent=2))
        vocab.save(staging / "vocabulary")
        save_model(model, str(staging / WEIGHTS_NAME))
        (staging / "meta.json").write_text(json.dumps(_versions(__version__), indent=2))
        packed = staging / "packed.tar.gz"
        with tarfile.open(packed, "w:gz") as tar:
            for name in ("config.json", "vocabulary", WEIGHTS_NAME, "meta.json"):
                tar.add(staging / name, arcname=name)
        os.replace(packed, target)
    return target


def _versions(distrain_version: str) -> dict[str, str]:
    import torch

    return {"distrain": distrain_version, "torch": torch.__version__, "python": platform.python_version()}


@dataclass
class Archive:
    model: Any
    config: dict[str, Any]
    vocab: Any
    meta: dict[str, Any]


def extract_archive(path: str | Path, destination: str | Path) -> Path:
    """Extract ``path`` into ``destination``, refusing any member that would escape it."""
    path, destination = Path(path), Path(destination)
    if not path.is_file():
        raise ArchiveError(f"{path}: archive not found")
    root = destination.resolve()
    try:
        with tarfile.open(path, "r:*") as tar:
            members = tar.getmembers()
            for member in members:
                target = (root / member.name).resolve()
                if not target.is_relative_to(root) or member.issym() or member.islnk() or member.isdev():
                    raise ArchiveError(f"{path}: unsafe member {member.name!r} (outside the archive folder or a link)")
            for member in members:
                tar.extract(member, root, filter="data") if hasattr(tarfile, "data_filter") else tar.extract(member, root)
    except (tarfile.TarError, EOFError, OSError, zlib.error) as error:
        raise ArchiveError(f"{path}: not a readable model archive ({error.__class__.__name__}: {error})") from None
    return root


def load_archive(path: str | Path, overrides: dict[str, Any] | None = None) -> Archive:
    """The model (best weights, eval mode), its config and vocabulary from a ``model.tar.gz``."""
    from safetensors import SafetensorError
    from safetensors.torch import load_model

    from distrain.config.loading import apply_overrides
    from distrain.data.vocabulary import Vocabulary
    from distrain.experiment import resolve_experiment

    with tempfile.TemporaryDirectory(prefix="distrain-archive-") as folder:
        root = extract_archive(path, folder)
        for required in ("config.json", WEIGHTS_NAME, "vocabulary"):
            if not (root / required).exists():
                raise ArchiveError(f"{path}: archive has no {required}")
        config = apply_overrides(json.loads((root / "config.json").read_text()), overrides or {})
        vocab = Vocabulary.load(root / "vocabulary")
        meta = json.loads((root / "meta.json").read_text()) if (root / "meta.json").exists() else {}
        experiment = resolve_experiment(config).build()
        model = experiment.model.construct(vocab=vocab)
        weights = root / WEIGHTS_NAME
        _check_safetensors(weights, path)
        try:
            missing, unexpected = load_model(model, str(weights), strict=False)
        except (SafetensorError, OSError, ValueError, RuntimeError) as error:
            raise ArchiveError(f"{path}: {WEIGHTS_NAME} is not a valid safetensors file ({error})") from None
        if missing or unexpected:
            raise ArchiveError(f"{path}: weights do not fit the model (missing {missing}, unexpected {unexpected})")
    model.eval()
    return Archive(model, config, vocab, meta)


def _check_safetensors(weights: Path, archive: Path) -> None:
    """A safetensors file starts with an 8-byte header length and a JSON header; a pickle does not."""
    with open(weights, "rb") as handle:
        head = handle.read(9)
    if len(head) < 9 or head[8:9] != b"{":
        raise ArchiveError(f"{archive}: {WEIGHTS_NAME} is not a safetensors file (refusing to unpickle it)")
