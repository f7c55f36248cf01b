"""Which paths' kernels numba's disk cache holds, and who is compiling which: notes read without importing numba.

A path (``decode``, ``encode``, ...) counts as cached when a process that ran it with numba left a note listing
the cache's index files of the kernels it used, and those files still exist. Notes are named by the path and a
key of what numba's cache depends on here (the kernels' source files, the Python and numba versions), so a
note left by other sources or another Python counts for nothing. A process compiling a path for the others
holds its lock file (``<note>.compiling``, holding that process's id) meanwhile.

Notes live where numba caches: in ``NUMBA_CACHE_DIR`` when that is set, else in the kernels' ``__pycache__``
when it is writable, else in kwire's private temporary directory (``<tmp>/spark-kwire-numba-<uid>``, the one
``jit/cache.py`` falls back to as well). None of these writable: nothing is noted, nothing counts as cached.
"""

from __future__ import annotations

import glob
import hashlib
import importlib.util
import os
import stat
import sys
import tempfile
import time

_JIT_DIRECTORY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jit")
STALE_LOCK_S = 900  # a lock older than this is not trusted even if its process lives (a hung compile)

_key: str | None = None
_directory: tuple[str | None, str | None] | None = None  # (NUMBA_CACHE_DIR it was chosen under, directory)


def private_temporary_directory() -> str | None:
    """``<tmp>/spark-kwire-numba-<uid>``, created 0700; None unless it is a directory this user owns, that
    nobody else can write (machine code loaded from it runs in this process), and a file can be made in."""
    uid = os.getuid() if hasattr(os, "getuid") else None
    path = os.path.join(tempfile.gettempdir(), f"spark-kwire-numba-{uid if uid is not None else 'user'}")
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.lstat(path)
        if not stat.S_ISDIR(st.st_mode) or (uid is not None and st.st_uid != uid) or st.st_mode & 0o022:
            return None
        tempfile.TemporaryFile(dir=path).close()
    except OSError:
        return None
    return path


def _writable_directory(path: str) -> bool:
    try:
        os.makedirs(path, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except OSError:
        return False
    return True


def notes_directory() -> str | None:
    """Where this process reads and writes notes (see the module's docstring); None when nowhere."""
    global _directory
    configured = os.environ.get("NUMBA_CACHE_DIR") or None
    if _directory is None or _directory[0] != configured:
        if configured and _writable_directory(configured):
            chosen = configured
        elif _writable_directory(os.path.join(_JIT_DIRECTORY, "__pycache__")):
            chosen = os.path.join(_JIT_DIRECTORY, "__pycache__")
        else:
            chosen = private_temporary_directory()
        _directory = (configured, chosen)
    return _directory[1]


def _numba_version() -> str:
    # from the installed distribution's folder name: importlib.metadata would cost tens of milliseconds
    spec = importlib.util.find_spec("numba")
    if spec is None or not spec.origin:
        return "absent"
    site = os.path.dirname(os.path.dirname(spec.origin))
    found = sorted(glob.glob(os.path.join(site, "numba-*.dist-info")))
    return os.path.basename(found[-1]) if found else "unknown"


def cache_key() -> str:
    """A short hash of what numba's cached kernels depend on here, computed once per process."""
    global _key
    if _key is None:
        digest = hashlib.sha256(f"{sys.version_info[:2]} {_numba_version()} {_JIT_DIRECTORY}".encode())
        for name in sorted(os.listdir(_JIT_DIRECTORY)):
            if name.endswith(".py"):
                with open(os.path.join(_JIT_DIRECTORY, name), "rb") as f:
                    digest.update(name.encode() + f.read())
        _key = digest.hexdigest()[:16]
    return _key


def note_path(path: str) -> str | None:
    directory = notes_directory()
    return None if directory is None else os.path.join(directory, f"spark_kwire-{path}-{cache_key()}.cached")


def is_cached(path: str) -> bool:
    """Whether numba's cache holds ``path``'s kernels, as noted by :func:`remember`. An index can still be unusable
    (another CPU, another numba in the same folder): then numba compiles, as it would have anyway."""
    note = note_path(path)
    if note is None:
        return False
    try:
        with open(note, encoding="utf-8") as f:
            indexes = f.read().split("\n")
    except OSError:
        return False
    return bool(indexes) and all(index and os.path.exists(index) for index in indexes)


def remember(path: str, index_files: list[str]) -> bool:
    """Notes that numba's cache holds ``path``'s kernels, whose index files are ``index_files`` (every index this
    process compiled or loaded, having just run the path); returns whether the note was written."""
    note = note_path(path)
    if note is None or not index_files or not all(os.path.exists(i) for i in index_files):
        return False
    temporary = f"{note}.{os.getpid()}.tmp"
    try:
        with open(temporary, "w", encoding="utf-8") as out:
            out.write("\n".join(sorted(index_files)))
        os.replace(temporary, note)
    except OSError:
        return False
    return True


def _lock_path(path: str) -> str | None:
    note = note_path(path)
    return None if note is None else note + ".compiling"


def try_lock(path: str, pid: int) -> bool:
    """Takes ``path``'s compile lock for process ``pid``; False when a live process holds it or it cannot be made."""
    lock = _lock_path(path)
    if lock is None:
        return False
    temporary = f"{lock}.{os.getpid()}.tmp"
    try:
        with open(temporary, "w", encoding="utf-8") as f:
            f.write(str(pid))
        for _ in range(2):
            try:
                os.link(temporary, lock)  # made whole, with its content, or not at all
                return True
            except FileExistsError:
                if lock_holder(path) is not None:
                    return False
                # lock_holder removed a stale lock: try once more
        return False
    except OSError:
        return False
    finally:
        try:
            os.remove(temporary)
        except OSError:
            pass


def hand_lock(path: str, pid: int) -> None:
    """Records that process ``pid`` now holds the lock this process took."""
    lock = _lock_path(path)
    if lock is not None:
        temporary = f"{lock}.{os.getpid()}.tmp"
        with open(temporary, "w", encoding="utf-8") as f:
            f.write(str(pid))
        os.replace(temporary, lock)


def lock_holder(path: str) -> int | None:
    """The live process compiling ``path`` for the others, or None; a lock whose process is gone (or that is older
    than ``STALE_LOCK_S``) is removed."""
    lock = _lock_path(path)
    if lock is None:
        return None
    try:
        with open(lock, encoding="utf-8") as f:
            pid = int(f.read().strip() or 0)
        age = time.time() - os.stat(lock).st_mtime
    except (OSError, ValueError):
        return None
    if pid > 0 and age < STALE_LOCK_S and _alive(pid):
        return pid
    try:
        os.remove(lock)
    except OSError:
        pass
    return None


def unlock(path: str) -> None:
    lock = _lock_path(path)
    if lock is not None:
        try:
            os.remove(lock)
        except OSError:
            pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (finished, not yet reaped by its parent) is not compiling anything
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return True
