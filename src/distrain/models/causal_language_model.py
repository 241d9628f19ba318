"""Decoder language model: any ``transformers`` causal LM (llama, mistral, qwen2, gpt2, ...), pretrained or random.

``model_name`` loads a local folder (``from_pretrained``); ``config`` builds a random init of the
architecture it names (``{"model_type": "llama", "hidden_size": 64, ...}``, given to
``AutoConfig.for_model``). Models whose code is not part of transformers (a config with ``auto_map``,
an unknown ``model_type``) are refused when the config is validated: running them would mean
executing code downloaded with the weights.

The loss is the next-token cross-entropy, averaged over the tokens whose label is not -100 (the
labels are the inputs; the model shifts them), and their count is returned as ``loss_weight``, so the
trainer weights every token equally across workers, device shares and accumulation. Metrics:
``perplexity`` (exp of the token-weighted mean loss) and ``accuracy`` (of the next token), both held
as sums and counts. ``loss_chunk_size`` computes the output layer and the loss together, that many tokens
at a time (:mod:`distrain.modules.linear_cross_entropy`): the logits of the whole vocabulary are never
held for all tokens at once (the same loss; summed in another order, so not bitwise the unchunked one). The split hooks come from the architecture itself: its ``_no_split_modules``
name the FSDP units, its config's ``base_model_tp_plan`` the tensor-parallel plan.
"""

from __future__ import annotations

import re
from typing import Any, Literal, Mapping

import torch

from distrain.config.constraints import PositiveInt
from distrain.config.errors import ConfigError, Problem
from distrain.data.vocabulary import Vocabulary
from distrain.generation.decoding import GenerationSettings
from distrain.metrics.average import Average
from distrain.metrics.metric import Metric
from distrain.models.masked_language_model import TokenPerplexity
from distrain.models.model import Model, TransformersModel
from distrain.modules.adapter import Adapter, adapt
from distrain.modules.masking import IGNORE
from distrain.pretrained import PretrainedName


