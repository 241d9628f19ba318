"""Split single layers across the tensor-parallel ranks (DTensor colwise/rowwise, ``parallelize_module``).

The model declares its plan (:meth:`~distrain.models.model.Model.tensor_parallel_plan`: module-name
patterns to ``colwise`` or ``rowwise``), or the config overrides it (``tensor_parallel_plan``). A
colwise linear keeps a slice of the output features (its attention heads, its part of the hidden
layer) and a rowwise linear the matching slice of the input features; its outputs are summed over
the tensor-parallel ranks, so every rank sees the same activations between the split pairs, and the
loss and its gradients are those of the whole layer. Parameters outside the plan stay whole on
every rank, with identical gradients.

A ``transformers`` model brings its own plan (its config's ``base_model_tp_plan``, written in
transformers' style names); :func:`from_transformers_plan` translates it, so no architecture's layer
names live in distrain.

Ranks that share a data-parallel coordinate compute the same loss and metrics; only the first
tensor-parallel rank of the last pipeline stage counts them (see
:func:`distrain.distributed.collectives.counted`), so each sample counts once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Literal, Mapping

import torch

from distrain.config.errors import Problem

Style = Literal["colwise", "rowwise"]


#: transformers' style names distrain serves, and what each becomes. Their ``colwise`` and ``rowwise`` are
#: the same DTensor layouts as ours (colwise: input replicated, output split on its last dimension;
#: rowwise: input split on its last dimension, outputs summed to a replicated result); ``replicate``
#: keeps the module whole, as distrain keeps every module outside its plan (None: left out).
TRANSFORMERS_STYLES: dict[str, str | None] = {"colwise": "colwise", "rowwise": "rowwise", "replicate": None}


class UnservablePlan(ValueError):
    """A model's declared plan asks for what distrain cannot apply; one reason per entry."""

    def __init__(self, reasons: list[str]) -> None:
        super().__init__("; ".join(reasons))
        self.reasons = reasons


def from_transformers_plan(plan: Mapping[str, str], prefix: str, source: str) -> dict[str, str]:
    """transformers' plan (module patterns relative to the base model, ``*`` for a layer number) as
    distrain's: each pattern under ``prefix`` (the base model's path in the distrain model), each
    style translated. A style distrain cannot serve (packed, expert or gathered-output layouts, norms
    that need their gradients summed) raises :class:`UnservablePlan` naming it and ``source``."""
    translated: dict[str, str] = {}
    refused = []
    for pattern, style in plan.items():
        if style not in TRANSFORMERS_STYLES:
            refused.append(f"{source} splits {pattern!r} as {style!r}, a style distrain cannot apply (it applies "
                           f"{', '.join(TRANSFORMERS_STYLES)}); give distributed.tensor_parallel_plan instead")
        elif TRANSFORMERS_STYLES[style] is not None:
            translated[f"{prefix}.{pattern}" if prefix else pattern] = TRANSFORMERS_STYLES[style]
    if refused:
        raise UnservablePlan(refused)
    return translated


def declared_plan(model: torch.nn.Module) -> dict[str, str]:
    declared = getattr(model, "tensor_parallel_plan", None)
    return dict(declared()) if callable(declared) else {}


@dataclass(frozen=True)
class PlanOverride:
    """What the config says of the model's own plan: ``replace`` it whole (``tensor_parallel_plan``), or
    lay ``extend`` over it (``tensor_parallel_plan_overrides``: a pattern gets a new style or joins;
    style ``"none"`` leaves a pattern of the model's plan unsplit)."""

    replace: dict[str, str] | None = None
    extend: dict[str, str] | None = None

    def key(self, path: str) -> str:
        return f"{path}.tensor_parallel_plan" + ("" if self.replace is not None else "_overrides")


def resolved_plan(model: torch.nn.Module, override: PlanOverride | None) -> dict[str, str]:
    """The plan a split applies: the model's, replaced or extended by the config's."""
    if override is not None and override.replace is not None:
        return dict(override.replace)
    plan = declared_plan(model)
    for pattern, style in ((override.extend or {}) if override is not None else {}).items():
        if style == "none":
            plan.pop(pattern, None)
        else:
            plan[pattern] = style
    return plan


