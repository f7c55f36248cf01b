"""Declarations of the Kafka APIs spoken by spark-kwire, requests and responses.

Transcribed from Kafka 4.1's JSON message definitions
(``clients/src/main/resources/common/message/*.json``): field names are the
snake_case of the JSON names (``IsrNodes`` -> ``isr_nodes``), versions, nullable
versions, tags and defaults are the JSON's.  See :mod:`.schema` for the DSL.

Each constant is an :class:`~spark_kwire.protocol.schema.Api`::

    frame = METADATA.encode_request(12, {"topics": None}, correlation_id=1, client_id="me")
    correlation_id, body = METADATA.decode_response(12, response_frame)

Quirks carried over from the JSON:

* ApiVersions responses always use response header v0, even in flexible
  versions (a client must be able to read the answer to any version it sent).
  A broker that does not support the requested ApiVersions version answers
  with error UNSUPPORTED_VERSION in a v0 body.
* SaslHandshake is never flexible and cannot be bumped (KAFKA-9577).
* RequestHeader.ClientId is always a classic (int16 length) string, even in
  header v2.  Request header v0 (only ControlledShutdown v0) is not supported.
* OffsetCommit v10, OffsetFetch v10 and InitProducerId v6 are marked unstable
  (``api.latest_version_unstable``): brokers do not advertise them by default.
"""

from __future__ import annotations

import functools

from .schema import (
    BOOL, BYTES, INT8, INT16, INT32, INT64, RECORDS, STRING, UUID,
    Api, Array, F, MessageSchema, Struct,
)

__all__ = [
    "REQUEST_HEADER", "RESPONSE_HEADER", "ALL_APIS", "BY_KEY", "BY_NAME",
    "request_header_version", "response_header_version",
    "API_VERSIONS", "METADATA", "PRODUCE", "FETCH", "LIST_OFFSETS", "FIND_COORDINATOR",
    "OFFSET_COMMIT", "OFFSET_FETCH", "JOIN_GROUP", "SYNC_GROUP", "HEARTBEAT", "LEAVE_GROUP",
    "LIST_GROUPS", "DESCRIBE_GROUPS", "INIT_PRODUCER_ID", "SASL_HANDSHAKE", "SASL_AUTHENTICATE",
    "CREATE_TOPICS", "DELETE_TOPICS", "DESCRIBE_CONFIGS", "CONSUMER_GROUP_DESCRIBE",
    "ADD_PARTITIONS_TO_TXN", "ADD_OFFSETS_TO_TXN", "END_TXN", "TXN_OFFSET_COMMIT",
    "CREATE_DELEGATION_TOKEN", "RENEW_DELEGATION_TOKEN", "EXPIRE_DELEGATION_TOKEN", "DESCRIBE_DELEGATION_TOKEN",
]

REQUEST_HEADER = MessageSchema("RequestHeader", "1-2", "2+", [
    F("request_api_key", INT16),
    F("request_api_version", INT16),
    F("correlation_id", INT32),
    F("client_id", STRING, "1+", nullable="1+", flexible="none"),
])

RESPONSE_HEADER = MessageSchema("ResponseHeader", "0-1", "1+", [
    F("correlation_id", INT32),
])

_api = functools.partial(Api, request_header=REQUEST_HEADER, response_header=RESPONSE_HEADER)

# Responses use header v0 in every version (see the module docstring).
API_VERSIONS = _api(18, "ApiVersions", "0-4", flexible="3+", response_header_v0_always=True,
    request=[
        F("client_software_name", STRING, "3+"),
        F("client_software_version", STRING, "3+"),
    ],
    response=[
        F("error_code", INT16),
        F("api_keys", Array(
            F("api_key", INT16),
            F("min_version", INT16),
            F("max_version", INT16),
        )),
        F("throttle_time_ms", INT32, "1+"),
        F("supported_features", Array(
            F("name", STRING, "3+"),
            F("min_version", INT16, "3+"),
            F("max_version", INT16, "3+"),
        ), "3+", tag=0),
        F("finalized_features_epoch", INT64, "3+", default=-1, tag=1),
        F("finalized_features", Array(
            F("name", STRING, "3+"),
            F("max_version_level", INT16, "3+"),
            F("min_version_level", INT16, "3+"),
        ), "3+", tag=2),
        F("zk_migration_ready", BOOL, "3+", tag=3),
    ],
)

