"""Model base: ``forward(**batch)`` returns a dict with ``"loss"`` when labels are given.

Metrics are declared in ``self.metrics`` (name → :class:`Metric`, usually from the config);
:meth:`get_metrics` reads them all, reducing across workers.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping

import torch

from distrain.config.errors import Problem
from distrain.data.vocabulary import Vocabulary
from distrain.metrics.metric import Metric
from distrain.registry import Registrable


@dataclass
class TransformersModel:
    """A model as plain ``transformers`` holds it (see :meth:`Model.to_transformers`): the Auto class that loads
    it, the model (adapters merged), and distrain's own logits for token ids, which the export checks it gives."""

    auto_class: str
    model: Any
    logits: Callable[[torch.Tensor], torch.Tensor]


class Model(torch.nn.Module, Registrable):
    runtime_args = ("vocab",)
    #: the adapter injected into this model's transformer (see :mod:`distrain.modules.adapter`), if any
    adapter: Any = None
    #: the pretrained folder an adapted model's frozen base comes from (its hash goes into archives)
    adapter_base: str | None = None
    #: state names checkpoints and archives leave out: the frozen base, loaded again from ``adapter_base``
    frozen_state_names: frozenset[str] = frozenset()

    def __init__(self, vocab: Vocabulary, metrics: dict[str, Metric] | None = None, regularizer: Any = None,
                 serialization_dir: str | None = None, ddp_accelerator: Any = None) -> None:
        """``metrics`` are distrain's; the rest is AllenNLP's ``Model`` signature for users' models that call
        ``super().__init__(vocab, regularizer)``: a regularizer given here (positionally too: it is no mapping of
        metrics) is the run's unless the config's ``model.regularizer`` gives one; the other two are accepted."""
        super().__init__()
        if metrics is not None and not isinstance(metrics, Mapping):
            metrics, regularizer = None, metrics
        self.vocab = vocab
        self.metrics: dict[str, Metric] = dict(metrics or {})
        self._regularizer = regularizer
        self.serialization_dir = serialization_dir

    def get_regularization_penalty(self) -> torch.Tensor | None:
        """AllenNLP's: the penalty of this model's own regularizer (None without one). distrain's loop adds its
        gradient after averaging instead of adding it to the loss; this is for users' code that reads it."""
        return None if self._regularizer is None else self._regularizer(self)

    def __setattr__(self, name: str, value: Any) -> None:
        # AllenNLP models keep metrics as attributes (``self.accuracy = CategoricalAccuracy()``); listing
        # them in self.metrics too lets the trainer freeze them for placeholder batches and checkpoint them
        super().__setattr__(name, value)
        if isinstance(value, Metric) and name != "metrics" and isinstance(self.__dict__.get("metrics"), dict):
            self.metrics.setdefault(name, value)

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        """AllenNLP's usual chain, checked for any model whose constructor takes one text-field embedder and
        at most one seq2seq and one seq2vec encoder: each stated input width must be what the one before gives."""
        from distrain.config.lazy import Lazy
        from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
        from distrain.modules.seq2vec_encoder import Seq2VecEncoder
        from distrain.modules.sizes import chain_problems, output_dim
        from distrain.modules.text_field_embedder import TextFieldEmbedder

        found: dict[type, list[str]] = {TextFieldEmbedder: [], Seq2SeqEncoder: [], Seq2VecEncoder: []}
        for name, value in arguments.items():
            for base, names in found.items():
                if isinstance(value, Lazy) and isinstance(value.cls, type) and issubclass(value.cls, base):
                    names.append(name)
        embedders, seq2seq, seq2vec = found.values()
        if len(embedders) != 1 or len(seq2seq) > 1 or len(seq2vec) > 1:
            return []
        stages = [(name, arguments[name]) for name in seq2seq + seq2vec]
        return chain_problems(stages, output_dim(arguments[embedders[0]]), f"the {embedders[0]}")[0]

    def use_label_names(self, namespace: str) -> None:
        """Tell every metric the names of the class indices, so configs may name labels
        (``"positive_label": "positive"``) and per-label results carry names, not numbers."""
        from distrain.config.errors import ConfigError, Problem

        names = self.vocab.tokens(namespace) if namespace in self.vocab.namespaces() else []
        problems = []
        for metric_name, metric in self.metrics.items():
            try:
                metric.set_label_names(names)
            except ValueError as error:
                problems.append(Problem(f"model.metrics.{metric_name}", str(error)))
        if problems:
            raise ConfigError(problems)

    def forward(self, **inputs: Any) -> dict[str, torch.Tensor]:  # pragma: no cover - abstract
        raise NotImplementedError

    def shard_units(self) -> list[str]:
        """Module-name patterns (see :mod:`distrain.modules.selection`) of the parts a sharding
        strategy shards as units, deepest first, the root last; ``[]``: the whole model is one unit.
        Each unit's parameters are gathered just before it runs and freed after, so units are
        usually the repeated blocks (transformer layers). Parameters shared between modules (tied
        weights) must stay within one unit."""
        return []

    def activation_checkpoint_units(self) -> tuple[list[str], bool]:
        """Module-name patterns of the blocks this model itself asks to recompute in backward (AllenNLP's
        ``checkpoint_wrapper`` model argument), and whether their saved tensors go to host memory;
        ``parallelize`` applies them as it applies the trainer's ``activation_checkpointing``. ``[]``: none."""
        return [], False

    def tensor_parallel_plan(self) -> dict[str, str]:
        """Module-name patterns of the linear layers tensor parallelism splits, each ``"colwise"``
        (output features split: attention heads, the first feed-forward layer) or ``"rowwise"``
        (input features split, outputs summed: the layer after a colwise one). ``{}``: this model
        cannot be split by layer. ``distributed.tensor_parallel_plan`` overrides it."""
        return {}

    def tensor_parallel_sizes(self) -> dict[str, int]:
        """Named sizes the tensor-parallel degree must divide (attention heads, hidden widths)."""
        return {}

    def context_length(self) -> int | None:
        """The longest sequence the model can read (its position embeddings); None: no such limit.
        A reader's ``sequence_length`` beyond it is reported before any data is read."""
        return None

    def pipeline_units(self) -> list[str]:
        """Module names, in forward order, of the units pipeline parallelism places on its stages
        (each stage a contiguous run); ``[]``: this model cannot be pipelined. A model that declares
        units also implements :meth:`pipeline_inputs`, :meth:`pipeline_unit` and :meth:`pipeline_loss`."""
        return []

    def pipeline_inputs(self, **batch: Any) -> tuple[torch.Tensor, ...]:
        """What the first unit receives from a batch (the labels stay with the last stage)."""
        raise NotImplementedError

    def pipeline_unit(self, name: str, *carried: torch.Tensor) -> torch.Tensor | tuple[torch.Tensor, ...]:
        """Run unit ``name`` on what the previous unit returned (default: call the module)."""
        return self.get_submodule(name)(*carried)

    def pipeline_loss(self, outputs: tuple[torch.Tensor, ...], label: torch.Tensor) -> torch.Tensor:
        """The mean loss of one micro-batch from the last unit's outputs (metrics updated here)."""
        raise NotImplementedError

    def to_transformers(self) -> TransformersModel:
        """This model as a plain ``transformers`` model with its weights (``distrain export``); a model with no
        transformers equivalent raises :class:`~distrain.errors.NotExportable` saying why."""
        from distrain.errors import NotExportable

        raise NotExportable(f"{type(self).__name__} has no transformers equivalent: it is built from distrain's own "
                            "modules, which no transformers Auto class loads")

    def get_metrics(self, reset: bool = False) -> dict[str, float]:
        """Every metric's value; a metric returning a dict contributes one entry per key."""
        values: dict[str, float] = {}
        for name, metric in self.metrics.items():
            value = metric.get_metric(reset)
            if isinstance(value, dict):
                values.update({f"{name}_{key}" if key else name: v for key, v in value.items()})
            else:
                values[name] = value
        return values

    # ---------------------------------------------------------------- predict and serve
    def prediction_reader(self, reader: Any) -> Any:
        """The reader ``distrain predict`` and ``distrain serve`` read inputs with, given the one the
        model is validated with: that one, unless the model predicts from other inputs (a language
        model validates on text and continues prompts)."""
        return reader

    def predict(self, inputs: dict[str, Any]) -> list[dict[str, Any]]:
        """One JSON-able output per item of a batch of inputs (on the model's device): by default the
        forward pass, made readable by :meth:`make_output_human_readable`."""
        output = self(**inputs)
        readable = self.make_output_human_readable({k: v.cpu() if isinstance(v, torch.Tensor) else v
                                                    for k, v in output.items()})
        return per_item(readable) if isinstance(readable, dict) else readable

    def forward_on_instances(self, instances: list[Any]) -> list[dict[str, Any]]:
        """AllenNLP's: the readable outputs of one forward pass over ``instances``, one dict per instance (see
        :func:`forward_on_instances`); what AllenNLP's predictors answer."""
        return forward_on_instances(self, instances)

    def forward_on_instance(self, instance: Any) -> dict[str, Any]:
        return forward_on_instances(self, [instance])[0]

    def make_output_human_readable(self, output: dict[str, torch.Tensor]) -> list[dict[str, Any]]:
        """One JSON-able dict per item of the batch (used by ``distrain predict``)."""
        size = next((v.shape[0] for v in output.values() if isinstance(v, torch.Tensor) and v.dim()), 0)
        return [
            {key: value[i].tolist() for key, value in output.items() if isinstance(value, torch.Tensor) and value.dim()}
            for i in range(size)
        ]

    @contextlib.contextmanager
    def metrics_frozen(self) -> Iterator[None]:
        """Run a forward pass whose batch must not count (a worker's zero-weight placeholder)."""
        saved = {name: metric.state() for name, metric in self.metrics.items()}
        try:
            yield
        finally:
            for name, state in saved.items():
                self.metrics[name].load_state(state)


