"""Reading partitions: where their offsets are and fetching their records.

Owns: :mod:`.offsets` (``list_offsets``: earliest, latest, by timestamp, per isolation level), :mod:`.fetcher`
(``fetch_range``: one partition's offset range fetched from its leader, following leader moves, decoded into
Arrow), :mod:`.read_replica` (with ``client.rack``, the replica the leader prefers, KIP-392) and
:mod:`.packed_fetch` (the first Fetch of many small ranges, one request per broker).

May import: the protocol layer, the client's ground and ``client.core``. Each function takes a ``KafkaClient``
as its first argument (as franz-go's kadm takes a kgo client).
"""