METADATA = _api(3, "Metadata", "0-13", flexible="9+",
    request=[
        F("topics", Array(
            F("topic_id", UUID, "10+"),
            F("name", STRING, nullable="10+"),
        ), nullable="1+"),
        F("allow_auto_topic_creation", BOOL, "4+", default=True),
        F("include_cluster_authorized_operations", BOOL, "8-10"),
        F("include_topic_authorized_operations", BOOL, "8+"),
    ],
    response=[
        F("throttle_time_ms", INT32, "3+"),
        F("brokers", Array(
            F("node_id", INT32),
            F("host", STRING),
            F("port", INT32),
            F("rack", STRING, "1+", nullable="1+"),
        )),
        F("cluster_id", STRING, "2+", nullable="2+"),
        F("controller_id", INT32, "1+", default=-1),
        F("topics", Array(
            F("error_code", INT16),
            F("name", STRING, nullable="12+"),
            F("topic_id", UUID, "10+"),
            F("is_internal", BOOL, "1+"),
            F("partitions", Array(
                F("error_code", INT16),
                F("partition_index", INT32),
                F("leader_id", INT32),
                F("leader_epoch", INT32, "7+", default=-1),
                F("replica_nodes", Array(INT32)),
                F("isr_nodes", Array(INT32)),
                F("offline_replicas", Array(INT32), "5+"),
            )),
            F("topic_authorized_operations", INT32, "8+", default=-2147483648),
        )),
        F("cluster_authorized_operations", INT32, "8-10", default=-2147483648),
        F("error_code", INT16, "13+"),
    ],
)

# Versions 0-2 were removed in Kafka 4.0. "records" holds raw record-batch bytes.
PRODUCE = _api(0, "Produce", "3-13", flexible="9+",
    request=[
        F("transactional_id", STRING, "3+", nullable="3+"),
        F("acks", INT16),
        F("timeout_ms", INT32),
        F("topic_data", Array(
            F("name", STRING, "0-12"),
            F("topic_id", UUID, "13+"),
            F("partition_data", Array(
                F("index", INT32),
                F("records", RECORDS, nullable="0+"),
            )),
        )),
    ],
    response=[
        F("responses", Array(
            F("name", STRING, "0-12"),
            F("topic_id", UUID, "13+"),
            F("partition_responses", Array(
                F("index", INT32),
                F("error_code", INT16),
                F("base_offset", INT64),
                F("log_append_time_ms", INT64, "2+", default=-1),
                F("log_start_offset", INT64, "5+", default=-1),
                F("record_errors", Array(
                    F("batch_index", INT32, "8+"),
                    F("batch_index_error_message", STRING, "8+", nullable="8+"),
                ), "8+"),
                F("error_message", STRING, "8+", nullable="8+"),
                F("current_leader", Struct(
                    F("leader_id", INT32, "10+", default=-1),
                    F("leader_epoch", INT32, "10+", default=-1),
                ), "10+", tag=0),
            )),
        )),
        F("throttle_time_ms", INT32, "1+"),
        F("node_endpoints", Array(
            F("node_id", INT32, "10+"),
            F("host", STRING, "10+"),
            F("port", INT32, "10+"),
            F("rack", STRING, "10+", nullable="10+"),
        ), "10+", tag=0),
    ],
)

