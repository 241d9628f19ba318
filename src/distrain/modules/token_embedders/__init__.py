"""Token embedders, one per file; the base is :mod:`distrain.modules.token_embedder`."""
