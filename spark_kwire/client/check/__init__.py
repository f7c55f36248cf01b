"""``kwire check``: everything between this host and a topic, step by step, each a row with its outcome and fix.

Owns: the check's options (:mod:`.options`), its rows and report (:mod:`.rows`), the one table of known failures and
their fixes (:mod:`.fixes`), a run in progress with its time budget (:mod:`.context`), the order of the steps and
what a failed step blocks (:mod:`.runner`), and the steps: each broker address's resolve, TCP, TLS, SASL and
ApiVersions (:mod:`.connection`), the advertised brokers (:mod:`.brokers`), the topics and what the principal may do
with them (:mod:`.topics`), the schema registry (:mod:`.registry_probe`) and a short fetch (:mod:`.throughput`).

May import: the client's ground (settings, errors, retry) and the roles it builds on: ``core`` (connections,
metadata), ``auth`` (the client's own TLS transport, SASL exchange, OAuth token sources and Kerberos logins, whose
checks and error explanations it reuses), ``consumer`` (offsets, the batch scan of a fetch) and ``registry``. No
Spark: the Spark layer's metadata table and ``spark_kwire.check`` (the Python helper and the command line) call
:func:`run_check` / :func:`check_connection`.

    from spark_kwire.client.check import check_connection
    report = check_connection({"kafka.bootstrap.servers": "broker:9092", "subscribe": "orders"},
                              host="driver", executor="driver")
    report.worst, report.rows[0].step, report.text()
"""

from spark_kwire.client.check.fixes import FIXES
from spark_kwire.client.check.options import (CHECK_OPTIONS, CheckOptionError, CheckSettings, parse_check_options,
                                              properties_as_options, read_properties)
from spark_kwire.client.check.rows import COLUMNS, FAIL, OK, OUTCOMES, SKIPPED, STEPS, WARN, CheckReport, CheckRow
from spark_kwire.client.check.runner import check_connection, run_check

__all__ = ["check_connection", "run_check", "parse_check_options", "CheckSettings", "CheckReport", "CheckRow",
           "CheckOptionError", "COLUMNS", "STEPS", "OUTCOMES", "OK", "WARN", "FAIL", "SKIPPED", "FIXES",
           "CHECK_OPTIONS", "read_properties", "properties_as_options"]
