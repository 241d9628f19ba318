"""Running trained models outside training: generation with a key-value cache (no HTTP, no processes)."""
