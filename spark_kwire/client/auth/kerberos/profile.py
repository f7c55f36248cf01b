"""What the machine's krb5 configuration says about a realm, for error messages: its KDCs and the default realm.

The Kerberos library itself reads the configuration (``KRB5_CONFIG``, a colon-separated list of files, else
``/etc/krb5.conf``); this reader only names, in a message, the file and the KDCs a failed login went to.
"""

from __future__ import annotations

import os
import re

__all__ = ["krb5_config_files", "realm_kdcs", "default_realm", "describe_realm"]

_SECTION = re.compile(r"^\s*\[([^\]]+)\]\s*$")
_RELATION = re.compile(r"^\s*([^=\s]+)\s*=\s*(.*?)\s*$")


def krb5_config_files() -> list[str]:
    """The krb5 configuration files the library reads, in order."""
    value = os.environ.get("KRB5_CONFIG")
    return [p for p in value.split(":") if p] if value else ["/etc/krb5.conf"]


def _relations() -> list[tuple[str, str | None, str, str]]:
    """(section, realm or None, tag, value) of every relation in the configuration files (simple profile syntax)."""
    found = []
    for path in krb5_config_files():
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
        except OSError:
            continue
        section, realm, depth = "", None, 0
        for line in lines:
            line = line.split("#", 1)[0].split(";", 1)[0] if not line.lstrip().startswith(("#", ";")) else ""
            match = _SECTION.match(line)
            if match and depth == 0:
                section, realm = match.group(1).strip(), None
                continue
            if line.strip() == "}":
                depth = max(0, depth - 1)
                if depth == 0:
                    realm = None
                continue
            match = _RELATION.match(line)
            if not match:
                continue
            tag, value = match.group(1), match.group(2)
            if value == "{":
                depth += 1
                if depth == 1:
                    realm = tag
                continue
            found.append((section, realm, tag, value))
    return found


def default_realm() -> str | None:
    for section, _, tag, value in _relations():
        if section == "libdefaults" and tag == "default_realm":
            return value
    return None


def realm_kdcs(realm: str) -> list[str]:
    """The ``kdc`` entries of ``realm`` in ``[realms]`` (empty: DNS or nothing)."""
    return [value for section, r, tag, value in _relations() if section == "realms" and r == realm and tag == "kdc"]


def describe_realm(realm: str | None) -> str:
    """``realm KWIRE.TEST (KDC 127.0.0.1:88, from /etc/krb5.conf)`` for messages."""
    files = ", ".join(krb5_config_files())
    if not realm:
        realm = default_realm()
        if not realm:
            return f"no realm (the principal names none and {files} sets no default_realm)"
    kdcs = realm_kdcs(realm)
    where = f"KDC {', '.join(kdcs)}" if kdcs else "no kdc entry: KDCs looked up in DNS, if allowed"
    return f"realm {realm} ({where}; krb5 config {files})"
