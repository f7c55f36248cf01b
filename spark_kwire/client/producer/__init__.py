"""Writing partitions: rows into record batches, batches to leaders, acknowledgements, idempotence and
transactions.

Owns: :mod:`.producer` (``Producer(client)``, the facade), :mod:`.accumulator` (Arrow columns into encoded
batches per partition), :mod:`.sender` (a thread keeping Produce requests in flight to the leaders),
:mod:`.partition_delivery` (one partition's ordering and retry rules), :mod:`.produce_exchange` (one Produce
request and its per-batch outcomes), :mod:`.idempotence` (producer id, epoch, sequence numbers),
:mod:`.transactions` (``TransactionManager`` and ``end_transaction``, built on the producer) and
:mod:`.phase_times` (where a write's time goes, ``KWIRE_PROFILE``).

May import: the protocol layer, the client's ground and ``client.core``; never ``consumer``, ``admin`` or
``registry``.
"""
