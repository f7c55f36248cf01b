"""Subject name strategies, as pure functions ``(topic, is_key, record_name) -> subject``.

* ``TopicNameStrategy`` (the default): ``<topic>-key`` or ``<topic>-value``;
* ``RecordNameStrategy``: the record's fully-qualified name (Avro full name, Protobuf message full name);
* ``TopicRecordNameStrategy``: ``<topic>-<fully-qualified record name>``.

:func:`subject_name_strategy` accepts these names, Java's class names
(``io.confluent.kafka.serializers.subject.TopicNameStrategy``) and confluent-kafka Python's function names
(``topic_subject_name_strategy``...).
"""

from __future__ import annotations

from typing import Callable

from spark_kwire.client.registry.errors import RegistryConfigError

__all__ = ["topic_name_strategy", "record_name_strategy", "topic_record_name_strategy", "subject_name_strategy",
           "STRATEGY_NAMES"]

_JAVA_PACKAGE = "io.confluent.kafka.serializers.subject."


def topic_name_strategy(topic: str, is_key: bool, record_name: str | None = None) -> str:
    return f"{topic}-{'key' if is_key else 'value'}"


def _record(record_name: str | None, strategy: str) -> str:
    if not record_name:
        raise ValueError(f"{strategy} needs the record's fully-qualified name, and there is none (a schema "
                         f"without a named record type?)")
    return record_name


def record_name_strategy(topic: str, is_key: bool, record_name: str | None = None) -> str:
    return _record(record_name, "RecordNameStrategy")


def topic_record_name_strategy(topic: str, is_key: bool, record_name: str | None = None) -> str:
    return f"{topic}-{_record(record_name, 'TopicRecordNameStrategy')}"


_STRATEGIES = {
    "TopicNameStrategy": topic_name_strategy,
    "RecordNameStrategy": record_name_strategy,
    "TopicRecordNameStrategy": topic_record_name_strategy,
}
_PYTHON_NAMES = {"topic_subject_name_strategy": "TopicNameStrategy",
                 "record_subject_name_strategy": "RecordNameStrategy",
                 "topic_record_subject_name_strategy": "TopicRecordNameStrategy"}
STRATEGY_NAMES = tuple(_STRATEGIES)


def subject_name_strategy(name: str, key: str = "subject.name.strategy") -> Callable[[str, bool, str | None], str]:
    """The strategy called ``name``; ``key`` is the option named in the error for an unknown one."""
    text = str(name).strip()
    short = _PYTHON_NAMES.get(text, text.removeprefix("kafkashaded.").removeprefix(_JAVA_PACKAGE))
    for known, strategy in _STRATEGIES.items():
        if short.lower() == known.lower():
            return strategy
    raise RegistryConfigError(key, name, ", ".join(STRATEGY_NAMES), reason="unknown subject name strategy")
