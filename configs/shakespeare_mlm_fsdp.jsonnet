// configs/shakespeare_mlm.jsonnet with its parameters, gradients and AdamW state sharded over the 2
// worker processes (FSDP2): each transformer layer is a shard unit (the model's default), the
// embeddings and head stay with the root. Nothing else changes, so it makes the same updates.
// Hybrid sharding on more workers: add shard_group_size (shard within groups, replicate across).
(import "shakespeare_mlm.jsonnet") + {
  distributed+: { strategy: { type: "fsdp" } },
}
