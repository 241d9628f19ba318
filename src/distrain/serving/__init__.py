"""``distrain serve``: a trained archive behind HTTP with dynamic request batching.

:mod:`.batcher` (the queue and batching policy, pure asyncio), :mod:`.predictor` (archive →
predictions), :mod:`.app` (HTTP routes), :mod:`.server` (process lifecycle), ``static/`` (the demo page).
"""
