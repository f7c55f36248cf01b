"""The rows of the side-by-side table in ``docs/options.md`` (kwire and Spark's built-in ``kafka`` source, for people
moving a job), in the page's order. Every option of the table (:mod:`.names`) points at the row that documents it,
and that row names it; the other rows say what is not one of kwire's own options (``kafka.*`` settings, save
modes...). ``tests/test_options_page.py`` checks that the page shows exactly these rows, and writes them with
``python -m tests.test_options_page``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PageRow", "ROWS"]


@dataclass(frozen=True)
class PageRow:
    """One row of the page: the options (or the case) it is about, what Spark's ``kafka`` source does, and kwire."""

    label: str
    spark: str
    kwire: str

    def markdown(self) -> str:
        return f"| {self.label} | {self.spark} | {self.kwire} |"


BOOTSTRAP = PageRow("`kafka.bootstrap.servers` (required)", "same", "same")
SUBSCRIPTION = PageRow(
    "`subscribe` / `subscribePattern` / `assign` (exactly one)", "same",
    "same; a missing topic is an error naming it; `assign` naming a partition that does not exist is an error (Spark "
    "reads the others)")
OFFSETS = PageRow(
    "`startingOffsets` / `endingOffsets` (`earliest`, `latest`, JSON with -2/-1)", "same",
    "same restrictions (no `latest` start / `earliest` end in batch); a start past the end is an error whatever "
    "`failOnDataLoss` says, as in Spark")
TIMESTAMPS = PageRow(
    "`startingTimestamp`, `endingTimestamp`, `startingOffsetsByTimestamp`, `endingOffsetsByTimestamp`, "
    "`startingOffsetsByTimestampStrategy`", "same",
    "same precedence (global timestamp, then per partition, then offsets) and edges (a start at a record's timestamp "
    "includes it, an end excludes it; no match: error or latest)")
DATA_LOSS = PageRow("`failOnDataLoss` (default true)", "same", "same; messages name topic, partition and offsets")
SPARK_CUTS = PageRow(
    "`minPartitions`, `maxRecordsPerPartition`", "same",
    "the same Spark partitions, offset for offset (see [Reading](reading.md#cutting-as-sparks-source-does)); either "
    "one turns kwire's packing off")
PACKING = PageRow(
    "`packPartitions` (default `true`), `targetRecordsPerPartition` (default 200000)", "—",
    "kwire-only, batch and stream: without `minPartitions`/`maxRecordsPerPartition`, small ranges of one leader are "
    "packed into one Spark partition of about `targetRecordsPerPartition` records, and larger ranges are split to "
    "that size (see [Packing](reading.md#packing)); `packPartitions=false` gives Spark's one partition per "
    "topic-partition; combining either with Spark's two options is an error")
HEADERS = PageRow(
    "`includeHeaders`", "same",
    "same column `headers: array<struct<key:string,value:binary>>`; reads only (see below)")
ISOLATION = PageRow("`kafka.isolation.level`", "same", "same (`read_committed` filters aborted transactions)")
TRIGGER_LIMITS = PageRow(
    "`maxOffsetsPerTrigger`, `minOffsetsPerTrigger`, `maxTriggerDelay`", "same",
    "same proration ([Streaming](streaming.md#triggers-limits-and-offsets)), through Spark 4.2+'s read-limit API, "
    "applied by kwire itself on 4.0/4.1 (see [AvailableNow before Spark "
    "4.2](streaming.md#availablenow-with-a-limit-before-spark-42)); in batch reads accepted and ignored with a "
    "warning, as Spark does; `minOffsetsPerTrigger` above `maxOffsetsPerTrigger` is an error, as in Spark")
POLL_TIMEOUT = PageRow(
    "`kafkaConsumer.pollTimeoutMs`", "how long an executor polls before failing",
    "how long a reader retries a fetch that makes no progress (sets `kafka.default.api.timeout.ms` unless that is "
    "given)")
