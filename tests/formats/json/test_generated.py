"""Hypothesis-generated JSON documents for one schema of every Spark type, decoded by kwire and by Spark's
``from_json`` in one Spark job each (``oracle.py``): values of the schema's types and of others, nesting, nulls,
missing and unknown fields, numbers at their edges, unicode (escaped or raw, surrogate pairs), written in
several JSON styles, and some of them cut short or with a byte changed (~20 s)."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.formats.json.oracle import differences

pytestmark = [pytest.mark.timeout(900),
              pytest.mark.filterwarnings("ignore::hypothesis.errors.NonInteractiveExampleWarning")]

SCHEMA = ("a INT, b STRING, c DOUBLE, d DECIMAL(9,3), e BOOLEAN, f ARRAY<BIGINT>, g MAP<STRING, STRING>, "
          "h STRUCT<x: SMALLINT, y: ARRAY<STRUCT<z: DOUBLE, w: STRING>>>, i TIMESTAMP, j DATE, k BINARY, l FLOAT, "
          "n TINYINT, _corrupt_record STRING")
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8)
NUMBER = st.one_of(st.integers(-2**70, 2**70), st.floats(allow_nan=False, allow_infinity=False),
                   st.decimals(allow_nan=False, allow_infinity=False, places=3).map(float),
                   st.sampled_from([0, -0.0, 1e-7, 2.5e10, 127, 128, 255, 256, 32767, 32768, 2**31, 2**63, 0.125]))
SCALAR = st.one_of(st.none(), st.booleans(), NUMBER, TEXT,
                   st.sampled_from(["2024-05-01", "2024-5-1 10:00:00", "2024-05-01T10:00:00Z", "1700000000",
                                    "2024-05-01T10:00:00.123456+02:00", "aGk=", "NaN", "Infinity", "", "1e2"]))
JSONISH = st.recursive(SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.sampled_from("xyzwq"), inner, max_size=3)),
                       max_leaves=8)
DOCUMENT = st.dictionaries(st.sampled_from(list("abcdefghijklnm") + ["zz", "A", "_corrupt_record"]), JSONISH,
                           max_size=8)


def styled(doc: dict, rnd: random.Random) -> str:
    text = json.dumps(doc, ensure_ascii=rnd.random() < 0.5, separators=rnd.choice([(",", ":"), (", ", ": ")]))
    roll = rnd.random()
    if roll < 0.08 and text:
        return text[:rnd.randrange(1, len(text) + 1)]  # cut short
    if roll < 0.14 and text:
        at = rnd.randrange(len(text))
        return text[:at] + rnd.choice('{}[]",:0a \\') + text[at + 1:]
    return text


def generated_texts(count: int) -> list[str]:
    """``count`` documents drawn by hypothesis (one at a time: a list of a hundred overruns its buffer) and styled;
    compared afterwards in one Spark job, which a draw per job would make minutes."""
    texts: list[str] = []

    @settings(max_examples=count, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(doc=DOCUMENT, rnd=st.randoms(use_true_random=False))
    def collect(doc, rnd):
        texts.append(styled(doc, rnd))

    collect()
    return texts


def test_generated_documents_read_as_from_json_reads_them(spark):
    texts = generated_texts(400)
    assert len(set(texts)) > 100  # hypothesis starts small: many are alike
    assert differences(spark, texts, SCHEMA) == []
