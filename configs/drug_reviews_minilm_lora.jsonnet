// drug_reviews_minilm.jsonnet with a LoRA adapter (r 8 on every attention and feed-forward projection of
// MiniLM's 6 layers, through peft): the encoder stays frozen, the adapters and the output layer train
// (~1% of the parameters), so the optimizer state and the checkpoints are a few percent of full
// fine-tuning's. Pooling is "cls" here, so `distrain export` can write it as a plain
// BertForSequenceClassification folder (transformers' classification heads read the first token; none
// averages the tokens, which the full fine-tuning config does). Prepare the data with:
//   python scripts/prepare_data.py --only drug_reviews
// then: distrain train configs/drug_reviews_minilm_lora.jsonnet -s runs/minilm_lora
//       distrain export runs/minilm_lora/model.tar.gz runs/minilm_lora_hf --format hf --merge-adapters
local full = import "drug_reviews_minilm.jsonnet";
full + {
  model+: {
    pooling: "cls",
    adapter: { type: "lora", r: 8, alpha: 16, dropout: 0.05 },
  },
  trainer+: {
    // adapters start at zero and train from scratch: a larger step than full fine-tuning's 1e-4
    optimizer+: { lr: 1e-3 },
  },
}
