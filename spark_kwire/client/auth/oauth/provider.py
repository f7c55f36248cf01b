"""Tokens from the user's own Python code: ``sasl.login.callback.handler.class=package.module:function``.

``package.module.function`` works too when the module is installed. The reference is imported in every
process that connects (the Spark driver and each executor's Python
workers), so the module must be installed there too. The callable takes no argument, or one: the value of
``sasl.oauthbearer.config`` (a string, empty when unset), as confluent-kafka's ``oauth_cb`` does. It returns
``(token, expiry)`` with the expiry in epoch seconds, or ``(token, expiry, principal, extensions)``; an object
with ``token`` and ``expires_on`` attributes (azure-identity's ``AccessToken``) also works. A reference to a
class is instantiated once per process (no arguments) and the instance is called. Each process calls it once per
token lifetime and shares the token among its tasks and connections.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import threading
import time
from typing import Any, Callable

from spark_kwire.client.settings.secret import Secret
from spark_kwire.client.auth.oauth import OAuthToken, TokenError, TokenSource, jwt_claims

__all__ = ["CallableTokenSource", "resolve_reference"]

_resolved: dict[str, Callable] = {}
_resolved_lock = threading.Lock()


def resolve_reference(reference: str, option: str) -> Callable:
    """Import ``package.module:attr`` (or ``package.module.attr``) once per process; a class is instantiated."""
    with _resolved_lock:
        found = _resolved.get(reference)
        if found is not None:
            return found
        if ":" in reference:
            module_name, _, attr_path = reference.partition(":")
        else:
            module_name, _, attr_path = reference.rpartition(".")
        module_name, attr_path = module_name.strip(), attr_path.strip()
        where = f"{option}={reference}"
        try:
            obj: Any = importlib.import_module(module_name)
        except ImportError as exc:
            raise TokenError(f"{where}: cannot import module {module_name!r} ({exc}); the module must be "
                             f"installed on the driver and on every executor", source=reference) from None
        except Exception as exc:
            raise TokenError(f"{where}: importing module {module_name!r} raised {type(exc).__name__}: {exc}",
                             source=reference) from None
        for part in attr_path.split("."):
            try:
                obj = getattr(obj, part)
            except AttributeError:
                raise TokenError(f"{where}: module {module_name!r} has no attribute {attr_path!r}",
                                 source=reference) from None
        if inspect.isclass(obj):
            try:
                obj = obj()
            except Exception as exc:
                raise TokenError(f"{where}: creating an instance of the class raised {type(exc).__name__}: {exc}",
                                 source=reference) from None
        if not callable(obj):
            raise TokenError(f"{where}: {attr_path!r} is not callable; give a function returning "
                             f"(token, expiry epoch seconds)", source=reference)
        _resolved[reference] = obj
        return obj


def _takes_an_argument(func: Callable) -> bool:
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL) for p in params)


class CallableTokenSource(TokenSource):
    """Tokens from a Python callable (see the module docstring)."""

    def __init__(self, reference: str, option: str = "sasl.login.callback.handler.class",
                 config_string: Secret | None = None, *, label: str | None = None,
                 func: Callable | None = None) -> None:
        self.reference = reference
        self.option = option
        self._config_string = config_string
        self._func = func
        self.description = label or f"token provider {reference}"
        if func is None:
            resolve_reference(reference, option)  # fail where the client is built, not at the first connection

    def cache_key(self) -> tuple:
        config = self._config_string.reveal() if self._config_string is not None else ""
        return ("callable", self.reference, hashlib.sha256(config.encode("utf-8")).hexdigest())

    def __repr__(self) -> str:
        return f"CallableTokenSource({self.reference})"

    def _error(self, detail: str) -> TokenError:
        return TokenError(f"{self.option}={self.reference}: {detail}", source=self.reference)

    def fetch(self) -> OAuthToken:
        func = self._func or resolve_reference(self.reference, self.option)
        try:
            if _takes_an_argument(func):
                result = func(self._config_string.reveal() if self._config_string is not None else "")
            else:
                result = func()
        except TokenError:
            raise
        except Exception as exc:
            raise self._error(f"the token provider raised {type(exc).__name__}: {exc}") from None
        return self._to_token(result)

    def _to_token(self, result: Any) -> OAuthToken:
        shape = "(token, expiry epoch seconds) or (token, expiry, principal, extensions)"
        principal = extensions = None
        if hasattr(result, "token") and hasattr(result, "expires_on"):
            token, expiry = result.token, result.expires_on
        elif isinstance(result, (tuple, list)) and len(result) in (2, 3, 4):
            token, expiry = result[0], result[1]
            principal = result[2] if len(result) > 2 else None
            extensions = result[3] if len(result) > 3 else None
        else:
            raise self._error(f"the token provider returned a {type(result).__name__}; expected {shape}")
        if isinstance(token, bytes):
            token = token.decode("utf-8", "replace")
        if not isinstance(token, str) or not token.strip():
            raise self._error(f"the token must be a non-empty string, got {type(token).__name__}; expected {shape}")
        if isinstance(expiry, bool) or not isinstance(expiry, (int, float)):
            raise self._error(f"the expiry must be a number of seconds since the epoch, got "
                              f"{type(expiry).__name__}; expected {shape}")
        now = time.time()
        if expiry > 1e11:
            raise self._error(f"the expiry {expiry} looks like milliseconds; return seconds since the epoch "
                              f"(e.g. time.time() + 3600)")
        if expiry <= now:
            raise self._error(f"the token provider returned a token that expired {now - expiry:.0f} s ago "
                              f"(expiry {expiry}); the expiry is in seconds since the epoch")
        if principal is not None and not isinstance(principal, str):
            raise self._error(f"the principal must be a string, got {type(principal).__name__}")
        if extensions is None:
            extensions = {}
        if not isinstance(extensions, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                       for k, v in extensions.items()):
            raise self._error("the extensions must be a dict of strings")
        claims = jwt_claims(token.strip()) or {}
        iat = claims.get("iat") if isinstance(claims.get("iat"), (int, float)) else None
        if principal is None and isinstance(claims.get("sub"), str):
            principal = claims["sub"]
        return OAuthToken(Secret(token.strip()), float(expiry),
                          principal or (self.description if self._func is not None else self.reference),
                          float(iat) if iat is not None else None, dict(extensions))
