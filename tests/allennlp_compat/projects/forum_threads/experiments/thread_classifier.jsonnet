local dim = 8;
{
    "dataset_reader": {"type": "thread_jsonl"},
    "train_data_path": "tests/fixtures/threads.jsonl",
    "validation_data_path": "tests/fixtures/threads.jsonl",
    "model": {
        "type": "thread_classifier",
        "embedder": {"token_embedders": {"tokens": {"type": "embedding", "embedding_dim": dim}}},
        "post_encoder": {"type": "max_pool", "embedding_dim": dim},
        "thread_encoder": {"type": "bag_of_embeddings", "embedding_dim": dim, "averaged": true}
    },
    "data_loader": {"batch_size": 6, "shuffle": true},
    "trainer": {"optimizer": {"type": "adam", "lr": 0.05}, "num_epochs": 3, "validation_metric": "+accuracy"}
}
