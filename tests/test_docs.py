"""The guide cannot drift: every relative link and anchor of README.md and docs/*.md resolves, every page of docs/ is
reachable from the README, and every Python block runs against real brokers (the conventions are in
docs/architecture.md, "The guide and its examples").

One broker serves every page: a PLAINTEXT listener (`broker:9092`), TLS (`broker1.example.com:9093`) and SASL over
TLS (`broker1.example.com:9094`: SCRAM, PLAIN, OAUTHBEARER from the harness's identity provider, GSSAPI from a test
KDC, delegation tokens), creating topics on first write as Kafka does by default. Before a page runs, the topics its
blocks name are made afresh and seeded; its blocks then run in order in one namespace."""

from __future__ import annotations

import json
import re
import time
import uuid

import pytest

from harness import Listener, OAuthProvider, free_port, generate_test_certificates
from harness.kerberos import GSSAPI_TLS_LISTENER, kerberized_kafka_cluster
from tests.docs_pages import DOCS, REPO, anchors, blocks, links, pages
from tests.spark.kerberos_spark_fixtures import spark_kerberos  # noqa: F401  (a KDC whose krb5.conf Spark reads)
from tests.spark.typed_fixtures import produce_avro, registry  # noqa: F401

PAGES = pages()
USER, PASSWORD = "docs-user", "d0cs-Pa55-" + uuid.uuid4().hex[:8]
CLIENT_ID, CLIENT_SECRET = "docs-app", "d0cs-S3cret-" + uuid.uuid4().hex[:8]
GIVEN = {"username": USER, "password": PASSWORD, "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET,
         "api_key": "docs-key", "api_secret": "docs-secret"}
ORDER = {"type": "record", "name": "Order", "namespace": "com.acme",
         "fields": [{"name": "id", "type": "long"}, {"name": "total", "type": "double"},
                    {"name": "customer", "type": "string"}]}
TOPIC_NAMED = re.compile(r"""["']?\b(?:subscribe|topic)["']?\s*[,:=]?\s*["']([A-Za-z0-9._-]+)["']""")


# -- links ----------------------------------------------------------------------------------------------------

def test_every_relative_link_and_anchor_resolves():
    broken = []
    for page in PAGES:
        for target in links(page):
            file, _, anchor = target.partition("#")
            path = (page.parent / file).resolve() if file else page
            if not path.exists():
                broken.append(f"{page.relative_to(REPO)}: {target} (no such file)")
            elif anchor and (path.suffix != ".md" or anchor not in anchors(path)):
                broken.append(f"{page.relative_to(REPO)}: {target} (no heading makes #{anchor})")
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_every_page_of_docs_is_reachable_from_the_readme():
    seen, todo = set(), [REPO / "README.md"]
    while todo:
        page = todo.pop()
        if page in seen:
            continue
        seen.add(page)
        for target in links(page):
            path = (page.parent / target.partition("#")[0]).resolve()
            if path.suffix == ".md" and path.exists():
                todo.append(path)
    unreachable = sorted(p.name for p in DOCS.glob("*.md") if p.resolve() not in seen)
    assert not unreachable, f"docs pages no link leads to from README.md: {unreachable}"
    assert len(list(DOCS.glob("*.md"))) >= 10


def test_the_checks_can_fail(tmp_path):
    """The link, anchor and marker checks on a page made to break them."""
    (tmp_path / "other.md").write_text("# Other page\n\n## A `code` heading: twice\n\n## A code heading twice\n")
    page = tmp_path / "page.md"
    page.write_text("[ok](other.md#a-code-heading-twice-1) [bad](other.md#nope) [gone](missing.md) "
                    "`[not a link](x.md)`\n\n<!-- not run -->\n```python\nx = 1\n```\n\n"
                    "<!-- not run: a reason -->\ntext between\n\n```python\n1 / 0\n```\n")
    assert links(page) == ["other.md#a-code-heading-twice-1", "other.md#nope", "missing.md"]
    assert anchors(tmp_path / "other.md") == {"other-page", "a-code-heading-twice", "a-code-heading-twice-1"}
    found, problems = blocks(page)
    assert [(b.line, b.not_run) for b in found] == [(4, ""), (11, None)]
    assert len(problems) == 2 and "must give its reason" in problems[0] and "right before" in problems[1]


