"""Write the tiny random T5 the generation tests and the ``t5`` golden case use in place of ``t5-small`` and
``patrickvonplaten/t5-tiny-random`` (which cannot be downloaded here): a Unigram tokenizer (T5's kind: Metaspace
pieces, ``<pad>``/``</s>``/``<unk>`` as ids 0-2, ``</s>`` appended) trained on allennlp-models' CNN/DailyMail
fixture stories, and a 1-layer T5 (``config.json`` + ``pytorch_model.bin``). Run with the oracle's Python, so
AllenNLP 2.10.1's transformers (4.20) and distrain's (5.x) both read the result (4.20 reads no safetensors):

    /work/oracle/bin/python tests/allennlp_oracle/make_tiny_t5.py

The tokenizer is a ``tokenizer.json`` read as a plain fast tokenizer: T5's own tokenizer class wants
sentencepiece's ``spiece.model`` in 4.20 and adds 100 ``<extra_id_*>`` tokens, and distrain's environment has no
sentencepiece. Dropout is 0, so one worker and two give the same updates.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the fixtures' one locator
from support.allennlp_fixtures import ALLENNLP_MODELS, OVERLAY  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
GENERATION = ALLENNLP_MODELS / "test_fixtures" / "generation"
OUT = OVERLAY / "allennlp-models" / "test_fixtures" / "generation" / "t5-tiny-random"
SPECIAL = ["<pad>", "</s>", "<unk>"]  # T5's ids 0, 1, 2


def main() -> None:
    import torch
    from tokenizers import SentencePieceUnigramTokenizer
    from tokenizers.processors import TemplateProcessing
    from transformers import PreTrainedTokenizerFast, T5Config, T5ForConditionalGeneration

    OUT.mkdir(parents=True, exist_ok=True)
    stories = sorted(str(path) for path in (GENERATION / "bart" / "data" / "cnn_stories").glob("*.story"))
    unigram = SentencePieceUnigramTokenizer()
    unigram.train(stories, vocab_size=400, special_tokens=SPECIAL, unk_token="<unk>")
    unigram.post_processor = TemplateProcessing(single="$A </s>", pair="$A </s> $B </s>",
                                                special_tokens=[("</s>", SPECIAL.index("</s>"))])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=unigram._tokenizer, pad_token="<pad>", eos_token="</s>",
                                        unk_token="<unk>", model_max_length=512)
    tokenizer.save_pretrained(str(OUT))
    torch.manual_seed(0)
    config = T5Config(vocab_size=len(tokenizer), d_model=16, d_kv=8, d_ff=32, num_layers=1, num_decoder_layers=1,
                      num_heads=2, relative_attention_num_buckets=8, dropout_rate=0.0, feed_forward_proj="relu",
                      pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    T5ForConditionalGeneration(config).save_pretrained(str(OUT))
    print(f"written to {OUT}: {len(tokenizer)} tokens")


if __name__ == "__main__":
    import argparse

    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
