"""Step 4 of a connection: the broker's API versions (ApiVersions), and what kwire needs that the broker lacks.

kwire speaks each API in a range of versions (the protocol layer's declarations); a broker offers a range too. An API
is usable when the ranges meet. Reads need Metadata, ListOffsets and Fetch; writes Produce (and InitProducerId for
idempotent writes, Kafka's default); SASL logins SaslHandshake v1 and SaslAuthenticate. The others serve features:
their absence is a warning naming the feature.
"""

from __future__ import annotations

from spark_kwire.protocol import messages as m

__all__ = ["NEEDED", "FEATURES", "api_gaps", "describe_versions"]

#: APIs without which kwire cannot work, and what needs them.
NEEDED = {m.METADATA: "every read and write", m.LIST_OFFSETS: "reads", m.FETCH: "reads", m.PRODUCE: "writes",
          m.INIT_PRODUCER_ID: "idempotent writes (Kafka's default)"}
_SASL = {m.SASL_HANDSHAKE: "SASL logins", m.SASL_AUTHENTICATE: "SASL logins"}
#: APIs of optional features.
FEATURES = {m.FIND_COORDINATOR: "consumer groups and transactions", m.OFFSET_COMMIT: "commitOffsetsToGroup",
            m.OFFSET_FETCH: "starting from a group's offsets", m.ADD_PARTITIONS_TO_TXN: "exactly-once writes",
            m.END_TXN: "exactly-once writes", m.DESCRIBE_CONFIGS: "the topics table",
            m.CREATE_TOPICS: "creating topics (spark_kwire.admin)",
            m.CREATE_DELEGATION_TOKEN: "delegation tokens (delegationToken=true)"}
_SHOWN = (m.METADATA, m.FETCH, m.PRODUCE, m.LIST_OFFSETS)


def _gap(api, ranges: dict, minimum: int = 0) -> str | None:
    """Why ``api`` is not usable with a broker offering ``ranges`` (None when it is)."""
    theirs = ranges.get(api.api_key)
    low = max(api.min_version, minimum)
    if theirs is None:
        return f"{api.name} (the broker does not offer it; kwire speaks v{low}-{api.max_version})"
    if max(low, theirs[0]) > min(api.max_version, theirs[1]):
        return f"{api.name} (the broker offers v{theirs[0]}-{theirs[1]}, kwire speaks v{low}-{api.max_version})"
    return None


def api_gaps(ranges: dict, *, sasl: bool) -> tuple[list[str], list[str]]:
    """(needed APIs the broker lacks, optional features it lacks), each a phrase naming the API and the ranges."""
    needed = {**NEEDED, **(_SASL if sasl else {})}
    missing = [f"{gap} for {what}" for api, what in needed.items()
               if (gap := _gap(api, ranges, 1 if api is m.SASL_HANDSHAKE else 0))]
    optional = [f"{gap} for {what}" for api, what in FEATURES.items() if (gap := _gap(api, ranges))]
    return missing, optional


def describe_versions(ranges: dict) -> str:
    """The broker's ranges of the main APIs, and how many APIs it offers."""
    shown = []
    for api in _SHOWN:
        theirs = ranges.get(api.api_key)
        if theirs is not None:
            common = min(api.max_version, theirs[1])
            shown.append(f"{api.name} v{theirs[0]}-{theirs[1]} (kwire uses v{common})")
    return f"{len(ranges)} APIs; " + ", ".join(shown)
