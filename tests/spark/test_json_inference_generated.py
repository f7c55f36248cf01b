"""Generated JSON documents (hypothesis, see tests/formats/json/test_inference_generated.py): kwire infers the
schema spark.read.json infers from the same strings, whatever the values, styles, damage and options.

Each example is one Spark job over 10 to 25 groups of documents; a group's documents merge with one another
(``{"g<group>": <document>}``) and a marker field per document shows whether Spark parsed it.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.formats.json.test_inference_generated import OPTION_SETS, documents, render
from tests.spark.test_json_inference import assert_same


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                                 HealthCheck.function_scoped_fixture])
@given(groups=st.lists(st.lists(documents, min_size=1, max_size=4), min_size=10, max_size=25),
       which=st.integers(0, len(OPTION_SETS) - 1))
def test_generated_documents_as_spark_infers_them(spark, groups, which):
    options = OPTION_SETS[which]
    docs = [f'{{"g{k}":{render(doc, options)},"h{k}_{n}":1}}'
            for k, group in enumerate(groups) for n, doc in enumerate(group)]
    assert_same(spark, docs, options)
