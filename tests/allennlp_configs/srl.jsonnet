// allenai/allennlp-models (v2.10.1) training_config/structured_prediction/srl.jsonnet, unchanged but for the data paths
// (the std.extVar names, now small local CoNLL-2012 folders the test writes) and the GloVe file (a small local one).
// Configuration for a semantic role labeler model based on:
//   He, Luheng et al. “Deep Semantic Role Labeling: What Works and What's Next.” ACL (2017).
{
  "dataset_reader":{"type":"srl"},
  "train_data_path": "conll-2012/train",
  "validation_data_path": "conll-2012/development",
  "model": {
    "type": "srl",
    "text_field_embedder": {
      "token_embedders": {
        "tokens": {
            "type": "embedding",
            "embedding_dim": 100,
            "pretrained_file": "conll-2012/glove.6B.100d.txt.gz",
            "trainable": true
        }
      }
    },
    "initializer": {
      "regexes": [
        ["tag_projection_layer.*weight", { "type": "orthogonal" }]
      ]
    },
    "encoder": {
      "type": "alternating_lstm",
      "input_size": 200,
      "hidden_size": 300,
      "num_layers": 8,
      "recurrent_dropout_probability": 0.1,
      "use_highway": true
    },
    "binary_feature_dim": 100
  },
  "data_loader": {
    "batch_sampler": {
      "type": "bucket",
      "batch_size": 80
    }
  },

  "trainer": {
    "num_epochs": 500,
    "grad_clipping": 1.0,
    "patience": 20,
    "validation_metric": "+f1-measure-overall",
    "optimizer": {
      "type": "adadelta",
      "rho": 0.95
    }
  }
}
