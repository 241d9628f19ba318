// configs/shakespeare_mlm.jsonnet with every transformer layer split over the 2 worker processes
// (tensor parallel 2): each holds half of the attention heads and half of the feed-forward units
// (the model's own plan), the embeddings and head whole. Both workers read the same batches (one
// data-parallel rank), so batch_size is the global batch: 32, as for one process (same updates).
(import "shakespeare_mlm.jsonnet") + {
  data_loader+: { batch_size: 32 },
  distributed+: { tensor_parallel_size: 2 },
}
