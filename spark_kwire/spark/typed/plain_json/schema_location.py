"""The versions of a stream's inferred JSON schema, kept in its ``schemaLocation`` directory:

    <schemaLocation>/_schemas/0, 1, 2, ...

Each version is one JSON object, ``{"kwire": 1, "value": <StructType JSON>, "key": <StructType JSON>}`` (the
sides that are inferred; each as ``StructType.json()`` writes it, which ``StructType.fromJson`` and
``valueSchema`` read). The highest number is the latest. A version is written to a temporary file and linked to
its number, so two writers never both create the same version and a reader never sees half a file.

The driver writes version 0 when a stream first starts; an executor writes the next one when a micro-batch meets
new fields (addNewColumns). Plain file operations: a local path, or one mounted at the same path on the driver
and every executor.
"""

from __future__ import annotations

import json
import os
import uuid

from spark_kwire.spark.errors import KwireSchemaError

__all__ = ["latest", "record", "versions_dir"]

_FORMAT = 1


def versions_dir(location: str) -> str:
    return os.path.join(location, "_schemas")


def _numbers(location: str) -> list[int]:
    try:
        names = os.listdir(versions_dir(location))
    except FileNotFoundError:
        return []
    except OSError as e:
        raise KwireSchemaError(f"Cannot list the schema versions in {versions_dir(location)!r} (schemaLocation): "
                               f"{e}.") from None
    return sorted(int(n) for n in names if n.isdigit())


def latest(location: str) -> tuple[int, dict[str, str]] | None:
    """(version, {side: StructType JSON text}) of the latest recorded version, or None when none is."""
    numbers = _numbers(location)
    if not numbers:
        return None
    path = os.path.join(versions_dir(location), str(numbers[-1]))
    try:
        with open(path, encoding="utf-8") as f:
            content = json.load(f)
        schemas = {side: json.dumps(content[side], separators=(",", ":"), ensure_ascii=False)
                   for side in ("value", "key") if side in content}
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise KwireSchemaError(f"The schema version {path!r} (schemaLocation) cannot be read: {e}. It holds "
                               f'{{"kwire": 1, "value": <StructType JSON>}}; restore it, or remove it to read with '
                               f"the version before.") from None
    if content.get("kwire") != _FORMAT or not schemas:
        raise KwireSchemaError(f"The schema version {path!r} (schemaLocation) is not one kwire wrote (expected "
                               f'{{"kwire": 1, "value": <StructType JSON>}}).')
    return numbers[-1], schemas


def record(location: str, schemas: dict[str, str], after: int | None) -> int | None:
    """Writes ``schemas`` ({side: StructType JSON text}) as the version after ``after`` (None: the first, 0);
    returns its number, or None when that version exists already (someone else recorded it: read it again)."""
    folder = versions_dir(location)
    number = 0 if after is None else after + 1
    body = {"kwire": _FORMAT, **{side: json.loads(text) for side, text in schemas.items()}}
    temporary = os.path.join(folder, f".{number}.{uuid.uuid4().hex}.tmp")
    try:
        os.makedirs(folder, exist_ok=True)
        with open(temporary, "w", encoding="utf-8") as f:
            json.dump(body, f, ensure_ascii=False)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(temporary, os.path.join(folder, str(number)))
        except FileExistsError:
            return None
    except OSError as e:
        raise KwireSchemaError(f"Cannot record schema version {number} in {folder!r} (schemaLocation): {e}. The "
                               f"location must be a directory the driver and the executors can write (a local or "
                               f"mounted path).") from None
    finally:
        try:
            os.unlink(temporary)
        except OSError:
            pass
    return number
