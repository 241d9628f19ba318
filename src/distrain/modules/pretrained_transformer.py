"""A pretrained (or config-built) transformer encoder over token ids: the ``transformers`` AutoModel."""

from __future__ import annotations

from typing import Any

import torch


class PretrainedTransformerEncoder(torch.nn.Module):
    """Token ids and mask in, one vector per token out (``output_dim`` wide).

    ``model_name`` loads pretrained weights; ``config`` (a config object) builds a random init. The
    transformer's own pooler is dropped, or with ``keep_pooler`` moved to :attr:`pooler` for a model that
    uses it (None where the architecture has none)."""

    def __init__(self, model_name: str | None = None, config: Any = None, gradient_checkpointing: bool = False,
                 keep_pooler: bool = False) -> None:
        super().__init__()
        if (model_name is None) == (config is None):
            raise ValueError("give exactly one of model_name and config")
        if model_name is not None:
            from distrain.pretrained import load_model

            self.transformer = load_model(model_name)
        else:
            from distrain.pretrained import model_from_config

            self.transformer = model_from_config(config)
        pooler = getattr(self.transformer, "pooler", None)
        #: kept outside this module: a model that uses it holds it (see ``keep_pooler``)
        self.__dict__["pooler"] = pooler if keep_pooler else None
        if pooler is not None:
            # BERT's pooler feeds only next-sentence prediction; unused, it would stall DDP (which
            # waits for a gradient for every parameter) and waste memory.
            self.transformer.pooler = None
        if gradient_checkpointing:
            self.transformer.gradient_checkpointing_enable()
        self.output_dim = self.transformer.config.hidden_size

    def layer_patterns(self, prefix: str) -> list[str]:
        """Patterns naming the repeated blocks (the first ``ModuleList`` called ``layer``, ``layers``,
        ``h`` or ``block``), as seen from the model that holds this encoder at ``prefix``."""
        for name, module in self.transformer.named_modules():
            if isinstance(module, torch.nn.ModuleList) and name.rpartition(".")[2] in ("layer", "layers", "h", "block"):
                return [f"{prefix}.transformer.{name}.*"]
        return []

    def tensor_parallel_plan(self, prefix: str) -> dict[str, str]:
        """BERT-style layers (``attention.self.query/key/value``, ``attention.output.dense``,
        ``intermediate.dense``, ``output.dense``): the attention heads and the feed-forward hidden
        units are split, each block's output summed; other architectures declare none."""
        patterns = self.layer_patterns(prefix)
        layers = getattr(getattr(self.transformer, "encoder", None), "layer", None)
        if not patterns or not layers or not hasattr(getattr(layers[0], "attention", None), "self"):
            return {}
        layer = patterns[0]
        return {
            f"{layer}.attention.self.query": "colwise",
            f"{layer}.attention.self.key": "colwise",
            f"{layer}.attention.self.value": "colwise",
            f"{layer}.attention.output.dense": "rowwise",
            f"{layer}.intermediate.dense": "colwise",
            f"{layer}.output.dense": "rowwise",
        }

    def tensor_parallel_sizes(self) -> dict[str, int]:
        config = self.transformer.config
        return {name: getattr(config, name) for name in ("num_attention_heads", "hidden_size", "intermediate_size")
                if isinstance(getattr(config, name, None), int)}

    def forward(self, token_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.transformer(input_ids=token_ids, attention_mask=mask.long()).last_hidden_state


def plain_with_base(auto_class: str, config: Any,
                    transformer: torch.nn.Module) -> tuple[Any, list[tuple[str, torch.nn.Parameter]]]:
    """A fresh ``transformers.<auto_class>`` of ``config`` whose base model holds ``transformer``'s weights
    (adapters merged), and the parameters it still lacks, in its own order: its task head, for the caller."""
    from distrain.errors import NotExportable
    from distrain.modules.adapter import merged_state
    from distrain.pretrained import model_from_config

    plain = model_from_config(config, auto_class)
    base = plain.base_model
    loaded = base.load_state_dict(merged_state(transformer), strict=False)
    if loaded.unexpected_keys:
        raise NotExportable(f"{type(plain).__name__}'s base model has no {', '.join(loaded.unexpected_keys[:3])}")
    prefix = next(name for name, module in plain.named_modules() if module is base)
    given = {f"{prefix}.{name}" if prefix else name for name in base.state_dict() if name not in loaded.missing_keys}
    rest = [(name, parameter) for name, parameter in plain.named_parameters() if name not in given]
    return plain, rest


def copy_by_shape(targets: list[tuple[str, torch.nn.Parameter]], sources: list[torch.Tensor], what: str) -> None:
    """Copy ``sources`` into ``targets``, matched by shape, in order within each shape (a head's weights
    registered in the same order in both); anything left unmatched: :class:`~distrain.errors.NotExportable`."""
    from distrain.errors import NotExportable

    remaining = list(sources)
    with torch.no_grad():
        for name, target in targets:
            index = next((i for i, source in enumerate(remaining) if source.shape == target.shape), None)
            if index is None:
                raise NotExportable(f"{what}: {name} {tuple(target.shape)} has no counterpart in distrain's head")
            target.copy_(remaining.pop(index))
    if remaining:
        raise NotExportable(f"{what}: {len(remaining)} of distrain's head weights have no counterpart")


class EncoderParallelism:
    """The parallel plan of a model that holds a :class:`PretrainedTransformerEncoder` as ``encoder``: the
    model's side of :class:`~distrain.models.model.Model`'s ``shard_units`` and ``tensor_parallel_*``, put
    before ``Model`` among its bases."""

    encoder: PretrainedTransformerEncoder

    def shard_units(self) -> list[str]:
        """The transformer's layers (the embeddings stay with the root, beside what reuses them)."""
        return self.encoder.layer_patterns("encoder")

    def tensor_parallel_plan(self) -> dict[str, str]:
        """The encoder's attention heads and feed-forward units (see the encoder's plan)."""
        return self.encoder.tensor_parallel_plan("encoder")

    def tensor_parallel_sizes(self) -> dict[str, int]:
        return self.encoder.tensor_parallel_sizes()