# Versions 0-3 were removed in Kafka 4.0. "records" decodes as a zero-copy memoryview.
FETCH = _api(1, "Fetch", "4-18", flexible="12+",
    request=[
        F("cluster_id", STRING, "12+", nullable="12+", tag=0),
        F("replica_id", INT32, "0-14", default=-1),
        F("replica_state", Struct(
            F("replica_id", INT32, "15+", default=-1),
            F("replica_epoch", INT64, "15+", default=-1),
        ), "15+", tag=1),
        F("max_wait_ms", INT32),
        F("min_bytes", INT32),
        F("max_bytes", INT32, "3+", default=0x7FFFFFFF),
        F("isolation_level", INT8, "4+"),
        F("session_id", INT32, "7+"),
        F("session_epoch", INT32, "7+", default=-1),
        F("topics", Array(
            F("topic", STRING, "0-12"),
            F("topic_id", UUID, "13+"),
            F("partitions", Array(
                F("partition", INT32),
                F("current_leader_epoch", INT32, "9+", default=-1),
                F("fetch_offset", INT64),
                F("last_fetched_epoch", INT32, "12+", default=-1),
                F("log_start_offset", INT64, "5+", default=-1),
                F("partition_max_bytes", INT32),
                F("replica_directory_id", UUID, "17+", tag=0),
                F("high_watermark", INT64, "18+", default=9223372036854775807, tag=1),
            )),
        )),
        F("forgotten_topics_data", Array(
            F("topic", STRING, "7-12"),
            F("topic_id", UUID, "13+"),
            F("partitions", Array(INT32), "7+"),
        ), "7+"),
        F("rack_id", STRING, "11+"),
    ],
    response=[
        F("throttle_time_ms", INT32, "1+"),
        F("error_code", INT16, "7+"),
        F("session_id", INT32, "7+"),
        F("responses", Array(
            F("topic", STRING, "0-12"),
            F("topic_id", UUID, "13+"),
            F("partitions", Array(
                F("partition_index", INT32),
                F("error_code", INT16),
                F("high_watermark", INT64),
                F("last_stable_offset", INT64, "4+", default=-1),
                F("log_start_offset", INT64, "5+", default=-1),
                F("diverging_epoch", Struct(
                    F("epoch", INT32, "12+", default=-1),
                    F("end_offset", INT64, "12+", default=-1),
                ), "12+", tag=0),
                F("current_leader", Struct(
                    F("leader_id", INT32, "12+", default=-1),
                    F("leader_epoch", INT32, "12+", default=-1),
                ), "12+", tag=1),
                F("snapshot_id", Struct(
                    F("end_offset", INT64, default=-1),
                    F("epoch", INT32, default=-1),
                ), "12+", tag=2),
                F("aborted_transactions", Array(
                    F("producer_id", INT64, "4+"),
                    F("first_offset", INT64, "4+"),
                ), "4+", nullable="4+"),
                F("preferred_read_replica", INT32, "11+", default=-1),
                F("records", RECORDS, nullable="0+"),
            )),
        )),
        F("node_endpoints", Array(
            F("node_id", INT32, "16+"),
            F("host", STRING, "16+"),
            F("port", INT32, "16+"),
            F("rack", STRING, "16+", nullable="16+"),
        ), "16+", tag=0),
    ],
)

LIST_OFFSETS = _api(2, "ListOffsets", "1-10", flexible="6+",
    request=[
        F("replica_id", INT32),
        F("isolation_level", INT8, "2+"),
        F("topics", Array(
            F("name", STRING),
            F("partitions", Array(
                F("partition_index", INT32),
                F("current_leader_epoch", INT32, "4+", default=-1),
                F("timestamp", INT64),
            )),
        )),
        F("timeout_ms", INT32, "10+"),
    ],
    response=[
        F("throttle_time_ms", INT32, "2+"),
        F("topics", Array(
            F("name", STRING),
            F("partitions", Array(
                F("partition_index", INT32),
                F("error_code", INT16),
                F("timestamp", INT64, "1+", default=-1),
                F("offset", INT64, "1+", default=-1),
                F("leader_epoch", INT32, "4+", default=-1),
            )),
        )),
    ],
)

FIND_COORDINATOR = _api(10, "FindCoordinator", "0-6", flexible="3+",
    request=[
        F("key", STRING, "0-3"),
        F("key_type", INT8, "1+"),
        F("coordinator_keys", Array(STRING), "4+"),
    ],
    response=[
        F("throttle_time_ms", INT32, "1+"),
        F("error_code", INT16, "0-3"),
        F("error_message", STRING, "1-3", nullable="1-3"),
        F("node_id", INT32, "0-3"),
        F("host", STRING, "0-3"),
        F("port", INT32, "0-3"),
        F("coordinators", Array(
            F("key", STRING, "4+"),
            F("node_id", INT32, "4+"),
            F("host", STRING, "4+"),
            F("port", INT32, "4+"),
            F("error_code", INT16, "4+"),
            F("error_message", STRING, "4+", nullable="4+"),
        ), "4+"),
    ],
)

