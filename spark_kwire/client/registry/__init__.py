"""The schema-registry client (Confluent's Schema Registry REST API): no Spark, standard library HTTP.

Owns what kwire asks a schema registry: schemas by id, subjects and their versions, registering and looking up
schemas, references, and the subject name strategies.

May import: the client's ground (``client.settings``, ``client.errors``, ``client.retry``) and ``client.auth`` (TLS
contexts, OAuth client-credentials tokens); never the broker side (core, consumer, producer, admin).

* :mod:`.client`: :class:`RegistryClient` (schemas by id, subjects, versions, register, lookup, references);
* :mod:`.config`: :class:`RegistryConfig` from confluent-kafka's option names;
* :mod:`.credentials`: HTTP Basic, static bearer tokens, OAuth client credentials; TLS from kwire's TLS module;
* :mod:`.transport`: failover, retries and deadlines; :mod:`.cache`: per-process single-flight caches;
* :mod:`.model`: :class:`Schema`, :class:`SchemaReference`, :class:`RegisteredSchema`;
* :mod:`.subject_names`: the subject name strategies; :mod:`.errors`: the exceptions.
"""

from spark_kwire.client.registry.client import RegistryClient
from spark_kwire.client.registry.config import RegistryConfig
from spark_kwire.client.registry.errors import (IncompatibleSchemaError, InvalidSchemaError, RegistryAuthError,
                                                 RegistryConfigError, RegistryError, RegistryNotFoundError,
                                                 RegistryTlsError, RegistryUnreachableError, SchemaNotFoundError,
                                                 SubjectNotFoundError, VersionNotFoundError)
from spark_kwire.client.registry.model import RegisteredSchema, Schema, SchemaReference
from spark_kwire.client.registry.subject_names import (record_name_strategy, subject_name_strategy,
                                                        topic_name_strategy, topic_record_name_strategy)

__all__ = [
    "RegistryClient", "RegistryConfig", "Schema", "SchemaReference", "RegisteredSchema",
    "topic_name_strategy", "record_name_strategy", "topic_record_name_strategy", "subject_name_strategy",
    "RegistryError", "RegistryConfigError", "RegistryUnreachableError", "RegistryTlsError", "RegistryAuthError",
    "RegistryNotFoundError", "SubjectNotFoundError", "VersionNotFoundError", "SchemaNotFoundError",
    "InvalidSchemaError", "IncompatibleSchemaError",
]
