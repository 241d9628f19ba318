"""``model.tar.gz``: config.json, vocabulary/, weights.safetensors and meta.json. No pickles. When the
config names pretrained models or tokenizers, also ``pretrained/``: their tokenizers and configs, no
weights (see :mod:`distrain.experiment.archive.pretrained_files`), so the archive runs without them.

Reading refuses members that would land outside the extraction folder and weights that are not a
safetensors file, so an archive from elsewhere cannot run code or write where it should not.
"""

from __future__ import annotations

import contextlib
import json
import platform
import tarfile
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from distrain.errors import BadInput

ARCHIVE_NAME = "model.tar.gz"
WEIGHTS_NAME = "weights.safetensors"
#: bumped when the layout changes in a way older readers cannot follow
ARCHIVE_FORMAT = 1


class ArchiveError(BadInput):
    """An archive that is missing, truncated, corrupt or unsafe."""


def write_archive(serialization_dir: Path, weights: dict[str, Any], vocab: Any, config: dict[str, Any],
                  pretrained: list[tuple[tuple, str]] = (), adapter_base: dict[str, Any] | None = None) -> Path:
    """Write ``serialization_dir/model.tar.gz`` atomically from a full model state (``weights``);
    ``pretrained``: the config's pretrained names by key path (see :func:`pretrained_references`);
    ``adapter_base``: the frozen base ``weights`` leave out (see :func:`base_reference`), kept in meta.json."""
    from distrain.experiment.archive.pretrained_files import FOLDER, save_pretrained_files
    from distrain.version import __version__
    from distrain.training.checkpointing import save_state_file
    from distrain.job.disk import replacing

    serialization_dir = Path(serialization_dir)
    target = serialization_dir / ARCHIVE_NAME
    with replacing(target) as packed, tempfile.TemporaryDirectory(dir=serialization_dir, prefix=".tmp-archive-") as staging:
        staging = Path(staging)
        (staging / "config.json").write_text(json.dumps(config, indent=2))
        vocab.save(staging / "vocabulary")
        save_state_file(weights, staging / WEIGHTS_NAME)
        meta = _versions(__version__)
        if adapter_base is not None:
            meta["adapter_base"] = adapter_base
        (staging / "meta.json").write_text(json.dumps(meta, indent=2))
        members = ["config.json", "vocabulary", WEIGHTS_NAME, "meta.json"]
        if save_pretrained_files(list(pretrained), staging):
            members.append(FOLDER)
        with tarfile.open(packed, "w:gz") as tar:
            for name in members:
                tar.add(staging / name, arcname=name)
    return target


#: where the three models that take an adapter name their pretrained base
BASE_KEY = ("model", "model_name")


def base_reference(model: Any) -> dict[str, Any] | None:
    """What an adapted model's archive needs to find its frozen base again: the pretrained name (at
    ``BASE_KEY`` in the config) and the sha256 of its weights files; None when the archive holds the base."""
    from distrain.modules.adapter import base_digest

    digest = base_digest(model)
    return None if digest is None else {"key_path": list(BASE_KEY), "name": model.adapter_base, "sha256": digest}


def _verified_base(reference: Any, archive: Path) -> tuple[list[str], str]:
    """The key path and name of an archive's base, after checking its weights are the ones trained on."""
    from distrain.modules.adapter import weights_digest, weights_files

    try:
        path, name, expected = list(reference["key_path"]), str(reference["name"]), str(reference["sha256"])
    except (KeyError, TypeError):
        raise ArchiveError(f"{archive}: meta.json has an unreadable adapter_base") from None
    if not weights_files(name):
        raise ArchiveError(f"{archive}: the adapter's base model {name} is not found (no weights files there); the "
                           f"archive holds only what trained, on base weights with sha256 {expected[:16]}…")
    found = weights_digest(name)
    if found != expected:
        raise ArchiveError(f"{archive}: the adapter's base model {name} has other weights than it was trained on "
                           f"(sha256 {found[:16]}…, expected {expected[:16]}…)")
    return path, name


def _versions(distrain_version: str) -> dict[str, str]:
    import torch

    return {
        "archive_format": ARCHIVE_FORMAT,
        "distrain": distrain_version,
        "torch": torch.__version__,
        "python": platform.python_version(),
    }


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
                problem = _unsafe(member, root)
                if problem:
                    raise ArchiveError(f"{path}: refusing unsafe member {member.name!r} ({problem}); nothing extracted")
            for member in members:
                tar.extract(member, root, filter="data") if hasattr(tarfile, "data_filter") else tar.extract(member, root)
    except (tarfile.TarError, EOFError, OSError, zlib.error) as error:
        raise ArchiveError(f"{path}: not a readable model archive ({error.__class__.__name__}: {error})") from None
    return root


def _unsafe(member: tarfile.TarInfo, root: Path) -> str | None:
    """Why extracting ``member`` under ``root`` would be unsafe, or None. Only plain files and
    folders whose path stays inside ``root`` are extracted: no links, devices or fifos."""
    name = member.name
    if name.startswith(("/", "\\")) or Path(name).is_absolute() or (len(name) > 1 and name[1] == ":"):
        return "absolute path"
    if ".." in Path(name).parts:
        return "path leads outside the archive folder"
    if not (root / name).resolve().is_relative_to(root):
        return "path leads outside the archive folder"
    if member.issym() or member.islnk():
        return "links are not allowed"
    if not (member.isfile() or member.isdir()):
        return "only regular files and folders are allowed"
    return None