OFFSET_COMMIT = _api(8, "OffsetCommit", "2-10", flexible="8+", latest_version_unstable=True,
    request=[
        F("group_id", STRING),
        F("generation_id_or_member_epoch", INT32, "1+", default=-1),
        F("member_id", STRING, "1+"),
        F("group_instance_id", STRING, "7+", nullable="7+"),
        F("retention_time_ms", INT64, "2-4", default=-1),
        F("topics", Array(
            F("name", STRING, "0-9"),
            F("topic_id", UUID, "10+"),
            F("partitions", Array(
                F("partition_index", INT32),
                F("committed_offset", INT64),
                F("committed_leader_epoch", INT32, "6+", default=-1),
                F("committed_metadata", STRING, nullable="0+"),
            )),
        )),
    ],
    response=[
        F("throttle_time_ms", INT32, "3+"),
        F("topics", Array(
            F("name", STRING, "0-9"),
            F("topic_id", UUID, "10+"),
            F("partitions", Array(
                F("partition_index", INT32),
                F("error_code", INT16),
            )),
        )),
    ],
)

OFFSET_FETCH = _api(9, "OffsetFetch", "1-10", flexible="6+", latest_version_unstable=True,
    request=[
        F("group_id", STRING, "0-7"),
        F("topics", Array(
            F("name", STRING, "0-7"),
            F("partition_indexes", Array(INT32), "0-7"),
        ), "0-7", nullable="2-7"),
        F("groups", Array(
            F("group_id", STRING, "8+"),
            F("member_id", STRING, "9+", nullable="9+"),
            F("member_epoch", INT32, "9+", default=-1),
            F("topics", Array(
                F("name", STRING, "8-9"),
                F("topic_id", UUID, "10+"),
                F("partition_indexes", Array(INT32), "8+"),
            ), "8+", nullable="8+"),
        ), "8+"),
        F("require_stable", BOOL, "7+"),
    ],
    response=[
        F("throttle_time_ms", INT32, "3+"),
        F("topics", Array(
            F("name", STRING, "0-7"),
            F("partitions", Array(
                F("partition_index", INT32, "0-7"),
                F("committed_offset", INT64, "0-7"),
                F("committed_leader_epoch", INT32, "5-7", default=-1),
                F("metadata", STRING, "0-7", nullable="0-7"),
                F("error_code", INT16, "0-7"),
            ), "0-7"),
        ), "0-7"),
        F("error_code", INT16, "2-7"),
        F("groups", Array(
            F("group_id", STRING, "8+"),
            F("topics", Array(
                F("name", STRING, "8-9"),
                F("topic_id", UUID, "10+"),
                F("partitions", Array(
                    F("partition_index", INT32, "8+"),
                    F("committed_offset", INT64, "8+"),
                    F("committed_leader_epoch", INT32, "8+", default=-1),
                    F("metadata", STRING, "8+", nullable="8+"),
                    F("error_code", INT16, "8+"),
                ), "8+"),
            ), "8+"),
            F("error_code", INT16, "8+"),
        ), "8+"),
    ],
)

JOIN_GROUP = _api(11, "JoinGroup", "0-9", flexible="6+",
    request=[
        F("group_id", STRING),
        F("session_timeout_ms", INT32),
        F("rebalance_timeout_ms", INT32, "1+", default=-1),
        F("member_id", STRING),
        F("group_instance_id", STRING, "5+", nullable="5+"),
        F("protocol_type", STRING),
        F("protocols", Array(
            F("name", STRING),
            F("metadata", BYTES),
        )),
        F("reason", STRING, "8+", nullable="8+"),
    ],
    response=[
        F("throttle_time_ms", INT32, "2+"),
        F("error_code", INT16),
        F("generation_id", INT32, default=-1),
        F("protocol_type", STRING, "7+", nullable="7+"),
        F("protocol_name", STRING, nullable="7+"),
        F("leader", STRING),
        F("skip_assignment", BOOL, "9+"),
        F("member_id", STRING),
        F("members", Array(
            F("member_id", STRING),
            F("group_instance_id", STRING, "5+", nullable="5+"),
            F("metadata", BYTES),
        )),
    ],
)

