"""``distrain export``: an archive as a folder plain ``transformers`` (or ``peft``) loads.

The model says what it is in transformers (:meth:`~distrain.models.model.Model.to_transformers`: the Auto
class and a plain model with its weights) or refuses; the export checks that the plain model's logits
are distrain's on a probe batch before anything is written, then writes the folder (``save_pretrained``:
config, safetensors; the tokenizer the archive carries) beside ``OUT`` and renames it into place, so
``OUT`` is whole or untouched. An adapted model exports merged (``merge_adapters``) or as a PEFT adapter
folder naming its base folder, which ``PeftModel.from_pretrained`` applies to the base.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import torch

from distrain.errors import BadInput, NotExportable

#: how far the exported model's logits may be from distrain's on the probe batch
TOLERANCE = 1e-5


def export_archive(archive_path: str | Path, out: str | Path, merge_adapters: bool = False,
                   force: bool = False) -> str:
    """Write ``out`` from the archive; returns what it holds, in words."""
    from distrain.experiment.archive.format import load_archive

    out = Path(out)
    if out.exists() and not force and (not out.is_dir() or any(out.iterdir())):
        raise BadInput(f"{out}: exists and is not empty; give --force to replace it")
    archive = load_archive(archive_path)
    model = archive.model
    if model.adapter is not None and not merge_adapters:
        write, what = (lambda folder: _write_adapter(model, folder)), "a PEFT adapter folder"
    else:
        write, what = (lambda folder: _write_plain(model, folder)), None
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.tmp-"))
    try:
        described = write(staging)
        tokenizer = _tokenizer(archive.config)
        if tokenizer is not None:
            tokenizer.save_pretrained(str(staging))
        _replace(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return what or described


def _replace(staging: Path, out: Path) -> None:
    """Move ``staging`` to ``out``; an existing ``out`` (allowed by --force) is moved aside first, removed after."""
    aside = None
    if out.exists():
        aside = out.with_name(f".{out.name}.old-{staging.name}")
        out.rename(aside)
    staging.rename(out)
    if aside is not None:
        shutil.rmtree(aside, ignore_errors=True) if aside.is_dir() else aside.unlink()


def probe_ids(model: Any, vocab_size: int) -> torch.Tensor:
    """Two rows of token ids, none of them the model's padding id."""
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(1, max(2, min(vocab_size, 1000)), (2, 12), generator=generator)
    pad = getattr(model, "pad_token_id", None)
    if isinstance(pad, int):
        ids[ids == pad] = pad + 1 if pad + 1 < vocab_size else pad - 1
    return ids


def _check(name: str, expected: torch.Tensor, got: torch.Tensor) -> None:
    difference = float((expected.float() - got.float()).abs().max())
    if not difference <= TOLERANCE * max(1.0, float(expected.abs().max())):
        raise NotExportable(f"{name} does not give distrain's logits (they differ by up to {difference:.1e})")


def _write_plain(model: Any, folder: Path) -> str:
    exported = model.to_transformers()
    ids = probe_ids(model, exported.model.config.vocab_size)
    with torch.no_grad():
        _check(type(exported.model).__name__, exported.logits(ids), exported.model(input_ids=ids).logits)
    exported.model.save_pretrained(str(folder))
    return f"a {type(exported.model).__name__} folder (transformers.{exported.auto_class})"


def _write_adapter(model: Any, folder: Path) -> str:
    """The adapter alone, as peft writes it, naming the base folder; for models whose trained part is all
    inside the transformers model (a causal LM: no head of distrain's own)."""
    from distrain.pretrained import load_model

    if model.adapter_base is None:
        raise NotExportable("the adapter's base was built from a config, not loaded from a folder a PEFT adapter "
                            "can name; export with --merge-adapters")
    transformer = next(module for module in model.modules() if hasattr(module, "peft_config"))
    prefix = next(name for name, module in model.named_modules() if module is transformer)
    own = [name for name, parameter in model.named_parameters()
           if parameter.requires_grad and not name.startswith(prefix + ".")]
    if own:
        raise NotExportable(f"{type(model).__name__} trains a head of distrain's own ({', '.join(own)}), which a "
                            "PEFT adapter cannot carry; export with --merge-adapters")
    from peft import get_peft_model

    exported = model.to_transformers()
    base = load_model(model.adapter_base, exported.auto_class)
    peft_model = get_peft_model(base, model.adapter.peft_config(base))
    ours = dict(transformer.named_parameters())
    with torch.no_grad():
        for name, parameter in peft_model.named_parameters():
            if ".lora_" in name:
                parameter.copy_(ours[name.removeprefix("base_model.model.")])
    peft_model.eval()
    ids = probe_ids(model, base.config.vocab_size)
    with torch.no_grad():
        _check("the PEFT model", exported.logits(ids), peft_model(input_ids=ids).logits)
    peft_model.save_pretrained(str(folder))
    return "a PEFT adapter folder"


def _tokenizer(config: dict[str, Any]) -> Any:
    """The first tokenizer the archived config names (the archive carries it), or None."""
    from distrain.experiment.archive.pretrained_files import tokenizer_or_none, pretrained_references
    from distrain.experiment.plan import resolve_experiment

    for _, name in pretrained_references(resolve_experiment(config).plan):
        tokenizer = tokenizer_or_none(name)
        if tokenizer is not None:
            return tokenizer
    return None
