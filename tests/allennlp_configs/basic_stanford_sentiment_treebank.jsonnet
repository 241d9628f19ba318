// allenai/allennlp-models training_config/classification/basic_stanford_sentiment_treebank.jsonnet, unchanged
// but for the data paths and the GloVe file, which the test points at small local files it writes.
// Configuration for a basic LSTM sentiment analysis classifier, using the binary Stanford Sentiment
// Treebank (Socher at al. 2013).
local data_dir = "sst";
{
  "dataset_reader": {
    "type": "sst_tokens",
    "use_subtrees": true,
    "granularity": "2-class"
  },
  "validation_dataset_reader": {
    "type": "sst_tokens",
    "use_subtrees": false,
    "granularity": "2-class"
  },
  "train_data_path": data_dir + "/train.txt",
  "validation_data_path": data_dir + "/dev.txt",
  "test_data_path": data_dir + "/test.txt",
  "model": {
    "type": "basic_classifier",
    "text_field_embedder": {
      "token_embedders": {
        "tokens": {
          "type": "embedding",
          "embedding_dim": 300,
          "pretrained_file": data_dir + "/glove.840B.300d.txt.gz",
          "trainable": false
        }
      }
    },
    "seq2vec_encoder": {
       "type": "lstm",
       "input_size": 300,
       "hidden_size": 512,
       "num_layers": 2
    }
  },
  "data_loader": {
    "batch_sampler": {
      "type": "bucket",
      "batch_size" : 32
    }
  },
  "trainer": {
    "num_epochs": 5,
    "patience": 1,
    "grad_norm": 5.0,
    "validation_metric": "+accuracy",
    "optimizer": {
      "type": "adam",
      "lr": 0.001
    }
  }
}
