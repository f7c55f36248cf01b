"""What a stream's micro-batch does in each process, for ``benchmarks/stream_latency.py --trace``.

Python imports ``sitecustomize`` at start-up from the first folder on ``sys.path`` that has one:
stream_latency.py puts this folder first on the PYTHONPATH of a traced pipeline's Spark process, which
passes it to every Python process Spark starts (the streaming source runner, planning and commit workers,
task workers). When ``KWIRE_BATCH_TRACE`` names a folder, each process appends one JSON line per event to
``<folder>/<pid>.jsonl``:

* every request a kwire connection sends (its API name; a Produce's partition count) and every connection
  it opens (``connect`` only when a socket is really made);
* the wall and CPU time (of the calling thread) of the stream reader's latestOffset, partitions and commit,
  of its ``read`` (the whole generator, every ``next``), of the stream writer's ``write`` (with when its
  first and last input batch came, and the time after the last, the flush) and ``commit``, and of the
  do-nothing source and sink's (``null_source.py``, ``null_sink.py``) same calls.

Hooks are set when those modules are imported, by wrapping their classes' methods: nothing of kwire
changes, and without ``KWIRE_BATCH_TRACE`` this file does nothing. A measuring aid, not a test.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import json
import os
import sys
import threading
import time

FOLDER = os.environ.get("KWIRE_BATCH_TRACE")


def _emit(event: str, wall: float, cpu: float, **extra) -> None:
    line = json.dumps({"pid": os.getpid(), "ev": event, "t": time.time(), "wall": wall, "cpu": cpu, **extra})
    with open(os.path.join(FOLDER, f"{os.getpid()}.jsonl"), "a", encoding="utf-8") as out:
        out.write(line + "\n")


_active = threading.local()  # events under way in this thread: a subclass's call of super() counts once


def _timed(name, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        running = _active.__dict__.setdefault("names", set())
        if name in running:
            return fn(*args, **kwargs)
        running.add(name)
        t0, c0 = time.perf_counter(), time.thread_time()
        try:
            return fn(*args, **kwargs)
        finally:
            _emit(name, time.perf_counter() - t0, time.thread_time() - c0)
            running.discard(name)
    return wrapper


def _timed_generator(name, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        t0, c0 = time.perf_counter(), time.thread_time()
        items = iter(fn(*args, **kwargs))
        wall, cpu, count = time.perf_counter() - t0, time.thread_time() - c0, 0
        try:
            while True:
                t0, c0 = time.perf_counter(), time.thread_time()
                try:
                    item = next(items)
                except StopIteration:
                    return
                finally:
                    wall += time.perf_counter() - t0
                    cpu += time.thread_time() - c0
                count += 1
                yield item
        finally:
            _emit(name, wall, cpu, batches=count)
    return wrapper


def _timed_writer(name, fn):
    @functools.wraps(fn)
    def wrapper(self, iterator, *args, **kwargs):
        seen = {"first": None, "last": None}
        t0, c0 = time.perf_counter(), time.thread_time()

        def watched():
            for item in iterator:
                if seen["first"] is None:
                    seen["first"] = time.perf_counter() - t0
                yield item
            seen["last"] = time.perf_counter() - t0
        try:
            return fn(self, watched(), *args, **kwargs)
        finally:
            wall = time.perf_counter() - t0
            _emit(name, wall, time.thread_time() - c0, first=seen["first"], last=seen["last"],
                  after=None if seen["last"] is None else wall - seen["last"])
    return wrapper


def _hook_connection(module) -> None:
    connection = module.BrokerConnection
    connect, send = connection.connect, connection.send

    def traced_connect(self, *args, **kwargs):
        if getattr(self, "_sock", None) is not None:
            return connect(self, *args, **kwargs)
        return _timed("connect", connect)(self, *args, **kwargs)

    def traced_send(self, api, body, *args, **kwargs):
        name = module.api_name(api)
        parts = None
        if name == "Produce" and isinstance(body, dict):
            parts = sum(len(t.get("partition_data") or []) for t in body.get("topic_data") or [])
        _emit("send." + name, 0.0, 0.0, parts=parts)
        return send(self, api, body, *args, **kwargs)

    connection.connect, connection.send = traced_connect, traced_send


def _hook_methods(module, names: dict) -> None:
    for cls in vars(module).values():
        if isinstance(cls, type) and cls.__module__ == module.__name__:
            for method, (event, wrap) in names.items():
                if method in vars(cls):
                    setattr(cls, method, wrap(f"{event}.{method}", vars(cls)[method]))


_READER = {"latestOffset": ("reader", _timed), "partitions": ("reader", _timed), "commit": ("reader", _timed),
           "read": ("reader", _timed_generator)}
_WRITER = {"write": ("writer", _timed_writer), "commit": ("writer", _timed)}
_NULL_READER = {"latestOffset": ("null", _timed), "partitions": ("null", _timed), "read": ("null", _timed_generator)}
_NULL_WRITER = {"write": ("null", _timed_writer), "commit": ("null", _timed)}
HOOKS = {
    "spark_kwire.client.core.connection": _hook_connection,
    "spark_kwire.spark.reading.stream": lambda m: _hook_methods(m, _READER),
    "spark_kwire.spark.reading.stream_self_limited": lambda m: _hook_methods(m, _READER),
    "spark_kwire.spark.writing.writer": lambda m: _hook_methods_of(m, "KwireStreamWriter", _WRITER),
    "null_source": lambda m: _hook_methods_of(m, "NullStreamReader", _NULL_READER),
    "null_sink": lambda m: _hook_methods_of(m, "NullArrowStreamWriter", _NULL_WRITER),
}


def _hook_methods_of(module, class_name: str, names: dict) -> None:
    cls = getattr(module, class_name)
    for method, (event, wrap) in names.items():
        if method in vars(cls):
            setattr(cls, method, wrap(f"{event}.{method}", vars(cls)[method]))


class _HookingFinder(importlib.abc.MetaPathFinder):
    """Finds the hooked modules as usual and sets their hooks once they have run."""

    def find_spec(self, name, path, target=None):
        if name not in HOOKS:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            HOOKS[name](module)
        spec.loader.exec_module = exec_module
        return spec


if FOLDER:
    sys.meta_path.insert(0, _HookingFinder())
