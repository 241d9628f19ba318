// configs/digits_mlp.jsonnet on 2 CPU worker processes (gloo). Nothing else changes: batch_size is
// per worker, so the effective batch doubles; halve it to make exactly the 1-process updates.
// CUDA: "cuda_devices": [0, 1] (NCCL). Two nodes: add num_nodes, node_rank and master_addr/port.
(import "digits_mlp.jsonnet") + {
  distributed: { cuda_devices: [-1, -1] },
}
