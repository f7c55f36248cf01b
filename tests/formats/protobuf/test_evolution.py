"""Schema evolution as protobuf defines it: a topic written under three versions of a message (fields added,
a field widened int32 -> int64, a field removed, one renamed, a nested message grown), read with the latest
version in one batch: fields are matched by number, what the writer did not have is absent, what the reader
does not have is skipped. Each row equals what Google's runtime reads when it parses the row's bytes with the
reader's message (protobuf's own evolution), through spark-protobuf's mapping."""

from __future__ import annotations

import pyarrow as pa

from spark_kwire.formats.framing import confluent_header
from spark_kwire.formats.protobuf import ProtobufDecoder
from tests.formats.protobuf import protos
from tests.formats.protobuf.oracle import normalize, spark_value


def test_three_versions_read_as_one_typed_result(order_versions):
    v1, v2, v3 = order_versions
    rows = [
        (1, v1(id=1, customer="ann", quantity=-5, tags=["a", "b"])),
        (2, v2(id=2, customer="bob", quantity=2**40, tags=["c"], total=9.5, address=v2.Address(city="Oslo"))),
        (3, v3(id=3, buyer="cy", quantity=7, total=1.25, address=v3.Address(city="Rome", zip="00100"), note="")),
        (1, v1(id=4)),
        (3, v3(id=5, note="n")),
    ]
    d = ProtobufDecoder(protos.ORDER_V3)
    for schema_id, text in ((1, protos.ORDER_V1), (2, protos.ORDER_V2), (3, protos.ORDER_V3)):
        d.add_writer_schema(schema_id, text)
    values = pa.array([confluent_header(sid, [0]) + m.SerializeToString() for sid, m in rows], pa.binary())
    result = d.decode(values, mode="FAILFAST")
    got = [normalize(v, d.arrow_type) for v in result.values.to_pylist()]
    expected = [spark_value(v3.FromString(m.SerializeToString())) for _, m in rows]
    assert got == expected
    assert got[0] == {"id": 1, "buyer": "ann", "quantity": -5, "total": None, "address": None, "note": None}
    assert got[1]["quantity"] == 2**40 and got[1]["address"] == {"city": "Oslo", "zip": None}
    assert result.schema_ids.tolist() == [1, 2, 3, 1, 3]


def test_missing_writer_schemas_are_listed_before_decoding(order_versions):
    v1 = order_versions[0]
    d = ProtobufDecoder(protos.ORDER_V3)
    d.add_writer_schema(1, protos.ORDER_V1)
    values = pa.array([confluent_header(sid, [0]) + v1(id=1).SerializeToString() for sid in (1, 4, 2, 4)] + [None])
    assert d.missing_schema_ids(values) == [2, 4]
