"""Job-wide services every stage of a run shares, low in the house (they import only :mod:`distrain.errors`): files
written whole or not at all (:mod:`.disk`), the run's history (:mod:`.history`), stop signals (:mod:`.stop`) and the
watchdog's heartbeat (:mod:`.heartbeat`)."""
