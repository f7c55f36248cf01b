"""The format kernels, compiled by numba or run as plain Python: chosen once, at first use.

Each kernel is written once, as plain Python over numpy arrays, in a source module that lists its
functions in ``KERNELS`` (those also in its ``INLINE``, numba puts into the kernels calling them). The Python
implementation is those modules as imported. The numba one is a second
copy of each module, its functions compiled with the record kernels' ``@kernel`` (cached on disk, see
``protocol/records/jit/cache.py``) and its calls between kernels pointed at the compiled versions; two
helpers become LLVM intrinsics there (``copy_bytes``: memcpy, ``load_u64_le``: one unaligned load). So
there is one interpreter per format, compiled once per machine, whatever the schemas: a schema becomes a
program (numpy arrays) that the interpreter runs.

numba is used unless ``KWIRE_NO_NUMBA`` is true or numba cannot be imported, as for the record kernels.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import logging
import os
import threading
import types

import numpy as np

_log = logging.getLogger("spark_kwire.formats")

# the format-neutral building blocks every format's kernels call, in dependency order (loaded before the formats'),
# and the modules whose constants they compile in
BUILDING_BLOCKS = tuple(f"spark_kwire.formats.vm.{name}" for name in (
    "bytes_in", "bytes_out", "column_writes", "framing_scan", "utf8", "rows"))
BUILDING_BLOCK_CONSTANTS = ("spark_kwire.formats.vm.slots", "spark_kwire.formats.vm.codes")
# The format registry, imported by name when the kernels are first loaded (not at import): the formats it lists
# make decoders and encoders that use these kernels.
REGISTRY = "spark_kwire.formats.payload"


def sources() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(kernel modules, modules whose constants the kernels have compiled in): the building blocks, then each
    format's (``Codec.kernels`` / ``Codec.constants``) in the registry's order, a module two formats share once."""
    codecs = importlib.import_module(REGISTRY).CODECS
    modules = dict.fromkeys((*BUILDING_BLOCKS, *(name for codec in codecs for name in codec.kernels)))
    constants = dict.fromkeys((*BUILDING_BLOCK_CONSTANTS, *(name for codec in codecs for name in codec.constants)))
    return tuple(modules), tuple(constants)


def _add(functions: dict, name: str, kernel_names, get) -> None:
    """Adds a module's kernels to the one namespace of :class:`Kernels`; two modules exporting one name would
    make one of them unreachable, so that is refused."""
    for k in kernel_names:
        if k in functions:
            raise RuntimeError(f"kernel name {k!r} of {name} is already taken by another format module")
        functions[k] = get(k)


class Kernels(types.SimpleNamespace):
    """The kernels of one implementation, as attributes; ``implementation`` is ``"numba"`` or ``"python"``."""

    implementation: str

    def quiet(self):
        """Silences numpy's integer-overflow warnings around calls of the Python kernels (their int64
        arithmetic wraps on purpose, as compiled code does)."""
        if self.implementation == "python":
            return np.errstate(over="ignore")
        return contextlib.nullcontext()


def _python() -> Kernels:
    functions = {}
    for name in sources()[0]:
        module = importlib.import_module(name)
        _add(functions, name, module.KERNELS, lambda k, m=module: getattr(m, k))
    return Kernels(implementation="python", **functions)


def _numba() -> Kernels:
    from ..protocol.records.jit import intrinsics
    from ..protocol.records.jit.cache import kernel_without_refcounts
    from ..protocol.records.jit.intrinsics import copy_bytes, load_u64_le

    overrides = {("spark_kwire.formats.vm.bytes_in", "copy_bytes"): copy_bytes,
                 ("spark_kwire.formats.vm.bytes_in", "load_u64_le"): load_u64_le}
    modules, constants = sources()
    compiled = {}  # id of the plain function -> its compiled version
    own = []  # the dispatchers made here
    copies = []
    for name in modules:
        plain = importlib.import_module(name)
        spec = importlib.util.find_spec(name)
        copy = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(copy)
        inline = set(getattr(copy, "INLINE", ()))
        for k in copy.KERNELS:
            fn = overrides.get((name, k))
            if fn is None:
                fn = kernel_without_refcounts(getattr(copy, k), inline=k in inline)
                own.append(fn)
            compiled[id(getattr(plain, k))] = fn
            compiled[id(getattr(copy, k))] = fn
        copies.append(copy)
    functions = {}
    for name, copy in zip(modules, copies):
        for key, value in list(vars(copy).items()):
            if isinstance(value, types.FunctionType) and id(value) in compiled:
                setattr(copy, key, compiled[id(value)])
        _add(functions, name, copy.KERNELS, lambda k, m=copy: getattr(m, k))
    _forget_stale_cache(own, [importlib.util.find_spec(n).origin for n in modules + constants] + [intrinsics.__file__])
    return Kernels(implementation="numba", **functions)


def _forget_stale_cache(dispatchers: list, files: list[str]) -> None:
    """numba checks a cached kernel against its own source file only, not against the kernels it calls (whose
    code it has compiled in): after an edit of ``column_writes.py`` alone, the cached interpreter would
    still run the old appends. So the kernels' cache is flushed whenever any of their source files changed
    since it was written (a stamp of their contents sits beside the cache)."""
    digest = hashlib.sha256()
    for path in files:
        with open(path, "rb") as f:
            digest.update(f.read())
    stamp = digest.hexdigest()
    try:
        marker = os.path.join(dispatchers[0]._cache.cache_path, "spark_kwire-formats-kernels.sources")
        with open(marker, encoding="utf-8") as f:
            if f.read().strip() == stamp:
                return
    except (AttributeError, IndexError, OSError):
        pass  # no cache, or no stamp yet
    for dispatcher in dispatchers:
        try:
            dispatcher._cache.flush()
        except (AttributeError, OSError):
            pass
    try:
        os.makedirs(os.path.dirname(marker), exist_ok=True)
        with open(marker, "w", encoding="utf-8") as f:
            f.write(stamp)
    except (NameError, OSError):
        pass


_lock = threading.Lock()
_loaded: dict[str, Kernels] = {}
_chosen: list[str] = []
WHY = ""


def _choose() -> str:
    global WHY
    from ..protocol.records.kernels import NO_NUMBA_VARIABLE, numba_refused

    if numba_refused():
        WHY = f"{NO_NUMBA_VARIABLE} is set"
        return "python"
    try:
        import numba  # noqa: F401
    except Exception as exc:  # ImportError, or whatever a numba broken against this numpy raises
        WHY = f"numba cannot be imported ({type(exc).__name__}: {exc})"
        _log.warning("numba cannot be imported (%s); spark_kwire decodes typed payloads with its pure-Python "
                     "kernels, many times slower", WHY)
        return "python"
    WHY = "numba imported"
    return "numba"


def load(implementation: str) -> Kernels:
    """The kernels of ``"numba"`` or ``"python"`` (made once per process)."""
    with _lock:
        found = _loaded.get(implementation)
        if found is None:
            found = _loaded[implementation] = {"numba": _numba, "python": _python}[implementation]()
        return found


def current() -> Kernels:
    """The kernels calls use now: the implementation chosen at first use, or the one a ``using()`` block names."""
    if not _chosen:
        with _lock:
            if not _chosen:
                _chosen.append(_choose())
    return load(_chosen[-1])


@contextlib.contextmanager
def using(implementation: str):
    """Makes :func:`current` return ``implementation``'s kernels inside the block (tests and benchmarks run
    both in one process). Not for concurrent use."""
    current()
    _chosen.append(implementation)
    try:
        yield load(implementation)
    finally:
        _chosen.pop()
