"""A stream loads numba's record kernels at its first micro-batch (spark/workers/stream_kernels.py); a one-off query keeps
running its first calls on the pure-Python kernels (protocol/records/compilation/warming.py).

Each check runs in a fresh interpreter, whose kernels nothing has loaded yet, with kwire's reader and writer objects
called as Spark's tasks call them (about 3 s each)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

PRELUDE = """
    import json, sys
    import pyarrow as pa
    from spark_kwire.protocol.records import kernels
    from spark_kwire.protocol.records.compilation import warming
    from spark_kwire.spark.options.parsing import ReadOptions, WriteOptions
    from spark_kwire.spark.reading.planner import OffsetRange
    bootstrap, topic = sys.argv[1], sys.argv[2]

    def loaded(path):  # loaded now, or handed to a helper that compiles it (numba's cache lacks it)
        return warming.is_ready(path) or path in warming._asked
"""


def _run(code: str, *args: str) -> dict:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(PRELUDE) + textwrap.dedent(code), *args],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_stream_reads_load_the_decoding_kernels_at_once_batch_reads_do_not(bootstrap, create_topic, produce,
                                                                            topic_name):
    create_topic(topic_name, 1)
    produce(topic_name, [(b"k", b"v")] * 5)
    got = _run("""
        from spark_kwire.spark.reading.batch import KwireBatchReader
        from spark_kwire.spark.source import stream_reader_class
        options = {"kafka.bootstrap.servers": bootstrap, "subscribe": topic}
        rng = OffsetRange(topic, 0, 0, 5)
        batch_rows = sum(b.num_rows for b in KwireBatchReader(ReadOptions.parse(options)).read(rng))
        after_batch = loaded("decode")
        stream = stream_reader_class()(ReadOptions.parse(options, streaming=True))
        stream_rows = sum(b.num_rows for b in stream.read(rng))
        print(json.dumps({"numba": kernels.IMPLEMENTATION == "numba", "rows": [batch_rows, stream_rows],
                          "after_batch": after_batch, "after_stream": loaded("decode")}))
    """, bootstrap, topic_name)
    assert got == {"numba": True, "rows": [5, 5], "after_batch": False, "after_stream": True}


def test_stream_writes_load_the_partitioning_and_encoding_kernels_at_once(bootstrap, create_topic, topic_name):
    create_topic(topic_name, 2)
    got = _run("""
        from spark_kwire.spark.writing.writer import KwireBatchWriter, KwireStreamWriter
        rows = pa.RecordBatch.from_pydict({"key": [b"a", b"b"], "value": [b"1", b"2"]})
        options = {"kafka.bootstrap.servers": bootstrap, "topic": topic}
        batch = KwireBatchWriter(WriteOptions.parse(options)).write(iter([rows]))
        after_batch = [loaded("partition"), loaded("encode")]
        stream = KwireStreamWriter(WriteOptions.parse(options, streaming=True)).write(iter([rows]))
        print(json.dumps({"written": [sum(batch.written.values()), sum(stream.written.values())],
                          "after_batch": after_batch, "after_stream": [loaded("partition"), loaded("encode")]}))
    """, bootstrap, topic_name)
    assert got == {"written": [2, 2], "after_batch": [False, False], "after_stream": [True, True]}
