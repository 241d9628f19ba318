"""``allennlp.modules.transformer``: AllenNLP's transformer toolkit, distrain's implementation.

Building blocks of BERT-like models (embeddings, attention, layers, stacks, a pooler), ViLBERT's two-stream
co-attention encoder and T5's attention, each a ``TransformerModule``: buildable from a config block
(``from_params``), from a Hugging Face model's config and weights (``from_pretrained_module``), or from a Hugging Face
module's ``state_dict`` renamed by ``_get_mapped_state_dict``. Nothing here registers a component, so the package
loads only when a user's code imports it.
"""

from distrain.allennlp.modules.transformer.activation_layer import ActivationLayer
from distrain.allennlp.modules.transformer.attention_module import AttentionModule, SelfAttention, T5Attention
from distrain.allennlp.modules.transformer.bimodal_attention import BiModalAttention
from distrain.allennlp.modules.transformer.bimodal_encoder import BiModalEncoder
from distrain.allennlp.modules.transformer.layer_norm import LayerNorm
from distrain.allennlp.modules.transformer.output_layer import OutputLayer
from distrain.allennlp.modules.transformer.positional_encoding import SinusoidalPositionalEncoding
from distrain.allennlp.modules.transformer.transformer_embeddings import (Embeddings, ImageFeatureEmbeddings,
                                                                         TransformerEmbeddings)
from distrain.allennlp.modules.transformer.transformer_layer import AttentionLayer, TransformerLayer
from distrain.allennlp.modules.transformer.transformer_module import TransformerModule
from distrain.allennlp.modules.transformer.transformer_pooler import TransformerPooler
from distrain.allennlp.modules.transformer.transformer_stack import TransformerStack
from distrain.allennlp.modules.transformer.t5 import T5

__all__ = [
    "ActivationLayer", "AttentionLayer", "AttentionModule", "BiModalAttention", "BiModalEncoder", "Embeddings",
    "ImageFeatureEmbeddings", "LayerNorm", "OutputLayer", "SelfAttention", "SinusoidalPositionalEncoding",
    "T5", "T5Attention", "TransformerEmbeddings", "TransformerLayer", "TransformerModule", "TransformerPooler",
    "TransformerStack",
]
