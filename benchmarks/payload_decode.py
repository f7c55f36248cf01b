"""Protobuf and JSON decoding throughput: kwire's compiled decoders vs the formats' reference runtimes, same
payloads, same process.

Writes N Confluent-framed records of a realistic 12-field order (strings, longs, an int, a price, a timestamp, a
nested address, a list of tags, an optional coupon, a double, a boolean) with the reference runtime (Google's
protobuf (upb) for Protobuf, ``json.dumps`` for JSON), then decodes them all with both, each warmed first, and
checks that the results are equal (the runtime's values mapped to Spark's as spark-protobuf / kwire's JSON table
say). Prints records/s of kwire's whole decode (framing, kernel, Arrow assembly) and of the peer per record:
upb's ``FromString`` alone (no values taken out), upb parsing plus the values read out into Python rows, and
``json.loads`` (and ``orjson.loads`` when installed), and the ratios.

    python benchmarks/payload_decode.py [--format protobuf|json-schema|both] [--records 1000000] [--runs 3]
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import json
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa

from spark_kwire.formats.payload import payload_format

PROTO = """syntax = "proto3";
package bench;
import "google/protobuf/timestamp.proto";
message Order {
  int64 id = 1;
  string customer = 2;
  string email = 3;
  int32 quantity = 4;
  int64 total_cents = 5;
  google.protobuf.Timestamp created = 6;
  Address address = 7;
  repeated string tags = 8;
  optional string coupon = 9;
  double score = 10;
  int64 sequence = 11;
  bool express = 12;
  message Address { string street = 1; string city = 2; int32 zip = 3; }
}
"""
JSON_SCHEMA = {"type": "object", "required": ["id", "customer"], "properties": {
    "id": {"type": "integer"}, "customer": {"type": "string"}, "email": {"type": "string"},
    "quantity": {"type": "integer"}, "total": {"type": "number"},
    "created": {"type": "string", "format": "date-time"},
    "address": {"type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"},
                                                 "zip": {"type": "integer"}}},
    "tags": {"type": "array", "items": {"type": "string"}}, "coupon": {"type": ["string", "null"]},
    "score": {"type": "number"}, "sequence": {"type": "integer"}, "express": {"type": "boolean"}}}
SCHEMA_ID = 17
CITIES = ["Paris", "Lyon", "Oslo", "Kraków", "São Paulo", "Zürich", "Köln"]
TAGS = ["gift", "prime", "fragile", "bulk", "return"]
START = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)
UTC = datetime.timezone.utc


def header() -> bytes:
    return b"\x00" + struct.pack(">I", SCHEMA_ID)


def record(i: int) -> dict:
    return {"id": i * 7919 + 13, "customer": f"customer-{i % 50000:05d}", "email": f"user{i % 50000}@example.com",
            "quantity": i % 17 + 1, "total_cents": i * 37 % 10_000_000, "created_ms": i * 997,
            "address": {"street": f"{i % 999} Main Street", "city": CITIES[i % len(CITIES)], "zip": 10000 + i % 90000},
            "tags": TAGS[: i % 4], "coupon": None if i % 3 else f"SAVE{i % 50}", "score": (i % 1000) / 7,
            "sequence": i, "express": i % 5 == 0}


# ---- Protobuf ----------------------------------------------------------------------------------------------

def order_class():
    from harness.proto_text import well_known_include_dir

    folder = Path(tempfile.mkdtemp(prefix="kwire-bench-"))
    (folder / "bench_order.proto").write_text(PROTO)
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"-I{folder}", f"-I{well_known_include_dir()}",
                    f"--python_out={folder}", "bench_order.proto"], check=True)
    sys.path.insert(0, str(folder))
    return importlib.import_module("bench_order_pb2").Order


def protobuf_payloads(n: int, order) -> list[bytes]:
    head = header() + b"\x00"  # message indexes [0]
    out = []
    for i in range(n):
        r = record(i)
        m = order(id=r["id"], customer=r["customer"], email=r["email"], quantity=r["quantity"],
                  total_cents=r["total_cents"], tags=r["tags"], score=r["score"], sequence=r["sequence"],
                  express=r["express"])
        m.created.seconds, m.created.nanos = 1704067200 + r["created_ms"] // 1000, r["created_ms"] % 1000 * 1_000_000
        m.address.street, m.address.city, m.address.zip = r["address"]["street"], r["address"]["city"], \
            r["address"]["zip"]
        if r["coupon"] is not None:
            m.coupon = r["coupon"]
        out.append(head + m.SerializeToString())
    return out


def upb_rows(values: list[bytes], order) -> list[dict]:
    """upb parses each record and its values are read out as spark-protobuf shows them (a proto3 zero is null)."""
    epoch = datetime.datetime(1970, 1, 1, tzinfo=UTC)
    rows = []
    parse = order.FromString
    for v in values:
        m = parse(v[6:])
        a = m.address
        rows.append({
            "id": m.id or None, "customer": m.customer or None, "email": m.email or None,
            "quantity": m.quantity or None, "total_cents": m.total_cents or None,
            "created": epoch + datetime.timedelta(seconds=m.created.seconds, microseconds=m.created.nanos // 1000)
            if m.HasField("created") else None,
            "address": {"street": a.street or None, "city": a.city or None, "zip": a.zip or None}
            if m.HasField("address") else None,
            "tags": list(m.tags), "coupon": m.coupon if m.HasField("coupon") else None, "score": m.score or None,
            "sequence": m.sequence or None, "express": m.express or None})
    return rows


def upb_parse_only(values: list[bytes], order) -> None:
    parse = order.FromString
    for v in values:
        parse(v[6:])


# ---- JSON --------------------------------------------------------------------------------------------------

def json_payloads(n: int) -> list[bytes]:
    head = header()
    out = []
    for i in range(n):
        r = record(i)
        created = START + datetime.timedelta(milliseconds=r.pop("created_ms"))
        r["created"] = created.isoformat().replace("+00:00", "Z")
        r["total"] = r.pop("total_cents") / 100
        out.append(head + json.dumps(r).encode())
    return out


def json_rows(values: list[bytes], loads) -> list[dict]:
    """The JSON parser of the peer, and the values mapped as kwire's table says (date-times to UTC instants)."""
    rows = []
    fromiso = datetime.datetime.fromisoformat
    for v in values:
        o = loads(v[5:])
        rows.append({"id": o["id"], "customer": o["customer"], "email": o["email"], "quantity": o["quantity"],
                     "total": float(o["total"]), "created": fromiso(o["created"]), "address": o["address"],
                     "tags": o["tags"], "coupon": o["coupon"], "score": float(o["score"]), "sequence": o["sequence"],
                     "express": o["express"]})
    return rows


