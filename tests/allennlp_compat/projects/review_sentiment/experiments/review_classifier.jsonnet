local embedding_dim = 8;

{
    "dataset_reader": {"type": "review_jsonl", "max_tokens": 32},
    "train_data_path": "tests/fixtures/reviews.jsonl",
    "validation_data_path": "tests/fixtures/reviews.jsonl",
    "model": {
        "type": "review_classifier",
        "embedder": {"token_embedders": {"tokens": {"type": "embedding", "embedding_dim": embedding_dim}}},
        "encoder": {"type": "bag_of_embeddings", "embedding_dim": embedding_dim, "averaged": true}
    },
    "data_loader": {"batch_size": 8, "shuffle": true},
    "trainer": {"optimizer": {"type": "adam", "lr": 0.05}, "num_epochs": 1, "validation_metric": "+accuracy"}
}