SYNC_GROUP = _api(14, "SyncGroup", "0-5", flexible="4+",
    request=[
        F("group_id", STRING),
        F("generation_id", INT32),
        F("member_id", STRING),
        F("group_instance_id", STRING, "3+", nullable="3+"),
        F("protocol_type", STRING, "5+", nullable="5+"),
        F("protocol_name", STRING, "5+", nullable="5+"),
        F("assignments", Array(
            F("member_id", STRING),
            F("assignment", BYTES),
        )),
    ],
    response=[
        F("throttle_time_ms", INT32, "1+"),
        F("error_code", INT16),
        F("protocol_type", STRING, "5+", nullable="5+"),
        F("protocol_name", STRING, "5+", nullable="5+"),
        F("assignment", BYTES),
    ],
)

HEARTBEAT = _api(12, "Heartbeat", "0-4", flexible="4+",
    request=[
        F("group_id", STRING),
        F("generation_id", INT32),
        F("member_id", STRING),
        F("group_instance_id", STRING, "3+", nullable="3+"),
    ],
    response=[
        F("throttle_time_ms", INT32, "1+"),
        F("error_code", INT16),
    ],
)

LEAVE_GROUP = _api(13, "LeaveGroup", "0-5", flexible="4+",
    request=[
        F("group_id", STRING),
        F("member_id", STRING, "0-2"),
        F("members", Array(
            F("member_id", STRING, "3+"),
            F("group_instance_id", STRING, "3+", nullable="3+"),
            F("reason", STRING, "5+", nullable="5+"),
        ), "3+"),
    ],
    response=[
        F("throttle_time_ms", INT32, "1+"),
        F("error_code", INT16),
        F("members", Array(
            F("member_id", STRING, "3+"),
            F("group_instance_id", STRING, "3+", nullable="3+"),
            F("error_code", INT16, "3+"),
        ), "3+"),
    ],
)

LIST_GROUPS = _api(16, "ListGroups", "0-5", flexible="3+",
    request=[
        F("states_filter", Array(STRING), "4+"),
        F("types_filter", Array(STRING), "5+"),
    ],
    response=[
        F("throttle_time_ms", INT32, "1+"),
        F("error_code", INT16),
        F("groups", Array(
            F("group_id", STRING),
            F("protocol_type", STRING),
            F("group_state", STRING, "4+"),
            F("group_type", STRING, "5+"),
        )),
    ],
)

DESCRIBE_GROUPS = _api(15, "DescribeGroups", "0-6", flexible="5+",
    request=[
        F("groups", Array(STRING)),
        F("include_authorized_operations", BOOL, "3+"),
    ],
    response=[
        F("throttle_time_ms", INT32, "1+"),
        F("groups", Array(
            F("error_code", INT16),
            F("error_message", STRING, "6+", nullable="6+"),
            F("group_id", STRING),
            F("group_state", STRING),
            F("protocol_type", STRING),
            F("protocol_data", STRING),
            F("members", Array(
                F("member_id", STRING),
                F("group_instance_id", STRING, "4+", nullable="4+"),
                F("client_id", STRING),
                F("client_host", STRING),
                F("member_metadata", BYTES),
                F("member_assignment", BYTES),
            )),
            F("authorized_operations", INT32, "3+", default=-2147483648),
        )),
    ],
)

# KIP-848 ("consumer" protocol) groups, which DescribeGroups cannot describe
_ASSIGNMENT = Struct(
    F("topic_partitions", Array(
        F("topic_id", UUID),
        F("topic_name", STRING),
        F("partitions", Array(INT32)),
    )),
)

CONSUMER_GROUP_DESCRIBE = _api(69, "ConsumerGroupDescribe", "0-1", flexible="0+",
    request=[
        F("group_ids", Array(STRING)),
        F("include_authorized_operations", BOOL),
    ],
    response=[
        F("throttle_time_ms", INT32),
        F("groups", Array(
            F("error_code", INT16),
            F("error_message", STRING, nullable="0+"),
            F("group_id", STRING),
            F("group_state", STRING),
            F("group_epoch", INT32),
            F("assignment_epoch", INT32),
            F("assignor_name", STRING),
            F("members", Array(
                F("member_id", STRING),
                F("instance_id", STRING, nullable="0+"),
                F("rack_id", STRING, nullable="0+"),
                F("member_epoch", INT32),
                F("client_id", STRING),
                F("client_host", STRING),
                F("subscribed_topic_names", Array(STRING)),
                F("subscribed_topic_regex", STRING, nullable="0+"),
                F("assignment", _ASSIGNMENT),
                F("target_assignment", _ASSIGNMENT),
                F("member_type", INT8, "1+", default=-1),
            )),
            F("authorized_operations", INT32, default=-2147483648),
        )),
    ],
)

