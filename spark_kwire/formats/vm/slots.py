"""Shared numbering of the column machinery: node kinds and the columns of the node table (``state``).

The kernels and ``columns.py`` agree on these; numba reads them as compile-time constants.
"""

# kinds of Arrow nodes
K_NULL = 0
K_BOOL = 1  # one byte per value in the u8 arena, packed into bits at assembly
K_I32 = 2  # int32, date32
K_I64 = 3  # int64, timestamp
K_F32 = 4  # stored through a float32 view of the i32 arena
K_F64 = 5  # stored through a float64 view of the i64 arena
K_DEC128 = 6  # two int64 per value (low, high), little-endian as Arrow's decimal128
K_BINARY = 7  # binary and string: int32 offsets (i32 arena) and bytes (data arena)
K_STRUCT = 8
K_LIST = 9  # int32 offsets (i32 arena), one child
K_MAP = 10  # as a list, whose child is the entries struct (key, value)

# columns of the node table, an int64 array [nodes, N_SLOTS]
S_KIND = 0
S_PARENT = 1  # -1 for the root
S_VALID = 2  # base of the validity bytes in the u8 arena, -1 when the node is not nullable
S_BASE = 3  # base of the values (or offsets) in the arena of the node's kind
S_CAP = 4  # elements the node's regions hold
S_LEN = 5  # elements appended so far
S_DATA_BASE = 6  # binary nodes: base of the bytes in the data arena
S_DATA_CAP = 7
S_DATA_LEN = 8
S_PAD_START = 9  # the nodes a null of this node pads: pad_nodes[start:end] (itself, then its struct subtree)
S_PAD_END = 10
S_CHILD = 11  # lists and maps: the item node; -1 otherwise
N_SLOTS = 12

# what ran out of room (out[1] after an overflow)
ROOM_VALUES = 0
ROOM_DATA = 1
ROOM_SCRATCH = 2  # a kernel's working memory (Protobuf field occurrences): the caller enlarges it and resumes
