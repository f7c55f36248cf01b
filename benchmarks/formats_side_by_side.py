"""Two versions of kwire's payload formats in one process: did a change keep decode and encode speed and the
kernels' compile time? Figures from separate runs minutes apart differ more on a busy machine than a change
does; side by side, alternating, both versions share whatever the machine does meanwhile.

The other version comes from a git revision (exported with its package renamed ``spark_kwire_old``, as
``versions_side_by_side.py`` does). Data: N records of the 12-field order of ``avro_decode.py`` (Avro, written by
fastavro) and of ``payload_decode.py`` (Protobuf by upb, JSON Schema by json.dumps; ``json``: plain JSON, the same
documents unframed, read with the Spark schema of their fields). Per format and round, in
turn for each version: the whole decode of the N records, then the encode of the decoded column back into framed
values, each timed in CPU seconds of this process (steadier than wall time on a shared machine); results asserted
equal between the versions; the best round of each (the least disturbed by the machine's other work) and the
ratio of the medians are printed. Then the CPU seconds a fresh process with an empty numba
cache spends compiling the kernels of the formats compared (``formats.warmup.warm_up(formats)``; plain JSON by one
decode and one encode, as older versions have no warm-up sample for it), per version.

    python benchmarks/formats_side_by_side.py --revision main [--against HEAD] [--records 300000] [--rounds 5]
                                               [--cold-runs 3] [--formats avro,protobuf,json-schema,json]

``--against`` exports a second revision the same way (package ``spark_kwire_new``) instead of using this checkout's
files, so that the files can change while it runs.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _common  # noqa: F401  (puts the repository on sys.path, for the harness)
import avro_decode
import payload_decode
from versions_side_by_side import OLD_PACKAGE, export_renamed

NEW_PACKAGE = "spark_kwire"
AGAINST_PACKAGE = "spark_kwire_new"
# the JSON Schema order's fields as a Spark schema, for plain JSON (the same documents, unframed)
PLAIN_JSON_SCHEMA = ("id BIGINT, customer STRING, email STRING, quantity BIGINT, total DOUBLE, created TIMESTAMP, "
                     "address STRUCT<street: STRING, city: STRING, zip: BIGINT>, tags ARRAY<STRING>, coupon STRING, "
                     "score DOUBLE, sequence BIGINT, express BOOLEAN")
COLD = r'''
import importlib, json, sys, time
package, names = sys.argv[1], sys.argv[2].split(",")
t0 = time.process_time()
warm_up = importlib.import_module(package + ".formats.warmup").warm_up
payload_format = importlib.import_module(package + ".formats.payload").payload_format
t1 = time.process_time()
warm_up(tuple(name for name in names if name != "json"))
if "json" in names:  # plain JSON by the payload calls every version has (older warm-ups have no sample of it)
    import pyarrow as pa
    fmt = payload_format("json")
    decoder = fmt.decoder("id BIGINT, name STRING, at TIMESTAMP, day DATE, tags ARRAY<STRING>, m MAP<STRING, DOUBLE>")
    values = pa.array([b'{"id":1,"name":"x","at":"2024-05-01T12:00:00Z","day":"2024-05-01","tags":["a"],'
                       b'"m":{"k":1.5}}'], pa.binary())
    fmt.encoder("", 0).encode(decoder.decode(values).values)
print(json.dumps({"cpu": time.process_time() - t1, "import_cpu": t1 - t0}))
'''


def inputs(n: int, names: list[str]):
    """(format, schema, framed values) of each format named."""
    import pyarrow as pa

    made = {"avro": lambda: (avro_decode.SCHEMA, avro_decode.payloads(n)),
            "protobuf": lambda: (payload_decode.PROTO, pa.array(payload_decode.protobuf_payloads(
                n, payload_decode.order_class()), pa.binary())),
            "json-schema": lambda: (payload_decode.JSON_SCHEMA, pa.array(payload_decode.json_payloads(n), pa.binary())),
            "json": lambda: (PLAIN_JSON_SCHEMA,
                             pa.array([v[5:] for v in payload_decode.json_payloads(n)], pa.binary()))}
    return [(name, *made[name]()) for name in names]


def sides(package: str, name: str, schema):
    fmt = importlib.import_module(f"{package}.formats.payload").payload_format(name)
    decoder = fmt.decoder(schema)
    if name != "json":  # (plain JSON has no registry schemas)
        decoder.add_writer_schema(payload_decode.SCHEMA_ID, schema)
    encoder = fmt.encoder(schema, payload_decode.SCHEMA_ID)
    return fmt, decoder, encoder


def timed(fn):
    """(CPU seconds, result): on a shared machine the CPU a call used varies less than the time it took."""
    start = time.process_time()
    result = fn()
    return time.process_time() - start, result


def compare(n: int, rounds: int, packages: dict[str, str], names: list[str]) -> None:
    for name, schema, values in inputs(n, names):
        print(f"{name}: {n:,} records, {values.nbytes / n:.0f} B on average")
        made = {label: sides(package, name, schema) for label, package in packages.items()}
        seconds = {(label, what): [] for label in packages for what in ("decode", "encode")}
        for label, (fmt, decoder, encoder) in made.items():  # warm: kernels compiled or loaded, columns sized
            encoder.encode(decoder.decode(fmt.frames(values)).values)
        for r in range(rounds):
            order = list(made.items())
            order = order[r % len(order):] + order[:r % len(order)]
            decoded, encoded = {}, {}
            for label, (fmt, decoder, encoder) in order:
                s, result = timed(lambda: decoder.decode(fmt.frames(values)))
                assert result.error_count == 0
                seconds[(label, "decode")].append(s)
                decoded[label] = result.values
                s, written = timed(lambda: encoder.encode(result.values))
                seconds[(label, "encode")].append(s)
                encoded[label] = written.values
            first = next(iter(packages))
            for label in packages:
                assert decoded[label].equals(decoded[first]), f"{name}: {label} decoded other values than {first}"
                assert encoded[label].equals(encoded[first]), f"{name}: {label} encoded other bytes than {first}"
        for what in ("decode", "encode"):
            best = {label: min(seconds[(label, what)]) for label in packages}
            medians = {label: statistics.median(seconds[(label, what)]) for label in packages}
            line = "   ".join(f"{label}: {n / s / 1e6:5.2f} M rec/s ({s:.3f} CPU s)" for label, s in best.items())
            labels = list(packages)
            print(f"  {what:<7} {line}   {labels[1]} / {labels[0]} speed: best {best[labels[0]] / best[labels[1]]:.3f}"
                  f", median {medians[labels[0]] / medians[labels[1]]:.3f}")


def cold(runs: int, packages: dict[str, str], path: str, names: list[str]) -> None:
    print(f"compile of the kernels of {', '.join(names)} (warm_up, a plain JSON decode and encode) in a fresh process, "
          f"empty numba cache: CPU s, median of {runs}")
    cpu = {label: [] for label in packages}
    for _ in range(runs):
        for label, package in packages.items():
            with tempfile.TemporaryDirectory() as cache:
                out = subprocess.run([sys.executable, "-c", COLD, package, ",".join(names)], capture_output=True,
                                     text=True, check=True,
                                     env=dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=path))
                cpu[label].append(json.loads(out.stdout.strip().splitlines()[-1])["cpu"])
    for label, values in cpu.items():
        print(f"  {label:<24} {statistics.median(values):6.2f} CPU s   (runs: {', '.join(f'{v:.2f}' for v in values)})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--revision", required=True)
    ap.add_argument("--against", help="a revision to compare with instead of this checkout's files")
    ap.add_argument("--records", type=int, default=300_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cold-runs", type=int, default=3)
    ap.add_argument("--formats", default="avro,protobuf,json-schema")
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="kwire-old-"))
    try:
        export_renamed(args.revision, folder)
        packages = {f"kwire {args.revision}": OLD_PACKAGE, "kwire (this checkout)": NEW_PACKAGE}
        if args.against:
            (folder / "against").mkdir()
            export_renamed(args.against, folder / "against")
            (folder / "against" / OLD_PACKAGE).rename(folder / AGAINST_PACKAGE)
            for path in (folder / AGAINST_PACKAGE).rglob("*.py"):
                text = path.read_text(encoding="utf-8")
                path.write_text(text.replace(OLD_PACKAGE, AGAINST_PACKAGE), encoding="utf-8")
            packages = {f"kwire {args.revision}": OLD_PACKAGE, f"kwire {args.against}": AGAINST_PACKAGE}
        sys.path.insert(0, str(folder))
        path = os.pathsep.join([str(folder), str(_common.REPO), *filter(None, [os.environ.get("PYTHONPATH")])])
        compare(args.records, args.rounds, packages, args.formats.split(","))
        if args.cold_runs:
            cold(args.cold_runs, packages, path, args.formats.split(","))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print("(best of the rounds, the median's ratio beside; decoded values and encoded bytes asserted equal between "
          "the versions)")


if __name__ == "__main__":
    main()
