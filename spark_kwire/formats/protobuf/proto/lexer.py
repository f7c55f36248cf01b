"""The tokens of `.proto` text: identifiers, numbers, strings (escapes decoded, adjacent ones joined by the
parser), symbols; comments and whitespace dropped. Each token knows its line and column for error messages."""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import SchemaError

IDENT = "ident"
INT = "int"
FLOAT = "float"
STRING = "string"
SYMBOL = "symbol"
END = "end"

_SIMPLE_ESCAPES = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 92, "'": 39, '"': 34, "?": 63}


@dataclass(frozen=True)
class Token:
    kind: str
    text: str  # the source text (for strings: the decoded value as latin-1 text of its bytes)
    line: int
    column: int
    value: object = None  # int, float or bytes

    def where(self) -> str:
        return f"line {self.line}, column {self.column}"


def proto_error(reason: str, token: Token | None = None) -> SchemaError:
    return SchemaError(f"{reason}" + (f" at {token.where()}" if token is not None else ""), ".proto")


def _is_ident_start(c: str) -> bool:
    return c.isascii() and (c.isalpha() or c == "_")


def _is_ident_part(c: str) -> bool:
    return c.isascii() and (c.isalnum() or c == "_")


def tokenize(text: str) -> list[Token]:
    """The tokens of ``text``; :class:`SchemaError` for an unterminated string or comment, a bad escape or a
    character no token starts with."""
    tokens: list[Token] = []
    i, line, line_start, n = 0, 1, 0, len(text)
    while i < n:
        c = text[i]
        column = i - line_start + 1
        if c == "\n":
            i += 1
            line, line_start = line + 1, i
            continue
        if c in " \t\r\f\v":
            i += 1
            continue
        if text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise proto_error("unterminated /* comment", Token(END, "", line, column))
            line += text.count("\n", i, end)
            last = text.rfind("\n", i, end)
            if last >= 0:
                line_start = last + 1
            i = end + 2
            continue
        if _is_ident_start(c):
            j = i + 1
            while j < n and _is_ident_part(text[j]):
                j += 1
            tokens.append(Token(IDENT, text[i:j], line, column))
            i = j
            continue
        if c.isdigit() or (c == "." and i + 1 < n and text[i + 1].isdigit()):
            j, kind, value = _number(text, i, Token(INT, c, line, column))
            tokens.append(Token(kind, text[i:j], line, column, value))
            i = j
            continue
        if c in "\"'":
            j, value = _string(text, i, Token(STRING, c, line, column))
            tokens.append(Token(STRING, value.decode("latin-1"), line, column, value))
            i = j
            continue
        if c in "{}[]()<>;,=.:-+/":
            tokens.append(Token(SYMBOL, c, line, column))
            i += 1
            continue
        raise proto_error(f"unexpected character {c!r}", Token(SYMBOL, c, line, column))
    tokens.append(Token(END, "", line, i - line_start + 1))
    return tokens


def _number(text: str, i: int, at: Token) -> tuple[int, str, object]:
    n = len(text)
    if text.startswith(("0x", "0X"), i):
        j = i + 2
        while j < n and text[j] in "0123456789abcdefABCDEF":
            j += 1
        if j == i + 2:
            raise proto_error("hexadecimal number without digits", at)
        return j, INT, int(text[i + 2:j], 16)
    j = i
    while j < n and text[j].isdigit():
        j += 1
    is_float = False
    if j < n and text[j] == ".":
        is_float = True
        j += 1
        while j < n and text[j].isdigit():
            j += 1
    if j < n and text[j] in "eE":
        k = j + 1
        if k < n and text[k] in "+-":
            k += 1
        if k < n and text[k].isdigit():
            is_float = True
            j = k
            while j < n and text[j].isdigit():
                j += 1
    if j < n and text[j] in "fF" and is_float:
        j += 1
    if j < n and _is_ident_part(text[j]):
        raise proto_error(f"malformed number {text[i:j + 1]!r}", at)
    literal = text[i:j].rstrip("fF")
    if is_float:
        return j, FLOAT, float(literal)
    if len(literal) > 1 and literal.startswith("0"):
        if any(ch not in "01234567" for ch in literal):
            raise proto_error(f"malformed octal number {literal!r}", at)
        return j, INT, int(literal, 8)
    return j, INT, int(literal)


def _string(text: str, i: int, at: Token) -> tuple[int, bytes]:
    quote = text[i]
    out = bytearray()
    j, n = i + 1, len(text)
    while True:
        if j >= n or text[j] == "\n":
            raise proto_error("unterminated string", at)
        c = text[j]
        if c == quote:
            return j + 1, bytes(out)
        if c != "\\":
            out += c.encode("utf-8")
            j += 1
            continue
        j += 1
        if j >= n:
            raise proto_error("unterminated string", at)
        e = text[j]
        if e in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[e])
            j += 1
        elif e in "xX":
            k = j + 1
            while k < n and k < j + 3 and text[k] in "0123456789abcdefABCDEF":
                k += 1
            if k == j + 1:
                raise proto_error("\\x escape without hexadecimal digits", at)
            out.append(int(text[j + 1:k], 16))
            j = k
        elif e in "01234567":
            k = j
            while k < n and k < j + 3 and text[k] in "01234567":
                k += 1
            value = int(text[j:k], 8)
            if value > 255:
                raise proto_error(f"octal escape \\{text[j:k]} is out of the byte range", at)
            out.append(value)
            j = k
        elif e in "uU":
            size = 4 if e == "u" else 8
            digits = text[j + 1:j + 1 + size]
            if len(digits) != size or any(ch not in "0123456789abcdefABCDEF" for ch in digits):
                raise proto_error(f"\\{e} escape needs {size} hexadecimal digits", at)
            code = int(digits, 16)
            if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
                raise proto_error(f"\\{e}{digits} is not a Unicode scalar value", at)
            out += chr(code).encode("utf-8")
            j += 1 + size
        else:
            raise proto_error(f"unknown escape \\{e}", at)