def test_markers_give_reasons():
    problems = [p for page in PAGES for p in blocks(page)[1]]
    assert not problems, "\n".join(problems)


# -- the brokers and services the examples meet ------------------------------------------------------------------

@pytest.fixture(scope="module")
def docs_services(spark, spark_kerberos, registry, tmp_path_factory):  # noqa: F811
    """One broker for every page, the identity provider its OAUTHBEARER login trusts, and the placeholders."""
    certs = generate_test_certificates(tmp_path_factory.mktemp("docs-certs"))
    idp = OAuthProvider({CLIENT_ID: CLIENT_SECRET}).start()
    env = spark_kerberos
    env.user("etl")
    sasl = GSSAPI_TLS_LISTENER.lower()
    props = {**idp.broker_properties(GSSAPI_TLS_LISTENER),
             f"listener.name.{sasl}.sasl.enabled.mechanisms": "GSSAPI,SCRAM-SHA-512,PLAIN,OAUTHBEARER",
             f"listener.name.{sasl}.plain.sasl.jaas.config":
                 f'org.apache.kafka.common.security.plain.PlainLoginModule required user_{USER}="{PASSWORD}";',
             "listener.name.ssl.ssl.keystore.type": "PEM",
             "listener.name.ssl.ssl.keystore.location": str(certs.broker_keystore),
             "auto.create.topics.enable": "true", "num.partitions": "3"}
    cluster = kerberized_kafka_cluster(env.realm, delegation_tokens=True, tls_keystore=certs.broker_keystore,
                                       scram_users=[("SCRAM-SHA-512", USER, PASSWORD)], extra_properties=props,
                                       system_properties=idp.broker_system_properties())
    cluster.nodes[1].listeners.append(Listener("SSL", "SSL", free_port(), "localhost"))
    with cluster:
        yield {
            "cluster": cluster,
            "placeholders": {
                "broker:9092": cluster.bootstrap("PLAINTEXT"),
                "broker1.example.com:9093": cluster.bootstrap("SSL"),
                "broker1.example.com:9094": cluster.bootstrap(GSSAPI_TLS_LISTENER),
                "/etc/kafka/ca.pem": str(certs.ca_cert),
                "https://registry:8081": registry.url,
                "https://idp.example.com/oauth2/token": idp.token_endpoint,
                "/etc/security/keytabs/etl.keytab": str(env.user("etl")),
                "etl@EXAMPLE.COM": env.principal("etl"),
            },
            "registry": registry,
        }
    idp.stop()


def _fresh_topics(services, names: set[str]) -> None:
    """Delete and create the topics a page names, 3 partitions each."""
    from confluent_kafka.admin import AdminClient, NewTopic

    bootstrap = services["cluster"].bootstrap("PLAINTEXT")
    admin = AdminClient({"bootstrap.servers": bootstrap})
    existing = set(admin.list_topics(timeout=30).topics) & names
    for future in admin.delete_topics(sorted(existing), operation_timeout=30).values() if existing else ():
        future.result(60)
    deadline = time.monotonic() + 60
    while names:
        futures = admin.create_topics([NewTopic(n, num_partitions=3, replication_factor=1) for n in sorted(names)])
        waiting = set()
        for name, future in futures.items():
            try:
                future.result(60)
            except Exception as e:  # the deletion of the old one is still under way
                if "TOPIC_ALREADY_EXISTS" not in str(e) or time.monotonic() > deadline:
                    raise
                waiting.add(name)
        names = waiting
        time.sleep(0.2 if names else 0)


