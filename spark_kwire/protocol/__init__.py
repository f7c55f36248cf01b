"""Kafka wire protocol in pure Python: primitives, message declarations, error codes.

* :mod:`.primitives` -- bounds-checked :class:`Reader` / :class:`Writer`.
* :mod:`.schema` -- the declarative message engine (:class:`Api`, :func:`F`, ...).
* :mod:`.messages` -- the declared APIs (``messages.FETCH``, ``messages.BY_KEY``...).
* :mod:`.errors` -- Kafka error table and the exception hierarchy.
"""

from . import errors, messages, primitives, schema
from .errors import (
    ERRORS_BY_CODE,
    ERRORS_BY_NAME,
    KafkaApiError,
    KafkaError,
    KwireError,
    ProtocolDecodeError,
    ProtocolEncodeError,
    error_for,
    error_info,
    is_retriable,
    raise_for_error,
)
from .messages import ALL_APIS, BY_KEY, BY_NAME, request_header_version, response_header_version
from .primitives import ZERO_UUID, Reader, Writer
from .schema import Api, MessageSchema

__all__ = [
    "errors", "messages", "primitives", "schema",
    "ERRORS_BY_CODE", "ERRORS_BY_NAME", "KafkaApiError", "KafkaError", "KwireError",
    "ProtocolDecodeError", "ProtocolEncodeError", "error_for", "error_info", "is_retriable",
    "raise_for_error",
    "ALL_APIS", "BY_KEY", "BY_NAME", "request_header_version", "response_header_version",
    "ZERO_UUID", "Reader", "Writer", "Api", "MessageSchema",
]
