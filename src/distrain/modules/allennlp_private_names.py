"""AllenNLP's modules keep their parts under private names (``_gate``, ``_layers``, ``_start_sentinel``) where
distrain's drop the underscore (``gate``, ``layers``, ``start_sentinel``). A module with this mixin gives its part
when read under AllenNLP's name, so code that reaches into a module AllenNLP's way (to set a weight by hand, to
read a sentinel) still works. Only parameters, buffers and submodules are found so: no other attribute, and
nothing is ever set under the private name."""

from __future__ import annotations

from typing import Any

import torch


class AllenNlpPrivateNames(torch.nn.Module):
    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name.startswith("_") and not name.startswith("__"):
                for store in ("_parameters", "_buffers", "_modules"):
                    parts = self.__dict__.get(store, {})
                    if name[1:] in parts and parts[name[1:]] is not None:
                        return parts[name[1:]]
            raise
