// Bag-of-embeddings sentiment classifier on the UCI drug reviews (positive / negative / neutral).
// Prepare the data with: python scripts/prepare_data.py
local data_dir = "data";
{
  dataset_reader: {
    type: "text_classification_json",
    tokenizer: { type: "words_and_punctuation", lowercase: true },
  },
  train_data_path: data_dir + "/drug_reviews/train.jsonl",
  validation_data_path: data_dir + "/drug_reviews/validation.jsonl",
  vocabulary: { min_count: 2 },
  model: {
    type: "basic_classifier",
    embedding_dim: 64,
    encoder: { type: "boe", averaged: true },
  },
  data_loader: { batch_size: 16, shuffle: true },
  trainer: {
    optimizer: { type: "adam", lr: 0.005 },
    num_epochs: 15,
    validation_metric: "+accuracy",
    patience: 5,
    random_seed: 13,
  },
}
