"""The type of one JSON document, read as Spark's parser (Jackson 2.21 over UTF-8 bytes) reads it.

:class:`Scanner` is a tokenizer of its own, written for Jackson's leniency options (comments, single quotes,
unquoted names, leading zeros, NaN and Infinity, control characters, any escaped character) and its limits
(nesting depth, number length, string length): it accepts exactly what Jackson accepts with Spark's settings,
and reads only the document's first value, as Spark does (what follows is never looked at). It keeps its
own stack, so deep documents cannot exhaust Python's.

It returns the type Spark's ``JsonInferSchema.inferField`` gives the value (see ``inference_types``), or raises
:class:`Malformed` (Spark's PERMISSIVE mode puts such a record in the corrupt-record column) or
:class:`Unreadable` (a document on which Spark's inference itself fails, not just the record).
"""

from __future__ import annotations

import re

from ..options import JsonOptions
from .text import java_identifier_part, unquoted_name_char, utf16_length
from .types import BOOL, DOUBLE, EMPTY_STRUCT, LONG, NULL, STRING, Merger, struct

__all__ = ["Scanner", "Malformed", "Unreadable", "number_type", "MAX_NAME_BYTES"]

MAX_NAME_BYTES = 50_000  # Jackson's default maxNameLength, which Spark leaves as it is
_WS = re.compile(r"[ \t\n\r]*")
_DIGITS = re.compile(r"[0-9]*")
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_STOP = {'"': re.compile(r'["\\\x00-\x1f]'), "'": re.compile(r"['\\\x00-\x1f]")}
_LINE_COMMENT_END = re.compile(r"[\x00-\x08\x0a-\x1f]")
_BLOCK_COMMENT_END = re.compile(r"\*/|[\x00-\x08\x0b\x0c\x0e-\x1f]")
_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "/": "/", "\\": "\\"}
_LONG_MAX, _LONG_MIN = "9223372036854775807", "9223372036854775808"
_INT32 = 2**31


class Malformed(Exception):
    """A document Spark's parser refuses."""


class Unreadable(Exception):
    """A document on which Spark's schema inference fails as a whole (an error it does not catch)."""


def number_type(opts: JsonOptions, negative: bool, digits: str, fraction: str | None,
                exp_sign: str, exp_digits: str | None) -> tuple:
    """The type of a number token whose integer digits (leading zeros removed, "0" kept) are ``digits``;
    ``fraction`` / ``exp_digits`` None when absent. Raises Malformed past maxNumLen."""
    is_float = fraction is not None or exp_digits is not None
    length = len(digits) + len(fraction or "") + len(exp_digits or "")
    if length > opts.max_num_len:
        raise Malformed(f"number longer than maxNumLen ({opts.max_num_len})")
    if opts.primitives_as_string:
        return STRING
    if not is_float:
        n = len(digits)
        if n < 19 or (n == 19 and digits <= (_LONG_MIN if negative else _LONG_MAX)):
            return LONG
    # Jackson reads the value of any other number from its text, which maxStringLen then limits too.
    text_length = (negative + len(digits) + (len(fraction) + 1 if fraction is not None else 0)
                   + (len(exp_sign) + len(exp_digits) + 1 if exp_digits is not None else 0))
    if text_length > opts.max_string_len:
        raise Malformed(f"number longer than maxStringLen ({opts.max_string_len})")
    if not is_float:
        return ("M", n, 0) if n <= 38 else DOUBLE  # a BigInteger: DecimalType(precision, 0), else double
    if not opts.prefers_decimal:
        return DOUBLE
    # BigDecimal of the token: precision of its unscaled digits, scale = fraction digits - exponent
    exponent = 0
    if exp_digits is not None:
        if len(exp_digits.lstrip("0") if len(exp_digits) > 10 else exp_digits) > 10:
            raise Malformed("exponent too long for BigDecimal")
        exponent = int(exp_digits) * (-1 if exp_sign == "-" else 1)
    scale = len(fraction or "") - exponent
    if not -_INT32 <= scale < _INT32:
        raise Malformed("BigDecimal scale out of range")
    precision = max(len((digits + (fraction or "")).lstrip("0")), 1)
    widest = max(precision, scale)
    if widest > 38:
        return DOUBLE
    if scale < 0:
        raise Unreadable(
            f"prefersDecimal: the number {'-' if negative else ''}{digits}{'.' + fraction if fraction else ''}"
            f"e{exp_sign}{exp_digits} has a negative decimal scale ({scale}); Spark's spark.read.json fails on it "
            "too ([NEGATIVE_SCALE_DISALLOWED]). Turn off prefersDecimal, or give the schema (valueSchema).")
    return ("M", widest, scale)