OFFSET_RETRIES = PageRow(
    "`fetchOffset.numRetries`, `fetchOffset.retryIntervalMs`", "driver offset-fetch retries",
    "values checked as Spark does; not applicable: kwire's offset lookups retry within "
    "`kafka.default.api.timeout.ms`, paced by `kafka.retry.backoff.ms`")
GROUP_ID = PageRow(
    "`groupIdPrefix`, `kafka.group.id`", "names of the consumer groups the Java consumers use",
    "not applicable: kwire reads with Fetch requests and joins no consumer group (`kafka.group.id` is the group of "
    "`startingOffsets=group` when no other is named)")
DECOMPRESSED = PageRow(
    "`maxDecompressedBytes`", "—",
    "kwire-only: how far the compressed batches of one fetch of one partition may inflate (default 256 MiB); past it "
    "the read fails instead of exhausting executor memory")
TOPIC = PageRow("`topic` (sink)", "same", "same; overrides the `topic` column (whose type then does not matter)")
NEW_TOPIC = PageRow(
    "write to a topic that does not exist",
    "the producer asks for it and the broker creates it if `auto.create.topics.enable` (Kafka's default)",
    "same: writes ask for auto-creation, reads never do; where the brokers refuse, the error says so at once (Spark's "
    "producer times out after `max.block.ms`)")
PRODUCER = PageRow(
    "`kafka.compression.type`, `kafka.acks`, `kafka.batch.size`, `kafka.linger.ms`", "same",
    "same names; idempotent producer on by default; `linger.ms` has no default (see [Delivery "
    "guarantees](delivery-guarantees.md))")
SECURITY = PageRow(
    "`kafka.security.protocol`, `kafka.sasl.mechanism`, `kafka.sasl.jaas.config`, `kafka.ssl.*`", "same",
    "PLAIN, SCRAM-SHA-256/512, OAUTHBEARER (OIDC, Python token providers), AWS_MSK_IAM, **GSSAPI** (Kerberos: "
    "`Krb5LoginModule` from a keytab or a ticket cache, or no JAAS line; see [Kerberos](kerberos.md)); TLS with PEM "
    "files (JKS gets an error saying how to convert); see [Cloud identities](cloud-identities.md). SASL options with "
    "a `security.protocol` that is not SASL, and `kafka.sasl.kerberos.*` under another mechanism, are refused (Java "
    "ignores them)")
KERBEROS = PageRow(
    "`kafka.sasl.kerberos.service.name`, `kafka.sasl.kerberos.kinit.cmd`, `kafka.sasl.kerberos.ticket.renew.*`, "
    "`kafka.sasl.kerberos.min.time.before.relogin`", "Java client's",
    "same names and defaults (see [Kerberos](kerberos.md))")
DELEGATION_TOKENS = PageRow(
    "`spark.kafka.clusters.<id>.*`, `spark.security.credentials.kafka.enabled` (session conf: delegation tokens)",
    "the driver obtains a token, executors use it",
    "a Python source cannot read them: per query, `delegationToken=true` and `delegationToken.mechanism` "
    "(kwire-only; [mapping](kerberos.md#delegation-tokens))")
OAUTH = PageRow(
    "`kafka.sasl.login.callback.handler.class`, `kafka.sasl.oauthbearer.*`, `kafka.sasl.login.refresh.*`",
    "Java client's",
    "Kafka's OIDC handler by its Java name (also `kafkashaded.`), or a Python `package.module:function`; Kafka's "
    "refresh window")
SASL_USER = PageRow("`kafka.sasl.username` / `kafka.sasl.password`", "—", "kwire-only shorthand for the JAAS line")
CONSUMER_REFUSED = PageRow(
    "`kafka.auto.offset.reset`, `kafka.key.deserializer`, `kafka.enable.auto.commit`, …", "refused",
    "refused with the same reasons")
PRODUCER_CLASSES = PageRow(
    "`kafka.partitioner.class`, `kafka.interceptor.classes` (sink)", "the Java producer runs them",
    "refused: kwire runs no Java classes (it partitions as the Java client's default partitioner; a `partition` "
    "column chooses)")
