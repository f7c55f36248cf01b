"""PySpark 4.0 and 4.1 re-read pyspark.zip at every call into a Python worker; in the workers kwire runs in, it does
not.

Spark puts ``pyspark.zip`` and py4j's zip first on its Python workers' path, so PySpark is imported from them
through ``zipimport``: one ``zipimporter`` per package directory, 15 in a worker that has run a data source. PySpark
4.0 and 4.1 begin every call into a worker (a task, the planning of a write, a micro-batch's commit) with
``importlib.invalidate_caches()`` (``worker_util.setup_spark_files``; 4.2 calls it only when the path changed), and
up to Python 3.12 that makes every zipimporter read its archive's whole directory again: 80 to 100 ms per call
here, three or four calls per micro-batch of a Python source and sink, most of what Spark 4.0 and 4.1 spend on
such a micro-batch. The archives do not change while Spark runs. In a Python worker of Spark's (forked by its
daemon and reused, see ``worker_gc``), :func:`keep_zip_imports_cheap` makes each zipimporter read its archive
again only when the file's size or modification time changed; elsewhere (a driver, a notebook) it does nothing.
The first call of each worker, before kwire is imported there, still pays.
"""

from __future__ import annotations

import os
import sys
import zipimport

from spark_kwire.spark.workers.garbage_collection import in_reused_spark_worker

_ORIGINAL = zipimport.zipimporter.invalidate_caches


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_mtime_ns, found.st_size


def _invalidate_changed_archive(importer) -> None:
    """zipimporter.invalidate_caches, skipped while the archive is the file this importer last read."""
    stamp = _stamp(importer.archive)
    if stamp is not None and getattr(importer, "_kwire_read_stamp", None) == stamp:
        return
    _ORIGINAL(importer)
    try:
        importer._kwire_read_stamp = stamp
    except AttributeError:  # an importer without instance attributes: it reads its archive as before
        pass


def keep_zip_imports_cheap() -> bool:
    """In a reused Spark Python worker, have zipimporters re-read only archives that changed; True if installed
    (now or before)."""
    if zipimport.zipimporter.invalidate_caches is _invalidate_changed_archive:
        return True
    if not in_reused_spark_worker():
        return False
    for importer in list(sys.path_importer_cache.values()):
        if isinstance(importer, zipimport.zipimporter):  # read when made: stamped as read now
            importer._kwire_read_stamp = _stamp(importer.archive)
    zipimport.zipimporter.invalidate_caches = _invalidate_changed_archive
    return True
