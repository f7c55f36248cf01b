"""kwire's plain JSON decoder on its own terms: FAILFAST names the first bad row, the rescued-data column keeps
unknown fields and values of another type as JSON (Databricks' name and meaning; no Spark to compare with), a
schema's corrupt-record field must be a string, and the Python and numba kernels agree."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from spark_kwire.formats import kernels
from spark_kwire.formats.errors import DecodeError, SchemaError
from spark_kwire.formats.json import JsonDecoder, JsonOptions
from tests.formats.json.test_from_json_oracle import CASES

SCHEMA = "id BIGINT, user STRUCT<name: STRING, age: INT, tags: ARRAY<STRING>>, scores ARRAY<STRUCT<v: DOUBLE>>"


def decode(texts, schema=SCHEMA, mode="PERMISSIVE", **options):
    return JsonDecoder(schema, JsonOptions.parse({"timeZone": "UTC", **options})).decode(pa.array(texts, pa.string()),
                                                                                        mode)


def test_failfast_names_the_first_bad_row():
    with pytest.raises(DecodeError) as e:
        decode(['{"id": 1}', '{"id": 2, "user": {"age": "old"}}', '{"id": 3'], mode="FAILFAST")
    assert e.value.row == 1 and "user.age" in str(e.value)


def test_rescued_data_keeps_unknown_fields_and_values_of_another_type():
    result = decode([
        '{"id": 1, "user": {"name": "a", "age": "old", "extra": true}, "more": [1, {"x": null}]}',
        '{"id": 2, "scores": [{"v": 1.5}, {"v": "high", "u": 1}]}', '{"id": "x", "id2": 5}', '{"id": 4}', '{"id": 5',
        '{"user": {"tags": ["a", 1, {"b": 2}]}}'], rescuedDataColumn="_rescued")
    rows = result.values.to_pylist()
    assert [json.loads(r["_rescued"]) if r["_rescued"] else None for r in rows] == [
        {"user": {"age": "old", "extra": True}, "more": [1, {"x": None}]},
        {"scores": [{"v": 1.5}, {"v": "high", "u": 1}]},  # inside an array: the whole array
        {"id": "x", "id2": 5}, None, None, None]  # tags of another type read as their JSON text: nothing rescued
    assert rows[0]["user"] == {"name": "a", "age": None, "tags": None} and rows[1]["scores"] == [{"v": 1.5},
                                                                                               {"v": None}]
    assert result.errors.tolist() == [False, False, False, False, True, False]  # only the malformed row is bad
    assert rows[4] == {"id": None, "user": None, "scores": None, "_rescued": None}


def test_the_corrupt_record_field_must_be_a_string():
    with pytest.raises(SchemaError, match="must be a STRING"):
        JsonDecoder("id INT, _corrupt_record INT")
    with pytest.raises(SchemaError, match="already"):
        JsonDecoder("id INT, _rescued STRING", JsonOptions.parse({"rescuedDataColumn": "_rescued"}))


def test_unsupported_patterns_are_refused_not_guessed():
    for pattern in ("yyyy-MM-dd EEE", "yyyy-ww", "HH:mm z", "yyyy-MM-dd'T'HH:mm:ss VV", "yyyy-MM-dd Q"):
        with pytest.raises(SchemaError, match="not supported|not a pattern"):
            JsonDecoder("t TIMESTAMP", JsonOptions.parse({"timestampFormat": pattern}))


def test_python_and_numba_kernels_agree():
    schema = "a INT, b STRING, c DOUBLE, d DECIMAL(5,2), f ARRAY<INT>, g MAP<STRING,INT>, h STRUCT<x: INT>, " \
             "i TIMESTAMP, j DATE, k BINARY, _corrupt_record STRING"
    texts = [t for t in CASES]
    results = {}
    for implementation in ("python", "numba"):
        with kernels.using(implementation):
            result = decode(texts, schema)
            # (printed by Arrow: Python has no dates past year 9999)
            results[implementation] = (result.values.to_string(window=10**6), result.error_codes.tolist())
    assert results["python"] == results["numba"]
