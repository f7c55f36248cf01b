"""Fixtures of the Protobuf format tests: the test `.proto` files compiled by protoc (grpcio-tools) into Python
modules of Google's runtime (the oracle), and their descriptors as protoc makes them."""

from __future__ import annotations

import importlib
import subprocess
import sys
import types

import pytest

from harness.proto_text import compile_proto, well_known_include_dir
from tests.formats.protobuf import protos

FILES = {"kwire/pbtest/all.proto": protos.ALL_TYPES, "kwire/pbtest/legacy.proto": protos.PROTO2,
         "kwire/pbtest/editions.proto": protos.EDITIONS, "kwire/pbtest/recursive.proto": protos.RECURSIVE}
EVOLUTION = (protos.ORDER_V1, protos.ORDER_V2, protos.ORDER_V3)


@pytest.fixture(scope="session")
def pb(tmp_path_factory) -> types.SimpleNamespace:
    """The generated ``_pb2`` modules: ``pb.all``, ``pb.legacy``, ``pb.editions``, ``pb.recursive``."""
    root = tmp_path_factory.mktemp("pb")
    for path, text in FILES.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"-I{root}", f"-I{well_known_include_dir()}",
                    f"--python_out={root}", *FILES], check=True, capture_output=True)
    # kwire/ stays a namespace package: other fixtures (tests/client/registry) generate modules under kwire/ in
    # folders of their own, and a regular package would hide theirs in the same process
    for folder in {p.parent for p in root.rglob("*_pb2.py")}:
        (folder / "__init__.py").touch()
    sys.path.insert(0, str(root))
    try:
        names = {"all": "kwire.pbtest.all_pb2", "legacy": "kwire.pbtest.legacy_pb2",
                 "editions": "kwire.pbtest.editions_pb2", "recursive": "kwire.pbtest.recursive_pb2"}
        yield types.SimpleNamespace(**{k: importlib.import_module(v) for k, v in names.items()})
    finally:
        sys.path.remove(str(root))


@pytest.fixture(scope="session")
def descriptors() -> dict[str, object]:
    """protoc's FileDescriptorProto of each test file, by its path."""
    return {path: compile_proto(text, name=path) for path, text in FILES.items()}


@pytest.fixture(scope="session")
def order_versions() -> list[type]:
    """The Order message class of each evolution version (the same full name, so each in a pool of its own)."""
    from google.protobuf import descriptor_pool, message_factory

    classes = []
    for text in EVOLUTION:
        pool = descriptor_pool.DescriptorPool()
        pool.Add(compile_proto(text, name="order.proto"))
        classes.append(message_factory.GetMessageClass(pool.FindMessageTypeByName("kwire.evo.Order")))
    return classes