def _read_json(file: Path, archive: Path) -> Any:
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise ArchiveError(f"{archive}: {file.name} is not valid JSON ({error})") from None


def _read_meta(root: Path, archive: Path) -> dict[str, Any]:
    meta = _read_json(root / "meta.json", archive)
    if not isinstance(meta, dict):
        raise ArchiveError(f"{archive}: meta.json must hold a JSON object")
    version = meta.get("archive_format", 1)
    if not isinstance(version, int) or version > ARCHIVE_FORMAT:
        raise ArchiveError(
            f"{archive}: archive format {version!r} is newer than this distrain reads ({ARCHIVE_FORMAT}); upgrade distrain"
        )
    return meta


def load_archive(path: str | Path, overrides: dict[str, Any] | None = None) -> Archive:
    """The model (best weights, eval mode), its config and vocabulary from a ``model.tar.gz``."""
    from distrain.training.checkpointing import CheckpointError, load_state_file

    from distrain.config.loading import apply_overrides
    from distrain.data.vocabulary import Vocabulary
    from distrain.experiment.plan import resolve_experiment
    from distrain.plugins import import_builtins

    from distrain.experiment.archive.allennlp import is_allennlp_archive, load_allennlp_archive
    from distrain.experiment.archive.pretrained_files import DamagedPretrainedFiles, restore_pretrained_files
    from distrain.pretrained import weights_elsewhere

    import_builtins()  # the archived config names built-in components by their registered names
    with tempfile.TemporaryDirectory(prefix="distrain-archive-") as folder:
        root = extract_archive(path, folder)
        if is_allennlp_archive(root, WEIGHTS_NAME):
            model, config, vocab = load_allennlp_archive(root, Path(path), overrides or {}, ArchiveError)
            return Archive(model, config, vocab, {"format": "allennlp", **_allennlp_meta(root)})
        for required in ("config.json", WEIGHTS_NAME, "vocabulary", "meta.json"):
            if not (root / required).exists():
                raise ArchiveError(f"{path}: archive has no {required}")
        meta = _read_meta(root, Path(path))
        saved_config = _read_json(root / "config.json", Path(path))
        if not isinstance(saved_config, dict):
            raise ArchiveError(f"{path}: config.json must hold a JSON object")
        # the carried tokenizers and configs replace the names trained from (overrides still win)
        try:
            config = apply_overrides(restore_pretrained_files(root, saved_config), overrides or {})
        except DamagedPretrainedFiles as error:
            raise ArchiveError(f"{path}: {error}") from None
        try:
            vocab = Vocabulary.load(root / "vocabulary")
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise ArchiveError(f"{path}: unreadable vocabulary ({error.__class__.__name__}: {error})") from None
        base = meta.get("adapter_base")
        if base is not None:  # the frozen base is read from its folder, which must hold what was trained on
            key_path, name = _verified_base(base, Path(path))
            _set_path(config, key_path, name)
        experiment = resolve_experiment(config).build()
        # the archive's weights replace any pretrained ones: none are read (an adapter's base aside)
        with weights_elsewhere() if base is None else contextlib.nullcontext():
            model = experiment.model.construct(vocab=vocab)
        weights = root / WEIGHTS_NAME
        _check_safetensors(weights, path)
        try:
            # an adapter's archive leaves out the frozen base (checked by load_state_file), read above
            model.load_state_dict(load_state_file(weights, model), strict=not model.frozen_state_names)
        except CheckpointError as error:
            raise ArchiveError(f"{path}: {str(error).replace(str(weights) + ': ', '', 1)}") from None
        except RuntimeError as error:  # torch's size mismatches, one line per weight: name the first
            details = [line.strip() for line in str(error).splitlines()[1:] if line.strip()]
            first = details[0] if details else str(error).strip()
            more = f" (and {len(details) - 1} more)" if len(details) > 1 else ""
            raise ArchiveError(f"{path}: weights do not fit the model: {first}{more}") from None
    model.eval()
    return Archive(model, config, vocab, meta)


def _allennlp_meta(root: Path) -> dict[str, Any]:
    """AllenNLP's meta.json (its version), when the archive has a readable one."""
    try:
        meta = json.loads((root / "meta.json").read_text("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def _set_path(config: dict[str, Any], key_path: list[str], value: str) -> None:
    for key in key_path[:-1]:
        config = config[key]
    config[key_path[-1]] = value


def _check_safetensors(weights: Path, archive: Path) -> None:
    """A safetensors file starts with an 8-byte header length and a JSON header; a pickle does not."""
    with open(weights, "rb") as handle:
        head = handle.read(9)
    if len(head) < 9 or head[8:9] != b"{":
        raise ArchiveError(f"{archive}: {WEIGHTS_NAME} is not a safetensors file (refusing to unpickle it)")


def self_contained_config(config: dict[str, Any], model: Any) -> dict[str, Any]:
    """The config an archive of ``model`` keeps: a ``from_archive`` block replaced by the model block it loaded, so
    the archive needs no other archive to load."""
    archived = getattr(model, "archived_model_config", None)
    return config if archived is None else {**config, "model": archived}