INIT_PRODUCER_ID = _api(22, "InitProducerId", "0-6", flexible="2+", latest_version_unstable=True,
    request=[
        F("transactional_id", STRING, nullable="0+"),
        F("transaction_timeout_ms", INT32),
        F("producer_id", INT64, "3+", default=-1),
        F("producer_epoch", INT16, "3+", default=-1),
        F("enable2_pc", BOOL, "6+"),
        F("keep_prepared_txn", BOOL, "6+"),
    ],
    response=[
        F("throttle_time_ms", INT32),
        F("error_code", INT16),
        F("producer_id", INT64, default=-1),
        F("producer_epoch", INT16),
        F("ongoing_txn_producer_id", INT64, "6+", default=-1),
        F("ongoing_txn_producer_epoch", INT16, "6+", default=-1),
    ],
)

# Transactions (KIP-98; KIP-890 "transactions v2": Produce v12+ adds partitions implicitly, EndTxn v5+ bumps
# the epoch on every commit or abort and returns the new one). AddPartitionsToTxn v4+ is broker-to-broker.
ADD_PARTITIONS_TO_TXN = _api(24, "AddPartitionsToTxn", "0-5", flexible="3+",
    request=[
        F("transactions", Array(
            F("transactional_id", STRING, "4+"),
            F("producer_id", INT64, "4+"),
            F("producer_epoch", INT16, "4+"),
            F("verify_only", BOOL, "4+"),
            F("topics", Array(
                F("name", STRING, "4+"),
                F("partitions", Array(INT32), "4+"),
            ), "4+"),
        ), "4+"),
        F("v3_and_below_transactional_id", STRING, "0-3"),
        F("v3_and_below_producer_id", INT64, "0-3"),
        F("v3_and_below_producer_epoch", INT16, "0-3"),
        F("v3_and_below_topics", Array(
            F("name", STRING),
            F("partitions", Array(INT32)),
        ), "0-3"),
    ],
    response=[
        F("throttle_time_ms", INT32),
        F("error_code", INT16, "4+"),
        F("results_by_transaction", Array(
            F("transactional_id", STRING, "4+"),
            F("topic_results", Array(
                F("name", STRING, "4+"),
                F("results_by_partition", Array(
                    F("partition_index", INT32, "4+"),
                    F("partition_error_code", INT16, "4+"),
                ), "4+"),
            ), "4+"),
        ), "4+"),
        F("results_by_topic_v3_and_below", Array(
            F("name", STRING),
            F("results_by_partition", Array(
                F("partition_index", INT32),
                F("partition_error_code", INT16),
            )),
        ), "0-3"),
    ],
)

ADD_OFFSETS_TO_TXN = _api(25, "AddOffsetsToTxn", "0-4", flexible="3+",
    request=[
        F("transactional_id", STRING),
        F("producer_id", INT64),
        F("producer_epoch", INT16),
        F("group_id", STRING),
    ],
    response=[
        F("throttle_time_ms", INT32),
        F("error_code", INT16),
    ],
)

END_TXN = _api(26, "EndTxn", "0-5", flexible="3+",
    request=[
        F("transactional_id", STRING),
        F("producer_id", INT64),
        F("producer_epoch", INT16),
        F("committed", BOOL),
    ],
    response=[
        F("throttle_time_ms", INT32),
        F("error_code", INT16),
        F("producer_id", INT64, "5+", default=-1),
        F("producer_epoch", INT16, "5+", default=-1),
    ],
)

TXN_OFFSET_COMMIT = _api(28, "TxnOffsetCommit", "0-5", flexible="3+",
    request=[
        F("transactional_id", STRING),
        F("group_id", STRING),
        F("producer_id", INT64),
        F("producer_epoch", INT16),
        F("generation_id", INT32, "3+", default=-1),
        F("member_id", STRING, "3+"),
        F("group_instance_id", STRING, "3+", nullable="3+"),
        F("topics", Array(
            F("name", STRING),
            F("partitions", Array(
                F("partition_index", INT32),
                F("committed_offset", INT64),
                F("committed_leader_epoch", INT32, "2+", default=-1),
                F("committed_metadata", STRING, nullable="0+"),
            )),
        )),
    ],
    response=[
        F("throttle_time_ms", INT32),
        F("topics", Array(
            F("name", STRING),
            F("partitions", Array(
                F("partition_index", INT32),
                F("error_code", INT16),
            )),
        )),
    ],
)

