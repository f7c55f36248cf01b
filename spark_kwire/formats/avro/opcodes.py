"""The instructions of the Avro programs: what ``program.py`` emits and ``vm_decode.py`` / ``vm_encode.py``
run. An instruction is four int64 words (op, a, b, c); ``pc`` counts instructions. Nodes are output (or
input) column nodes; ``tables`` and ``consts`` are the program's int64 tables and constant bytes."""

# ---- decoding: read writer-encoded bytes, append reader-shaped values ----
D_RETURN = 0  # end of a (sub)program
D_RECORD = 1  # a: struct node -> append a valid element
D_NULL = 2  # a: node of Arrow type null
D_BOOL = 3  # a: node
D_INT = 4  # a: int32 node
D_INT_LONG = 5  # a: int64 node, b: multiplier (1, or 1000 for *-millis read as microseconds)
D_INT_FLOAT = 6
D_INT_DOUBLE = 7
D_LONG = 8  # a: int64 node, b: multiplier
D_LONG_FLOAT = 9
D_LONG_DOUBLE = 10
D_FLOAT = 11
D_FLOAT_DOUBLE = 12
D_DOUBLE = 13
D_BYTES = 14  # a: binary node (bytes and string alike)
D_FIXED = 15  # a: binary node, b: size
D_ENUM = 16  # a: string node, b: table of (const offset, length) per writer symbol (-1: unknown), c: symbols
D_DEC_BYTES = 17  # a: decimal node, b: precision
D_DEC_FIXED = 18  # a: decimal node, b: size, c: precision
D_PAD = 19  # a: node -> append a null (and placeholders in its struct subtree)
D_OPTIONAL = 20  # writer [null, X]: a: node to pad on null, b: index of the null branch,
#                   c: instructions to skip on null
D_UNION = 21  # a: table of branch programs (-1: branch not readable), b: branches
D_ARRAY = 22  # a: list or map node, b: item program, c: fewest bytes an item takes
D_SKIP_VARINT = 23
D_SKIP_FIXED = 24  # a: bytes
D_SKIP_BYTES = 25
D_SKIP_ARRAY = 26  # b: item program (skips one item), c: fewest bytes an item takes
D_DEFAULT = 27  # a: program reading the reader's type, b/c: offset/length of the default's bytes in consts

# ---- encoding: read Arrow columns, write Avro bytes ----
E_RETURN = 0
E_STRUCT = 1  # a: struct node: fails when null (an Avro record without null)
E_BOOL = 2  # a: node
E_INT = 3  # a: int32 node (an Avro int, or long: the same varint)
E_LONG = 4  # a: int64 node, b: divisor (1, or 1000 to write microseconds as milliseconds, rounding down)
E_FLOAT = 6
E_DOUBLE = 7
E_FLOAT_DOUBLE = 8
E_BYTES = 9  # a: binary node
E_FIXED = 10  # a: binary node, b: size
E_ENUM = 11  # a: string node, b: table of (const offset, length) per symbol, c: symbols
E_DEC_BYTES = 12  # a: decimal node
E_DEC_FIXED = 13  # a: decimal node, b: size
E_OPTIONAL = 14  # a: node, b: null branch index | (value branch index + 1) << 16 (0: write no index),
#                   c: instructions to skip when null
E_CONST = 15  # a/b: offset/length in consts: bytes written as they are (a branch index, a default)
E_ARRAY = 16  # a: list or map node, b: item program
E_MEMBERS = 17  # a: union struct node, b: table of (member node, branch index, program) triples, c: members;
#                 the null branch's index in tables[b + 3c] (-1: none)
