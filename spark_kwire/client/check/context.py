"""A run in progress: who reports (host, executor), the time left, and the rows so far.

Every step asks the run for its time: :meth:`CheckRun.step_timeout_s` is the per-step timeout
(``checkStepTimeoutMs``) cut to what is left of the run's budget (``checkTimeoutMs``), and
:meth:`CheckRun.client_config` is the client's settings with their connection and request timeouts bounded by it,
so that no connection, request, token or ticket request waits longer. Rows go through :meth:`CheckRun.add`, which
attaches the fix of a warning's or failure's kind and removes any secret of the settings from the text.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from typing import Callable, TypeVar

from spark_kwire.client.check.fixes import fix_for
from spark_kwire.client.check.options import CheckSettings
from spark_kwire.client.check.rows import FAIL, OK, SKIPPED, WARN, CheckReport, CheckRow
from spark_kwire.client.settings.config import ClientConfig
from spark_kwire.client.settings.logins import OAuthBearerLogin, OidcClientCredentials

__all__ = ["CheckRun", "Stopwatch", "StepTimeout", "bounded_call"]

_MIN_STEP_S = 0.05
T = TypeVar("T")


class StepTimeout(TimeoutError):
    """A call that has no timeout of its own did not finish within the step's."""


def bounded_call(seconds: float, fn: Callable[[], T], what: str) -> T:
    """``fn()`` in a helper thread, or :class:`StepTimeout` after ``seconds`` (the thread then finishes on its own and
    its result is dropped): for calls with no timeout of their own, such as name resolution or a token provider's
    code. Exceptions of ``fn`` are raised here."""
    box: list = []

    def call() -> None:
        try:
            box.append((True, fn()))
        except BaseException as exc:  # handed to the caller
            box.append((False, exc))

    worker = threading.Thread(target=call, name=f"kwire-check-{what}", daemon=True)
    worker.start()
    worker.join(max(0.0, seconds))
    if not box:
        raise StepTimeout(f"{what} did not finish within {seconds:.1f} s")
    ok, value = box[0]
    if not ok:
        raise value
    return value


class Stopwatch:
    """Milliseconds since it was made."""

    def __init__(self) -> None:
        self.started = time.perf_counter()

    @property
    def ms(self) -> float:
        return round((time.perf_counter() - self.started) * 1000.0, 1)


class CheckRun:
    """One run of the check on one host (see the module docstring)."""

    def __init__(self, settings: CheckSettings, *, host: str, executor: str) -> None:
        self.settings = settings
        self.host = host
        self.executor = executor
        self.rows: list[CheckRow] = []
        self.clock = Stopwatch()
        self.deadline = time.monotonic() + settings.run_timeout_ms / 1000.0
        self._secrets = settings.secret_texts()

    # -- time ------------------------------------------------------------------------------------------------
    def remaining_s(self) -> float:
        return self.deadline - time.monotonic()

    @property
    def out_of_time(self) -> bool:
        return self.remaining_s() < _MIN_STEP_S

    @property
    def out_of_time_reason(self) -> str:
        return (f"not run: the run's time budget of {self.settings.run_timeout_ms / 1000:.1f} s ran out "
                f"(checkTimeoutMs)")

    def step_timeout_s(self) -> float:
        """The longest the next step may wait: checkStepTimeoutMs, or less when the run's budget ends sooner."""
        return max(_MIN_STEP_S, min(self.settings.step_timeout_ms / 1000.0, self.remaining_s()))

    def client_config(self) -> ClientConfig:
        """The client's settings with every wait bounded by :meth:`step_timeout_s`."""
        config = self.settings.client
        bound = max(1, int(self.step_timeout_s() * 1000))
        changes = {"socket_connection_setup_timeout_ms": min(config.socket_connection_setup_timeout_ms, bound),
                   "request_timeout_ms": min(config.request_timeout_ms, bound),
                   "default_api_timeout_ms": min(config.default_api_timeout_ms or 2 * config.request_timeout_ms,
                                                 bound),
                   "retry_backoff_max_ms": min(config.retry_backoff_max_ms, max(config.retry_backoff_ms, bound // 4))}
        login = config.sasl
        if isinstance(login, OAuthBearerLogin) and isinstance(login.token_source, OidcClientCredentials):
            source = dataclasses.replace(login.token_source,
                                         attempt_timeout_ms=min(login.token_source.attempt_timeout_ms, bound),
                                         retry_backoff_max_ms=min(login.token_source.retry_backoff_max_ms,
                                                                  bound // 2))
            changes["sasl"] = dataclasses.replace(login, token_source=source)
        return config.replace(**changes)

    # -- rows ------------------------------------------------------------------------------------------------
    def scrub(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, "***")
        return text

    def add(self, step: str, target: str, outcome: str, detail: str, *, kind: str | None = None,
            ms: float = 0.0) -> CheckRow:
        if outcome in (WARN, FAIL) and kind is None:
            raise ValueError(f"a {outcome} row of step {step} needs the kind of its failure (fixes.py)")
        fix = fix_for(kind) if outcome in (WARN, FAIL) else None
        row = CheckRow(self.host, self.executor, step, self.scrub(str(target)), outcome, float(ms),
                       self.scrub(" ".join(str(detail).split())), fix)
        self.rows.append(row)
        return row

    def ok(self, step: str, target, detail: str, ms: float = 0.0) -> CheckRow:
        return self.add(step, target, OK, detail, ms=ms)

    def warn(self, step: str, target, detail: str, kind: str, ms: float = 0.0) -> CheckRow:
        return self.add(step, target, WARN, detail, kind=kind, ms=ms)

    def fail(self, step: str, target, detail: str, kind: str, ms: float = 0.0) -> CheckRow:
        return self.add(step, target, FAIL, detail, kind=kind, ms=ms)

    def skipped(self, step: str, target, detail: str) -> CheckRow:
        return self.add(step, target, SKIPPED, detail)

    def blocked(self, steps, target, reason: str) -> None:
        """A skipped row for each of ``steps``, saying what kept it from running."""
        text = reason if reason.startswith("not run") else f"not run: {reason}"
        for step in steps:
            self.skipped(step, target, text)

    def report(self) -> CheckReport:
        return CheckReport(tuple(self.rows), self.host, self.executor, self.clock.ms)
