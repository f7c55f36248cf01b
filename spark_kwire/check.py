"""Checking a connection without Spark: the Python helper and the command line (issue 44, ``kwire check``).

    from spark_kwire.check import check_connection
    report = check_connection({"kafka.bootstrap.servers": "broker:9092", "subscribe": "orders"})
    print(report.text())          # one row per step and target, with the fix of each failure

    $ python -m spark_kwire check --bootstrap broker:9092 --config client.properties --topic orders

The options are a kwire read's (``kafka.*``, ``subscribe`` / ``subscribePattern`` / ``assign`` / ``topic``,
``schema.registry.*``, ``checkThroughput``, ``checkStepTimeoutMs``, ``checkTimeoutMs``); ``--config`` reads a Java
properties file as ``conf/*.properties`` hold them (Kafka settings without the ``kafka.`` prefix). The command exits
with 1 when a row failed, 2 when the options are wrong, 0 otherwise. Needs no pyspark.
"""

from __future__ import annotations

import argparse
import socket
import sys
from typing import Any, Mapping

from spark_kwire.client.check import (CheckReport, parse_check_options, properties_as_options, read_properties,
                                      run_check)
from spark_kwire.client.errors import ConfigError

__all__ = ["check_connection", "main"]


def check_connection(options: Mapping[str, Any], *, host: str | None = None, executor: str = "python") -> CheckReport:
    """Check every step from this process to the brokers, topics and registry ``options`` name; the rows carry
    ``host`` (default: this host's name) and ``executor``. Raises for wrong options; whatever the check finds is a
    row of the report."""
    return run_check(parse_check_options(options), host=host or socket.gethostname(), executor=executor)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m spark_kwire check",
        description="Check the connection from this host to Kafka brokers, topics and a schema registry, step by "
                    "step: name resolution, TCP, TLS, SASL, API versions, the advertised brokers, the topics and what "
                    "the principal may do with them, the registry. Every failure comes with its fix.")
    parser.add_argument("--bootstrap", metavar="HOST:PORT[,...]", help="the bootstrap servers (kafka.bootstrap."
                        "servers; overrides bootstrap.servers of --config)")
    parser.add_argument("--config", metavar="FILE", help="Kafka client settings in a Java properties file, as in "
                        "conf/*.properties (no 'kafka.' prefix); schema.registry.* settings may be in it too")
    parser.add_argument("--topic", action="append", default=[], metavar="TOPIC",
                        help="a topic to check (repeat, or comma-separate): option subscribe")
    parser.add_argument("--registry", metavar="URL", help="the schema registry's URL (schema.registry.url)")
    parser.add_argument("--throughput", action="store_true", help="also fetch from each topic's leaders for a "
                        "moment and report bytes per second (checkThroughput)")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="any other option of a check, as a kwire read takes it (e.g. "
                             "schema.registry.basic.auth.user.info=user:password)")
    parser.add_argument("--step-timeout", type=float, metavar="SECONDS", help="the longest any one step waits "
                        "(default 10)")
    parser.add_argument("--timeout", type=float, metavar="SECONDS", help="the longest the whole run takes "
                        "(default 120)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON instead of a table")
    return parser


def _options(args: argparse.Namespace) -> dict[str, str]:
    options: dict[str, str] = {}
    if args.config:
        options.update(properties_as_options(read_properties(args.config)))
    for item in args.option:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError("--option", item, "KEY=VALUE")
        options[key.strip()] = value
    if args.bootstrap:
        options["kafka.bootstrap.servers"] = args.bootstrap
    if args.topic:
        options["subscribe"] = ",".join(args.topic)
    if args.registry:
        options["schema.registry.url"] = args.registry
    if args.throughput:
        options["checkThroughput"] = "true"
    for flag, name in ((args.step_timeout, "checkStepTimeoutMs"), (args.timeout, "checkTimeoutMs")):
        if flag is not None:
            options[name] = str(max(1, int(flag * 1000)))
    return options


def main(argv: list[str] | None = None) -> int:
    """``python -m spark_kwire check [...]``; returns the exit code (1: a step failed, 2: wrong options)."""
    args = _parser().parse_args(argv)
    try:
        options = _options(args)
        settings = parse_check_options(options)
    except OSError as exc:
        print(f"kwire check: cannot read --config {args.config}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except ConfigError as exc:
        print(f"kwire check: {exc}", file=sys.stderr)
        return 2
    report = run_check(settings, host=socket.gethostname(), executor="cli")
    print(report.to_json() if args.json else report.text())
    return 0 if report.ok else 1
