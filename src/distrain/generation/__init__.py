"""Running trained models outside training: generation over a key-value cache, in a batch that rows join and
leave at every step (``decoding``), and who joins it when (``admission``); no HTTP, no processes."""
