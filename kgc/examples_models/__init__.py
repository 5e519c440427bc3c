"""Models that are not Kafka's, written against ``kgc.model.protocol`` only: they show that the engines
of ``kgc.explorer`` take a model as they are handed it (``lease_lock``: a lease-based lock service, a
``ComponentModel`` run through the Python engine's BFS and DFS and the Spark engine)."""
