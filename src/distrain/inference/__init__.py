"""Running trained models outside training: generation over a key-value cache (``generation``) and the running
batch that continuous batching admits to and retires from at every step (``running_batch``); no HTTP, no processes."""
