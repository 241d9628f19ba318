"""AllenNLP's combination strings (``"x,y,x*y"``): how two tensors ``x`` and ``y`` of the same width are
joined before a linear layer or a span representation, parsed once, when the component is built.

Each comma-separated piece is ``x``, ``y`` or ``a?b`` with ``?`` one of ``* / + -`` (elementwise). A
config's string is checked by :data:`Combination`, so a bad one is a config problem with its key path.
"""

from __future__ import annotations

from typing import Annotated

import torch

from distrain.config.constraints import Must

_OPERATIONS = {
    "*": torch.mul,
    "/": torch.div,
    "+": torch.add,
    "-": torch.sub,
}


def _pieces(combination: str) -> list[str]:
    return combination.replace(" ", "").split(",")


def is_combination(combination: str) -> bool:
    """Whether every piece is ``x``, ``y`` or ``a?b`` with ``a``, ``b`` in x/y and ``?`` in ``* / + -``."""
    return all(piece in ("x", "y") or (len(piece) == 3 and piece[0] in "xy" and piece[2] in "xy"
                                       and piece[1] in _OPERATIONS) for piece in _pieces(combination))


Combination = Annotated[str, Must('be pieces like "x", "y", "x*y", "x-y" (operations * / + -) joined by commas',
                                  is_combination)]


def combined_dim(combination: str, dim: int) -> int:
    """The width of the joined tensor: every piece is ``dim`` wide."""
    return dim * len(_pieces(combination))


def _piece(piece: str, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    tensors = {"x": x, "y": y}
    if piece in tensors:
        return tensors[piece]
    return _OPERATIONS[piece[1]](tensors[piece[0]], tensors[piece[2]])


def combine(combination: str, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The pieces side by side on the last dimension (AllenNLP's ``combine_tensors``)."""
    return torch.cat([_piece(piece, x, y) for piece in _pieces(combination)], dim=-1)


def combine_and_multiply(combination: str, x: torch.Tensor, y: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """``combine(x, y) @ weight`` for ``x`` and ``y`` that broadcast against each other (a (…, n, 1, d) and a
    (…, 1, m, d) give (…, n, m)), without materialising the broadcast concatenation: piece by piece, as
    AllenNLP's ``combine_tensors_and_multiply``."""
    total, offset = None, 0
    for piece in _pieces(combination):
        width = x.size(-1) if piece == "x" else y.size(-1)
        part, offset = weight[offset: offset + width], offset + width
        if piece in ("x", "y"):
            value = torch.matmul(x if piece == "x" else y, part)
        elif piece[1] in "+-":
            first, second = (x if piece[0] == "x" else y), (x if piece[2] == "x" else y)
            value = _OPERATIONS[piece[1]](torch.matmul(first, part), torch.matmul(second, part))
        else:
            value = (_piece(piece, x, y) * part).sum(-1)
        total = value if total is None else total + value
    return total