class Scanner:
    """Reads documents with ``opts``; ``string_type(text)`` gives a string value's type."""

    def __init__(self, opts: JsonOptions, string_type, merger: Merger) -> None:
        self.opts = opts
        self.string_type = string_type
        self.merger = merger
        self.text = ""
        self.n = 0
        self.reach = 0

    def document(self, text: str, bad: int | None = None) -> tuple:
        """The type of ``text``'s first value (NULL for no value at all). ``bad`` is the index of the first
        character standing for bytes Jackson refuses: malformed when the parse reaches it."""
        self.text, self.n, self.reach = text, len(text), 0
        i = 1 if text.startswith("\ufeff") else 0
        i = self._skip_ws(i)
        if i >= self.n:
            result, end = NULL, i
        else:
            result, end = self._value(i)
        if bad is not None and bad < max(end, self.reach):
            raise Malformed("invalid UTF-8")
        return result

    # -- structure ------------------------------------------------------------------------------------
    def _value(self, i: int) -> tuple[tuple, int]:
        text, n = self.text, self.n
        compatible = self.merger.compatible
        max_depth = self.opts.max_nesting_depth
        stack: list[list] = []  # [is_object, fields or element type, current name]
        while True:
            if i >= n:
                raise Malformed("unexpected end of input")
            c = text[i]
            if c == "{" or c == "[":
                if len(stack) >= max_depth:
                    raise Malformed(f"nesting deeper than maxNestingDepth ({max_depth})")
                i = self._skip_ws(i + 1)
                if i >= n:
                    raise Malformed("unexpected end of input")
                if c == "{" and text[i] == "}":
                    value, i = EMPTY_STRUCT, i + 1
                elif c == "[" and text[i] == "]":
                    value, i = ("A", NULL), i + 1
                elif c == "{":
                    name, i = self._name(i)
                    stack.append([True, [], name])
                    i = self._colon(i)
                    continue
                else:
                    stack.append([False, NULL, None])
                    continue
            else:
                value, i = self._scalar(i, not stack)
            while True:  # a value is complete: close the containers that end here
                if not stack:
                    return value, i
                frame = stack[-1]
                if frame[0]:
                    frame[1].append((frame[2], value))
                else:
                    frame[1] = compatible(frame[1], value)
                i = self._skip_ws(i)
                if i >= n:
                    raise Malformed("unexpected end of input")
                c = text[i]
                if c == "}" or c == "]":
                    if (c == "}") != frame[0]:
                        raise Malformed("mismatched closing bracket")
                    stack.pop()
                    value = struct(frame[1]) if frame[0] else ("A", frame[1])
                    i += 1
                    continue
                if c != ",":
                    raise Malformed(f"expected ',' or a closing bracket, got {c!r}")
                i = self._skip_ws(i + 1)
                if i >= n:
                    raise Malformed("unexpected end of input")
                if frame[0]:
                    frame[2], i = self._name(i)
                    i = self._colon(i)
                break

    def _skip_ws(self, i: int) -> int:
        text, n = self.text, self.n
        if i < n:
            c = text[i]
            if c > " " and c != "/":
                return i
        while True:
            i = _WS.match(text, i).end()
            if i >= n:
                return i
            c = text[i]
            if c == "/":
                i = self._comment(i)
            elif c < " ":
                raise Malformed("control character between tokens")
            else:
                return i

    def _comment(self, i: int) -> int:
        if not self.opts.allow_comments:
            raise Malformed("comment (allowComments is off)")
        text = self.text
        kind = text[i + 1:i + 2]
        if kind == "/":
            m = _LINE_COMMENT_END.search(text, i + 2)
            if m is None:
                return self.n
            if m.group() in "\n\r":
                return m.end()
            raise Malformed("control character in a comment")
        if kind == "*":
            m = _BLOCK_COMMENT_END.search(text, i + 2)
            if m is None or m.group() != "*/":
                raise Malformed("unterminated comment or control character in it")
            return m.end()
        raise Malformed("'/' that does not start a comment")

    def _colon(self, i: int) -> int:
        text, n = self.text, self.n
        if i < n and text[i] == ":":
            i += 1
        else:
            i = self._skip_ws(i)
            if i >= n or text[i] != ":":
                raise Malformed("expected ':' after a field name")
            i += 1
        i = self._skip_ws(i)
        if i >= n:
            raise Malformed("unexpected end of input")
        return i

    # -- names and strings ----------------------------------------------------------------------------
    def _name(self, i: int) -> tuple[str, int]:
        c = self.text[i]
        if c == '"':
            name, i = self._quoted(i + 1, '"', True)
        elif c == "'" and self.opts.allow_single_quotes:
            name, i = self._quoted(i + 1, "'", True)
        elif self.opts.allow_unquoted_field_names:
            name, i = self._unquoted_name(i)
        else:
            raise Malformed(f"expected a field name, got {c!r}")
        if len(name) * 4 > MAX_NAME_BYTES and len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
            raise Malformed("field name longer than 50,000 bytes")
        return name, i

    def _unquoted_name(self, i: int) -> tuple[str, int]:
        text, n = self.text, self.n
        j = i
        while j < n:
            c = text[j]
            if unquoted_name_char(c):
                j += 1
            elif c >= "\x80":
                raise Malformed(f"character {c!r} in an unquoted field name")
            else:
                break
        if j == i:
            raise Malformed(f"expected a field name, got {text[i]!r}")
        if j >= n:
            raise Malformed("unexpected end of input in a field name")
        return text[i:j], j

    def _quoted(self, i: int, quote: str, is_name: bool) -> tuple[str, int]:
        """The text of a string or name opened by ``quote`` just before ``i``, and the index after it."""
        text = self.text
        stop = _STOP[quote]
        parts = []
        while True:
            m = stop.search(text, i)
            if m is None:
                raise Malformed("unterminated string")
            j = m.start()
            if j > i:
                parts.append(text[i:j])
            c = text[j]
            if c == quote:
                return "".join(parts), j + 1
            if c == "\\":
                ch, i = self._escape(j + 1, is_name)
                parts.append(ch)
                continue
            # A control character: Jackson refuses it in single-quoted values even with the option on.
            if not self.opts.allow_unquoted_control_chars or (quote == "'" and not is_name):
                raise Malformed("unescaped control character in a string")
            parts.append(c)
            i = j + 1

    def _escape(self, i: int, is_name: bool) -> tuple[str, int]:
        text = self.text
        if i >= self.n:
            raise Malformed("unterminated escape")
        c = text[i]
        mapped = _ESCAPES.get(c)
        if mapped is not None:
            return mapped, i + 1
        if c == "u":
            if _HEX4.match(text, i + 1) is None:
                raise Malformed("bad \\u escape")
            code = int(text[i + 1:i + 5], 16)
            if is_name and 0xD800 <= code <= 0xDFFF:
                return self._name_surrogate(code, i)
            return chr(code), i + 5
        if self.opts.allow_backslash_escaping_any_character or (c == "'" and self.opts.allow_single_quotes):
            return c, i + 1
        raise Malformed(f"unrecognized escape \\{c}")

    def _name_surrogate(self, code: int, i: int) -> tuple[str, int]:
        """An escaped surrogate (``code``, its escape at ``i``) in a field name: with the escaped low one after
        it, the character they make. Alone, Jackson 2.21 refuses it; Jackson 2.18 keeps it as it is."""
        text = self.text
        low = int(text[i + 7:i + 11], 16) if (code < 0xDC00 and text[i + 5:i + 7] == "\\u"
                                                 and _HEX4.match(text, i + 7)) else 0
        if 0xDC00 <= low <= 0xDFFF:
            return chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)), i + 11
        if not self.opts.lenient_surrogates:
            raise Malformed("broken surrogate pair in a field name")
        return chr(code), i + 5

    # -- scalars --------------------------------------------------------------------------------------
    def _scalar(self, i: int, root: bool) -> tuple[tuple, int]:
        text, opts = self.text, self.opts
        c = text[i]
        if c == '"' or (c == "'" and opts.allow_single_quotes):
            value, i = self._quoted(i + 1, c, False)
            limit = opts.max_string_len
            if len(value) * 2 > limit and utf16_length(value) > limit:
                raise Malformed(f"string longer than maxStringLen ({limit})")
            return self.string_type(value), i
        if c == "-" or "0" <= c <= "9":
            return self._number(i, root)
        if c == "t":
            return (STRING if opts.primitives_as_string else BOOL), self._literal(i, "true")
        if c == "f":
            return (STRING if opts.primitives_as_string else BOOL), self._literal(i, "false")
        if c == "n":
            return NULL, self._literal(i, "null")
        if c == "N":
            return self._non_numeric(self._literal(i, "NaN"))
        if c == "I":
            return self._non_numeric(self._literal(i, "Infinity"))
        if c == "+":
            return self._signed_infinity(i, "+")
        raise Malformed(f"unexpected character {c!r}")

    def _literal(self, i: int, word: str) -> int:
        if not self.text.startswith(word, i):
            raise Malformed(f"unrecognized token (expected {word!r})")
        end = i + len(word)
        if end < self.n:
            self.reach = max(self.reach, end + 1)
            ch = self.text[end]
            if ch >= "0" and ch not in "]}" and java_identifier_part(ch):
                raise Malformed(f"unrecognized token {word + ch!r}")
        return end

    def _signed_infinity(self, i: int, sign: str) -> tuple[tuple, int]:
        """'+INF', '+Infinity', '-INF', '-Infinity' (``i`` at the sign)."""
        text = self.text
        if text[i + 1:i + 2] == "I":
            if text[i + 2:i + 3] == "N":
                return self._non_numeric(self._literal(i, sign + "INF"))
            if text[i + 2:i + 3] == "n":
                return self._non_numeric(self._literal(i, sign + "Infinity"))
        raise Malformed("expected a digit after the sign")

    def _non_numeric(self, end: int) -> tuple[tuple, int]:
        opts = self.opts
        if not opts.allow_non_numeric_numbers:
            raise Malformed("NaN or Infinity (allowNonNumericNumbers is off)")
        if opts.primitives_as_string:
            return STRING, end
        if opts.prefers_decimal:
            raise Malformed("NaN or Infinity has no decimal value")
        return DOUBLE, end

    def _number(self, i: int, root: bool) -> tuple[tuple, int]:
        text, n = self.text, self.n
        negative = text[i] == "-"
        j = i + 1 if negative else i
        if j >= n:
            raise Malformed("unexpected end of input in a number")
        if not "0" <= text[j] <= "9":
            if negative and text[j] == "I":
                return self._signed_infinity(i, "-")
            raise Malformed("expected a digit")
        end = _DIGITS.match(text, j).end()
        digits = text[j:end]
        if len(digits) > 1 and digits[0] == "0":
            if not self.opts.allow_numeric_leading_zeros:
                raise Malformed("leading zeros")
            digits = digits.lstrip("0") or "0"
        j = end
        fraction = exp_digits = None
        exp_sign = ""
        if j < n and text[j] == ".":
            end = _DIGITS.match(text, j + 1).end()
            fraction = text[j + 1:end]
            if not fraction:
                raise Malformed("decimal point not followed by a digit")
            j = end
        if j < n and text[j] in "eE":
            j += 1
            if j < n and text[j] in "+-":
                exp_sign = text[j]
                j += 1
            end = _DIGITS.match(text, j).end()
            exp_digits = text[j:end]
            if not exp_digits:
                raise Malformed("exponent not followed by a digit")
            j = end
        if root and j < n:
            self.reach = max(self.reach, j + 1)
            if text[j] not in " \t\r\n":
                raise Malformed("a top-level number must be followed by white space")
        return number_type(self.opts, negative, digits, fraction, exp_sign, exp_digits), j
