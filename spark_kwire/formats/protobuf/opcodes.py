"""The Protobuf decoding program's numbering: what ``program.py`` writes and ``vm_decode.py`` reads.

A message program is a row of ``msgs`` (``M_*`` columns); each of its fields a row of ``fields`` (``FL_*``
columns), in the reader's order. ``OP_*`` say how a field's value becomes a column value; ``FLAG_*`` how
absence, zero values and repetition behave. Every array is int64.
"""

# msgs columns
M_NFIELDS = 0
M_FIELD_BASE = 1  # first row of its fields
M_NONEOF = 2
M_NODE = 3  # the struct node it appends to
M_LOOKUP_BASE = 4  # lookup[base + number] -> field position in the message (-1: unknown), numbers < M_LOOKUP_LEN
M_LOOKUP_LEN = 5
M_SORTED_BASE = 6  # (number, position) pairs sorted by number, for numbers >= M_LOOKUP_LEN
M_SORTED_LEN = 7
MSG_WORDS = 8

# fields columns
FL_NUMBER = 0
FL_OP = 1
FL_NODE = 2  # the field's node (a list or map node when repeated)
FL_ITEM = 3  # repeated: the list's item node (a map: its entries node)
FL_FLAGS = 4
FL_WT = 5  # the wire type of one element
FL_SUB = 6  # message/map: message program; enum: enum table; wrapper: the inner op
FL_ONEOF = 7  # index of the field's oneof in the message, -1 outside any
FL_DEF_A = 8  # default: value (integers, float bits, enum number) or const offset (strings, bytes)
FL_DEF_B = 9  # default: const length
FL_AUX = 10  # timestamp/duration: field number of seconds; wrapper: inner wire type
FL_AUX2 = 11  # timestamp/duration: field number of nanos
FIELD_WORDS = 12

# flags
FLAG_REPEATED = 1
FLAG_PACKABLE = 2  # repeated scalar numbers and enums: a length-delimited occurrence holds a packed run
FLAG_IMPLICIT = 4  # implicit presence: a zero value is the same as no value
FLAG_DEFAULT = 8  # absent: the default (FL_DEF_*), not null
FLAG_REQUIRED = 16
FLAG_CLOSED_ENUM = 32  # values that are not enum values are unknown fields
FLAG_INSTANCE = 64  # absent message: read as the empty message (map entry values), not null
FLAG_UTF8 = 128  # a string to validate
FLAG_EMIT_ZERO = 256  # wrappers: an absent inner value is the zero value (emit.default.values)

# ops: what a field's value becomes
OP_INT32 = 1  # varint, low 32 bits (int32, uint32, enum numbers)
OP_INT64 = 2  # varint (int64, uint64)
OP_UINT32_LONG = 3  # varint, low 32 bits unsigned, as int64
OP_UINT64_DEC = 4  # varint as an unsigned decimal(20, 0)
OP_SINT32 = 5
OP_SINT64 = 6
OP_BOOL = 7
OP_ENUM_NAME = 8  # varint -> the enum value's name (FL_SUB: enum table); enums.as.ints reads OP_INT32
OP_FIXED32 = 10  # 4 bytes (fixed32, sfixed32, float bits)
OP_FIXED64 = 11  # 8 bytes (fixed64, sfixed64, double bits)
OP_STRING = 12
OP_BYTES = 13
OP_MESSAGE = 14  # FL_SUB: message program
OP_MAP = 15  # FL_SUB: the entry's message program
OP_TIMESTAMP = 16
OP_DURATION = 17
OP_WRAPPER = 18  # FL_SUB: inner op, FL_AUX: inner wire type
OP_NULL = 19  # a retained empty message's dummy field: always null

# wire types
WT_VARINT = 0
WT_I64 = 1
WT_LEN = 2
WT_SGROUP = 3
WT_EGROUP = 4
WT_I32 = 5

# ---- encoding: Arrow columns -> Protobuf bytes (encode_program.py, vm_encode.py) ----
# message rows: EM_NFIELDS, EM_FIELD_BASE (the same as M_NFIELDS, M_FIELD_BASE); field rows:
EF_OP = 0
EF_NODE = 1  # the Arrow node (a list or map node when repeated)
EF_ITEM = 2  # repeated: the item node (a map: its entries node)
EF_TAG = 3  # the tag of one element (number << 3 | wire type)
EF_PACKED_TAG = 4  # packed repeated: the tag of the run (wire type 2); -1 when not packed
EF_FLAGS = 5
EF_SUB = 6  # message/map: message program; enum names: enum table; wrapper: inner op
EF_DEFAULT = 7  # a required scalar's value when the Arrow value is null (Spark writes the default)
EF_AUX = 8  # wrapper: the inner value's tag
EF_WORDS = 9

EFLAG_REPEATED = 1
EFLAG_IMPLICIT = 2  # zero values are not written
EFLAG_REQUIRED = 4
EFLAG_CLOSED_ENUM = 8  # enum numbers from an int column must be values of the enum
EFLAG_NULL_DEFAULT = 16  # map entries: a null value is written as the default (a message: the empty message)

EOP_I32 = 1  # int32 column, varint of the sign-extended value (int32, int64, enum numbers)
EOP_U32 = 2  # int32 column, varint of the 32 bits (uint32)
EOP_Z32 = 3  # int32 column, zig-zag 32 (sint32)
EOP_I64 = 4  # int64 column, varint (int64, uint64)
EOP_Z64 = 5  # int64 column, zig-zag (sint64)
EOP_I32_Z64 = 6  # int32 column to sint64
EOP_U32_OF_I64 = 7  # int64 column holding a uint32 (upcast.unsigned.ints): 0 .. 2^32-1
EOP_U64_OF_DEC = 8  # decimal(20, 0) column holding a uint64: 0 .. 2^64-1
EOP_BOOL = 9
EOP_FIXED32 = 10  # int32 or float32 column, 4 bytes
EOP_FIXED64 = 11  # int64 or float64 column, 8 bytes
EOP_I32_FIXED64 = 12  # int32 column to fixed64/sfixed64
EOP_F32_DOUBLE = 13  # float32 column to double
EOP_BYTES = 14  # string or binary column
EOP_ENUM_NAME = 15  # string column: the number of the enum value named so
EOP_MILLIS = 16  # timestamp column to an int64 of milliseconds (spark-protobuf's TimestampType -> LONG)
EOP_MESSAGE = 17
EOP_MAP = 18
EOP_TIMESTAMP = 19  # timestamp column to google.protobuf.Timestamp
EOP_DURATION = 20  # duration column to google.protobuf.Duration
EOP_WRAPPER = 21  # a primitive column to its wrapper message (EF_SUB: the inner op, EF_AUX: its tag)
EOP_EMPTY = 22  # null-typed column: nothing to write
