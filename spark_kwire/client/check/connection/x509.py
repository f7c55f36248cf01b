"""What the check reports of an X.509 certificate, read from its DER bytes with the standard library only.

Python's ``ssl`` module describes a peer's certificate only after verifying it; the check must describe it also when
verification fails (an expired certificate, one for another host), so it reads the few fields it reports itself:
subject, issuer, validity, and the DNS names and IP addresses of the subjectAltName extension (RFC 5280).
:func:`names_host` matches a host name as TLS clients do (subjectAltName, one leftmost ``*`` label; the common name
only when the certificate has no subjectAltName).
"""

from __future__ import annotations

import base64
import datetime as _dt
import ipaddress
import re
from dataclasses import dataclass

__all__ = ["Certificate", "read_certificate", "pem_certificates", "names_host"]

_OID_NAMES = {"2.5.4.3": "CN", "2.5.4.10": "O", "2.5.4.11": "OU", "2.5.4.6": "C", "2.5.4.7": "L", "2.5.4.8": "ST",
              "2.5.4.5": "serialNumber", "1.2.840.113549.1.9.1": "emailAddress",
              "0.9.2342.19200300.100.1.25": "DC", "0.9.2342.19200300.100.1.1": "UID"}
_SUBJECT_ALT_NAME = "2.5.29.17"
_SEQUENCE, _SET, _OID, _OCTETS, _BOOLEAN = 0x30, 0x31, 0x06, 0x04, 0x01
_UTC_TIME, _GENERALIZED_TIME = 0x17, 0x18
_STRINGS = {0x0C: "utf-8", 0x13: "ascii", 0x16: "ascii", 0x14: "latin-1", 0x1E: "utf-16-be", 0x1C: "utf-32-be",
            0x12: "ascii", 0x1A: "ascii"}


@dataclass(frozen=True)
class Certificate:
    subject: str  # RFC 4514 order: "CN=localhost,O=Example"
    issuer: str
    not_before: _dt.datetime  # UTC
    not_after: _dt.datetime
    dns_names: tuple[str, ...] = ()
    ip_addresses: tuple[str, ...] = ()
    common_name: str | None = None

    def days_left(self, now: _dt.datetime | None = None) -> float:
        now = now or _dt.datetime.now(_dt.timezone.utc)
        return (self.not_after - now).total_seconds() / 86400.0

    @property
    def names(self) -> tuple[str, ...]:
        """The names it is for: the subjectAltName entries, else the common name."""
        return (self.dns_names + self.ip_addresses) or ((self.common_name,) if self.common_name else ())


def _tlv(data: bytes, pos: int) -> tuple[int, int, int]:
    """(tag, start of the value, end of the value) of the element at ``pos``."""
    if pos + 2 > len(data):
        raise ValueError("truncated DER element")
    tag = data[pos]
    length = data[pos + 1]
    pos += 2
    if length & 0x80:
        count = length & 0x7F
        if count == 0 or count > 4 or pos + count > len(data):
            raise ValueError("unsupported DER length")
        length = int.from_bytes(data[pos:pos + count], "big")
        pos += count
    end = pos + length
    if end > len(data):
        raise ValueError("DER element longer than its container")
    return tag, pos, end


def _children(data: bytes, start: int, end: int) -> list[tuple[int, int, int]]:
    out, pos = [], start
    while pos < end:
        tag, value_start, value_end = _tlv(data, pos)
        out.append((tag, value_start, value_end))
        pos = value_end
    return out


