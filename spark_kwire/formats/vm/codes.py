"""Per-record outcome codes the kernels report (never raise), and what each means in words."""

E_OK = 0
ROW_NULL = -1  # a null value (a tombstone): a null row, not an error
E_OVERFLOW = 1  # an output region is full: not an error, the caller grows it and resumes at that record
E_TRUNCATED = 2
E_BAD_VARINT = 3
E_BAD_LENGTH = 4
E_BAD_UNION = 5
E_UNION_BRANCH = 6
E_BAD_ENUM = 7
E_ENUM_SYMBOL = 8
E_BAD_BOOL = 9
E_DECIMAL_RANGE = 10
E_TIMESTAMP_RANGE = 11
E_TRAILING = 12
E_BAD_COUNT = 13
E_DEPTH = 14
E_BAD_TAG = 15
E_BAD_WIRE_TYPE = 16
E_BAD_GROUP = 17
E_BAD_UTF8 = 18
E_MISSING_REQUIRED = 19
# framing, found before decoding
E_SHORT = 20
E_MAGIC = 21
E_UNKNOWN_SCHEMA = 22
E_BAD_INDEXES = 23
E_OTHER_MESSAGE = 24
E_MESSAGE_INDEX = 25
# encoding
E_NULL = 30
E_FIXED_SIZE = 31
E_NOT_A_SYMBOL = 32
E_NO_MEMBER = 33
E_VALUE_RANGE = 34
E_JSON_SYNTAX = 40
E_JSON_TYPE = 41
E_JSON_NUMBER = 42
E_JSON_DATE = 43
E_JSON_DEPTH = 44
E_NOT_AN_INTEGER = 45
E_JSON_EMPTY = 46
E_JSON_BASE64 = 47
E_JSON_NOT_OBJECT = 48
E_JSON_TIMESTAMP = 49

MESSAGES = {
    E_TRUNCATED: "the payload ends inside a value (truncated, or written with another schema)",
    E_BAD_VARINT: "malformed variable-length integer (too long, or out of the int range)",
    E_BAD_LENGTH: "negative or oversized length of bytes/string",
    E_BAD_UNION: "union branch index out of range",
    E_UNION_BRANCH: "the writer's union branch cannot be read as the reader's type",
    E_BAD_ENUM: "enum symbol index out of range",
    E_ENUM_SYMBOL: "the writer's enum symbol is unknown to the reader, whose enum has no default",
    E_BAD_BOOL: "boolean byte is neither 0 nor 1",
    E_DECIMAL_RANGE: "decimal value has more digits than its precision",
    E_TIMESTAMP_RANGE: "timestamp out of the range of microseconds since 1970 in 64 bits",
    E_TRAILING: "bytes left over after the value (written with another schema?)",
    E_BAD_COUNT: "array/map block count larger than the bytes left can hold",
    E_DEPTH: "nesting deeper than the program allows (internal error)",
    E_BAD_TAG: "malformed Protobuf field tag (field number 0 or beyond 2^29 - 1)",
    E_BAD_WIRE_TYPE: "Protobuf wire type 6 or 7, or an end-group tag without its start",
    E_BAD_GROUP: "Protobuf group not closed by its end-group tag",
    E_BAD_UTF8: "string is not valid UTF-8",
    E_MISSING_REQUIRED: "required field is missing",
    E_SHORT: "value shorter than the 5-byte Confluent header (magic byte, schema id)",
    E_MAGIC: "first byte is not the Confluent magic byte 0 (not written by a schema-registry serializer?)",
    E_UNKNOWN_SCHEMA: "schema id unknown to the decoder",
    E_BAD_INDEXES: "malformed Protobuf message-index list after the Confluent header",
    E_OTHER_MESSAGE: "the row holds another message type than the one read (its message indexes name another "
                     "message of the writer's schema)",
    E_MESSAGE_INDEX: "the row's message indexes name no message of the writer's schema",
    E_NULL: "null value where the schema allows none",
    E_FIXED_SIZE: "binary value of the wrong size for an Avro fixed",
    E_NOT_A_SYMBOL: "string is not a symbol of the enum",
    E_NO_MEMBER: "no member of the union struct is set and the Avro union has no null",
    E_VALUE_RANGE: "value out of the range of the written type",
    E_JSON_SYNTAX: "malformed JSON",
    E_JSON_TYPE: "JSON value of another type than the schema's",
    E_JSON_NUMBER: "JSON number out of the range of its Spark type",
    E_JSON_DATE: "string is not a date / date-time as RFC 3339 writes them (e.g. 2024-05-01, 2024-05-01T12:00:00Z)",
    E_JSON_DEPTH: "JSON nested deeper than 1000 levels",
    E_NOT_AN_INTEGER: "JSON number with a fraction where the schema says integer",
    E_JSON_EMPTY: "empty string where the schema's type needs a value",
    E_JSON_BASE64: "string is not base64 (standard alphabet, padded)",
    E_JSON_NOT_OBJECT: "the JSON text is not an object (an array, a scalar or null) but the schema is a struct",
    E_JSON_TIMESTAMP: "string is not a date / timestamp in the format read (timestampFormat, dateFormat)",
}


def message(code: int) -> str:
    return MESSAGES.get(int(code), f"error code {int(code)}")
