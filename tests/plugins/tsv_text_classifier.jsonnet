// distrain's own example config (the tutorial "Coming from AllenNLP"), for tests/plugins/tsv_text_classifier
local dim = 16;
{
  dataset_reader: { type: "tsv_labelled_text", label_column: 0, text_column: 1, lowercase: true },
  train_data_path: "data/reviews_tsv/train.tsv",
  validation_data_path: "data/reviews_tsv/validation.tsv",
  model: {
    type: "pooled_text_classifier",
    embedder: { token_embedders: { tokens: { type: "embedding", embedding_dim: dim } } },
    pooler: { type: "bag_of_embeddings", embedding_dim: dim, averaged: true },
  },
  data_loader: { batch_size: 16, shuffle: true },
  trainer: { optimizer: { type: "adam", lr: 0.05 }, num_epochs: 5, validation_metric: "+accuracy" },
}
