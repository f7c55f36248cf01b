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

from .. import kernels as _kernels
from ..contract.encoding import FramedEncoder, values_size
from ..framing import confluent_header
from .encode_program import EncodeProgram
from .model import MessageType, ProtoSchema
from .schemas import load_schema, message_indexes, select_message
from .kernels.encode import ENCODE_FRAME_WORDS

__all__ = ["ProtobufEncoder"]


class ProtobufEncoder(FramedEncoder):
    """Writes Arrow struct values as Protobuf message ``message_name`` (default: the file's first) of ``schema``
    (`.proto` text, a base64 or binary ``FileDescriptorProto``, or a :class:`ProtoSchema`; ``references``: the
    files it imports), each framed with ``schema_id`` and the message's indexes."""

    def __init__(self, schema, schema_id: int, message_name: str | None = None, references=()) -> None:
        self.schema: ProtoSchema = load_schema(schema, references)
        self.message: MessageType = select_message(self.schema, message_name)
        self.schema_id = schema_id
        self.message_indexes = message_indexes(self.schema, self.message)
        super().__init__(confluent_header(schema_id, self.message_indexes))

    def _new_program(self, layout) -> EncodeProgram:
        return EncodeProgram(self.message, layout)

    def _rows_runner(self, program, columns, failfast, offsets, valid, err_code, err_field):
        msgs, fields, enums, consts = program.arrays()
        stack = np.zeros((program.depth + 2, ENCODE_FRAME_WORDS), dtype=np.int64)
        scratch = np.zeros(1, dtype=np.int64)
        pb_encode_rows = _kernels.current().pb_encode_rows

        def run_rows(row, out):
            return pb_encode_rows(msgs, fields, enums, consts, program.root, self.header, row, failfast,
                                  *columns.kernel_args(), out, offsets, valid, stack, err_code, err_field, scratch,
                                  scratch.view(np.float64))

        return run_rows, 2 * values_size(columns) + len(columns.array) * (len(self.header) + 16) + 64
