// AllenNLP's own basic_classifier around the project's encoder
local dim = 8;
{
    "dataset_reader": {"type": "thread_jsonl", "flatten": true},
    "train_data_path": "tests/fixtures/threads.jsonl",
    "validation_data_path": "tests/fixtures/threads.jsonl",
    "model": {
        "type": "basic_classifier",
        "text_field_embedder": {"token_embedders": {"tokens": {"type": "embedding", "embedding_dim": dim}}},
        "seq2vec_encoder": {"type": "max_pool", "embedding_dim": dim}
    },
    "data_loader": {"batch_size": 6, "shuffle": true},
    "trainer": {"optimizer": {"type": "adam", "lr": 0.05}, "num_epochs": 3, "validation_metric": "+accuracy"}
}