def json_loads_only(values: list[bytes], loads) -> None:
    for v in values:
        loads(v[5:])


# ---- running -----------------------------------------------------------------------------------------------

def median_time(fn, runs: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def kwire_time(name: str, schema, values: pa.Array, runs: int) -> tuple[float, list]:
    fmt = payload_format(name)
    decoder = fmt.decoder(schema)
    decoder.add_writer_schema(SCHEMA_ID, schema)
    decoder.decode(fmt.frames(values.slice(0, 1000)))  # compiles or loads the kernels; sizes the columns
    decoder.decode(fmt.frames(values))
    seconds, result = median_time(lambda: decoder.decode(fmt.frames(values)), runs)
    assert result.error_count == 0, result.describe(int(result.errors.argmax()))
    return seconds, result.values.to_pylist()


def report(n: int, label: str, seconds: float, base: float | None = None) -> None:
    ratio = f"   kwire / this: {seconds / base:5.1f}x" if base else ""
    print(f"  {label:<44}: {n / seconds / 1e6:6.2f} M records/s ({seconds:.3f} s){ratio}")


def bench_protobuf(n: int, runs: int) -> None:
    order = order_class()
    t = time.perf_counter()
    raw = protobuf_payloads(n, order)
    values = pa.array(raw, pa.binary())
    print(f"Protobuf: {n:,} records, {values.nbytes / n:.0f} B on average, written by upb in "
          f"{time.perf_counter() - t:.1f} s")
    ours_s, ours = kwire_time("protobuf", PROTO, values, runs)
    upb_rows(raw[:1000], order)
    parse_s, _ = median_time(lambda: upb_parse_only(raw, order), runs)
    rows_s, theirs = median_time(lambda: upb_rows(raw, order), runs)
    for row in ours:
        row["created"] = row["created"].astimezone(UTC) if row["created"] else None
    assert ours == theirs, "kwire and upb decoded different values"
    report(n, "kwire whole decode (framing, kernel, Arrow)", ours_s)
    report(n, "upb FromString per record (values left inside)", parse_s, ours_s)
    report(n, "upb FromString + values read into rows", rows_s, ours_s)


def bench_json(n: int, runs: int) -> None:
    t = time.perf_counter()
    raw = json_payloads(n)
    values = pa.array(raw, pa.binary())
    print(f"JSON: {n:,} records, {values.nbytes / n:.0f} B on average, written by json.dumps in "
          f"{time.perf_counter() - t:.1f} s")
    ours_s, ours = kwire_time("json-schema", JSON_SCHEMA, values, runs)
    peers = [("json.loads", json.loads)]
    try:
        import orjson

        peers.append(("orjson.loads", orjson.loads))
    except ImportError:
        print("  (orjson is not installed: only json.loads is compared)")
    report(n, "kwire whole decode (framing, kernel, Arrow)", ours_s)
    for name, loads in peers:
        json_rows(raw[:1000], loads)
        parse_s, _ = median_time(lambda: json_loads_only(raw, loads), runs)
        rows_s, theirs = median_time(lambda: json_rows(raw, loads), runs)
        assert [{**r, "created": r["created"].astimezone(UTC)} for r in ours] == theirs, \
            f"kwire and {name} decoded different values"
        report(n, f"{name} per record (dicts)", parse_s, ours_s)
        report(n, f"{name} + values mapped into rows", rows_s, ours_s)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--format", choices=["protobuf", "json-schema", "both"], default="both")
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    if args.format in ("protobuf", "both"):
        bench_protobuf(args.records, args.runs)
    if args.format in ("json-schema", "both"):
        bench_json(args.records, args.runs)
    print(f"(medians of {args.runs} runs; results asserted equal)")


if __name__ == "__main__":
    main()