def per_item(output: dict[str, Any]) -> list[dict[str, Any]]:
    """AllenNLP's form of ``make_output_human_readable`` (one dict of batched values) as one JSON-able dict per
    item: each tensor or list as long as the batch is split along its first axis; other values (the batch's
    0-d loss among them) are dropped."""
    batched = {key: value for key, value in output.items()
               if isinstance(value, list) or isinstance(value, torch.Tensor) and value.dim() > 0}
    sizes = [len(value) for value in batched.values() if len(value)]
    size = sizes[0] if sizes else 0
    items: list[dict[str, Any]] = [{} for _ in range(size)]
    for key, value in batched.items():
        if len(value) == size:
            for item, row in zip(items, value):
                item[key] = row.tolist() if isinstance(row, torch.Tensor) else row
    return items


def forward_batch(model: Model, instances: list[Any]) -> dict[str, Any]:
    """The model's raw outputs on ``instances`` as one batch (indexed with its vocabulary, on its device, without
    gradients): what a predictor that reads more than the readable outputs starts from."""
    import numpy as np

    from distrain.data.dataset import IndexedDataset
    from distrain.data.loader import to_device

    dataset = IndexedDataset.from_instances(instances, model.vocab)
    parameter = next(model.parameters(), None)
    inputs = to_device(dataset.batch(np.arange(len(instances))), "cpu" if parameter is None else parameter.device)
    with torch.no_grad():
        return model(**inputs)