def architecture_problems(settings: Mapping[str, Any], path: str, source: str | None = None) -> list[Problem]:
    """Why transformers cannot build a causal LM from ``settings`` with its own code: remote code, an
    unknown or a non-causal architecture. ``source`` None: the settings are the config block at ``path``
    (a problem names its key); else they were read from ``source``, named by the value at ``path``."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    def problem(key: str, message: str) -> list[Problem]:
        return [Problem(path if source else f"{path}.{key}", message)]

    where = source or "config"
    if "auto_map" in settings:
        return problem("auto_map", f"{where} asks for remote code (auto_map); distrain runs only architectures "
                                   "that transformers ships, never code downloaded with a model")
    model_type = settings.get("model_type")
    if not isinstance(model_type, str) or not model_type:
        return problem("model_type", f'{where} names no model_type (an architecture transformers knows, e.g. "llama")')
    if model_type not in CONFIG_MAPPING_NAMES:
        from distrain.registry import suggest

        hint = suggest(model_type, sorted(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES))
        return problem("model_type", f"unknown architecture {model_type!r}: transformers does not ship it, and "
                                     "models that need remote code are refused"
                       + (f'; did you mean "{hint}"?' if hint else ""))
    if model_type not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        return problem("model_type", f"{model_type!r} has no causal language-model head in transformers")
    return []


def settings_problems(settings: Mapping[str, Any], path: str) -> list[Problem]:
    """Settings the architecture's config rejects (a wrong type, a broken rule between them) or does
    not know (transformers would keep a misspelled key silently and build the default instead)."""
    import dataclasses

    from transformers import AutoConfig

    from distrain.registry import suggest

    try:
        built = AutoConfig.for_model(**settings)
    except Exception as error:  # noqa: BLE001 - transformers' validation errors share no base class
        lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()] or [type(error).__name__]
        field = re.search(r"for field '(\w+)'", lines[0])
        reason = re.sub(r"^\w+Error: ", "", lines[-1])
        return [Problem(f"{path}.{field.group(1)}" if field else path, reason)]
    if not dataclasses.is_dataclass(built):
        return []
    fields = sorted(field.name for field in dataclasses.fields(built))
    kept = built.to_dict()  # keys transformers consumed (renamed, folded into others) are not kept
    return [Problem(f"{path}.{key}", f"not a setting of {type(built).__name__}"
                    + (f'; did you mean "{hint}"?' if (hint := suggest(key, fields)) else ""))
            for key in settings if key in kept and key not in fields and key != "model_type"]


def overrides_problems(settings: Mapping[str, Any], overrides: Mapping[str, Any], path: str) -> list[Problem]:
    """Problems of ``overrides`` laid over a pretrained folder's ``settings``, each named by its key
    (only the overriding keys are judged: a folder's config.json carries bookkeeping keys of its own)."""
    return [problem for problem in settings_problems({**settings, **overrides}, path)
            if problem.path == path or problem.path.split(".")[-1] in overrides]


def _folder_settings(name: str) -> dict[str, Any]:
    """The raw config.json of a pretrained model (not built: building could run remote code)."""
    from transformers import PretrainedConfig

    from distrain.pretrained import locate

    settings, _ = PretrainedConfig.get_config_dict(locate(name))
    return settings


@Model.register("causal_language_model")
class CausalLanguageModel(Model):
    """Give ``model_name`` (a local folder of a pretrained causal LM; ``config`` then overrides settings of
    its config, e.g. ``{"is_decoder": true}`` to run an encoder's weights causally) or ``config`` alone
    (an architecture's settings, random init). With ``config``, ``tokenizer_name`` sets ``vocab_size`` (unless the config
    does) and the special token ids, so the model fits the reader's tokenizer. ``generation``: how
    ``distrain predict`` continues prompts (override it there with ``-o '{"model.generation.top_p": 0.9}'``);
    ``decode_attention``: how its decoding rows attend (``compiled``: a loop ``torch.compile`` builds on the first
    prompts, seconds; ``eager``: torch's SDPA; ``auto``: compiled on CPU for attention 256 or more wide, as
    ``distrain serve --decode-attention``).
    ``adapter`` (e.g. ``{"type": "lora"}``) trains an adapter alone, the transformer (output layer included) frozen.
    ``loss_chunk_size``: compute the output layer and the loss together, that many tokens at a time, never the
    whole vocabulary's logits for every token (see the how-to "Train in bfloat16")."""

    def __init__(
        self,
        vocab: Vocabulary,
        model_name: PretrainedName | None = None,
        config: dict[str, Any] | None = None,
        tokenizer_name: PretrainedName | None = None,
        metrics: dict[str, Metric] | None = None,
        generation: GenerationSettings = GenerationSettings(),
        decode_attention: Literal["auto", "compiled", "eager"] = "auto",
        adapter: Adapter | None = None,
        loss_chunk_size: PositiveInt | None = None,
    ) -> None:
        super().__init__(vocab, {"perplexity": TokenPerplexity(), "accuracy": Average(), **(metrics or {})})
        from transformers import AutoConfig

        self.tokenizer_name = tokenizer_name or model_name
        self.generation = generation
        self.decode_attention = decode_attention

        if model_name is not None:
            from distrain.pretrained import load_model

            self.transformer = load_model(model_name, "AutoModelForCausalLM", dtype=torch.float32, **(config or {}))
        else:
            from distrain.pretrained import model_from_config

            built = AutoConfig.for_model(**self._with_tokenizer(dict(config or {}), tokenizer_name))
            self.transformer = model_from_config(built, "AutoModelForCausalLM")
        if adapter is not None:  # only the adapter trains: the output layer is the pretrained one, frozen
            adapt(self, self.transformer, adapter, model_name)
        self.loss_chunk_size = loss_chunk_size
        if loss_chunk_size is not None and (reason := self._unchunkable()):
            raise ConfigError([Problem("model.loss_chunk_size", reason)])

    def _unchunkable(self) -> str | None:
        """Why the output layer cannot be computed apart from the transformer's forward (None: it can)."""
        head = self.transformer.get_output_embeddings()
        if type(head) is not torch.nn.Linear or head.bias is not None:
            what = f"a {type(head).__name__}" + (" with a bias" if getattr(head, "bias", None) is not None else "")
            return (f"the output layer is {what}, not a plain linear map without bias (an adapter on it?); the "
                    "chunked loss computes hidden @ weight.T itself")
        config = self.transformer.config
        scaled = [key for key in ("final_logit_softcapping", "logit_scale", "output_multiplier_scale")
                  if getattr(config, key, None) not in (None, 1, 1.0)]
        if scaled:
            return f"{config.model_type} changes its logits after the output layer ({', '.join(scaled)})"
        return None

    @staticmethod
    def _with_tokenizer(settings: dict[str, Any], tokenizer_name: str | None) -> dict[str, Any]:
        if tokenizer_name is None:
            return settings
        from distrain.pretrained import load_tokenizer

        tokenizer = load_tokenizer(tokenizer_name)
        size = settings.setdefault("vocab_size", len(tokenizer))
        if size < len(tokenizer):
            raise ConfigError([Problem("model.config.vocab_size", f"{size} is smaller than the {len(tokenizer)} ids "
                                       f"of the tokenizer {tokenizer_name}")])
        for key in ("bos_token_id", "eos_token_id", "pad_token_id"):
            value = getattr(tokenizer, key, None)
            if value is not None:
                settings.setdefault(key, value)
        return settings

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        model_name, config = arguments["model_name"], arguments["config"]
        if model_name is None and config is None:
            return [Problem("", "give model_name (a pretrained folder) or config (an architecture's settings, random init)")]
        if model_name is None:
            return architecture_problems(config, "config") or settings_problems(config, "config")
        try:
            settings = _folder_settings(model_name)
        except (OSError, ValueError) as error:
            return [Problem("model_name", f"its config cannot be read: {str(error).strip().splitlines()[0]}")]
        problems = architecture_problems(settings, "model_name", f"the config of {model_name}")
        if problems or not config:
            return problems
        if "model_type" in config and config["model_type"] != settings["model_type"]:
            return [Problem("config.model_type", f"{config['model_type']!r} is not the architecture of {model_name} "
                                                 f"({settings['model_type']!r})")]
        return overrides_problems(settings, config, "config")

    # ------------------------------------------------------------------------------ split hooks
    def _name_of(self, target: torch.nn.Module) -> str:
        return next(name for name, module in self.named_modules() if module is target)

    def shard_units(self) -> list[str]:
        """The decoder layers (the classes transformers keeps whole, ``_no_split_modules``), then the
        input embeddings and the output layer unless they share their weight (then the root holds both)."""
        keep_whole = set(getattr(self.transformer, "_no_split_modules", None) or [])
        layers = [name for name, module in self.named_modules() if type(module).__name__ in keep_whole]
        units = list(dict.fromkeys(re.sub(r"\.\d+(?=\.|$)", ".*", name) for name in layers))
        embeddings, head = self.transformer.get_input_embeddings(), self.transformer.get_output_embeddings()
        if head is not None and head.weight is not embeddings.weight:
            units += [self._name_of(embeddings), self._name_of(head)]
        return units

    def tensor_parallel_plan(self) -> dict[str, str]:
        """transformers' own plan for the architecture (its config's ``base_model_tp_plan``), placed
        under the base model's path inside this model."""
        from distrain.distributed.tensor_parallel import from_transformers_plan

        config = self.transformer.config
        plan = getattr(config, "base_model_tp_plan", None) or {}
        if not plan:
            return {}
        return from_transformers_plan(plan, self._name_of(self.transformer.base_model),
                                      f"transformers' plan for {config.model_type}")

    def tensor_parallel_sizes(self) -> dict[str, int]:
        """Attention heads and key-value heads are split whole; the feed-forward width evenly."""
        config = self.transformer.config
        return {name: getattr(config, name) for name in ("num_attention_heads", "num_key_value_heads", "intermediate_size")
                if isinstance(getattr(config, name, None), int)}

    def context_length(self) -> int | None:
        length = getattr(self.transformer.config, "max_position_embeddings", None)
        return length if isinstance(length, int) else None

    # ----------------------------------------------------------------------------------- forward
    def forward(self, input_ids: torch.Tensor, labels: torch.Tensor | None = None,
                attention_mask: torch.Tensor | None = None, position_ids: torch.Tensor | None = None,
                **_: Any) -> dict[str, torch.Tensor]:
        # position_ids (packed examples, restarting at 0 each) without an attention mask: transformers
        # keeps the examples apart where the architecture builds its mask with create_causal_mask
        if labels is not None and self.loss_chunk_size is not None:
            return self._chunked_loss(input_ids, labels, attention_mask, position_ids)
        logits = self.transformer(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                                  use_cache=False).logits
        if labels is None:
            return {"logits": logits}
        # position t predicts token t + 1: the labels move left (the last position predicts nothing), so the
        # logits, the step's largest tensor, are read in place (a slice of them would be copied by reshape)
        targets = torch.nn.functional.pad(labels[:, 1:], (0, 1), value=IGNORE)
        counted = targets.ne(IGNORE)
        count = counted.sum()
        total = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), targets.reshape(-1),
                                                  ignore_index=IGNORE, reduction="sum")
        # no labelled token: a zero that still reaches every parameter (DDP expects them all used)
        loss = total / count.clamp(min=1)
        self.metrics["perplexity"](loss.detach(), count)
        # right when the target's logit is the largest (a tie counts as right): a max and a gather cost an
        # eighth of an argmax over the vocabulary on CPU (4 x 128 tokens x 30,522: 4 ms vs 37 ms, one thread)
        scored = logits.detach()
        chosen = scored.gather(-1, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1)
        self.metrics["accuracy"](chosen >= scored.amax(-1), mask=counted)
        return {"loss": loss, "loss_weight": count}

    def _chunked_loss(self, input_ids: torch.Tensor, labels: torch.Tensor, attention_mask: torch.Tensor | None,
                      position_ids: torch.Tensor | None) -> dict[str, torch.Tensor]:
        """The same loss, metrics and weight as :meth:`forward`'s, the output layer fused with the loss."""
        from distrain.modules.linear_cross_entropy import linear_cross_entropy

        hidden = self.transformer.base_model(input_ids=input_ids, attention_mask=attention_mask,
                                             position_ids=position_ids, use_cache=False)[0]
        targets = torch.nn.functional.pad(labels[:, 1:], (0, 1), value=IGNORE).reshape(-1)
        count = targets.ne(IGNORE).sum()
        total, right = linear_cross_entropy(hidden.reshape(-1, hidden.shape[-1]),
                                            self.transformer.get_output_embeddings().weight, targets,
                                            self.loss_chunk_size, ignore_index=IGNORE)
        loss = total / count.clamp(min=1)
        self.metrics["perplexity"](loss.detach(), count)
        self.metrics["accuracy"](right.double() / count.clamp(min=1), count=count)
        return {"loss": loss, "loss_weight": count}

    def to_transformers(self) -> TransformersModel:
        """The transformers model itself, adapters merged."""
        import copy

        from distrain.modules.adapter import merged_state
        from distrain.pretrained import model_from_config

        plain = model_from_config(copy.deepcopy(self.transformer.config), "AutoModelForCausalLM")
        plain.load_state_dict(merged_state(self.transformer))
        return TransformersModel("AutoModelForCausalLM", plain.eval(), lambda ids: self(input_ids=ids)["logits"])

    # ------------------------------------------------------------------------------- generation
    def prediction_reader(self, reader: Any) -> Any:
        """Prompts (``{"prompt": ...}``, the key a ``prompt_completion_json`` reader names), tokenized as
        in fine-tuning, none longer than the model's context."""
        from distrain.data.readers.prompt_json import PromptJsonReader

        if self.tokenizer_name is None:
            raise ConfigError([Problem("model.tokenizer_name", "the model needs a tokenizer to read prompts")])
        return PromptJsonReader(self.tokenizer_name, context_length=self.context_length() or 2**31 - 1,
                                prompt_key=getattr(reader, "prompt_key", "prompt"))

    def predict(self, inputs: dict[str, Any]) -> list[dict[str, Any]]:
        """Each prompt's continuation (see :mod:`distrain.generation.decoding`): its text, its number
        of tokens and why it ended (``stop``: an end token; ``length``: the token budget or context)."""
        from distrain.generation.decode_attention import CHOICES
        from distrain.generation.decoding import generate
        from distrain.pretrained import load_tokenizer

        if "prompt_length" not in inputs:
            return super().predict(inputs)
        tokenizer = load_tokenizer(self.tokenizer_name)
        lengths = inputs["prompt_length"].tolist()
        prompts = [row[:length] for row, length in zip(inputs["input_ids"].tolist(), lengths)]
        ends, pad = self.end_and_pad_ids(tokenizer)
        continuations = generate(self.transformer, prompts, self.generation, ends, pad, self.context_length(),
                                 inputs["prompt_number"].tolist(), compiled_attention=CHOICES[self.decode_attention])
        return [self.completion_record(tokenizer, ends, c.tokens, c.finish_reason) for c in continuations]

    def end_and_pad_ids(self, tokenizer: Any) -> tuple[set[int], int]:
        """The ids that end a continuation (the tokenizer's end, else its separator, and the model
        config's ``eos_token_id``) and the id that pads prompts."""
        configured = getattr(self.transformer.config, "eos_token_id", None)  # an id, a list of them, or None
        ends = {tokenizer.eos_token_id if tokenizer.eos_token_id is not None else tokenizer.sep_token_id,
                *(configured if isinstance(configured, list) else [configured])} - {None}
        return ends, tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0

    @staticmethod
    def completion_record(tokenizer: Any, ends: set[int], tokens: list[int], finish_reason: str) -> dict[str, Any]:
        """What ``distrain predict`` writes for a continuation (``distrain serve``'s ``/predict`` answers the same)."""
        return {"completion": tokenizer.decode([t for t in tokens if t not in ends], skip_special_tokens=True),
                "tokens": len(tokens), "finish_reason": finish_reason}
