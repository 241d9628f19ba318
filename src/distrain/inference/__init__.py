"""Running trained models outside training: generation over a key-value cache, in a batch that rows join and
leave at every step (``generation``), and who joins it when (``scheduler``); no HTTP, no processes."""