# Never flexible; the version cannot be bumped (KAFKA-9577).
SASL_HANDSHAKE = _api(17, "SaslHandshake", "0-1", flexible="none",
    request=[
        F("mechanism", STRING),
    ],
    response=[
        F("error_code", INT16),
        F("mechanisms", Array(STRING)),
    ],
)

SASL_AUTHENTICATE = _api(36, "SaslAuthenticate", "0-2", flexible="2+",
    request=[
        F("auth_bytes", BYTES),
    ],
    response=[
        F("error_code", INT16),
        F("error_message", STRING, nullable="0+"),
        F("auth_bytes", BYTES),
        F("session_lifetime_ms", INT64, "1+"),
    ],
)

CREATE_TOPICS = _api(19, "CreateTopics", "2-7", flexible="5+",
    request=[
        F("topics", Array(
            F("name", STRING),
            F("num_partitions", INT32),
            F("replication_factor", INT16),
            F("assignments", Array(
                F("partition_index", INT32),
                F("broker_ids", Array(INT32)),
            )),
            F("configs", Array(
                F("name", STRING),
                F("value", STRING, nullable="0+"),
            )),
        )),
        F("timeout_ms", INT32, default=60000),
        F("validate_only", BOOL, "1+"),
    ],
    response=[
        F("throttle_time_ms", INT32, "2+"),
        F("topics", Array(
            F("name", STRING),
            F("topic_id", UUID, "7+"),
            F("error_code", INT16),
            F("error_message", STRING, "1+", nullable="0+"),
            F("topic_config_error_code", INT16, "5+", tag=0),
            F("num_partitions", INT32, "5+", default=-1),
            F("replication_factor", INT16, "5+", default=-1),
            F("configs", Array(
                F("name", STRING, "5+"),
                F("value", STRING, "5+", nullable="5+"),
                F("read_only", BOOL, "5+"),
                F("config_source", INT8, "5+", default=-1),
                F("is_sensitive", BOOL, "5+"),
            ), "5+", nullable="5+"),
        )),
    ],
)

DELETE_TOPICS = _api(20, "DeleteTopics", "1-6", flexible="4+",
    request=[
        F("topics", Array(
            F("name", STRING, "6+", nullable="6+"),
            F("topic_id", UUID, "6+"),
        ), "6+"),
        F("topic_names", Array(STRING), "0-5"),
        F("timeout_ms", INT32),
    ],
    response=[
        F("throttle_time_ms", INT32, "1+"),
        F("responses", Array(
            F("name", STRING, nullable="6+"),
            F("topic_id", UUID, "6+"),
            F("error_code", INT16),
            F("error_message", STRING, "5+", nullable="5+"),
        )),
    ],
)

DESCRIBE_CONFIGS = _api(32, "DescribeConfigs", "1-4", flexible="4+",
    request=[
        F("resources", Array(
            F("resource_type", INT8),
            F("resource_name", STRING),
            F("configuration_keys", Array(STRING), nullable="0+"),
        )),
        F("include_synonyms", BOOL, "1+"),
        F("include_documentation", BOOL, "3+"),
    ],
    response=[
        F("throttle_time_ms", INT32),
        F("results", Array(
            F("error_code", INT16),
            F("error_message", STRING, nullable="0+"),
            F("resource_type", INT8),
            F("resource_name", STRING),
            F("configs", Array(
                F("name", STRING),
                F("value", STRING, nullable="0+"),
                F("read_only", BOOL),
                F("config_source", INT8, "1+", default=-1),
                F("is_sensitive", BOOL),
                F("synonyms", Array(
                    F("name", STRING, "1+"),
                    F("value", STRING, "1+", nullable="0+"),
                    F("source", INT8, "1+"),
                ), "1+"),
                F("config_type", INT8, "3+"),
                F("documentation", STRING, "3+", nullable="0+"),
            )),
        )),
    ],
)