DELIVERY = PageRow(
    "`deliveryGuarantee` (sink: `at-least-once` default, `exactly-once`), `transactionalIdPrefix`, "
    "`kafka.transaction.timeout.ms`",
    "— (Spark's sink is at-least-once; `kafka.transactional.id` is passed to the Java producer but never committed)",
    "kwire-only, Flink's names: Kafka transactions committed through Spark's commit protocol (see [Exactly-once "
    "writes](delivery-guarantees.md#exactly-once-writes)); `kafka.transactional.id` is refused (kwire names each "
    "task's transaction); the other two are refused without `exactly-once`, and on reads")
TYPED = PageRow(
    "`valueFormat`, `keyFormat` (`binary` default, `avro`, `protobuf`, `json-schema`, `json`), `schema.registry.*`, "
    "`value.subject.name.strategy` / `key.subject.name.strategy`, `valueSchema` / `keySchema`, `valueSchemaVersion` / "
    "`keySchemaVersion`, `valueRecordName` / `keyRecordName`, `valueMessageName` / `keyMessageName`, `mode`, "
    "`columnNameOfCorruptRecord`, `auto.register.schemas`, `use.latest.version`",
    "— (Spark needs the spark-avro or spark-protobuf JAR and `from_avro` / `from_protobuf`; no registry support, no "
    "JSON Schema; plain JSON through `from_json` / `to_json` on the bytes)",
    "kwire-only: typed keys and values through the schema registry, read and written, batch and stream, no JAR; see "
    "[Typed data](typed-data.md). `json`: plain JSON text with `from_json`'s options (next row) and "
    "`rescuedDataColumn`; see [Plain JSON topics](json.md)")
JSON_OPTIONS = PageRow(
    "`allowComments`, `allowUnquotedFieldNames`, `allowSingleQuotes`, `allowNumericLeadingZeros`, "
    "`allowNonNumericNumbers`, `timestampFormat`, `dateFormat`, `timeZone`, `rescuedDataColumn`, "
    "`primitivesAsString`, `prefersDecimal`, `dropFieldIfAllNull`, `inferTimestamp`; `ignoreNullFields` (sink)",
    "options of `from_json` / `to_json` (and `rescuedDataColumn` of Databricks' JSON reader; `inferTimestamp` of "
    "`spark.read.json`)",
    "kwire-only as source options, with `valueFormat=json` (or `keyFormat`): the same names, values and defaults; "
    "writes take `timestampFormat`, `dateFormat`, `timeZone` and `ignoreNullFields`, as `to_json` does; refused "
    "without a JSON side (see [Plain JSON topics](json.md#options))")
JSON_INFERENCE = PageRow(
    "`samplingRecords`, `samplingTimeoutMs`; `schemaLocation`, `schemaEvolutionMode` (`readStream`)",
    "— (Spark's `from_json` needs a schema; `spark.read.json` infers one from strings, not from a topic)",
    "kwire-only: plain JSON (`valueFormat=json`) with no `valueSchema` is inferred at `load()` as `spark.read.json` "
    "infers it; streams keep and widen it with Auto Loader's names; see [Inferred and evolving JSON "
    "schemas](json-inference.md)")
MISPLACED = PageRow(
    "an option where it has no effect: `includeHeaders` on a write, `groups`/`groupPattern` without `metadata`, "
    "`topic` on a read, `checkpointLocation`/`queryName` outside `writeStream`, a path in `load()`/`save()` "
    "(`path`, `paths`), a read option on a write, `commitOffsetsToGroup` in batch", "ignored",
    "**error** saying where the option belongs (unknown options and bad values when the DataFrame or view is "
    "defined, an option of the other use when the read or write runs); options naming both a subscription and a "
    "`topic` define a view that is read and written, whose reads and writes each leave the other's options aside "
    "([SQL and pipelines](sql-and-pipelines.md#a-view-that-is-read-and-written))")
UNKNOWN = PageRow("unknown non-`kafka.` option", "ignored", "**error**, with a \"did you mean\" suggestion")
OTHER_SETTINGS = PageRow(
    "any other `kafka.*` setting", "passed to the Java client, which ignores (and logs) the ones it does not know",
    "read once at `load()`: honoured, named in one warning per query when it has no effect in kwire (a Java-client "
    "setting such as `kafka.max.poll.records`), or refused: an unknown one with a \"did you mean\" "
    "(`kafka.bootstrap.server`); [the table of every setting](kafka-client-settings.md)")
