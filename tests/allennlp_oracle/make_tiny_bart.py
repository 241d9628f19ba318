"""Write the tiny random BART the generation tests and golden case use in place of ``sshleifer/bart-tiny-random``
(which cannot be downloaded here): a byte-level BPE tokenizer (``vocab.json`` + ``merges.txt``, BART's format)
trained on allennlp-models' CNN/DailyMail fixture stories, and a 1-layer BART (``config.json`` +
``pytorch_model.bin``). Run with the oracle's Python, so AllenNLP 2.10.1's transformers (4.20) and distrain's
(5.x) both read the result (4.20 reads no safetensors):

    /work/oracle/bin/python tests/allennlp_oracle/make_tiny_bart.py

Dropout is 0, so one worker and two give the same updates; ``init_std`` 0.2 (not BART's 0.02) makes the random
model's next-token distributions peaked enough that beam search has no near-ties and ends some sequences early.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the fixtures' one locator
from support.allennlp_fixtures import ALLENNLP_MODELS, OVERLAY  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
GENERATION = ALLENNLP_MODELS / "test_fixtures" / "generation"
OUT = OVERLAY / "allennlp-models" / "test_fixtures" / "generation" / "bart-tiny-random"
SPECIAL = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]  # BART's ids 0-3, <mask> last as in BART's vocabulary


def main() -> None:
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import BartConfig, BartForConditionalGeneration

    OUT.mkdir(parents=True, exist_ok=True)
    stories = sorted(str(path) for path in (GENERATION / "bart" / "data" / "cnn_stories").glob("*.story"))
    tokenizer = ByteLevelBPETokenizer()
    tokenizer.train(stories, vocab_size=600, min_frequency=2, special_tokens=SPECIAL[:4])
    tokenizer.save_model(str(OUT))
    vocab = json.loads((OUT / "vocab.json").read_text())
    vocab["<mask>"] = len(vocab)
    (OUT / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False))
    torch.manual_seed(0)
    config = BartConfig(vocab_size=len(vocab), d_model=16, encoder_layers=1, decoder_layers=1,
                        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32,
                        max_position_embeddings=1024, dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
                        init_std=0.2, pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2,
                        forced_eos_token_id=2)
    BartForConditionalGeneration(config).save_pretrained(str(OUT))
    print(f"written to {OUT}: {len(vocab)} tokens")


if __name__ == "__main__":
    import argparse

    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
