"""Character-level facts Spark's JSON parser (Jackson 2.21, reading UTF-8 bytes) relies on, for inference.

* :func:`decode`: a record's bytes as text. Valid UTF-8 decodes as usual. Otherwise the text is decoded as
  Jackson decodes it (a lead byte and its continuation bytes, overlong forms accepted, encoded surrogates and
  stray bytes refused) and the index of the first refused byte is returned: a document is malformed when its
  parse reaches that index, and fine when its first value ends before it (Jackson reads no further).
* :func:`java_identifier_part`: ``Character.isJavaIdentifierPart``, which ends literals (``nullx``) and makes
  unquoted field names.
* :func:`unquoted_name_char`: whether a character can be part of an unquoted field name (Jackson checks each
  UTF-8 byte of it against a Latin-1 table).
* :func:`decimal_text`: precision and scale of a string as ``new java.math.BigDecimal(s.replace(",", ""))``
  reads it (prefersDecimal on strings, locale en-US), or None.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["decode", "java_identifier_part", "unquoted_name_char", "decimal_text", "utf16_length"]

BAD = "\ufffd"  # stands for bytes Jackson refuses; its position is what counts


def decode(raw: bytes, lenient_surrogates: bool = False) -> tuple[str, int | None]:
    """``raw`` as text, and the index of the first character standing for bytes Jackson refuses (None when
    all were accepted). ``lenient_surrogates``: Jackson 2.18, which reads a surrogate encoded in UTF-8."""
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError:
        return _decode_like_jackson(raw, lenient_surrogates)


def _decode_like_jackson(raw: bytes, lenient_surrogates: bool) -> tuple[str, int | None]:
    parts: list[str] = []
    length = 0
    i, n = 0, len(raw)
    while i < n:
        try:
            text = raw[i:].decode("utf-8")
        except UnicodeDecodeError as e:
            text = raw[i:i + e.start].decode("utf-8")
            i += e.start
        else:
            i = n
        parts.append(text)
        length += len(text)
        if i >= n:
            break
        ch, size = _jackson_char(raw, i, lenient_surrogates)
        if ch is None:  # the first byte Jackson refuses: whatever follows is never read
            parts.append(BAD)
            return "".join(parts), length
        parts.append(ch)
        length += len(ch)
        i += size
    return "".join(parts), None


def _jackson_char(raw: bytes, i: int, lenient_surrogates: bool) -> tuple[str | None, int]:
    """The character Jackson decodes at ``raw[i]`` (a sequence Python's codec refuses) and its length in
    bytes, or (None, 0) when Jackson refuses it too."""
    b = raw[i]
    if b & 0xE0 == 0xC0:
        needed, code = 1, b & 0x1F
    elif b & 0xF0 == 0xE0:
        needed, code = 2, b & 0x0F
    elif b & 0xF8 == 0xF0:
        needed, code = 3, b & 0x07
    else:
        return None, 0
    end = i + 1 + needed
    if end > len(raw):
        return None, 0
    for j in range(i + 1, end):
        if raw[j] & 0xC0 != 0x80:
            return None, 0
        code = (code << 6) | (raw[j] & 0x3F)
    if needed == 2 and 0xD800 <= code <= 0xDFFF and not lenient_surrogates:
        return None, 0  # Jackson 2.21: "Invalid UTF-8: Illegal surrogate character"
    if code > 0x10FFFF:
        return "??", end - i  # Jackson yields two '?' for a code beyond Unicode
    if code < 0x80:
        return "\ufffd", end - i  # an overlong form: content inside a string, as for Jackson, never syntax
    return chr(code), end - i


def utf16_length(text: str) -> int:
    """Length in UTF-16 code units (Java's String.length)."""
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


_IGNORABLE = set(range(0x00, 0x09)) | set(range(0x0E, 0x1C)) | set(range(0x7F, 0xA0))
_PART_CATEGORIES = {"Sc", "Pc", "Nd", "Nl", "Mc", "Mn", "Cf"}


def java_identifier_part(ch: str) -> bool:
    """Character.isJavaIdentifierPart of a (BMP) character: letters, digits, currency symbols, connecting
    punctuation, marks, letter numbers and the identifier-ignorable controls and format characters."""
    code = ord(ch)
    if code > 0xFFFF:  # Jackson tests the char the code point is cast to
        ch = chr(code & 0xFFFF)
        code = ord(ch)
    if code in _IGNORABLE:
        return True
    category = unicodedata.category(ch)
    return category[0] == "L" or category in _PART_CATEGORIES


# Jackson's table for unquoted names (CharTypes.sInputCodesJsNames): bytes 33-255 that are Java identifier
# parts as Latin-1 characters, and '@', '#', '*', '-', '+'.
_NAME_BYTES = [33 <= b and (java_identifier_part(chr(b)) or chr(b) in "@#*-+") for b in range(256)]
_NAME_CHARS: dict[str, bool] = {}


def unquoted_name_char(ch: str) -> bool:
    """Whether ``ch`` continues (or starts) an unquoted field name. A character some of whose UTF-8 bytes are
    not in the table is malformed when Jackson reaches it; callers treat False for non-ASCII as an error."""
    code = ord(ch)
    if code < 128:
        return _NAME_BYTES[code]
    known = _NAME_CHARS.get(ch)
    if known is None:
        known = all(_NAME_BYTES[b] for b in ch.encode("utf-8", "surrogatepass"))
        _NAME_CHARS[ch] = known
    return known


# java.math.BigDecimal(String): a sign, digits with at most one point (a digit on either side), an exponent.
# Java's Character.isDigit accepts every Unicode decimal digit, as Python's \d does.
_BIG_DECIMAL = re.compile(r"([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?)(\d+))?")
_INT32 = 2**31


def decimal_text(text: str) -> tuple[int, int] | None:
    """(precision, scale) of ``new BigDecimal(text.replaceAll(",", ""))`` when it parses, else None."""
    text = text.replace(",", "")
    m = _BIG_DECIMAL.fullmatch(text)
    if m is None:
        return None
    whole, fraction, exp_sign, exp_digits = m.group(2), m.group(3) or "", m.group(4), m.group(5)
    if not whole and not fraction:
        return None
    exponent = 0
    if exp_digits is not None:
        significant = exp_digits.lstrip("0") if len(exp_digits) > 10 else exp_digits
        if len(significant) > 10:
            return None  # "Too many nonzero exponent digits."
        exponent = int(_ascii_digits(exp_digits)) * (-1 if exp_sign == "-" else 1)
    scale = len(fraction) - exponent
    if not -_INT32 <= scale < _INT32:
        return None  # "Scale out of range."
    unscaled = _ascii_digits(whole + fraction).lstrip("0")
    return max(len(unscaled), 1), scale


def _ascii_digits(digits: str) -> str:
    return digits if digits.isascii() else "".join(str(unicodedata.digit(ch)) for ch in digits)
