"""Decoding a column of Confluent-framed Protobuf values into one Arrow column shaped as spark-protobuf shows the
reader's message.

    decoder = ProtobufDecoder(reader_schema, references, message_name=None)  # decoder.arrow_type known now
    frames = parse_confluent(values, message_indexes=True)
    for schema_id in decoder.missing_schema_ids(frames):
        decoder.add_writer_schema(schema_id, registry_lookup(schema_id), references=...)
    result = decoder.decode(frames, mode="PERMISSIVE")

Each row's message indexes name a message of its writer schema's file; it must be the reader's message (same
full name), whose fields are then read by number: fields the writer did not know are absent, fields the reader
does not know are skipped (protobuf's schema evolution). FAILFAST raises :class:`DecodeError` for the first bad
row; PERMISSIVE makes bad rows null and reports them. A null value (a tombstone) is a null row.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pyarrow as pa

from .. import kernels as _kernels
from ..columns.output import Layout, OutputColumns
from ..contract.decoding import raise_if_stopped, run_decode
from ..framing import Frames, parse_confluent, program_index
from ..contract.results import FAILFAST, DecodeResult, check_mode
from ..vm.codes import E_OK
from .model import MessageType, ProtoSchema
from .program import ProtobufProgram, writer_tree
from .resolution import check_compatible
from .schemas import load_schema, select_message
from .spark_types import ProtobufOptions, message_plan
from .kernels.decode import FRAME_WORDS

_GROUP_DEPTH = 64  # nesting of unknown groups skipped


def protobuf_options(options: ProtobufOptions | Mapping | None) -> ProtobufOptions:
    if isinstance(options, ProtobufOptions):
        return options
    return ProtobufOptions.from_mapping(options)


class ProtobufDecoder:
    """Decodes Confluent-framed Protobuf into the Arrow type spark-protobuf gives the reader's message.

    ``reader_schema``: `.proto` text, a base64 or binary ``FileDescriptorProto`` (a registry's
    ``format=serialized``), or a loaded :class:`ProtoSchema`; ``references``: the files it imports (import path ->
    schema, see ``schemas.py``); ``message_name``: the message to read (default: the file's first);
    ``options``: spark-protobuf's options (:class:`ProtobufOptions`, or a mapping of their names)."""

    def __init__(self, reader_schema, references=(), message_name: str | None = None,
                 options: ProtobufOptions | Mapping | None = None) -> None:
        self.options = protobuf_options(options)
        self.reader: ProtoSchema = load_schema(reader_schema, references)
        self.message: MessageType = select_message(self.reader, message_name)
        self.plan = message_plan(self.message, self.options)
        self.arrow_field = pa.field("value", self.plan.arrow_type, nullable=True)
        self.layout = Layout(self.arrow_field)
        self.program = ProtobufProgram(self.plan, self.layout, self.options)
        self._tree: list[int] = []
        self._entries: dict[int, int] = {}  # schema id -> root of its message tree
        self._tree_array: np.ndarray | None = None
        self._occ_rows = 0
        self.two_steps_only = False  # tests: decode every record with the two-step path
        self._items_hint: dict[int, float] | None = None
        self._bytes_hint: dict[int, float] | None = None

    @property
    def arrow_type(self) -> pa.DataType:
        """The Arrow type of decoded values (a struct); nullable."""
        return self.arrow_field.type

    def add_writer_schema(self, schema_id: int, writer_schema, references=()) -> None:
        """Makes rows framed with ``schema_id`` decodable. When the writer's file defines the reader's message,
        their common fields must be compatible (``ResolutionError`` names the field)."""
        if schema_id in self._entries:
            return
        writer = load_schema(writer_schema, references)
        same = writer.types.get(self.message.full_name)
        if isinstance(same, MessageType):
            check_compatible(same, self.message)
        self._entries[int(schema_id)] = writer_tree(writer, self.message, self._tree)
        self._tree_array = None

    def known_schema_ids(self) -> list[int]:
        return sorted(self._entries)

    def missing_schema_ids(self, frames: Frames | pa.Array) -> list[int]:
        """The schema ids framed in the batch that no writer schema was added for."""
        if not isinstance(frames, Frames):
            frames = parse_confluent(frames, message_indexes=True)
        return [i for i in frames.schema_ids() if i not in self._entries]

    def decode(self, values: Frames | pa.Array | pa.ChunkedArray, mode: str = FAILFAST) -> DecodeResult:
        """Decodes every row; see the module's docstring for ``mode``."""
        check_mode(mode)
        frames = values if isinstance(values, Frames) else parse_confluent(values, message_indexes=True)
        if frames.index_offsets is None:
            raise ValueError("Protobuf frames carry message indexes: parse them with "
                             "parse_confluent(values, message_indexes=True)")
        ids = np.array(sorted(self._entries), dtype=np.int64)
        entries = np.array([self._entries[i] for i in ids] or [0], dtype=np.int64)
        if self._tree_array is None:
            self._tree_array = np.array(self._tree or [-1, 0], dtype=np.int64)
        which, status = program_index(frames, ids)
        n = len(frames)
        msgs, fields, lookup, enums, consts = self.program.arrays()
        columns = OutputColumns(self.layout, n, self._items_hint, self._bytes_hint, input_bytes=frames.data.size)
        ok = status == E_OK
        longest = int((frames.end - frames.start)[ok].max()) if ok.any() else 0
        occ = np.zeros((max(self._occ_rows, longest // 2 + 64), 4), dtype=np.int64)
        slots = np.zeros((self.program.slot_rows + 1, 2), dtype=np.int64)
        stack = np.zeros((self.program.depth + 2, FRAME_WORDS), dtype=np.int64)
        gstack = np.zeros(_GROUP_DEPTH, dtype=np.int64)
        scratch8 = np.zeros(self.program.scratch_bytes, dtype=np.uint8)
        out = np.zeros(4, dtype=np.int64)
        err_code = np.zeros(n, dtype=np.int32)
        err_node = np.full(n, -1, dtype=np.int64)
        pb_decode_rows = _kernels.current().pb_decode_rows
        scratch = [occ]

        def call(row):
            return pb_decode_rows(msgs, fields, lookup, enums, consts, self._tree_array, entries, which,
                                  frames.index_offsets, frames.indexes, self.program.root, frames.data, frames.start,
                                  frames.end, status, row, mode == FAILFAST, self.two_steps_only,
                                  *columns.kernel_args(), scratch[0], slots, stack, gstack, out, err_code, err_node,
                                  scratch8)

        def grow_occurrences():
            scratch[0] = np.zeros((2 * scratch[0].shape[0], 4), dtype=np.int64)

        row, outcome = run_decode(call, columns, out, grow_occurrences)
        self._occ_rows = scratch[0].shape[0]
        raise_if_stopped(row, outcome, frames.schema_id, err_code, err_node, self.program)
        self._items_hint, self._bytes_hint = columns.usage()
        return DecodeResult(columns.to_arrow(0), err_code != E_OK, err_code, frames.schema_id, err_node, self.program)