def declared_sizes(model: torch.nn.Module) -> dict[str, int]:
    declared = getattr(model, "tensor_parallel_sizes", None)
    return dict(declared()) if callable(declared) else {}


def plan_problems(model: torch.nn.Module, size: int, configured: PlanOverride | None,
                  path: str = "distributed") -> list[Problem]:
    """What stops ``model`` from being split over ``size`` tensor-parallel ranks: no plan, a pattern
    that matches nothing, a size (heads, hidden widths, a planned layer's features) ``size`` does not divide."""
    from distrain.modules.selection import select_modules

    replaced = configured is not None and configured.replace is not None
    where = configured.key(path) if replaced else f"{path}.tensor_parallel_size"
    try:
        plan = resolved_plan(model, configured)
    except UnservablePlan as error:
        return [Problem(where, reason) for reason in error.reasons]
    mine = set(configured.replace or configured.extend or {}) if configured is not None else set()
    if not plan:
        return [Problem(where, f"model {type(model).__name__} declares no tensor-parallel plan (it cannot be "
                        "split by layer); give distributed.tensor_parallel_plan or set tensor_parallel_size 1")]
    found = []
    for pattern, names in select_modules(model, plan).items():
        if not names:
            found.append(Problem(configured.key(path) if pattern in mine else "model",
                                 f"tensor-parallel pattern {pattern!r} matches no module of the model"))
        for name in names:
            module = model.get_submodule(name)
            if not isinstance(module, torch.nn.Linear):
                found.append(Problem(where, f"{name} ({pattern!r}) is a {type(module).__name__}; only Linear "
                                     "layers are split"))
                break
            features = module.out_features if plan[pattern] == "colwise" else module.in_features
            if features % size:
                found.append(Problem(f"{path}.tensor_parallel_size", f"{size} does not divide the "
                                     f"{features} {'output' if plan[pattern] == 'colwise' else 'input'} "
                                     f"features of {name} ({plan[pattern]})"))
                break
    for name, value in declared_sizes(model).items():
        if value % size:
            found.append(Problem(f"{path}.tensor_parallel_size",
                                 f"{size} does not divide the model's {name} ({value})"))
    return found


def apply_tensor_parallel(model: torch.nn.Module, mesh: Any, override: PlanOverride | None = None) -> list[str]:
    """Split the planned linears of ``model`` (in place, on its device) over the 1-D ``mesh``: the model's
    plan, replaced or extended by the config's ``override``. Returns their names; a plan that does not fit
    the model is a config error naming every problem."""
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

    from distrain.config.errors import ConfigError
    from distrain.modules.selection import select_modules

    problems = plan_problems(model, mesh.size(), override)
    if problems:
        raise ConfigError(problems)
    plan = resolved_plan(model, override)
    styles = {"colwise": ColwiseParallel, "rowwise": RowwiseParallel}
    names = {name: styles[plan[pattern]]() for pattern, matched in select_modules(model, plan).items()
             for name in matched}
    parallelize_module(model, mesh, names)
    return list(names)


def clip_grad_norm(parameters: Iterable[torch.nn.Parameter], max_norm: float) -> torch.Tensor:
    """Clip by the global norm when some gradients are DTensors (split layers) and some plain
    tensors (whole on every rank): each DTensor's norm is made whole, the plain ones count once."""
    from torch.distributed.tensor import DTensor
    from torch.nn.utils import get_total_norm

    parameters = [p for p in parameters if p.grad is not None]
    plain = [p.grad for p in parameters if not isinstance(p.grad, DTensor)]
    squares = [get_total_norm(plain) ** 2] if plain else []
    for p in parameters:
        if isinstance(p.grad, DTensor):
            norm = p.grad.norm()
            squares.append(norm.full_tensor() ** 2 if isinstance(norm, DTensor) else norm ** 2)
    total = torch.stack(squares).sum().sqrt() if squares else torch.zeros(())
    coefficient = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    with torch.no_grad():
        for p in parameters:
            p.grad.mul_(coefficient.to(p.grad.dtype).item())
    return total
