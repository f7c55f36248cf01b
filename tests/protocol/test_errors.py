"""Tests of the Kafka error table and the exception hierarchy."""

import inspect
import pickle

import pytest

from spark_kwire.protocol import errors
from spark_kwire.protocol.errors import (
    ERRORS_BY_CODE,
    ERRORS_BY_NAME,
    KafkaApiError,
    KwireError,
    ProtocolDecodeError,
    ProtocolEncodeError,
    error_for,
    error_info,
    is_retriable,
    raise_for_error,
)


@pytest.mark.parametrize(
    "code, name, retriable",
    [
        (-1, "UNKNOWN_SERVER_ERROR", False),
        (0, "NONE", False),
        (1, "OFFSET_OUT_OF_RANGE", False),
        (2, "CORRUPT_MESSAGE", True),
        (3, "UNKNOWN_TOPIC_OR_PARTITION", True),
        (5, "LEADER_NOT_AVAILABLE", True),
        (6, "NOT_LEADER_OR_FOLLOWER", True),
        (7, "REQUEST_TIMED_OUT", True),
        (10, "MESSAGE_TOO_LARGE", False),
        (15, "COORDINATOR_NOT_AVAILABLE", True),
        (16, "NOT_COORDINATOR", True),
        (22, "ILLEGAL_GENERATION", False),
        (25, "UNKNOWN_MEMBER_ID", False),
        (27, "REBALANCE_IN_PROGRESS", False),
        (29, "TOPIC_AUTHORIZATION_FAILED", False),
        (35, "UNSUPPORTED_VERSION", False),
        (36, "TOPIC_ALREADY_EXISTS", False),
        (51, "CONCURRENT_TRANSACTIONS", True),
        (56, "KAFKA_STORAGE_ERROR", True),
        (58, "SASL_AUTHENTICATION_FAILED", False),
        (70, "FETCH_SESSION_ID_NOT_FOUND", True),
        (74, "FENCED_LEADER_EPOCH", True),
        (75, "UNKNOWN_LEADER_EPOCH", True),
        (78, "OFFSET_NOT_AVAILABLE", True),
        (79, "MEMBER_ID_REQUIRED", False),
        (89, "THROTTLING_QUOTA_EXCEEDED", True),
        (90, "PRODUCER_FENCED", False),
        (100, "UNKNOWN_TOPIC_ID", True),
        (103, "INCONSISTENT_TOPIC_ID", True),
        (106, "FETCH_SESSION_TOPIC_ID_ERROR", True),
        (109, "OFFSET_MOVED_TO_TIERED_STORAGE", False),
        (113, "STALE_MEMBER_EPOCH", False),
        (120, "TRANSACTION_ABORTABLE", False),
        (129, "REBOOTSTRAP_REQUIRED", False),
        (133, "SHARE_SESSION_LIMIT_REACHED", True),
    ],
)
def test_known_errors(code, name, retriable):
    info = ERRORS_BY_CODE[code]
    assert (info.code, info.name, info.retriable) == (code, name, retriable)
    assert ERRORS_BY_NAME[name] is info
    assert is_retriable(code) is retriable


def test_table_is_complete_and_consistent():
    codes = sorted(ERRORS_BY_CODE)
    assert codes == list(range(-1, 134))
    assert len(ERRORS_BY_NAME) == len(ERRORS_BY_CODE)
    for info in ERRORS_BY_CODE.values():
        assert info.name == info.name.upper() and " " not in info.name
        assert info.description.strip()


# kafka-python names a few errors after older Kafka releases, and treats
# CORRUPT_MESSAGE as fatal; Kafka 4.1 (the reference) renamed/reclassified them.
KAFKA_PYTHON_DEVIATIONS = {
    -1: "UNKNOWN",
    0: "NO_ERROR",
    2: "CORRUPT_MESSAGE",
    6: "NOT_LEADER_FOR_PARTITION",
    10: "MESSAGE_SIZE_TOO_LARGE",
    17: "INVALID_TOPIC",
    39: "INVALID_REPLICATION_ASSIGNMENT",
}


def test_table_agrees_with_kafka_python_errors():
    kafka_errors = pytest.importorskip("kafka.errors")
    theirs = {}
    for _, cls in inspect.getmembers(kafka_errors, inspect.isclass):
        errno = getattr(cls, "errno", None)
        if isinstance(errno, int) and issubclass(cls, kafka_errors.BrokerResponseError):
            theirs[errno] = (cls.message, bool(cls.retriable))
    assert len(theirs) > 120
    compared = 0
    for code, (name, retriable) in theirs.items():
        if code in KAFKA_PYTHON_DEVIATIONS:
            assert name == KAFKA_PYTHON_DEVIATIONS[code]
            continue
        info = ERRORS_BY_CODE[code]
        assert (info.name, info.retriable) == (name, retriable), code
        compared += 1
    assert compared > 115


def test_hierarchy():
    assert issubclass(ProtocolDecodeError, KwireError)
    assert issubclass(ProtocolEncodeError, KwireError)
    assert issubclass(ProtocolEncodeError, ValueError)
    assert issubclass(KafkaApiError, KwireError)
    assert issubclass(KwireError, Exception)


def test_error_message_with_full_context():
    exc = error_for(6, topic="x", partition=3, broker=1)
    assert isinstance(exc, KafkaApiError)
    assert (exc.code, exc.name, exc.retriable) == (6, "NOT_LEADER_OR_FOLLOWER", True)
    assert (exc.topic, exc.partition, exc.broker) == ("x", 3, 1)
    assert str(exc) == (
        "Kafka error NOT_LEADER_OR_FOLLOWER (6, retriable) for topic 'x' partition 3 from broker 1: "
        "For requests intended only for the leader, this error indicates that the broker is not the "
        "current leader. For requests intended for any replica, this error indicates that the broker "
        "is not a replica of the topic partition."
    )


def test_error_message_without_context_and_with_broker_message():
    assert str(error_for(29)) == "Kafka error TOPIC_AUTHORIZATION_FAILED (29, not retriable): Topic authorization failed."
    exc = error_for(42, broker="b-2:9092", error_message="bad field")
    assert str(exc) == (
        "Kafka error INVALID_REQUEST (42, not retriable) from broker b-2:9092: "
        + ERRORS_BY_CODE[42].description
        + " (broker says: bad field)"
    )
    assert "for partition 4" in str(error_for(3, partition=4))


def test_unknown_code():
    exc = error_for(9999)
    assert exc.name == "UNKNOWN_ERROR_9999"
    assert exc.retriable is False
    assert error_info(9999).code == 9999


def test_raise_for_error():
    raise_for_error(0, topic="t")
    with pytest.raises(KafkaApiError) as caught:
        raise_for_error(3, topic="t", partition=0)
    assert caught.value.code == 3 and caught.value.retriable
    with pytest.raises(KwireError):
        raise_for_error(-1)


def test_api_error_pickles_with_context():
    exc = error_for(16, topic="t", partition=2, broker=7, error_message="moved")
    clone = pickle.loads(pickle.dumps(exc))
    assert type(clone) is KafkaApiError
    assert str(clone) == str(exc)
    assert (clone.code, clone.topic, clone.partition, clone.broker) == (16, "t", 2, 7)


def test_encode_error_renders_field_path():
    exc = ProtocolEncodeError("null is not allowed", ["topics", 0, "name"], "cannot encode MetadataRequest v1")
    assert str(exc) == "cannot encode MetadataRequest v1: field topics[0].name: null is not allowed"
    assert errors.NONE == 0