PUSHDOWN = PageRow(
    "pushdown of `partition`, `offset`, `timestamp` filters", "—",
    "kwire-only, Spark 4.1+: needs `spark.sql.python.filterPushdown.enabled=true` (off by default in Spark); on 4.0 "
    "Spark filters the rows read")
COMMIT_OFFSETS = PageRow(
    "`commitOffsetsToGroup=<group>` (stream)", "—",
    "kwire-only: commits each micro-batch's end offsets to a Kafka consumer group")
START_AT_GROUP = PageRow(
    "`startingOffsets=group` (stream), `startingOffsetsGroup`", "—",
    "kwire-only: start from that group's committed offsets (earliest where it has none); `startingOffsetsGroup` "
    "names the group and needs `startingOffsets=group`")
STREAM_READ_MODE = PageRow(
    "`streamReadMode` (stream; `auto` default, `tasks`, `driver`)", "— (tasks always read)",
    "kwire-only: where a stream's micro-batches are read, by Spark tasks or in the driver's source process (no "
    "Python worker for the source: small micro-batches into a JVM sink finish sooner); `auto` picks the driver at "
    "start, on Spark 4.2+ without `delegationToken=true`, when the topics' recent records and starting backlog fit "
    "100,000 records and 32 MiB a micro-batch; a restart may change the mode on the same checkpoint (see [Reading on the driver or in "
    "tasks](streaming.md#reading-on-the-driver-or-in-tasks-streamreadmode)); refused in batch reads")
METADATA = PageRow(
    "`metadata=topics\\|partitions\\|groups\\|group_offsets`, `groups`, `groupPattern`", "—",
    "kwire-only, batch only: [the cluster as DataFrames](metadata-tables.md); refused on `readStream`")
CHECK = PageRow(
    "`metadata=check`, `checkThroughput`, `checkStepTimeoutMs`, `checkTimeoutMs`, `checkTasks`", "—",
    "kwire-only, batch only: [the connection check](checking-a-connection.md#in-spark) from the driver and from "
    "`checkTasks` tasks on the executors, one row per step and target with its fix; it takes `kafka.*`, the topics "
    "(`subscribe`, `subscribePattern`, `assign`, `topic`) and `schema.registry.*`; the check's own options are "
    "refused everywhere else")
CATALOG_TABLE = PageRow(
    "`CREATE TABLE ... USING kwire` (a catalog table)", "`CREATE TABLE ... USING kafka` keeps the table's options",
    "refused at once, saying why: Spark keeps no OPTIONS of a catalog table over a Python data source; a temporary "
    "view instead ([What Spark does not allow](sql-and-pipelines.md#what-spark-does-not-allow))")
SAVE_MODE = PageRow(
    "save mode", "`append`, `errorifexists`",
    "`append` only: Spark refuses ErrorIfExists for Python data sources, and Kafka cannot overwrite")

#: The page's rows, in its order.
ROWS = (BOOTSTRAP, SUBSCRIPTION, OFFSETS, TIMESTAMPS, DATA_LOSS, SPARK_CUTS, PACKING, HEADERS, ISOLATION,
        TRIGGER_LIMITS, POLL_TIMEOUT, OFFSET_RETRIES, GROUP_ID, DECOMPRESSED, TOPIC, NEW_TOPIC, PRODUCER, SECURITY,
        KERBEROS, DELEGATION_TOKENS, OAUTH, SASL_USER, CONSUMER_REFUSED, PRODUCER_CLASSES, DELIVERY, TYPED,
        JSON_OPTIONS, JSON_INFERENCE, MISPLACED, UNKNOWN, OTHER_SETTINGS, PUSHDOWN, COMMIT_OFFSETS, START_AT_GROUP,
        STREAM_READ_MODE, METADATA, CHECK, CATALOG_TABLE, SAVE_MODE)
