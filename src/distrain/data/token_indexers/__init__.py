"""Token indexers, one per file; each registers itself with :class:`~distrain.data.token_indexer.TokenIndexer`."""
