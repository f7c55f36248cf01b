"""Spark's own `kafka` connector code (the 4.0.0 jar on the test session's spark.jars), called through py4j.

Tests compare kwire's planning arithmetic with these answers on many generated inputs, so that a
difference from Spark shows up wherever it is, not only on the cases someone thought of.
"""

from __future__ import annotations

import json
import re

_PACKAGE = "org.apache.spark.sql.kafka010"


def _jvm(spark):
    return spark.sparkContext._jvm


def _gateway(spark):
    return spark.sparkContext._gateway


def _scala_list(spark, items):
    jvm = _jvm(spark)
    java_list = jvm.java.util.ArrayList()
    for item in items:
        java_list.add(item)
    return jvm.scala.jdk.javaapi.CollectionConverters.asScala(java_list).toList()


def _class(spark, name: str):
    return _jvm(spark).py4j.reflection.ReflectionUtil.classForName(name)


def spark_offset_ranges(spark, ranges, *, min_partitions: int | None, max_records: int | None) -> list[tuple]:
    """What Spark's KafkaOffsetRangeCalculator.getRanges makes of `ranges` [(topic, partition, start, end)]:
    a list of (topic, partition, start, end), one per Spark partition."""
    jvm = _jvm(spark)
    options = jvm.java.util.HashMap()
    if min_partitions is not None:
        options.put("minPartitions", str(min_partitions))
    if max_records is not None:
        options.put("maxRecordsPerPartition", str(max_records))
    package = getattr(jvm.org.apache.spark.sql, "kafka010")
    calculator = package.KafkaOffsetRangeCalculator.apply(jvm.org.apache.spark.sql.util.CaseInsensitiveStringMap(options))
    none = jvm.scala.Option.empty()
    spark_ranges = _scala_list(spark, [
        package.KafkaOffsetRange(jvm.org.apache.kafka.common.TopicPartition(t, p), start, end, none)
        for t, p, start, end in ranges
    ])
    result = calculator.getRanges(spark_ranges, _scala_list(spark, []))  # no executor locations
    # One string for the whole answer: a py4j call per range would be slow on thousands of ranges.
    text = result.mkString("\n")
    return [_parse_range(line) for line in text.splitlines()]


# KafkaOffsetRange(<topic>-<partition>,<from>,<until>,<preferred location>), a Scala case class's toString
_RANGE = re.compile(r"^KafkaOffsetRange\((.+)-(\d+),(-?\d+),(-?\d+),.*\)$")


def _parse_range(line: str) -> tuple:
    match = _RANGE.match(line)
    if not match:
        raise AssertionError(f"unexpected KafkaOffsetRange text: {line!r}")
    topic, partition, start, end = match.groups()
    return topic, int(partition), int(start), int(end)


def _offsets_json(offsets: dict) -> str:
    data: dict = {}
    for (topic, partition), offset in offsets.items():
        data.setdefault(topic, {})[str(partition)] = offset
    return json.dumps(data)


def _from_offsets_json(text: str) -> dict:
    return {(t, int(p)): o for t, parts in json.loads(text).items() for p, o in parts.items()}


def spark_rate_limit(spark, start: dict, latest: dict, limit: int) -> dict:
    """What Spark's KafkaMicroBatchStream.rateLimit (private) returns for maxOffsetsPerTrigger=`limit`.

    Every partition of `latest` must be in `start` (Spark would otherwise ask a broker for the earliest
    offsets of the new ones). The method uses no field of the stream for such inputs, so it is called on
    an instance allocated without running the constructor."""
    jvm, gateway = _jvm(spark), _gateway(spark)
    json_utils = _jvm(spark).org.apache.spark.sql.kafka010.JsonUtils
    stream_class = _class(spark, f"{_PACKAGE}.KafkaMicroBatchStream")
    unsafe_field = _class(spark, "sun.misc.Unsafe").getDeclaredField("theUnsafe")
    unsafe_field.setAccessible(True)
    stream = unsafe_field.get(None).allocateInstance(stream_class)
    map_class = _class(spark, "scala.collection.immutable.Map")
    parameter_types = gateway.new_array(jvm.java.lang.Class, 3)
    parameter_types[0], parameter_types[1], parameter_types[2] = jvm.java.lang.Long.TYPE, map_class, map_class
    method = stream_class.getDeclaredMethod("rateLimit", parameter_types)
    method.setAccessible(True)
    arguments = gateway.new_array(jvm.java.lang.Object, 3)
    arguments[0] = limit  # Method.invoke widens an Integer to the long parameter
    arguments[1] = json_utils.partitionOffsets(_offsets_json(start))
    arguments[2] = json_utils.partitionOffsets(_offsets_json(latest))
    return _from_offsets_json(json_utils.partitionOffsets(method.invoke(stream, arguments)))
