"""Avro decoding throughput: kwire's compiled decoder vs fastavro (the peer), same payloads, same process.

Writes N Confluent-framed records of a realistic 12-field schema (strings, longs, a decimal, a
timestamp-millis, a nested record, an array, a nullable union) with fastavro, then decodes them all with
both, each warmed first, and checks that the results are equal. Prints records/s of: kwire's kernel alone,
kwire's whole decode (framing + kernel + Arrow assembly), fastavro's ``schemaless_reader`` per record (as
confluent-kafka's AvroDeserializer runs it), and the ratio.
    python benchmarks/avro_decode.py [--records 1000000] [--runs 3] [--python]
"""

from __future__ import annotations

import argparse
import datetime
import decimal
import io
import statistics
import struct
import time

import fastavro
import pyarrow as pa

from spark_kwire.formats import kernels
from spark_kwire.formats.avro.decoder import AvroDecoder
from spark_kwire.formats.framing import parse_confluent

SCHEMA = {"type": "record", "name": "Order", "namespace": "bench", "fields": [
    {"name": "id", "type": "long"},
    {"name": "customer", "type": "string"},
    {"name": "email", "type": "string"},
    {"name": "quantity", "type": "int"},
    {"name": "total", "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2}},
    {"name": "created", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "address", "type": {"type": "record", "name": "Address", "fields": [
        {"name": "street", "type": "string"}, {"name": "city", "type": "string"}, {"name": "zip", "type": "int"}]}},
    {"name": "tags", "type": {"type": "array", "items": "string"}},
    {"name": "coupon", "type": ["null", "string"], "default": None},
    {"name": "score", "type": "double"},
    {"name": "sequence", "type": "long"},
    {"name": "express", "type": "boolean"},
]}
SCHEMA_ID = 17
CITIES = ["Paris", "Lyon", "Oslo", "Kraków", "São Paulo", "Zürich", "Köln"]
TAGS = ["gift", "prime", "fragile", "bulk", "return"]


def records(n: int):
    start = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)
    for i in range(n):
        yield {
            "id": i * 7919 + 13, "customer": f"customer-{i % 50000:05d}", "email": f"user{i % 50000}@example.com",
            "quantity": i % 17 + 1, "total": decimal.Decimal(i * 37 % 10_000_000) / 100,
            "created": start + datetime.timedelta(milliseconds=i * 997),
            "address": {"street": f"{i % 999} Main Street", "city": CITIES[i % len(CITIES)], "zip": 10000 + i % 90000},
            "tags": TAGS[: i % 4], "coupon": None if i % 3 else f"SAVE{i % 50}", "score": (i % 1000) / 7,
            "sequence": i, "express": i % 5 == 0,
        }


def payloads(n: int) -> pa.Array:
    parsed = fastavro.parse_schema(SCHEMA)
    header = b"\x00" + struct.pack(">I", SCHEMA_ID)
    out = []
    for r in records(n):
        buf = io.BytesIO()
        buf.write(header)
        fastavro.schemaless_writer(buf, parsed, r)
        out.append(buf.getvalue())
    return pa.array(out, pa.binary())


def fastavro_decode(values: list[bytes]) -> list:
    parsed = fastavro.parse_schema(SCHEMA)
    read = fastavro.schemaless_reader
    return [read(io.BytesIO(memoryview(v)[5:]), parsed, None) for v in values]


def best(times: list[float]) -> float:
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--python", action="store_true", help="kwire's pure-Python kernels instead of numba")
    args = ap.parse_args()
    n = args.records
    implementation = "python" if args.python else "numba"
    t = time.perf_counter()
    values = payloads(n)
    print(f"{n:,} records, {values.nbytes / n:.0f} B on average, written by fastavro in "
          f"{time.perf_counter() - t:.1f} s")
    raw = values.to_pylist()

    with kernels.using(implementation) as k:
        decoder = AvroDecoder(SCHEMA)
        decoder.add_writer_schema(SCHEMA_ID, SCHEMA)
        decoder.decode(values.slice(0, 1000))  # compiles or loads the kernel; sizes the columns
        decoder.decode(values)
        kernel_times, whole_times = [], []
        original = k.decode_rows

        def timed_kernel(*a):
            start = time.perf_counter()
            result = original(*a)
            kernel_times[-1] += time.perf_counter() - start
            return result

        k.decode_rows = timed_kernel
        try:
            for _ in range(args.runs):
                kernel_times.append(0.0)
                start = time.perf_counter()
                result = decoder.decode(parse_confluent(values))
                whole_times.append(time.perf_counter() - start)
        finally:
            k.decode_rows = original
    fastavro_decode(raw[:1000])
    peer_times = []
    for _ in range(args.runs):
        start = time.perf_counter()
        theirs = fastavro_decode(raw)
        peer_times.append(time.perf_counter() - start)

    assert result.error_count == 0
    ours = result.values.to_pylist()
    assert ours == theirs, "kwire and fastavro decoded different values"

    kernel, whole, peer = best(kernel_times), best(whole_times), best(peer_times)
    print(f"kwire ({implementation}) kernel alone : {n / kernel / 1e6:6.2f} M records/s ({kernel:.3f} s)")
    print(f"kwire ({implementation}) whole decode : {n / whole / 1e6:6.2f} M records/s ({whole:.3f} s: framing, "
          f"kernel, Arrow)")
    print(f"fastavro schemaless_reader   : {n / peer / 1e6:6.2f} M records/s ({peer:.3f} s)")
    print(f"ratio kwire whole / fastavro : {peer / whole:6.1f}x   (medians of {args.runs} runs; results equal)")


if __name__ == "__main__":
    main()
