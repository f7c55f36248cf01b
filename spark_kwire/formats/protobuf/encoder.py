"""Encoding an Arrow column (a Spark struct column, for Kafka's ``value``) as Confluent-framed Protobuf.

    encoder = ProtobufEncoder(schema, schema_id=42, message_name=None)
    encoder.check(arrow_type)                     # TypeMismatchError up front, naming field and types
    framed = encoder.encode(struct_array).values  # magic byte, schema id, message indexes, Protobuf per row

The message indexes are those of the message in the schema's file (``[0]``, the first message, is written as
the single byte 0). A null row becomes a null value (a tombstone). A row that cannot be written fails the batch
naming the row and field (FAILFAST), or becomes a null value reported in ``errors`` (PERMISSIVE).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .. import kernels as _kernels
from ..columns import Layout
from ..errors import EncodeError
from ..framing import confluent_header
from ..input_columns import InputColumns, canonical_type
from ..results import FAILFAST, EncodeResult, binary_column, check_mode
from ..vm.codes import E_OK, message
from .encode_program import EncodeProgram
from .model import MessageType, ProtoSchema
from .schemas import load_schema, message_indexes, select_message
from .vm_encode import ENCODE_FRAME_WORDS

__all__ = ["ProtobufEncoder"]


class ProtobufEncoder:
    """Writes Arrow struct values as Protobuf message ``message_name`` (default: the file's first) of ``schema``
    (`.proto` text, a base64 or binary ``FileDescriptorProto``, or a :class:`ProtoSchema`; ``references``: the
    files it imports), each framed with ``schema_id`` and the message's indexes."""

    def __init__(self, schema, schema_id: int, message_name: str | None = None, references=()) -> None:
        self.schema: ProtoSchema = load_schema(schema, references)
        self.message: MessageType = select_message(self.schema, message_name)
        self.schema_id = schema_id
        self.message_indexes = message_indexes(self.schema, self.message)
        self.header = np.frombuffer(confluent_header(schema_id, self.message_indexes), dtype=np.uint8)
        self._programs: dict[pa.DataType, EncodeProgram] = {}

    def check(self, arrow_type: pa.DataType) -> EncodeProgram:
        """The program for values of ``arrow_type``; :class:`TypeMismatchError` if they cannot be written."""
        t = canonical_type(arrow_type)
        program = self._programs.get(t)
        if program is None:
            program = self._programs[t] = EncodeProgram(self.message, Layout(pa.field("value", t, nullable=True)))
        return program

    def encode(self, values: pa.Array | pa.ChunkedArray, mode: str = FAILFAST) -> EncodeResult:
        check_mode(mode)
        program = self.check(values.type)
        columns = InputColumns(values)
        n = len(columns.array)
        msgs, fields, enums, consts = program.arrays()
        offsets = np.zeros(n + 1, dtype=np.int64)
        valid = np.zeros(n, dtype=np.uint8)
        err_code = np.zeros(n, dtype=np.int32)
        err_field = np.full(n, -1, dtype=np.int64)
        stack = np.zeros((program.depth + 2, ENCODE_FRAME_WORDS), dtype=np.int64)
        scratch = np.zeros(1, dtype=np.int64)
        size = columns.a64.nbytes + columns.a32.nbytes + columns.a8.nbytes + columns.abytes.nbytes
        out = np.empty(2 * size + n * (len(self.header) + 16) + 64, dtype=np.uint8)
        k = _kernels.current()
        row = 0
        with k.quiet():
            while True:
                row, outcome = k.pb_encode_rows(msgs, fields, enums, consts, program.root, self.header, row,
                                                mode == FAILFAST, *columns.kernel_args(), out, offsets, valid, stack,
                                                err_code, err_field, scratch, scratch.view(np.float64))
                if outcome != 1:
                    break
                bigger = np.empty(2 * out.size + 1024, dtype=np.uint8)
                bigger[:offsets[row]] = out[:offsets[row]]
                out = bigger
        if outcome == 2:
            bad = int(row) - 1
            raise EncodeError(bad, message(int(err_code[bad])), program.path_at(int(err_field[bad])))
        return EncodeResult(binary_column(out, offsets, valid), err_code != E_OK, err_code, err_field, program)
