// Search space for configs/drug_reviews_boe.jsonnet, for `distrain tune`:
//   distrain tune configs/drug_reviews_boe.jsonnet configs/drug_reviews_boe_search.jsonnet -s runs/drug_search
// Keys are the dotted paths `-o` takes; each trial keeps the config's epochs, patience and seed.
{
  "trainer.optimizer.lr": { type: "float", low: 0.001, high: 0.03, log: true },
  "model.embedding_dim": { type: "int", low: 32, high: 256, step: 32 },
  "model.dropout": { type: "float", low: 0.0, high: 0.5 },
  "data_loader.batch_size": { type: "categorical", choices: [8, 16, 32] },
  "vocabulary.min_count": { type: "int", low: 1, high: 3 },
}