def _seed(services, names: set[str], page: str) -> None:
    """`events`: 100 JSON records in each partition; `orders`: Avro records of ORDER on the typed-data page, else 100
    text records per partition and a consumer group `billing` that committed 80, 60 and 40."""
    from confluent_kafka import Consumer, Producer, TopicPartition

    bootstrap = services["cluster"].bootstrap("PLAINTEXT")
    if "events" in names:
        producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
        for i in range(300):
            value = json.dumps({"id": i, "total": round(i * 1.5, 2)}).encode()
            producer.produce("events", key=f"k{i}".encode(), value=value, partition=i % 3,
                             headers=[("source", b"seed")])
        assert producer.flush(60) == 0
    if "orders" in names and page == "docs/typed-data.md":
        values = [{"id": i, "total": float(i * 3), "customer": f"c{i % 7}"} for i in range(60)]
        produce_avro(bootstrap, "orders", services["registry"].url, ORDER, values,
                     keys=[str(i).encode() for i in range(60)], partitions=3)
    elif "orders" in names:
        producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
        for i in range(300):
            producer.produce("orders", value=f"order {i}".encode(), partition=i % 3)
        assert producer.flush(60) == 0
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "billing", "enable.auto.commit": False})
        consumer.commit(offsets=[TopicPartition("orders", p, 80 - 20 * p) for p in range(3)], asynchronous=False)
        consumer.close()


# -- the examples ------------------------------------------------------------------------------------------------

def _substitute(code: str, placeholders: dict[str, str], folder) -> str:
    for old, new in placeholders.items():
        code = code.replace(old, new)
    for root in ("/lake/", "/chk/"):
        code = re.sub(rf"""(["'])({re.escape(root)})""", lambda m: f"{m.group(1)}{folder}{m.group(2)}", code)
    return code


@pytest.fixture
def started_queries(monkeypatch):
    """Every streaming query the blocks start (a block may leave one running, or one that failed)."""
    from pyspark.sql.streaming.readwriter import DataStreamWriter

    queries = []
    start = DataStreamWriter.start

    def recording_start(self, *args, **kwargs):
        query = start(self, *args, **kwargs)
        queries.append(query)
        return query

    monkeypatch.setattr(DataStreamWriter, "start", recording_start)
    return queries


def _finish_streams(queries: list) -> str | None:
    """Run the streams a block left running until caught up, stop them; the first failure of any, if one failed."""
    failure = None
    while queries:
        query = queries.pop(0)
        try:
            if query.isActive:
                query.processAllAvailable()
        except Exception as e:  # noqa: BLE001 - reported below with the block
            failure = failure or f"{type(e).__name__}: {e}"
        finally:
            query.stop()
        if query.exception() is not None:
            failure = failure or str(query.exception())
    return failure


@pytest.mark.parametrize("page", [p for p in PAGES if any(b.language == "python" for b in blocks(p)[0])],
                         ids=lambda p: p.relative_to(REPO).as_posix())
def test_page_examples_run(page, spark, docs_services, started_queries, tmp_path, capsys):
    rel = page.relative_to(REPO).as_posix()
    runnable = [b for b in blocks(page)[0] if b.language == "python" and b.not_run is None]
    named = {t for b in runnable for t in TOPIC_NAMED.findall(b.code)}
    _fresh_topics(docs_services, set(named))
    _seed(docs_services, named, rel)
    set_confs = re.compile(r"spark\.conf\.set\(\"([^\"]+)\"")
    confs = {k: spark.conf.get(k, None) for b in runnable for k in set_confs.findall(b.code)}
    views = {t.name for t in spark.catalog.listTables() if t.isTemporary}
    namespace = {"__name__": "__docs__", "spark": spark, **GIVEN}
    started, times = time.monotonic(), []
    try:
        for block in runnable:
            block_started = time.monotonic()
            code = _substitute(block.code, docs_services["placeholders"], tmp_path)
            try:
                exec(compile(code, block.where, "exec"), namespace)
            except Exception as e:
                _finish_streams(started_queries)
                pytest.fail(f"{block.where}: the example fails: {type(e).__name__}: {str(e)[:3000]}")
            failure = _finish_streams(started_queries)
            assert failure is None, f"{block.where}: a stream the example started failed: {failure[:3000]}"
            times.append(f"{block.line}: {time.monotonic() - block_started:.1f}s")
    finally:
        for key, value in confs.items():
            spark.conf.unset(key) if value is None else spark.conf.set(key, value)
        for view in {t.name for t in spark.catalog.listTables() if t.isTemporary} - views:
            spark.catalog.dropTempView(view)
    with capsys.disabled():
        print(f"\n{rel}: {len(runnable)} blocks in {time.monotonic() - started:.1f}s ({', '.join(times)})")
