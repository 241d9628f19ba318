// allenai/allennlp-models (v2.10.1) training_config/structured_prediction/srl_elmo_5.5B.jsonnet, unchanged but for the data paths
// (the std.extVar names, now small local CoNLL-2012 folders the test writes); the test points ELMo's options and weights at AllenNLP's\n// fixture biLM.
{
    "dataset_reader": {
        "type": "srl",
        "token_indexers": {
            "elmo": {
                "type": "elmo_characters"
            }
        }
    },
    "train_data_path": "conll-2012/train",
    "validation_data_path": "conll-2012/development",
    "model": {
        "type": "srl",
        "text_field_embedder": {
            "token_embedders": {
                "elmo": {
                    "type": "elmo_token_embedder",
                    "options_file": "https://allennlp.s3.amazonaws.com/models/elmo/2x4096_512_2048cnn_2xhighway_5.5B/elmo_2x4096_512_2048cnn_2xhighway_5.5B_options.json",
                    "weight_file": "https://allennlp.s3.amazonaws.com/models/elmo/2x4096_512_2048cnn_2xhighway_5.5B/elmo_2x4096_512_2048cnn_2xhighway_5.5B_weights.hdf5",
                    "do_layer_norm": false,
                    "dropout": 0.1
                }
            }
        },
        "initializer": {
            "regexes": [
                ["tag_projection_layer.*weight", {"type": "orthogonal"}]
            ],
        },
        // NOTE: This configuration is correct, but slow.
        "encoder": {
            "type": "alternating_lstm",
            "input_size": 1124,
            "hidden_size": 300,
            "num_layers": 8,
            "recurrent_dropout_probability": 0.1,
            "use_input_projection_bias": false
        },
        "binary_feature_dim": 100,
        "regularizer": {
            "regexes": [
                [
                    ".*scalar_parameters.*",
                    {
                        "type": "l2",
                        "alpha": 0.001
                    }
                ]
            ]
        }
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
        "patience": 200,
        "validation_metric": "+f1-measure-overall",
        "checkpointer": {
            "keep_most_recent_by_count": 10,
        },
        "optimizer": {
            "type": "adadelta",
            "rho": 0.95
        }
    }
}