CREATE_DELEGATION_TOKEN = _api(38, "CreateDelegationToken", "1-3", flexible="2+",
    request=[
        F("owner_principal_type", STRING, "3+", nullable="3+"),
        F("owner_principal_name", STRING, "3+", nullable="3+"),
        F("renewers", Array(
            F("principal_type", STRING),
            F("principal_name", STRING),
        )),
        F("max_lifetime_ms", INT64),
    ],
    response=[
        F("error_code", INT16),
        F("principal_type", STRING),
        F("principal_name", STRING),
        F("token_requester_principal_type", STRING, "3+"),
        F("token_requester_principal_name", STRING, "3+"),
        F("issue_timestamp_ms", INT64),
        F("expiry_timestamp_ms", INT64),
        F("max_timestamp_ms", INT64),
        F("token_id", STRING),
        F("hmac", BYTES),
        F("throttle_time_ms", INT32),
    ],
)

RENEW_DELEGATION_TOKEN = _api(39, "RenewDelegationToken", "1-2", flexible="2+",
    request=[
        F("hmac", BYTES),
        F("renew_period_ms", INT64),
    ],
    response=[
        F("error_code", INT16),
        F("expiry_timestamp_ms", INT64),
        F("throttle_time_ms", INT32),
    ],
)

EXPIRE_DELEGATION_TOKEN = _api(40, "ExpireDelegationToken", "1-2", flexible="2+",
    request=[
        F("hmac", BYTES),
        F("expiry_time_period_ms", INT64),
    ],
    response=[
        F("error_code", INT16),
        F("expiry_timestamp_ms", INT64),
        F("throttle_time_ms", INT32),
    ],
)

DESCRIBE_DELEGATION_TOKEN = _api(41, "DescribeDelegationToken", "1-3", flexible="2+",
    request=[
        F("owners", Array(
            F("principal_type", STRING),
            F("principal_name", STRING),
        ), nullable="0+"),
    ],
    response=[
        F("error_code", INT16),
        F("tokens", Array(
            F("principal_type", STRING),
            F("principal_name", STRING),
            F("token_requester_principal_type", STRING, "3+"),
            F("token_requester_principal_name", STRING, "3+"),
            F("issue_timestamp", INT64),
            F("expiry_timestamp", INT64),
            F("max_timestamp", INT64),
            F("token_id", STRING),
            F("hmac", BYTES),
            F("renewers", Array(
                F("principal_type", STRING),
                F("principal_name", STRING),
            )),
        )),
        F("throttle_time_ms", INT32),
    ],
)

ALL_APIS: tuple[Api, ...] = tuple(sorted((
    PRODUCE, FETCH, LIST_OFFSETS, METADATA, OFFSET_COMMIT, OFFSET_FETCH, FIND_COORDINATOR,
    JOIN_GROUP, HEARTBEAT, LEAVE_GROUP, SYNC_GROUP, DESCRIBE_GROUPS, LIST_GROUPS,
    SASL_HANDSHAKE, API_VERSIONS, CREATE_TOPICS, DELETE_TOPICS, INIT_PRODUCER_ID,
    DESCRIBE_CONFIGS, SASL_AUTHENTICATE, CONSUMER_GROUP_DESCRIBE,
    ADD_PARTITIONS_TO_TXN, ADD_OFFSETS_TO_TXN, END_TXN, TXN_OFFSET_COMMIT,
    CREATE_DELEGATION_TOKEN, RENEW_DELEGATION_TOKEN, EXPIRE_DELEGATION_TOKEN, DESCRIBE_DELEGATION_TOKEN,
), key=lambda api: api.api_key))
"""Every declared API, in api-key order."""

BY_KEY: dict[int, Api] = {api.api_key: api for api in ALL_APIS}
"""Declared APIs by api key."""

BY_NAME: dict[str, Api] = {api.name: api for api in ALL_APIS}
"""Declared APIs by Kafka name, e.g. ``"Metadata"``."""


def request_header_version(api: Api, version: int) -> int:
    """Request header version used with ``api`` at ``version`` (1 or 2)."""
    return api.request_header_version(version)


def response_header_version(api: Api, version: int) -> int:
    """Response header version used with ``api`` at ``version`` (0 or 1; ApiVersions: 0)."""
    return api.response_header_version(version)
