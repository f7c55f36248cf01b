"""``python -m spark_kwire <command>`` (also the ``kwire`` command): what kwire does without Spark.

Commands: ``check`` (:mod:`spark_kwire.check`: the connection from this host to the brokers, topics and schema
registry, step by step, with the fix of each failure).
"""

from __future__ import annotations

import difflib
import importlib
import sys

__all__ = ["main", "COMMANDS"]

#: command -> (module with a main(argv) -> exit code, what it does)
COMMANDS = {"check": ("spark_kwire.check", "check the connection to Kafka brokers, topics and a schema registry")}

_USAGE = "usage: python -m spark_kwire <command> [options]\n\ncommands:\n" + "".join(
    f"  {name:<8} {what}\n" for name, (_, what) in COMMANDS.items()) + \
    "\n'python -m spark_kwire <command> --help' describes a command's options."


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(_USAGE, file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    command = argv[0]
    if command not in COMMANDS:
        close = difflib.get_close_matches(command, list(COMMANDS), n=1)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        print(f"kwire: unknown command {command!r}.{hint}\n\n{_USAGE}", file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[command][0])
    return module.main(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
