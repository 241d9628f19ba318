// configs/digits_mlp.jsonnet with the model cut into 2 pipeline stages on 2 CPU worker processes:
// stage 0 holds the first linear layer and its activation, stage 1 the rest and the output layer
// (the model's own units, split evenly). Each batch of 32 is cut into 4 micro-batches of 8 that
// stream through the stages (1F1B schedule; "gpipe" also works). Both workers read the same
// batches (one data-parallel rank), so the updates are those of one process.
(import "digits_mlp.jsonnet") + {
  distributed: {
    cuda_devices: [-1, -1],
    pipeline_parallel_size: 2,
    pipeline: { schedule: "1f1b", microbatches: 4 },
  },
}
