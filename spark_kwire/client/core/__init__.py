"""The cluster client every role stands on: sockets, version negotiation, bootstrap and the metadata view,
retried requests to the right broker, and finding coordinators.

Owns: :mod:`.connection` (one broker connection: framing, pipelining, timeouts, re-authentication when the
broker's session lifetime runs out), :mod:`.kafka_client` (``KafkaClient``: one connection per broker, the
metadata cache, requests retried within a budget), :mod:`.metadata` (brokers, topics, partitions as values) and
:mod:`.coordinators` (FindCoordinator for groups and transactional ids).

May import: the protocol layer, the client's ground (``client.config``, ``client.errors``, ``client.retry``) and
``client.auth`` (a connection secures itself with TLS and SASL). Never a role built on it (consumer, producer,
admin, registry).
"""
