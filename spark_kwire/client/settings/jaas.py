"""Kafka's ``sasl.jaas.config`` syntax: ``<LoginModuleClass> <flag> key=value ... ;``.

The login-module class is kept as written (Databricks' ``kafkashaded.`` names and AWS's ``shadedmskiam.``
ones included); what it means is decided by the builder of the mechanism's login (:mod:`.sasl_options`), which reads
it once. Values whose names look secret are masked in ``repr``, and a parsed config refuses to be pickled.
"""

from __future__ import annotations

import re

from spark_kwire.client.settings.secret import Secret, reveal as _reveal
from spark_kwire.client.errors import ConfigError

__all__ = ["JaasConfig", "parse_jaas_config"]

_JAAS_FLAGS = ("required", "requisite", "sufficient", "optional")
_SECRET_JAAS_KEYS = re.compile(r"(password|secret|token|credential|key)", re.IGNORECASE)


class JaasConfig:
    """One parsed JAAS login-module entry: ``login_module``, ``flag`` and ``options`` (a dict of strings).

    ``repr`` masks option values whose names look secret (``password``, ``clientSecret``...).
    """

    __slots__ = ("login_module", "flag", "options")

    def __init__(self, login_module: str, flag: str, options: dict[str, str]) -> None:
        self.login_module = login_module
        self.flag = flag
        self.options = options

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.options.get(key, default)

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={'***' if _SECRET_JAAS_KEYS.search(k) else repr(v)}" for k, v in self.options.items())
        return f"JaasConfig({self.login_module} {self.flag}: {shown})"

    __str__ = __repr__

    def __reduce__(self):  # never pickle the clear-text options
        raise TypeError("JaasConfig holds secrets and is not picklable; pickle the ClientConfig built from it instead")


def _jaas_error(reason: str) -> ConfigError:
    # The value is shown as '***': a JAAS config holds the password.
    return ConfigError("sasl.jaas.config", Secret(""), reason=reason)


def parse_jaas_config(text: str | Secret) -> JaasConfig:
    """Parse ``<LoginModuleClass> <flag> key=value ... ;`` (Kafka's ``sasl.jaas.config`` syntax).

    Values may be double- or single-quoted (a backslash escapes the next character) or bare words. The
    login-module class is not interpreted (any class name, shaded or not, is accepted). Errors name the
    position, never the text.
    """
    src = _reveal(text) or ""
    n = len(src)
    pos = 0

    def skip_ws(i: int) -> int:
        while i < n and src[i].isspace():
            i += 1
        return i

    def word(i: int) -> tuple[str, int]:
        start = i
        while i < n and not src[i].isspace() and src[i] not in "=;\"'":
            i += 1
        return src[start:i], i

    pos = skip_ws(pos)
    module, pos = word(pos)
    if not module:
        raise _jaas_error("expected '<LoginModule class> required username=\"...\" password=\"...\";' "
                          "but the value is empty or does not start with a login-module class name")
    if not re.fullmatch(r"[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*", module):
        raise _jaas_error("it must start with a login-module class name such as "
                          "org.apache.kafka.common.security.scram.ScramLoginModule")
    pos = skip_ws(pos)
    flag, pos = word(pos)
    if flag.lower() not in _JAAS_FLAGS:
        raise _jaas_error(f"the login-module class must be followed by a control flag "
                          f"({', '.join(_JAAS_FLAGS)}) at character {pos - len(flag)}")
    options: dict[str, str] = {}
    while True:
        pos = skip_ws(pos)
        if pos >= n:
            break  # a missing final ';' is tolerated
        if src[pos] == ";":
            pos = skip_ws(pos + 1)
            if pos < n:
                raise _jaas_error(f"unexpected text after ';' at character {pos} (only one login module is "
                                  f"allowed in a client's sasl.jaas.config)")
            break
        key, pos = word(pos)
        if not key:
            raise _jaas_error(f"expected an option name at character {pos}")
        pos = skip_ws(pos)
        if pos >= n or src[pos] != "=":
            raise _jaas_error(f"option {key!r} has no '=' and value (character {pos})")
        pos = skip_ws(pos + 1)
        if pos < n and src[pos] in "\"'":
            quote = src[pos]
            pos += 1
            chars = []
            while True:
                if pos >= n:
                    raise _jaas_error(f"the value of option {key!r} has no closing {quote} quote")
                c = src[pos]
                if c == "\\" and pos + 1 < n:
                    chars.append(src[pos + 1])
                    pos += 2
                    continue
                if c == quote:
                    pos += 1
                    break
                chars.append(c)
                pos += 1
            value = "".join(chars)
        else:
            value, pos = word(pos)
            if not value:
                raise _jaas_error(f"option {key!r} has an empty value (character {pos}); quote it")
        options[key] = value
    return JaasConfig(module, flag.lower(), options)
