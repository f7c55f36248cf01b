"""Which principals a keytab holds keys for, to explain a login that fails (MIT's library only says "No credentials
cache found" when a keytab lacks the principal).

Reads the MIT keytab format (version 0x0502, and 0x0501 in native byte order): each entry's principal name and
key version. Key bytes are skipped, never kept or shown.
"""

from __future__ import annotations

import struct

__all__ = ["KeytabEntry", "keytab_entries", "keytab_path"]


class KeytabEntry(tuple):
    """(principal ``name@REALM``, key version number)."""

    @property
    def principal(self) -> str:
        return self[0]

    @property
    def kvno(self) -> int:
        return self[1]


def keytab_path(name: str) -> str | None:
    """The file behind a keytab name (``FILE:/p``, ``WRFILE:/p`` or a plain path), None for other kinds."""
    for prefix in ("FILE:", "WRFILE:"):
        if name.startswith(prefix):
            return name[len(prefix):]
    head, sep, _ = name.partition(":")
    if sep and head.isalpha() and head.isupper() and len(head) > 1:
        return None  # MEMORY:, KEYRING:... not a file
    return name


def keytab_entries(path: str) -> list[KeytabEntry]:
    """The entries of the keytab file at ``path``; raises OSError when it cannot be read, ValueError when it is not
    a keytab."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 2 or data[0] != 5 or data[1] not in (1, 2):
        raise ValueError(f"{path} is not a Kerberos keytab (no 0x0502 header)")
    order = ">" if data[1] == 2 else "="
    i32, u16, u32 = struct.Struct(order + "i"), struct.Struct(order + "H"), struct.Struct(order + "I")
    pos = 2
    out = []
    while pos + 4 <= len(data):
        (size,) = i32.unpack_from(data, pos)
        pos += 4
        if size <= 0:  # a hole left by a removed entry
            pos += -size
            continue
        end = pos + size
        if end > len(data):
            raise ValueError(f"{path}: truncated keytab entry at byte {pos}")
        entry = memoryview(data)[pos:end]

        def counted(at: int) -> tuple[str, int]:
            (length,) = u16.unpack_from(entry, at)
            return bytes(entry[at + 2: at + 2 + length]).decode("utf-8", "replace"), at + 2 + length

        (components,) = u16.unpack_from(entry, 0)
        if data[1] == 1:
            components -= 1  # version 1 counts the realm too
        realm, at = counted(2)
        names = []
        for _ in range(components):
            part, at = counted(at)
            names.append(part)
        if data[1] == 2:
            at += 4  # name type
        at += 4  # timestamp
        kvno = entry[at]
        at += 1
        (_enctype,) = u16.unpack_from(entry, at)
        (key_length,) = u16.unpack_from(entry, at + 2)
        at += 4 + key_length  # the key itself is skipped
        if at + 4 <= len(entry):
            (kvno32,) = u32.unpack_from(entry, at)
            kvno = kvno32 or kvno
        out.append(KeytabEntry(("/".join(names) + "@" + realm, kvno)))
        pos = end
    return out