def _oid(value: bytes) -> str:
    if not value:
        raise ValueError("empty OID")
    first = value[0]
    parts = [min(first // 40, 2), first - 40 * min(first // 40, 2)]
    number = 0
    for byte in value[1:]:
        number = (number << 7) | (byte & 0x7F)
        if not byte & 0x80:
            parts.append(number)
            number = 0
    return ".".join(map(str, parts))


def _text(tag: int, value: bytes) -> str:
    return value.decode(_STRINGS.get(tag, "latin-1"), "replace")


def _name(data: bytes, start: int, end: int) -> tuple[str, str | None]:
    """A Name as RFC 4514 text (last RDN first), and its common name."""
    rdns, common_name = [], None
    for tag, s, e in _children(data, start, end):
        if tag != _SET:
            raise ValueError("a Name holds SETs of attributes")
        attributes = []
        for _, a_start, a_end in _children(data, s, e):
            (oid_tag, o_s, o_e), (value_tag, v_s, v_e) = _children(data, a_start, a_end)[:2]
            oid = _oid(data[o_s:o_e])
            value = _text(value_tag, data[v_s:v_e])
            if oid == "2.5.4.3":
                common_name = value
            attributes.append(f"{_OID_NAMES.get(oid, oid)}={value}")
        rdns.append("+".join(attributes))
    return ",".join(reversed(rdns)), common_name


def _time(tag: int, value: bytes) -> _dt.datetime:
    text = value.decode("ascii")
    if tag == _UTC_TIME:
        year = int(text[:2])
        text = f"{1900 + year if year >= 50 else 2000 + year}{text[2:]}"
    match = re.fullmatch(r"(\d{14})(?:\.\d+)?Z", text)
    if not match:
        raise ValueError(f"unsupported certificate time {text!r}")
    return _dt.datetime.strptime(match.group(1), "%Y%m%d%H%M%S").replace(tzinfo=_dt.timezone.utc)


def _alt_names(data: bytes) -> tuple[tuple[str, ...], tuple[str, ...]]:
    _, start, end = _tlv(data, 0)
    dns, ips = [], []
    for tag, s, e in _children(data, start, end):
        if tag == 0x82:  # [2] dNSName
            dns.append(data[s:e].decode("ascii", "replace"))
        elif tag == 0x87:  # [7] iPAddress
            ips.append(str(ipaddress.ip_address(bytes(data[s:e]))))
    return tuple(dns), tuple(ips)


def read_certificate(der: bytes) -> Certificate:
    """The fields the check reports of a DER certificate; ValueError when it is not one."""
    der = bytes(der)
    tag, start, end = _tlv(der, 0)
    if tag != _SEQUENCE:
        raise ValueError("not a DER certificate")
    tbs_tag, tbs_start, tbs_end = _children(der, start, end)[0]
    fields = _children(der, tbs_start, tbs_end)
    if fields and fields[0][0] == 0xA0:  # [0] version
        fields = fields[1:]
    # serialNumber, signature, issuer, validity, subject, subjectPublicKeyInfo, then optional fields
    issuer, _ = _name(der, fields[2][1], fields[2][2])
    (nb_tag, nb_s, nb_e), (na_tag, na_s, na_e) = _children(der, fields[3][1], fields[3][2])[:2]
    subject, common_name = _name(der, fields[4][1], fields[4][2])
    dns: tuple[str, ...] = ()
    ips: tuple[str, ...] = ()
    for tag, s, e in fields[6:]:
        if tag != 0xA3:  # [3] extensions
            continue
        (_, ext_s, ext_e), = _children(der, s, e)[:1]
        for _, x_s, x_e in _children(der, ext_s, ext_e):
            parts = _children(der, x_s, x_e)
            if _oid(der[parts[0][1]:parts[0][2]]) == _SUBJECT_ALT_NAME:
                octets = parts[-1]
                dns, ips = _alt_names(der[octets[1]:octets[2]])
    return Certificate(subject, issuer, _time(nb_tag, der[nb_s:nb_e]), _time(na_tag, der[na_s:na_e]), dns, ips,
                       common_name)


def pem_certificates(text: str | bytes) -> list[bytes]:
    """The DER bytes of every ``CERTIFICATE`` block of a PEM text, in order."""
    if isinstance(text, bytes):
        text = text.decode("ascii", "replace")
    blocks = re.findall(r"-----BEGIN CERTIFICATE-----(.*?)-----END CERTIFICATE-----", text, re.S)
    return [base64.b64decode("".join(block.split())) for block in blocks]


def _dns_match(pattern: str, host: str) -> bool:
    pattern, host = pattern.lower().rstrip("."), host.lower().rstrip(".")
    if pattern.startswith("*."):
        head, _, rest = host.partition(".")
        return bool(head) and rest == pattern[2:]
    return pattern == host


def names_host(cert: Certificate, host: str) -> bool:
    """Whether ``cert`` is for ``host`` (a name or an IP address), as a TLS client checks it."""
    host = host.strip("[]")
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    if address is not None:
        return any(ipaddress.ip_address(ip) == address for ip in cert.ip_addresses)
    if cert.dns_names or cert.ip_addresses:
        return any(_dns_match(name, host) for name in cert.dns_names)
    return cert.common_name is not None and _dns_match(cert.common_name, host)
