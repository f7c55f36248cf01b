"""A format package's public names, imported from its modules on first use, so that the format registry
(``payload.py``, reading each ``codec.py``) loads no more of a format than its description."""

from __future__ import annotations

import importlib


def lazy_exports(package: str, exports: dict[str, str]):
    """``(__all__, __getattr__)`` for ``package``, whose public ``name`` lives in its module ``exports[name]``."""

    def __getattr__(name: str):
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{module}"), name)

    return sorted(exports), __getattr__
