"""Tiny offline stand-ins for pretrained pieces: a WordPiece vocabulary, a 2-layer BERT config, a corpus."""

from __future__ import annotations

import json
import random
from pathlib import Path

WORDS = ["the", "cat", "dog", "sat", "on", "a", "mat", "ran", "to", "house", "big", "small", "red",
         "blue", "and", "saw", "bird", "tree", "in", "park", "he", "she", "it", "was", "happy", "sad"]
#: in the vocabulary too, so support.data's sentiment records are readable by the tiny tokenizer
SENTIMENT = ["good", "great", "fine", "excellent", "love", "bad", "awful", "poor", "terrible", "hate", "movie"]


def write_tiny_bert(folder: Path) -> Path:
    """A tokenizer folder (vocab.txt) that is also a BERT config folder: 2 layers, hidden 64."""
    folder.mkdir(parents=True, exist_ok=True)
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    (folder / "vocab.txt").write_text("\n".join(special + WORDS + SENTIMENT + [".", ","]) + "\n")
    (folder / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "BertTokenizer", "do_lower_case": True}))
    (folder / "config.json").write_text(json.dumps({
        "model_type": "bert", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
        "intermediate_size": 128, "max_position_embeddings": 64, "vocab_size": 48,
        "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0,
    }))
    return folder


def write_corpus(folder: Path, files: int = 2, sentences: int = 60, seed: int = 0) -> Path:
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for number in range(files):
        lines = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 9))) + " ." for _ in range(sentences)]
        (folder / f"part{number}.txt").write_text("\n".join(lines) + "\n")
    return folder


def write_tiny_llama(folder: Path) -> Path:
    """A pretrained-looking causal LM folder: the tiny WordPiece tokenizer and a 2-layer Llama's weights."""
    import torch
    from transformers import AutoModelForCausalLM, LlamaConfig

    write_tiny_bert(folder)
    (folder / "config.json").unlink()
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=48, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                         bos_token_id=None, eos_token_id=3, pad_token_id=0)
    AutoModelForCausalLM.from_config(config).save_pretrained(folder)
    return folder
