"""Administering the cluster: topics, configs, consumer groups and their offsets, and the cluster as rows.

Owns: :mod:`.admin` (``Admin(client)``: create and delete topics, describe configs, list and describe groups,
commit and fetch group offsets) and :mod:`.cluster_tables` (brokers, topics, partitions, groups and lag as rows,
for the data source's metadata tables and ``spark_kwire.admin``). Kafka delegation tokens (create, renew,
describe, expire) belong here too.

May import: the protocol layer, the client's ground, ``client.core`` and ``client.consumer`` (lag is a group's
committed offsets against the log-end offsets the consumer's ``list_offsets`` finds).
"""