def forward_on_instances(model: Model, instances: list[Any]) -> list[dict[str, Any]]:
    """AllenNLP's ``Model.forward_on_instances``: the instances indexed with the model's vocabulary, one forward
    pass without gradients, made readable, and split per instance. A tensor as long as the batch gives each
    instance its row (a numpy array), a list its item; anything else is left out (the 0-d loss, except that a
    batch of one keeps it, as AllenNLP's does). A readable form of distrain's own kind (one dict per item) is laid
    over the forward pass's split outputs."""
    size = len(instances)
    output = forward_batch(model, instances)
    readable = model.make_output_human_readable(
        {key: value.cpu() if isinstance(value, torch.Tensor) else value for key, value in output.items()})
    separated = _separated(readable if isinstance(readable, dict) else output, size)
    if not isinstance(readable, dict):
        for item, extra in zip(separated, readable):
            item.update(extra)
    return separated


def _separated(output: dict[str, Any], size: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [{} for _ in range(size)]
    for name, value in output.items():
        if isinstance(value, torch.Tensor):
            value = value.unsqueeze(0) if value.dim() == 0 else value
            if value.size(0) != size:
                continue
            value = value.detach().cpu().numpy()
        elif not hasattr(value, "__len__") or len(value) != size:
            continue
        for item, row in zip(items, value):
            item[name] = row
    return items
