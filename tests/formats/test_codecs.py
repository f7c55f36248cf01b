"""The formats' descriptions (each package's ``codec.py``) are the one place the formats are listed: the registry,
the kernel list and the warm-up come from them, and every kernel module of the package is in that list."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

import spark_kwire.formats
from spark_kwire.formats import kernels
from spark_kwire.formats.contract.codec import Framing
from spark_kwire.formats.payload import CODECS, payload_format
from spark_kwire.formats.warmup import warm_up

FORMATS_DIR = Path(spark_kwire.formats.__file__).parent


def test_each_format_package_exports_the_codec_the_registry_lists():
    packages = sorted(p.parent.name for p in FORMATS_DIR.glob("*/codec.py") if p.parent.name != "contract")
    exported = {importlib.import_module(f"spark_kwire.formats.{package}.codec").CODEC for package in packages}
    assert exported == set(CODECS) and len(CODECS) == len(packages) == 4
    for codec in CODECS:
        assert payload_format(codec.name.upper()) is codec
        assert all(payload_format(alias) is codec for alias in codec.aliases)
        assert (codec.framing is Framing.NONE) is (not codec.uses_registry)


def test_the_kernel_list_is_the_building_blocks_then_every_codecs_modules_once():
    modules, constants = kernels.sources()
    assert modules[:len(kernels.BUILDING_BLOCKS)] == kernels.BUILDING_BLOCKS
    assert len(set(modules)) == len(modules) and len(set(constants)) == len(constants)
    for codec in CODECS:
        listed = [m for m in modules if m in codec.kernels]
        assert listed == list(codec.kernels), f"{codec.name}'s kernels out of their order"
        assert set(codec.constants) <= set(constants)
    # every kernel module of the package is loaded: a module no codec lists would never be compiled
    on_disk = {".".join(("spark_kwire", "formats", *p.relative_to(FORMATS_DIR).with_suffix("").parts))
               for p in FORMATS_DIR.rglob("*.py")
               if p.name != "__init__.py" and (p.parent.name == "kernels" or p.parent.name == "vm")
               and hasattr(importlib.import_module(".".join(
                   ("spark_kwire", "formats", *p.relative_to(FORMATS_DIR).with_suffix("").parts))), "KERNELS")}
    assert on_disk == set(modules)


def test_capabilities_follow_from_the_registry_or_its_absence():
    json = payload_format("json")
    assert not json.uses_registry and json.capabilities.infers_schema and json.capabilities.spark_schema
    assert "inferTimestamp" in json.capabilities.inference_options
    assert payload_format("protobuf").takes_message_name and not payload_format("avro").takes_message_name
    for codec in CODECS:
        if codec.uses_registry:
            assert codec.derive is not None and codec.record_namer is not None
            assert not codec.capabilities.writes_column_type and codec.capabilities.default_mode == "FAILFAST"


@pytest.mark.parametrize("name", [codec.name for codec in CODECS])
def test_every_format_warms_up_on_the_plain_python_kernels(name):
    with kernels.using("python"):
        assert warm_up([name]) >= 0
