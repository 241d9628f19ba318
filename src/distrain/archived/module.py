"""AllenNLP's ``{"_pretrained": {"archive_file", "module_path", "freeze"}}``: in place of any module's block, that
module of a trained model's archive, its weights as trained (``module_path`` ``""``: the whole model).

The config schema reads such a block (see :func:`distrain.config.schema.resolve_object`) as one for
:class:`ArchivedModule`, whose constructor returns the module itself. ``freeze`` (AllenNLP's default: true) turns
off its parameters' gradients. The archive is distrain's or AllenNLP's; ``module_path`` names a module as either
names it (``_text_field_embedder`` or ``text_field_embedder``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from distrain.config.errors import Problem
from distrain.config.schema import build_pretrained_with


class ArchiveFileArgument:
    """A component built from ``archive_file``: a file that is not there is said at validation, under its key."""

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        if not Path(arguments["archive_file"]).is_file():
            return [Problem("archive_file", f"{arguments['archive_file']} does not exist")]
        return []


class ArchivedModule(ArchiveFileArgument):
    """The module at ``module_path`` of the model in ``archive_file``."""

    runtime_args = ()

    def __init__(self, archive_file: str, module_path: str, freeze: bool = True) -> None:  # the schema
        raise AssertionError("unreachable: __new__ returns the archived module")

    def __new__(cls, archive_file: str, module_path: str, freeze: bool = True) -> Any:
        from distrain.experiment.archive.allennlp import translate_name
        from distrain.experiment.archive.format import load_archive

        model = load_archive(archive_file).model
        modules = dict(model.named_modules())
        name = module_path if module_path in modules else translate_name(model, module_path)
        if name not in modules:
            raise ValueError(f"the model in {archive_file} has no module {module_path!r}")
        module = modules[name]
        module.requires_grad_(not freeze)
        module.train()
        return module


build_pretrained_with(ArchivedModule)
