"""Token providers for the OAUTHBEARER tests, referenced as ``tests.oauth_providers:<name>``.

They run wherever kwire connects: in the test process, and in Spark's Python workers (the repository root is on
their ``sys.path`` through the editable install), so they get everything they need from their argument, the
``sasl.oauthbearer.config`` string, or from module state set by a test running in the same process.
"""

from __future__ import annotations

import base64
import json
import os
import time
import urllib.parse
import urllib.request

# set by tests that run the client in their own process: {"token": str, "expiry": float}
current: dict = {}
calls = 0


def _settings(config: str) -> dict[str, str]:
    """``"endpoint=http://... client_id=app client_secret=s"`` -> dict."""
    return dict(item.split("=", 1) for item in config.split())


def client_credentials(config: str):
    """Fetch a token from the test identity provider named in ``config``, sending this process's id along."""
    global calls
    calls += 1
    settings = _settings(config)
    basic = base64.b64encode(f"{settings['client_id']}:{settings['client_secret']}".encode()).decode()
    request = urllib.request.Request(
        settings["endpoint"], data=urllib.parse.urlencode({"grant_type": "client_credentials"}).encode(),
        headers={"Authorization": f"Basic {basic}", "X-Client-Pid": str(os.getpid())}, method="POST")
    with urllib.request.urlopen(request, timeout=10) as answer:
        body = json.loads(answer.read())
    return body["access_token"], time.time() + float(body["expires_in"])


def static():
    """The token a test put into ``current`` (2-tuple shape)."""
    global calls
    calls += 1
    return current["token"], current["expiry"]


def with_extensions():
    """4-tuple shape: (token, expiry, principal, extensions)."""
    return current["token"], current["expiry"], "from-provider", {"traceId": "abc123"}


class AccessTokenLike:
    """An object with ``token`` and ``expires_on``, like azure-identity's AccessToken, from a class reference."""

    def __call__(self):
        from collections import namedtuple

        return namedtuple("AccessToken", "token expires_on")(current["token"], int(current["expiry"]))


def broken():
    raise RuntimeError("the vault is sealed")


def wrong_shape():
    return "just-a-token"


def in_milliseconds():
    return current["token"], time.time() * 1000 + 60_000


not_callable = 42
