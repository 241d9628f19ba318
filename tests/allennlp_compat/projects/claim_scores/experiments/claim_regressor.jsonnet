// AllenNLP 1.x style: a lazy flag on the reader, the pytorch_dataloader type, an initializer and a regularizer
local dim = 8;
{
    "dataset_reader": {"type": "claim_tsv", "lazy": false, "tokenizer": {"type": "whitespace"}},
    "train_data_path": "tests/fixtures/claims.tsv",
    "validation_data_path": "tests/fixtures/claims.tsv",
    "model": {
        "type": "claim_regressor",
        "text_field_embedder": {"token_embedders": {"tokens": {"type": "embedding", "embedding_dim": dim}}},
        "encoder": {"type": "boe", "embedding_dim": dim, "averaged": true},
        "dropout": 0.0,
        "initializer": {"regexes": [["_output.weight", {"type": "xavier_uniform"}]]},
        "regularizer": {"regexes": [[".*weight", {"type": "l2", "alpha": 0.0001}]]}
    },
    "data_loader": {"type": "pytorch_dataloader", "batch_size": 8, "shuffle": true},
    "trainer": {
        "optimizer": {"type": "adam", "lr": 0.05},
        "num_epochs": 3,
        "validation_metric": "-mae",
        "cuda_device": -1
    }
}
