// A feed-forward classifier on scikit-learn's 8x8 digits (prepare with: python scripts/prepare_data.py).
// Add  "distributed": {"cuda_devices": [-1, -1]}  to train the same thing on 2 CPU workers.
local data_dir = "data";
{
  dataset_reader: { type: "feature_classification_json" },
  train_data_path: data_dir + "/digits/train.jsonl",
  validation_data_path: data_dir + "/digits/validation.jsonl",
  model: {
    type: "feedforward_classifier",
    input_dim: 64,
    feature_scale: 1.0 / 16,
    feedforward: { hidden_dims: [128, 128], activation: "relu" },
  },
  data_loader: { batch_size: 32, shuffle: true },
  trainer: {
    optimizer: { type: "adam", lr: 0.002 },
    num_epochs: 20,
    validation_metric: "+accuracy",
    patience: 5,
    random_seed: 13,
  },
}
